package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// writeJSONL writes entities 0..n-1 of the data set to path as JSON
// lines in Azure's wire format (what `tablestore import` reads), in key
// order, so consecutive lines share a partition.
func writeJSONL(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var rec record
	for i := range n {
		genRecord(&rec, i)
		b, err := recordEntity(&rec).MarshalJSON()
		if err != nil {
			f.Close()
			return err
		}
		w.Write(b)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// runCLIImport compares `tablestore import` of n generated entities with
// the library's own bulk load of the same entities in batches of 100
// (load-nosync / load-sync's method: store time only, generation
// excluded), unsynced and synced, on fresh stores. The command's rate is
// the one its summary reports (first read to last commit), and also the
// whole process run (start, parse, commit, close, compactions it waits
// for).
func runCLIImport(ctx context.Context, c config, dataDir string) error {
	n := c.scale.Entities
	file := filepath.Join(dataDir, "entities.jsonl")
	logf("cli-import: writing %s entities to %s", commas(float64(n)), file)
	if err := writeJSONL(file, n); err != nil {
		return err
	}
	bin := filepath.Join(dataDir, "tablestore")
	logf("cli-import: building the tablestore command")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/tablestore")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building the command (run from bench/): %w", err)
	}
	fmt.Printf("%-24s %18s %18s %8s %18s %8s\n", "import of "+commas(float64(n)), "library entities/s",
		"command entities/s", "ratio", "command wall e/s", "ratio")
	for _, synced := range []bool{false, true} {
		label := "unsynced"
		if synced {
			label = "synced"
		}
		// The library's store is closed (its compactions done) before the
		// command runs, so the two do not share the machine.
		e := newEnv(ctx, c.scale, filepath.Join(dataDir, "lib-"+label), c.cacheSize, c.blockSize)
		s, err := e.open(sideTablestore, synced)
		if err != nil {
			return err
		}
		d, err := loadBatches(e, s, "library load "+label, n, genRecord)
		e.closeAll()
		if err != nil {
			return err
		}
		lib := rate(n, d)
		args := []string{"import", "--store", filepath.Join(dataDir, "cli-"+label), "--mode", "upsert", "bench", file}
		if !synced {
			args = append(args, "--no-sync")
		}
		logf("cli-import: %s %v", bin, args)
		cmd := exec.CommandContext(ctx, bin, args...)
		var stderr strings.Builder
		cmd.Stderr = io.MultiWriter(os.Stderr, &stderr)
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("tablestore import: %w", err)
		}
		wall := rate(n, time.Since(t0))
		// The command's summary: "import: committed N entities, B in D (R entities/s)",
		// timed from the first read to the last commit.
		m := regexp.MustCompile(`\(([0-9,]+) entities/s\)`).FindStringSubmatch(stderr.String())
		if m == nil {
			return fmt.Errorf("no rate in the command's summary: %q", stderr.String())
		}
		cli, _ := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		fmt.Printf("%-24s %18s %18s %7.2fx %18s %7.2fx\n", label, commas(lib), commas(cli), cli/lib, commas(wall), wall/lib)
	}
	return nil
}

// parseCount parses a count such as 1000000 or 1_000_000.
func parseCount(s string) (int, error) {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return int(n), nil
}
