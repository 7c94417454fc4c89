package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// target is one speed target the project reports, as a ratio of two
// figures measured in the same run.
type target struct {
	Name     string  `json:"name"`
	Goal     string  `json:"goal"`
	Measured string  `json:"measured"` // what the two figures are
	Value    float64 `json:"value"`    // NaN when not measured
	Unit     string  `json:"unit"`
	Pass     bool    `json:"pass"`
	Note     string  `json:"note,omitempty"`
	// Limit is the goal's bound on Value; AtMost says Value must not
	// exceed it (otherwise it must reach it).
	Limit  float64 `json:"limit"`
	AtMost bool    `json:"atMost"`
}

// targetWorkloads are the workloads the ratio targets are computed from.
var targetWorkloads = []string{"get", "partition-scan", "filter-scan"}

// ratioTarget builds a target from a figure of tablestore and raw
// Pebble: for a higher-is-better figure the ratio must reach limit, for a
// time figure (ns/op) it must not exceed it.
func ratioTarget(res *results, name, figID, goal string, limit float64, note string) target {
	t := target{Name: name, Goal: goal, Unit: "x", Note: note, Limit: limit}
	ts, pb := res.value(figID, sideTablestore), res.value(figID, sidePebble)
	t.Value = ts / pb
	t.Measured = fmt.Sprintf("tablestore %s vs raw pebble %s %s", formatFigure(ts), formatFigure(pb), res.unit(figID))
	if x := res.row(figID); x != nil && !x.HigherIsBetter {
		t.AtMost = true
		t.Pass = t.Value <= limit
	} else {
		t.Pass = t.Value >= limit
	}
	if math.IsNaN(t.Value) {
		t.Pass = false
	}
	return t
}

// computeTargets derives the ratio targets from the workload results and
// measures the two that need their own runs (resume and heap) on
// tablestore.
func computeTargets(e *env, res *results) []target {
	sc := e.sc
	scanNote := ""
	if sc.Entities < 1_000_000 {
		scanNote = fmt.Sprintf("over %s entities at scale %s; the 1,000,000-entity figure needs -scale=1m",
			commas(float64(sc.Entities)), sc.Name)
	}
	ts := []target{
		ratioTarget(res, "point get time, p50", "get-p50", "<= 1.5x raw pebble time", 1.5,
			"median latency of one reader; the raw side decodes its value into a struct"),
		meanGetTarget(res),
		ratioTarget(res, "partition scan, 1,000 whole entities", "partition-scan", ">= 0.3x raw iteration speed", 0.3, ""),
		ratioTarget(res, "table scan, non-key filter matching 1%", "filter-scan", ">= 0.5x raw iteration speed", 0.5, scanNote),
	}
	ts = append(ts, readTargets(res)...)
	ts = append(ts, txnTarget(e, false), txnTarget(e, true), resumeTarget(e), reverseResumeTarget(e), heapTarget(e),
		parallelScanTarget(e), segmentsTarget(e), partitionDropTarget(e))
	return ts
}

// pairTarget compares figure figID of side a with side b: a's figure
// over b's must reach limit (per-second figures) or stay under it (ns/op
// figures). NaN when either side is missing.
func pairTarget(res *results, name, figID, a, b, goal string, limit float64) target {
	t := target{Name: name, Goal: goal, Unit: "x", Limit: limit}
	va, vb := res.value(figID, a), res.value(figID, b)
	t.Value = va / vb
	t.Measured = fmt.Sprintf("%s %s vs %s %s %s", a, formatFigure(va), b, formatFigure(vb), res.unit(figID))
	if x := res.row(figID); x != nil && !x.HigherIsBetter {
		t.AtMost = true
		t.Pass = t.Value <= limit
	} else {
		t.Pass = t.Value >= limit
	}
	if math.IsNaN(t.Value) {
		t.Pass = false
	}
	return t
}

