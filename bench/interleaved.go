package main

// The -interleaved-import mode: the bulk writer and `tablestore import`
// on input whose partitions interleave, against the library's batch-100
// load of the same entities sorted.

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

	"github.com/tablestore/tablestore"
)

// interleaved is the order of the interleaved input: line j holds entity
// (j % P) * partitionSize + j / P of the n entities' P partitions, so
// consecutive lines are in different partitions, each partition's rows
// in key order.
func interleaved(n int) func(j int) int {
	parts := n / partitionSize
	return func(j int) int { return (j%parts)*partitionSize + j/parts }
}

// writeJSONLOrder writes the n entities as JSON lines, entity order(j)
// on line j.
func writeJSONLOrder(path string, n int, order func(j int) int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var rec record
	for j := range n {
		genRecord(&rec, order(j))
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

// runInterleavedImport compares `tablestore import` of n generated entities with
// the library's own bulk load of the same entities in batches of 100
// (store time only, record generation excluded, the entity maps built
// in the timed loop as the command builds its entities), unsynced and
// synced, on fresh stores. The command imports the entities sorted by
// key and interleaved (consecutive lines in different partitions, the
// data set's n/1,000 partitions round robin); the library's batches need
// them sorted. The command's rate is the one
// its summary reports (first read to last commit), and also the whole
// process run (start, parse, commit, close, compactions it waits for).
func runInterleavedImport(ctx context.Context, c config, dataDir string) error {
	n := c.scale.Entities
	file := filepath.Join(dataDir, "entities.jsonl")
	logf("cli-import: writing %s entities to %s", commas(float64(n)), file)
	if err := writeJSONL(file, n); err != nil {
		return err
	}
	mixed := filepath.Join(dataDir, "entities-interleaved.jsonl")
	logf("cli-import: writing them interleaved to %s", mixed)
	if err := writeJSONLOrder(mixed, n, interleaved(n)); err != nil {
		return err
	}
	bin := c.cliBin
	if bin == "" {
		var err error
		if bin, err = buildTablestore(ctx, dataDir); err != nil {
			return err
		}
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
		d, err := loadBatches(e, s, "library load "+label, n, genRecord, false)
		e.closeAll()
		if err != nil {
			return err
		}
		lib := rate(n, d)
		// The library's bulk writer on the interleaved order, on a
		// fresh store, timed the same way (generation excluded).
		be := newEnv(ctx, c.scale, filepath.Join(dataDir, "bulk-"+label), c.cacheSize, c.blockSize)
		bs, err := be.open(sideTablestore, synced)
		if err != nil {
			return err
		}
		bd, err := loadBulk(bs.(*tablestoreStore).t, "library bulk writer "+label+", interleaved", n, interleaved(n))
		be.closeAll()
		if err != nil {
			return err
		}
		bulk := rate(n, bd)
		fmt.Printf("%-24s %18s %18s %7.2fx\n", label+", library bulk writer", commas(lib), commas(bulk), bulk/lib)
		for _, input := range []struct{ name, file string }{{"sorted", file}, {"interleaved", mixed}} {
			cli, wall, err := runImportCommand(ctx, bin, filepath.Join(dataDir, "cli-"+label+"-"+input.name), input.file, synced)
			if err != nil {
				return err
			}
			fmt.Printf("%-24s %18s %18s %7.2fx %18s %7.2fx\n", label+", "+input.name, commas(lib), commas(cli), cli/lib, commas(wall), wall/lib)
		}
	}
	return nil
}

// runImportCommand runs `tablestore import --mode upsert` of file into a
// new store and returns the rate its summary reports and the whole run's.
func runImportCommand(ctx context.Context, bin, store, file string, synced bool) (cli, wall float64, err error) {
	args := []string{"import", "--store", store, "--mode", "upsert", "bench", file}
	if !synced {
		args = append(args, "--no-sync")
	}
	logf("cli-import: %s %v", bin, args)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr strings.Builder
	cmd.Stderr = io.MultiWriter(os.Stderr, &stderr)
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("tablestore import: %w", err)
	}
	elapsed := time.Since(t0)
	// The command's summary: "import: committed N entities, B in D (R entities/s)",
	// timed from the first read to the last commit.
	m := regexp.MustCompile(`committed ([0-9,]+) entities.*\(([0-9,]+) entities/s\)`).FindStringSubmatch(stderr.String())
	if m == nil {
		return 0, 0, fmt.Errorf("no rate in the command's summary: %q", stderr.String())
	}
	n, _ := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
	cli, _ = strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
	return cli, n / elapsed.Seconds(), nil
}

// loadBulk loads the n entities in the given order through a
// BulkWriter (upserts, default batches) and returns the time in the
// store: the whole loop's less the time generating the same entities
// alone takes (a commit runs in the background while the next entities
// are added, so timing only Add would hide part of it behind the
// generation).
func loadBulk(t *tablestore.Table, label string, n int, order func(j int) int) (time.Duration, error) {
	var rec record
	t0 := time.Now()
	for j := range n {
		genRecord(&rec, order(j))
		_ = recordEntity(&rec)
	}
	gen := time.Since(t0)
	p := startProgress(label, "entities", n)
	defer p.finish()
	w, err := t.NewBulkWriter(&tablestore.BulkOptions{Action: tablestore.ActionUpsertReplace})
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	t0 = time.Now()
	for j := range n {
		genRecord(&rec, order(j))
		if err := w.Add(ctx, recordEntity(&rec)); err != nil {
			return 0, err
		}
		if j%1000 == 999 {
			p.add(1000)
		}
	}
	err = w.Flush(ctx)
	return max(time.Since(t0)-gen, time.Millisecond), err
}
