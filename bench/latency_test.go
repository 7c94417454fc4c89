package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
)

func TestPercentileNearestRank(t *testing.T) {
	ds := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n)
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i + 1) // 1..100
	}
	for _, c := range []struct {
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{nil, 0.5, 0},
		{ds(7), 0, 7},
		{ds(7), 0.99, 7},
		{ds(1, 2), 0.5, 1},
		{ds(1, 2), 0.51, 2},
		{ds(1, 2, 3, 4), 0.5, 2},
		{ds(1, 2, 3, 4), 1, 4},
		{hundred, 0.5, 50},
		{hundred, 0.99, 99},
		{hundred, 0.999, 100},
		{hundred, 0.01, 1},
		{hundred, 0, 1},
	} {
		if got := percentile(c.sorted, c.q); got != c.want {
			t.Errorf("percentile(%v, %g) = %d, want %d", c.sorted, c.q, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	// 1..1000 ns, shuffled: summarize sorts.
	lat := make([]time.Duration, 1000)
	for i := range lat {
		lat[i] = time.Duration(i + 1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	r.Shuffle(len(lat), func(i, j int) { lat[i], lat[j] = lat[j], lat[i] })
	s := summarize(lat, 2*time.Second)
	want := latencies{Count: 1000, P50: 500, P99: 990, P999: 999, Max: 1000, Mean: 500.5, Rate: 500}
	if s != want {
		t.Fatalf("summarize = %+v, want %+v", s, want)
	}
	if s := summarize(nil, time.Second); s != (latencies{}) {
		t.Fatalf("summarize(nil) = %+v, want zero", s)
	}
	if s := summarize([]time.Duration{5}, 0); s.Rate != 0 || s.P99 != 5 {
		t.Fatalf("summarize without wall time = %+v", s)
	}
}

func TestMedianLeavesInputAlone(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	if m := median(ds); m != 3 {
		t.Fatalf("median = %d, want 3", m)
	}
	if ds[0] != 5 || ds[4] != 3 {
		t.Fatalf("median reordered its input: %v", ds)
	}
}

func TestMeanOf(t *testing.T) {
	if m := meanOf([]time.Duration{1, 2, 6}); m != 3 {
		t.Fatalf("meanOf = %g, want 3", m)
	}
	if m := meanOf(nil); !math.IsNaN(m) {
		t.Fatalf("meanOf(nil) = %g, want NaN", m)
	}
}

func TestParseSchedStat(t *testing.T) {
	cpu, runq := parseSchedStat([]byte("123456 7890 42\n"))
	if cpu != 123456 || runq != 7890 {
		t.Fatalf("parseSchedStat = %d, %d", cpu, runq)
	}
	if cpu, runq := parseSchedStat(nil); cpu != 0 || runq != 0 {
		t.Fatalf("parseSchedStat(nil) = %d, %d", cpu, runq)
	}
}

func TestRatio(t *testing.T) {
	if r := ratio(3, 2); r != 1.5 {
		t.Fatalf("ratio(3, 2) = %g", r)
	}
	if r := ratio(1, 0); !math.IsNaN(r) {
		t.Fatalf("ratio(1, 0) = %g, want NaN", r)
	}
	if l := goalLine("x", math.NaN(), "<= 1x", true); l != "x: n/a, goal <= 1x  MISS" {
		t.Fatalf("goalLine of NaN = %q", l)
	}
	if l := goalLine("x", 0.5, "<= 1x", true); l != "x: 0.50x, goal <= 1x  ok" {
		t.Fatalf("goalLine = %q", l)
	}
}

func TestPollWait(t *testing.T) {
	for _, c := range []struct {
		remaining int64
		rate      int
		want      time.Duration
	}{
		{1_000_000, 10_000, 10 * time.Second}, // 50 s of work: capped
		{100_000, 10_000, 5 * time.Second},    // 10 s of work: half
		{1_000, 10_000, 100 * time.Millisecond},
		{0, 10_000, 100 * time.Millisecond},
		{40_000, 0, 2 * time.Second}, // rate 0: the library's default
	} {
		if got := pollWait(c.remaining, c.rate); got != c.want {
			t.Errorf("pollWait(%d, %d) = %s, want %s", c.remaining, c.rate, got, c.want)
		}
	}
}

func TestOffsetClockJumps(t *testing.T) {
	var c offsetClock
	before := c.now()
	c.off.Store(int64(2 * time.Hour))
	if d := c.now().Sub(before); d < 2*time.Hour || d > 2*time.Hour+time.Minute {
		t.Fatalf("the clock moved %s after a jump of 2h", d)
	}
}

func TestTagOfMatchesTen(t *testing.T) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		count := map[int64]int{}
		parts := map[int64]map[int]bool{}
		for i := range n {
			tag := tagOf(i, n)
			count[tag]++
			if parts[tag] == nil {
				parts[tag] = map[int]bool{}
			}
			parts[tag][i/partitionSize] = true
		}
		if len(count) != n/tagMatches {
			t.Fatalf("n=%d: %d tags, want %d", n, len(count), n/tagMatches)
		}
		for tag, c := range count {
			if c != tagMatches || len(parts[tag]) != tagMatches {
				t.Fatalf("n=%d: tag %d on %d entities in %d partitions, want %d in %d", n, tag, c, len(parts[tag]), tagMatches, tagMatches)
			}
		}
	}
}

func TestWriterBatches(t *testing.T) {
	const n = 100_000
	bs := writerBatches(n, 64)
	if len(bs) != 64 {
		t.Fatalf("%d batches, want 64", len(bs))
	}
	seen := map[string]bool{}
	for b, acts := range bs {
		if len(acts) != batchSize {
			t.Fatalf("batch %d: %d actions", b, len(acts))
		}
		pk := acts[0].Entity.(*tablestore.Entity).PartitionKey
		for _, a := range acts {
			e := a.Entity.(*tablestore.Entity)
			if e.PartitionKey != pk {
				t.Fatalf("batch %d spans partitions %s and %s", b, pk, e.PartitionKey)
			}
			key := e.PartitionKey + "/" + e.RowKey
			if seen[key] {
				t.Fatalf("%s written by two batches", key)
			}
			seen[key] = true
			// An existing entity of the data set, as loaded.
			var p, r int
			if _, err := fmt.Sscanf(e.PartitionKey+" "+e.RowKey, "p%d r%d", &p, &r); err != nil {
				t.Fatal(err)
			}
			i := p*partitionSize + r
			if i >= n || e.Properties["Tag"] != tagOf(i, n) {
				t.Fatalf("%s: entity %d, Tag %v, want %d", key, i, e.Properties["Tag"], tagOf(i, n))
			}
		}
	}
}

func TestFirstLine(t *testing.T) {
	if got := firstLine("a\nb"); got != "a" {
		t.Fatalf("firstLine = %q", got)
	}
	if got := firstLine("ab"); got != "ab" {
		t.Fatalf("firstLine = %q", got)
	}
}