// readTargets are the read goals computed from the workload rows: the
// map path against raw Pebble into maps (speed and allocations), typed
// reads against raw Pebble, and the point-get tail, mean and throughput
// of both paths against raw Pebble. Targets whose sides did not run are
// left out.
func readTargets(res *results) []target {
	var ts []target
	has := func(id, side string) bool { return !math.IsNaN(res.value(id, side)) }
	for _, f := range []struct{ id, name string }{
		{"paging", "paging"}, {"range", "range of 100"}, {"partition-scan", "partition scan"}, {"get-tput", "point get throughput"},
	} {
		if has(f.id, sideTablestore) && has(f.id, sidePebbleMaps) {
			ts = append(ts, pairTarget(res, "maps: "+f.name+" vs raw pebble into maps", f.id, sideTablestore, sidePebbleMaps,
				">= 0.8x raw pebble into maps", 0.8))
		}
	}
	for _, a := range res.Allocs {
		if a.Per != "returned entity" {
			continue
		}
		ts0, ok1 := a.Values[sideTablestore]
		pm, ok2 := a.Values[sidePebbleMaps]
		if !ok1 || !ok2 {
			continue
		}
		t := target{Name: "maps: allocations, " + a.Workload, Goal: "<= raw pebble into maps + 1 per entity",
			Unit: "allocs", Value: ts0 - pm, Limit: 1, AtMost: true}
		t.Pass = t.Value <= 1
		t.Measured = fmt.Sprintf("tablestore %.2f vs raw pebble into maps %.2f per returned entity", ts0, pm)
		ts = append(ts, t)
	}
	for _, f := range []struct{ id, name string }{
		{"get-tput", "point get throughput"}, {"range", "range of 100"}, {"partition-scan", "partition scan"},
		{"filter-scan", "filtered table scan"}, {"paging", "paging"},
	} {
		if has(f.id, sideTyped) && has(f.id, sidePebble) {
			ts = append(ts, pairTarget(res, "typed: "+f.name+" vs raw pebble", f.id, sideTyped, sidePebble, ">= 0.9x raw pebble", 0.9))
		}
	}
	tail := len(ts)
	for _, side := range []string{sideTablestore, sideTyped} {
		if !has("get-p99", side) || !has("get-p99", sidePebble) {
			continue
		}
		path := "maps"
		if side == sideTyped {
			path = "typed"
		}
		ts = append(ts, pairTarget(res, path+": point get p99", "get-p99", side, sidePebble, "<= 1.5x raw pebble", 1.5))
		mean := target{Name: path + ": point get mean", Goal: "<= 1.3x raw pebble", Unit: "x", Limit: 1.3, AtMost: true}
		va, vb := res.value("get-tput", side), res.value("get-tput", sidePebble)
		mean.Value = vb / va
		mean.Pass = mean.Value <= mean.Limit
		mean.Measured = fmt.Sprintf("%s %s vs raw pebble %s ns/op (1 / throughput)", side, formatFigure(1e9/va), formatFigure(1e9/vb))
		ts = append(ts, mean, pairTarget(res, path+": point get throughput", "get-tput", side, sidePebble, ">= 0.8x raw pebble", 0.8))
	}
	if res.Scale.Entities < 1_000_000 {
		for i := tail; i < len(ts); i++ {
			ts[i].Note = fmt.Sprintf("the goal is set at 1,000,000 entities; this is scale %s", res.Scale.Name)
		}
	}
	return ts
}

// txnTarget compares tablestore transactions of 100 upserts with raw
// Pebble batches of 100 Sets of the same entities, timing only the
// commits (entities and encoded bytes are made beforehand), best of
// three interleaved rounds, each side on its own fresh store.
func txnTarget(e *env, sync bool) target {
	sides := targetSides()
	if _, ok := e.main[sideTyped]; ok {
		// The typed side ran: measure its transactions of structs too.
		sides = append(sides, sideTyped)
	}
	return txnTargetOf(e, sync, sides, 3)
}

