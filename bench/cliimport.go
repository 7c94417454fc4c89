package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
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
	return writeJSONLOrder(path, n, func(j int) int { return j })
}

// cliImport is one comparison of `tablestore import` with the library's
// bulk load of the same entities.
type cliImport struct {
	Synced bool `json:"synced"`
	// Library is the library's load in batches of 100 (store time only),
	// entities/s.
	Library float64 `json:"library"`
	// Command is the rate the command's summary reports (first read to
	// last commit); Wall is the whole process, start to exit.
	Command float64 `json:"command"`
	Wall    float64 `json:"wall"`
	// LoadAverage is /proc/loadavg when the command finished.
	LoadAverage string `json:"loadAverage"`
}

// cliImportGoal is the command's goal against the library's bulk load.
const cliImportGoal = 0.6

// runCLIImport is the -cli-import mode: the comparison, unsynced and
// synced, printed and written to <out>/cliimport.json.
func runCLIImport(ctx context.Context, c config, dataDir string) error {
	res, err := measureCLIImport(ctx, c.scale.Entities, c.cacheSize, c.blockSize, dataDir, c.cliBin)
	if err != nil {
		return err
	}
	printCLIImport(os.Stdout, c.scale.Entities, res)
	if err := os.MkdirAll(c.outDir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		Entities int         `json:"entities"`
		Goal     float64     `json:"goal"`
		Runs     []cliImport `json:"runs"`
	}{c.scale.Entities, cliImportGoal, res}, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(c.outDir, "cliimport.json")
	fmt.Printf("\nwrote %s\n", path)
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func printCLIImport(w io.Writer, n int, res []cliImport) {
	fmt.Fprintf(w, "%-24s %18s %18s %8s %18s %8s %6s  %s\n", "import of "+commas(float64(n)), "library entities/s",
		"command entities/s", "ratio", "command wall e/s", "ratio", "goal", "load average")
	for _, r := range res {
		label := "unsynced"
		if r.Synced {
			label = "synced"
		}
		fmt.Fprintf(w, "%-24s %18s %18s %7.2fx %18s %7.2fx %5.1fx %s  %s\n", label, commas(r.Library), commas(r.Command),
			r.Command/r.Library, commas(r.Wall), r.Wall/r.Library, cliImportGoal, okMiss(r.Command/r.Library >= cliImportGoal), r.LoadAverage)
	}
}

// measureCLIImport writes n entities of the data set as JSON lines,
// builds cmd/tablestore (unless bin is given), and for unsynced and
// synced stores: bulk-loads the same entities through the library in
// batches of 100 (store time only, record generation excluded, the
// entity maps built in the timed loop as the command builds its
// entities) on a fresh store, closes it (its compactions
// done), then runs `tablestore import --mode upsert` on another fresh
// store.
func measureCLIImport(ctx context.Context, n int, cacheSize int64, blockSize int, dataDir, bin string) ([]cliImport, error) {
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return nil, err
	}
	file := filepath.Join(dataDir, "entities.jsonl")
	logf("cli-import: writing %s entities to %s", commas(float64(n)), file)
	if err := writeJSONL(file, n); err != nil {
		return nil, err
	}
	defer os.Remove(file)
	if bin == "" {
		var err error
		if bin, err = buildTablestore(ctx, dataDir); err != nil {
			return nil, err
		}
	}
	sc := scale{Name: "cli-import", Entities: n}
	var out []cliImport
	for _, synced := range []bool{false, true} {
		label := "unsynced"
		if synced {
			label = "synced"
		}
		e := newEnv(ctx, sc, filepath.Join(dataDir, "lib-"+label), cacheSize, blockSize)
		s, err := e.open(sideTablestore, synced)
		if err != nil {
			return nil, err
		}
		d, err := loadBatches(e, s, "library load "+label, n, genRecord, false)
		e.closeAll()
		os.RemoveAll(e.dataDir)
		if err != nil {
			return nil, err
		}
		r := cliImport{Synced: synced, Library: rate(n, d)}
		store := filepath.Join(dataDir, "cli-"+label)
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
			return nil, fmt.Errorf("tablestore import: %w", err)
		}
		r.Wall = rate(n, time.Since(t0))
		r.LoadAverage = loadAvg()
		os.RemoveAll(store)
		// The command's summary: "import: committed N entities, B in D (R entities/s)",
		// timed from the first read to the last commit.
		m := regexp.MustCompile(`\(([0-9,]+) entities/s\)`).FindStringSubmatch(stderr.String())
		if m == nil {
			return nil, fmt.Errorf("no rate in the command's summary: %q", stderr.String())
		}
		r.Command, _ = strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		out = append(out, r)
	}
	return out, nil
}

// cliImportTargets measures the command's import against the library
// for the targets table.
func cliImportTargets(e *env, bin string) []target {
	res, err := measureCLIImport(e.ctx, e.sc.Entities, e.cacheSize, e.blockSize, filepath.Join(e.dataDir, "cli-import"), bin)
	var ts []target
	for i, kind := range []string{"unsynced", "synced"} {
		t := target{Name: "tablestore import, " + kind, Goal: fmt.Sprintf(">= %gx the library's batch-100 load", cliImportGoal),
			Unit: "x", Value: math.NaN(), Limit: cliImportGoal}
		if err != nil {
			t.Measured = "error: " + err.Error()
		} else {
			r := res[i]
			t.Value = r.Command / r.Library
			t.Pass = t.Value >= cliImportGoal
			t.Measured = fmt.Sprintf("command %s vs library %s entities/s (whole process %s, %.2fx)",
				commas(r.Command), commas(r.Library), commas(r.Wall), r.Wall/r.Library)
		}
		ts = append(ts, t)
	}
	return ts
}

// parseCount parses a count such as 1000000 or 1_000_000.
func parseCount(s string) (int, error) {
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad count %q", s)
	}
	return int(n), nil
}
