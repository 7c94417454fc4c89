package main

import (
	"math"
	"os"
	"strings"
	"testing"
)

// TestLibraryFloors runs both floors on a small data set: the load into
// a new store, then paging over it, counting every entity.
func TestLibraryFloors(t *testing.T) {
	c := serverConfig{entities: 2 * partitionSize, conns: 3, rounds: 2}
	ents := make([][]byte, c.entities)
	var rec record
	for i := range ents {
		genRecord(&rec, i)
		var err error
		if ents[i], err = recordEntity(&rec).MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	}
	parent := t.TempDir()
	load, err := libraryLoadFloor(t.Context(), parent, c, ents)
	if err != nil {
		t.Fatal(err)
	}
	if len(load.Runs) != 2 || load.Rate <= 0 || load.CPU < 0 {
		t.Fatalf("load floor %+v", load)
	}
	raw, err := rawLoadFloor(t.Context(), parent, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.Runs) != 2 || raw.Rate <= 0 || raw.CPU < 0 {
		t.Fatalf("raw load floor %+v", raw)
	}
	ins, err := libraryInsertFloor(t.Context(), parent, c, 60)
	if err != nil {
		t.Fatal(err)
	}
	if len(ins.Runs) != 2 || ins.Rate <= 0 || ins.CPU <= 0 || ins.Switches < 0 {
		t.Fatalf("insert floor %+v", ins)
	}
	if left, _ := os.ReadDir(parent); len(left) != 0 {
		t.Fatalf("the floors left %d entries in their parent directory", len(left))
	}
	// Each run's directory is gone; load once more into one to page.
	dir := t.TempDir()
	if _, err := libraryLoadRunIn(t.Context(), dir, c, ents); err != nil {
		t.Fatal(err)
	}
	page, err := libraryPagingFloor(t.Context(), dir, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Runs) != 2 || page.Rate <= 0 {
		t.Fatalf("paging floor %+v", page)
	}
	full, err := libraryPagingFullFloor(t.Context(), dir, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Runs) != 2 || full.Rate <= 0 {
		t.Fatalf("paging floor at full metadata %+v", full)
	}
	for _, conns := range []int{1, c.conns} {
		gets, err := libraryGetFloor(t.Context(), dir, c, conns)
		if err != nil {
			t.Fatal(err)
		}
		if len(gets.Runs) != 2 || gets.Rate <= 0 || gets.CPU <= 0 {
			t.Fatalf("get floor, %d goroutines: %+v", conns, gets)
		}
	}
	// A count that is not the data set's fails.
	c.entities += partitionSize
	if _, err := libraryPagingFloor(t.Context(), dir, c); err == nil || !strings.Contains(err.Error(), "want 3000") {
		t.Fatalf("paging floor with a wrong count: %v", err)
	}
}

func TestRawFloorLine(t *testing.T) {
	f := &srvFloor{How: "raw", Rate: 150_000, CPU: 4.5}
	if got, want := rawFloorLine(f, 4), "  raw Pebble floor: raw: 150,000 entities/s, CPU 4.50 µs/entity; the 4 µs goal is below raw Pebble's own CPU per loaded entity on this machine"; got != want {
		t.Errorf("over the goal:\n got %q\nwant %q", got, want)
	}
	f.CPU = 2.5
	if got, want := rawFloorLine(f, 4), "  raw Pebble floor: raw: 150,000 entities/s, CPU 2.50 µs/entity; the 4 µs goal leaves 1.50 µs/entity for everything above raw Pebble"; got != want {
		t.Errorf("under the goal:\n got %q\nwant %q", got, want)
	}
}

func TestSrvFloorKeep(t *testing.T) {
	var f srvFloor
	f.keep(100, 5)
	f.keep(300, 3)
	f.keep(200, 1)
	if f.Rate != 300 || f.CPU != 3 || len(f.Runs) != 3 {
		t.Fatalf("%+v", f)
	}
}

func TestFloorLines(t *testing.T) {
	f := &srvFloor{Rate: 80_000, CPU: 3.5}
	got := floorLines("the work", "$batch rate", f, 4_000, 30.25, 4)
	want := []string{
		"  library floor: the work: 80,000 entities/s = 20.00x Azurite's $batch rate, CPU 3.50 µs/entity",
		"    server's CPU over the floor: 26.75 µs/entity (server 30.25, floor 3.50); the 4 µs goal leaves 0.50 µs/entity for the server's work above the floor",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Without Azurite or a server figure, and a floor over the goal.
	f.CPU = 2
	got = floorLines("pages", "paging", f, math.NaN(), math.NaN(), 1.5)
	if got[0] != "  library floor: pages: 80,000 entities/s (Azurite not run: no ratio), CPU 2.00 µs/entity" ||
		got[1] != "    server's CPU over the floor: n/a; the floor alone is over the 1.5 µs goal" {
		t.Fatalf("%q", got)
	}
	// Without a goal (the gets): the server's CPU over the floor alone.
	got = floorLines("gets", "gets/s", f, 1_000, 7.5, math.NaN())
	if len(got) != 2 || got[1] != "    server's CPU over the floor: 5.50 µs/entity (server 7.50, floor 2.00)" {
		t.Fatalf("%q", got)
	}
}

func TestMachineBound(t *testing.T) {
	for _, c := range []struct {
		cpus             int
		floor, client, w float64
	}{
		{2, 7, 3, 200_000},
		{4, 1, 1, 2_000_000},
		{2, math.NaN(), 3, math.NaN()},
		{2, 7, math.NaN(), math.NaN()},
		{0, 7, 3, math.NaN()},
	} {
		got := machineBound(c.cpus, c.floor, c.client)
		if !(got == c.w || math.IsNaN(got) && math.IsNaN(c.w)) {
			t.Errorf("machineBound(%d, %v, %v) = %v, want %v", c.cpus, c.floor, c.client, got, c.w)
		}
	}
	// 200,000 entities/s against Azurite's 14,000 is 14.29x: short of 20x.
	got := machineBoundLine(2, 7, 3, 14_000, 20)
	want := "    machine bound: 2 CPUs shared by the floor's 7.00 µs and this client's 3.00 µs per entity allow at most 200,000 entities/s = 14.29x Azurite's, even for a server costing nothing over the floor: the 20x goal is beyond this machine"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if got := machineBoundLine(2, 1, 1, 14_000, 20); !strings.HasSuffix(got, "the 20x goal is within reach") {
		t.Fatalf("%s", got)
	}
	if got := machineBoundLine(2, 7, 3, math.NaN(), 20); !strings.HasSuffix(got, "(Azurite not run: no ratio)") {
		t.Fatalf("%s", got)
	}
}