// txnTargetOf is txnTarget for the given sides (tablestore and pebble
// among them) over the given number of rounds.
func txnTargetOf(e *env, sync bool, sides []string, rounds int) target {
	kind, batches := "unsynced", e.sc.TxnBatches
	if sync {
		kind, batches = "synced", e.sc.TxnBatches/2
	}
	t := target{Name: "transactions of 100 upserts, " + kind, Goal: ">= 0.5x raw batch entity throughput",
		Unit: "x", Value: math.NaN(), Limit: 0.5}
	best := map[string]float64{}
	err := func() (err error) {
		defer recoverInto(&err)
		stores := map[string]store{}
		for _, side := range sides {
			dir := filepath.Join(e.dataDir, fmt.Sprintf("%s-txn-%s", side, kind))
			s, err := safeOpen(side, dir, e.settings(sync))
			if err != nil {
				return err
			}
			defer safeClose(s)
			stores[side] = s
		}
		for r := 0; r < rounds; r++ {
			for k := range sides {
				side := sides[(k+r)%len(sides)]
				runtime.GC()
				v, err := measureTxn100(e.ctx, stores[side], fmt.Sprintf("%s txn100 %s round %d", side, kind, r+1),
					r*batches*batchSize, batches)
				if err != nil {
					return fmt.Errorf("%s: %w", side, err)
				}
				best[side] = max(best[side], v)
			}
		}
		return nil
	}()
	if err != nil {
		t.Measured = "error: " + err.Error()
		return t
	}
	pb := best[sidePebble]
	t.Measured = fmt.Sprintf("raw pebble %s entities/s, commit time only, %d batches", commas(pb), batches)
	if ts, ok := best[sideTablestore]; ok {
		// Only a side that ran has a figure: -txn may leave the map side out.
		t.Value = ts / pb
		t.Pass = t.Value >= 0.5
		t.Measured = fmt.Sprintf("tablestore %s vs %s", commas(ts), t.Measured)
	}
	if ty, ok := best[sideTyped]; ok {
		t.Measured += fmt.Sprintf("; typed %s (%.3fx)", commas(ty), ty/pb)
	}
	return t
}

// meanGetTarget compares the mean time per get (1 / throughput of the
// get workload's best round).
func meanGetTarget(res *results) target {
	t := target{Name: "point get time, mean", Goal: "<= 1.5x raw pebble time", Unit: "x", Limit: 1.5, AtMost: true,
		Note: "mean = 1 / throughput of one reader; more exposed to GC pauses and other processes than the p50"}
	ts, pb := res.value("get-tput", sideTablestore), res.value("get-tput", sidePebble)
	t.Value = pb / ts
	t.Pass = t.Value <= t.Limit
	t.Measured = fmt.Sprintf("tablestore %s vs raw pebble %s ns/op", formatFigure(1e9/ts), formatFigure(1e9/pb))
	return t
}

// targetSides are the two sides every target compares.
func targetSides() []string { return []string{sideTablestore, sidePebble} }

// resumeTarget times reading page resumePage (from its continuation
// token) against page 1 on tablestore; raw Pebble's figures for the same
// pages are given for reference.
func resumeTarget(e *env) target {
	k := e.sc.resumePage()
	t := target{Name: fmt.Sprintf("resume at page %s vs page 1 (Top 1000)", commas(float64(k))),
		Goal: "<= 1.2x time", Unit: "x", Value: math.NaN(), Limit: 1.2, AtMost: true}
	if k < 1000 {
		t.Note = fmt.Sprintf("page %d is the deepest page at scale %s; page 1,000 needs -scale=1m", k, e.sc.Name)
	}
	first, deep, err := measureResume(e, sideTablestore, k)
	if err != nil {
		t.Measured = "error: " + err.Error()
		return t
	}
	t.Value = float64(deep) / float64(first)
	t.Pass = t.Value <= 1.2
	t.Measured = fmt.Sprintf("median page %d %s vs page 1 %s", k, deep.Round(time.Microsecond), first.Round(time.Microsecond))
	if pf, pd, err := measureResume(e, sidePebble, k); err == nil {
		t.Measured += fmt.Sprintf("; raw pebble %s vs %s", pd.Round(time.Microsecond), pf.Round(time.Microsecond))
	}
	return t
}

// measureResume pages to page k of side's data set, then times page 1
// and page k (from its token) ResumeReps times each, alternating, and
// returns the medians.
func measureResume(e *env, side string, k int) (first, deep time.Duration, err error) {
	defer recoverInto(&err)
	s, err := e.mainStore(side)
	if err != nil {
		return 0, 0, err
	}
	return measurePages(e, side, s.page, k)
}

