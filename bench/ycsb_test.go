package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tablestore/tablestore/tablestoretest/azurite"
)

// TestYCSBShort is the CI version of -ycsb: a few hundred records, one
// round, every embedded side in both durability modes and the server
// over HTTP (and Azurite where it is installed) with 1 and 4 threads.
// It checks that ycsb.json holds a figure for every cell, and no error.
func TestYCSBShort(t *testing.T) {
	out := t.TempDir()
	servers := "server"
	if _, err := azurite.Find(); err == nil {
		servers += ",azurite"
	}
	rows := runYCSBRows(t, out, "-records", "300", "-ops", "200", "-rounds", "1", "-max-round", "10s",
		"-http", servers, "-http-threads", "1,4", "-tablestore-bin", "self")
	var want []ycsbRowName
	for _, w := range ycsbWorkloads {
		want = append(want, embeddedRows(w.name)...)
		for _, th := range []int{1, 4} {
			want = append(want, ycsbRowName{w.name, ycsbServer, "unsynced", th})
		}
	}
	checkYCSBCells(t, rows, want, 200)
	for _, name := range []string{"ycsb.md", "ycsb.png", "ycsb-run.json"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
}

// TestYCSBLong is CI's long version of -ycsb: TABLESTORE_YCSB_RECORDS
// records (1,000,000 in CI) of 1 KB loaded into every embedded side,
// every workload in both durability modes, one short round each. Besides
// a figure for every cell it checks the on-disk goal: tablestore's
// stores (maps and typed) take at most 1.2x raw Pebble's bytes after the
// load. Skipped when the variable is unset.
func TestYCSBLong(t *testing.T) {
	n, err := strconv.Atoi(os.Getenv("TABLESTORE_YCSB_RECORDS"))
	if err != nil || n <= 0 {
		t.Skip("TABLESTORE_YCSB_RECORDS is not a positive record count")
	}
	rows := runYCSBRows(t, t.TempDir(), "-records", strconv.Itoa(n), "-ops", "20000", "-rounds", "1", "-max-round", "2s", "-http", "")
	var want []ycsbRowName
	for _, w := range ycsbWorkloads {
		want = append(want, embeddedRows(w.name)...)
	}
	checkYCSBCells(t, rows, want, 0)
	pebble := ycsbFind(rows, "load", sidePebble, "unsynced", 1)
	if pebble == nil || pebble.DiskBytes <= 0 {
		t.Fatalf("no load row with a disk size for raw Pebble")
	}
	for _, side := range []string{sideTablestore, sideTyped} {
		r := ycsbFind(rows, "load", side, "unsynced", 1)
		if r == nil || r.Records != n {
			t.Errorf("%s: no load row of %d records", side, n)
			continue
		}
		if x := float64(r.DiskBytes) / float64(pebble.DiskBytes); x > 1.2 {
			t.Errorf("%s: %d bytes on disk after the load, %.2fx raw Pebble's %d (goal 1.2x)", side, r.DiskBytes, x, pebble.DiskBytes)
		}
	}
}

// ycsbRowName names one row of ycsb.json.
type ycsbRowName struct {
	workload, side, durability string
	threads                    int
}

// runYCSBRows runs -ycsb with args, its output in out and its stores in
// a temporary directory, and returns the rows of out/ycsb.json.
func runYCSBRows(t *testing.T, out string, args ...string) []*ycsbResult {
	t.Helper()
	if err := runYCSB(context.Background(), append(args, "-out", out, "-data", t.TempDir())); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "ycsb.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []*ycsbResult
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	return rows
}

// checkYCSBCells fails the test for a row with an error (Azurite's are
// logged: it is a comparator outside this project) and for every wanted
// cell without a figure, a p99, a peak RSS or (embedded sides) a disk
// size. ops, when positive, is the exact operation count every cell must
// show; otherwise any positive count will do (a round cut by -max-round).
func checkYCSBCells(t *testing.T, rows []*ycsbResult, want []ycsbRowName, ops int) {
	t.Helper()
	got := map[ycsbRowName]*ycsbResult{}
	for _, r := range rows {
		switch {
		case r.Error != "" && r.Side == ycsbAzurite:
			t.Logf("azurite: %s %d threads: %s", r.Workload, r.Threads, r.Error)
		case r.Error != "":
			t.Errorf("%s %s %s %d threads: %s", r.Workload, r.Side, r.Durability, r.Threads, r.Error)
		}
		got[ycsbRowName{r.Workload, r.Side, r.Durability, r.Threads}] = r
	}
	for _, c := range want {
		r, ok := got[c]
		switch {
		case !ok:
			t.Errorf("no row for %+v", c)
		case r.OpsPerSec <= 0 || r.P99 <= 0 || r.Ops <= 0 || (ops > 0 && r.Ops != ops):
			t.Errorf("%+v: %d operations, %.0f ops/s, p99 %.0f µs", c, r.Ops, r.OpsPerSec, r.P99)
		case r.PeakRSS <= 0 || (r.Side != ycsbServer && r.DiskBytes <= 0):
			t.Errorf("%+v: peak RSS %d, disk %d bytes", c, r.PeakRSS, r.DiskBytes)
		}
	}
}

// embeddedRows names the rows of workload on every embedded side, in
// both durability modes.
func embeddedRows(workload string) []ycsbRowName {
	var rows []ycsbRowName
	for _, side := range ycsbSides {
		for _, d := range []string{"synced", "unsynced"} {
			rows = append(rows, ycsbRowName{workload, side, d, 1})
		}
	}
	return rows
}
