package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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
// excluded), unsynced and synced, on fresh stores. The import is timed
// as a whole process run: start, parse, commit, close.
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
	e := newEnv(ctx, c.scale, dataDir, c.cacheSize)
	defer e.closeAll()
	fmt.Printf("%-24s %18s %18s %8s\n", "import of "+commas(float64(n)), "library entities/s", "command entities/s", "ratio")
	for _, synced := range []bool{false, true} {
		label := "unsynced"
		if synced {
			label = "synced"
		}
		s, err := e.open(sideTablestore, synced)
		if err != nil {
			return err
		}
		d, err := loadBatches(e, s, "library load "+label, n, genRecord)
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
		cmd.Stderr = os.Stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("tablestore import: %w", err)
		}
		cli := rate(n, time.Since(t0))
		fmt.Printf("%-24s %18s %18s %7.2fx\n", label, commas(lib), commas(cli), cli/lib)
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