// measurePages is measureResume over the page function page.
func measurePages(e *env, name string, page func(context.Context, string, int) (int, string, error), k int) (first, deep time.Duration, err error) {
	defer recoverInto(&err)
	s := struct {
		page func(context.Context, string, int) (int, string, error)
	}{page}
	p := startProgress(name+" resume: paging to page "+commas(float64(k)), "entities", (k-1)*pageTop)
	token := ""
	for i := 1; i < k; i++ {
		n, next, err := s.page(e.ctx, token, pageTop)
		if err != nil {
			p.finish()
			return 0, 0, err
		}
		p.add(n)
		if next == "" {
			p.finish()
			return 0, 0, fmt.Errorf("table ended before page %d", k)
		}
		token = next
	}
	p.finish()
	firsts, deeps := make([]time.Duration, e.sc.ResumeReps), make([]time.Duration, e.sc.ResumeReps)
	for r := range e.sc.ResumeReps {
		for _, c := range []struct {
			tok string
			dst *time.Duration
		}{{"", &firsts[r]}, {token, &deeps[r]}} {
			t0 := time.Now()
			n, _, err := s.page(e.ctx, c.tok, pageTop)
			*c.dst = time.Since(t0)
			if err != nil {
				return 0, 0, err
			}
			if n != pageTop {
				return 0, 0, fmt.Errorf("page returned %d entities, want %d", n, pageTop)
			}
		}
	}
	slices.Sort(firsts)
	slices.Sort(deeps)
	return firsts[len(firsts)/2], deeps[len(deeps)/2], nil
}

// heapTarget scans the whole data set through the tablestore query
// iterator, keeping nothing, and reports the peak growth of HeapInuse
// over the level before the scan, sampled every millisecond.
func heapTarget(e *env) target {
	t := target{Name: fmt.Sprintf("heap growth scanning %s entities", commas(float64(e.sc.Entities))),
		Goal: "< 64 MiB", Unit: "MiB", Value: math.NaN(), Limit: 64, AtMost: true}
	if e.sc.Entities < 1_000_000 {
		t.Note = fmt.Sprintf("scale %s has %s entities; 1,000,000 needs -scale=1m", e.sc.Name, commas(float64(e.sc.Entities)))
	}
	err := func() (err error) {
		defer recoverInto(&err)
		s, err := e.mainStore(sideTablestore)
		if err != nil {
			return err
		}
		ts, ok := s.(*tablestoreStore)
		if !ok {
			return fmt.Errorf("not a tablestore store")
		}
		p := startProgress("tablestore heap scan", "entities", e.sc.Entities)
		defer p.finish()
		peak, base, n, err := measureHeapGrowth(e.ctx, func(ctx context.Context) (int, error) {
			return ts.scanAllProgress(ctx, p)
		})
		if err != nil {
			return err
		}
		if n != e.sc.Entities {
			return fmt.Errorf("scan returned %d entities, want %d", n, e.sc.Entities)
		}
		t.Value = float64(peak-base) / (1 << 20)
		t.Measured = fmt.Sprintf("HeapInuse %.1f MiB before, peak %.1f MiB", float64(base)/(1<<20), float64(peak)/(1<<20))
		t.Pass = t.Value < 64
		return nil
	}()
	if err != nil {
		t.Measured = "error: " + err.Error()
	}
	return t
}

// measureHeapGrowth runs scan while a sampler reads HeapInuse every
// millisecond; it returns the peak and the level after a GC before the
// scan started.
func measureHeapGrowth(ctx context.Context, scan func(context.Context) (int, error)) (peak, base uint64, n int, err error) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base = ms.HeapInuse
	var peakSeen atomic.Uint64
	peakSeen.Store(base)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peakSeen.Load() {
					peakSeen.Store(m.HeapInuse)
				}
			}
		}
	}()
	n, err = scan(ctx)
	close(stop)
	wg.Wait()
	runtime.ReadMemStats(&ms)
	return max(peakSeen.Load(), ms.HeapInuse), base, n, err
}
