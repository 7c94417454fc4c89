package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
	args := []string{"-records", "300", "-ops", "200", "-rounds", "1", "-max-round", "10s",
		"-http", servers, "-http-threads", "1,4", "-tablestore-bin", "self", "-out", out, "-data", t.TempDir()}
	if err := runYCSB(context.Background(), args); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "ycsb.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []ycsbResult
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	type cell struct {
		workload, side, durability string
		threads                    int
	}
	got := map[cell]ycsbResult{}
	for _, r := range rows {
		switch {
		case r.Error != "" && r.Side == ycsbAzurite:
			// Azurite is a comparator outside this project; its
			// failures are reported, not this code's.
			t.Logf("azurite: %s %d threads: %s", r.Workload, r.Threads, r.Error)
		case r.Error != "":
			t.Errorf("%s %s %s %d threads: %s", r.Workload, r.Side, r.Durability, r.Threads, r.Error)
		}
		got[cell{r.Workload, r.Side, r.Durability, r.Threads}] = r
	}
	var want []cell
	for _, w := range ycsbWorkloads {
		for _, side := range ycsbSides {
			for _, d := range []string{"synced", "unsynced"} {
				want = append(want, cell{w.name, side, d, 1})
			}
		}
		for _, th := range []int{1, 4} {
			want = append(want, cell{w.name, ycsbServer, "unsynced", th})
		}
	}
	for _, c := range want {
		r, ok := got[c]
		switch {
		case !ok:
			t.Errorf("no row for %+v", c)
		case r.OpsPerSec <= 0 || r.P99 <= 0 || r.Ops != 200:
			t.Errorf("%+v: %d operations, %.0f ops/s, p99 %.0f µs", c, r.Ops, r.OpsPerSec, r.P99)
		case r.PeakRSS <= 0 || (r.Side != ycsbServer && r.DiskBytes <= 0):
			t.Errorf("%+v: peak RSS %d, disk %d bytes", c, r.PeakRSS, r.DiskBytes)
		}
	}
	for _, name := range []string{"ycsb.md", "ycsb.png", "ycsb-run.json"} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Error(err)
		}
	}
}
