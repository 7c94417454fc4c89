package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// figure is one number a workload measures on every side.
type figure struct {
	ID             string `json:"id"`
	Workload       string `json:"workload"`
	Label          string `json:"label"`
	Unit           string `json:"unit"`
	HigherIsBetter bool   `json:"higherIsBetter"`
}

// workload is one measured piece of work, run once per side.
type workload struct {
	name    string
	about   string
	figures []figure
	// once marks a workload that runs a single round (it builds the data
	// set the others read).
	once bool
	// per names the unit of its allocation count: what one "entity" is.
	per string
	// run measures side in round r (0-based; each round writes its own
	// keys) and returns one value per figure.
	run func(e *env, side string, r int) ([]float64, error)
}

// batchSize is the number of entities per bulk-load batch (and the Azure
// maximum for an entity group transaction).
const batchSize = 100

// pageTop is the page size of the paging workloads.
const pageTop = 1000

// hotRows is the number of entities the read-modify-write writers share.
const hotRows = 4

// writers is the writer count of the concurrent write workloads.
const writers = 8

func rate(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

func fig(id, wl, label, unit string, higher bool) figure {
	return figure{ID: id, Workload: wl, Label: label, Unit: unit, HigherIsBetter: higher}
}

// workloads returns every workload in run order. Loading comes first:
// every read workload runs on the data set load-nosync writes.
func workloads() []workload {
	return []workload{
		{name: "load-nosync", per: "written entity", about: "bulk load of the data set in batches of 100, unsynced",
			figures: []figure{fig("load-nosync", "load-nosync", "bulk load, batches of 100, no sync", "entities/s", true)},
			run:     runLoadNoSync, once: true},
		{name: "load-sync", per: "written entity", about: "bulk load in batches of 100, every batch synced",
			figures: []figure{fig("load-sync", "load-sync", "bulk load, batches of 100, synced", "entities/s", true)},
			run:     runLoadSync},
		{name: "insert-sync-1", per: "inserted entity", about: "single-entity synced inserts, 1 writer",
			figures: []figure{fig("insert-sync-1", "insert-sync-1", "synced single inserts, 1 writer", "inserts/s", true)},
			run:     func(e *env, side string, r int) ([]float64, error) { return runInserts(e, side, r, 1) }},
		{name: "insert-sync-8", per: "inserted entity", about: "single-entity synced inserts, 8 concurrent writers",
			figures: []figure{fig("insert-sync-8", "insert-sync-8", "synced single inserts, 8 writers", "inserts/s", true)},
			run:     func(e *env, side string, r int) ([]float64, error) { return runInserts(e, side, r, writers) }},
		{name: "get", per: "returned entity", about: "point get of random existing entities, one reader",
			figures: []figure{
				fig("get-p50", "get", "point get p50 latency", "ns/op", false),
				fig("get-p99", "get", "point get p99 latency", "ns/op", false),
				fig("get-tput", "get", "point get throughput", "gets/s", true),
				fig("get-cpu", "get", "point get CPU time of the reading thread", "ns/op", false),
			},
			run: runGets},
		{name: "range", per: "returned entity", about: "PartitionKey eq and RowKey range returning 100 entities",
			figures: []figure{fig("range", "range", "range query (PK eq, RK range, 100 rows)", "queries/s", true)},
			run:     runRanges},
		{name: "partition-scan", per: "returned entity", about: "whole partition returning 1,000 entities",
			figures: []figure{fig("partition-scan", "partition-scan", "partition scan, 1,000 entities", "entities/s", true)},
			run:     runPartitionScans},
		{name: "filter-scan", per: "returned (matching) entity", about: "table scan with a non-key filter matching 1%",
			figures: []figure{fig("filter-scan", "filter-scan", "table scan, non-key filter (1% match)", "scanned entities/s", true)},
			run:     runFilterScans},
		{name: "paging", per: "returned entity", about: "paging through 100,000 entities, Top 1000, continuation tokens",
			figures: []figure{fig("paging", "paging", "paging, Top 1000, continuation tokens", "entities/s", true)},
			run:     runPaging},
		{name: "rmw", per: "update attempt", about: "read-modify-write with ETags, 8 writers on 4 entities of one partition, synced",
			figures: []figure{fig("rmw", "rmw", "read-modify-write, ETag, 8 writers, 1 partition", "updates/s", true)},
			run:     runRMW},
	}
}

// An inputBuilder is a side whose input is not the record itself but a
// value built from it (tablestore's entity maps, the typed side's
// structs). prepareInput builds that input for recs and returns the call
// that stores it.
type inputBuilder interface {
	prepareInput(ctx context.Context, recs []record) func() error
}

func (s *tablestoreStore) prepareInput(ctx context.Context, recs []record) func() error {
	return s.prepareBatch(ctx, recs)
}

func (s *typedStore) prepareInput(ctx context.Context, recs []record) func() error {
	return s.prepareBatch(ctx, recs)
}

// loadBatches writes n entities in batches of batchSize, entity i built
// by gen, and returns the time spent in the store (generation excluded).
// With prebuilt, an inputBuilder side's input is built before the clock
// starts, as a caller holding maps or structs already has them; every
// other side, raw Pebble among them, is timed from the record, its
// encoding included. Without it, every side is timed from the record.
func loadBatches(e *env, s store, label string, n int, gen func(rec *record, i int), prebuilt bool) (time.Duration, error) {
	p := startProgress(label, "entities", n)
	defer p.finish()
	recs := make([]record, batchSize)
	var ib inputBuilder
	if prebuilt {
		ib, _ = s.(inputBuilder)
	}
	var spent time.Duration
	for i := 0; i < n; i += batchSize {
		m := min(batchSize, n-i)
		for j := 0; j < m; j++ {
			gen(&recs[j], i+j)
		}
		commit := func() error { return s.upsertBatch(e.ctx, recs[:m]) }
		if ib != nil {
			commit = ib.prepareInput(e.ctx, recs[:m])
		}
		e.allocs.begin()
		t0 := time.Now()
		if err := commit(); err != nil {
			return 0, fmt.Errorf("batch at entity %d: %w", i, err)
		}
		spent += time.Since(t0)
		e.allocs.end(m)
		p.add(m)
	}
	return spent, nil
}

func runLoadNoSync(e *env, side string, round int) ([]float64, error) {
	s, err := e.open(side, false)
	if err != nil {
		return nil, err
	}
	d, err := loadBatches(e, s, side+" load-nosync", e.sc.Entities, genRecord, true)
	if err != nil {
		return nil, err
	}
	e.loaded[side] = true
	return []float64{rate(e.sc.Entities, d)}, nil
}

func runLoadSync(e *env, side string, round int) ([]float64, error) {
	s, err := e.open(side, true)
	if err != nil {
		return nil, err
	}
	// Each round writes its own partitions.
	first := round * e.sc.SyncLoadEntities
	d, err := loadBatches(e, s, side+" load-sync", e.sc.SyncLoadEntities, func(rec *record, i int) {
		genRecord(rec, first+i)
	}, true)
	if err != nil {
		return nil, err
	}
	return []float64{rate(e.sc.SyncLoadEntities, d)}, nil
}

// runInserts runs n writers inserting new entities into the synced store
// for WriteDuration; writer w uses its own partition.
func runInserts(e *env, side string, round, n int) ([]float64, error) {
	s, err := e.open(side, true)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(e.sc.WriteDuration)
	var total atomic.Int64
	errs := make([]error, n)
	var wg sync.WaitGroup
	e.allocs.begin()
	start := time.Now()
	for w := 0; w < n; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pk := fmt.Sprintf("ins%d-%d-%02d", n, round, w)
			var rec record
			for i := 0; time.Now().Before(deadline); i++ {
				genRecordKeys(&rec, i, pk, rowKey(i))
				if err := s.insert(e.ctx, &rec); err != nil {
					errs[w] = fmt.Errorf("insert %s/%s: %w", rec.PK, rec.RK, err)
					return
				}
				total.Add(1)
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	e.allocs.end(int(total.Load()))
	// The writers made their records inside the measured part.
	pk := fmt.Sprintf("ins%d-%d-%02d", n, round, 0)
	var rec record
	e.allocs.discount(int(total.Load()), func(i int) { genRecordKeys(&rec, i, pk, rowKey(i)) })
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return []float64{rate(int(total.Load()), d)}, nil
}

// randomKeys returns n random (PartitionKey, RowKey) pairs of the data
// set, the same sequence for every side.
func randomKeys(sc scale, n int, seed uint64) (pks, rks []string) {
	r := rand.New(rand.NewPCG(seed, 7))
	pks, rks = make([]string, n), make([]string, n)
	for j := range n {
		i := r.IntN(sc.Entities)
		pks[j], rks[j] = partitionKey(i/partitionSize), rowKey(i%partitionSize)
	}
	return pks, rks
}

func runGets(e *env, side string, round int) ([]float64, error) {
	s, err := e.mainStore(side)
	if err != nil {
		return nil, err
	}
	n := e.sc.Gets
	// Warm up on other keys so every side starts with a similar cache.
	wpks, wrks := randomKeys(e.sc, min(n, 2000), 99)
	for j := range wpks {
		if _, err := s.get(e.ctx, wpks[j], wrks[j]); err != nil {
			return nil, fmt.Errorf("warm-up get %s/%s: %w", wpks[j], wrks[j], err)
		}
	}
	pks, rks := randomKeys(e.sc, n, 1+uint64(round))
	lat := make([]time.Duration, n)
	p := startProgress(side+" get", "gets", n)
	defer p.finish()
	// The reader keeps its thread, so the thread's CPU time is the
	// gets' own: it leaves out time spent waiting for a CPU, which on a
	// shared machine moves the latencies more than anything a side does.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	e.allocs.begin()
	start := time.Now()
	for j := range n {
		t0 := time.Now()
		props, err := s.get(e.ctx, pks[j], rks[j])
		lat[j] = time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("get %s/%s: %w", pks[j], rks[j], err)
		}
		if props != propertyCount {
			return nil, fmt.Errorf("get %s/%s: %d properties, want %d", pks[j], rks[j], props, propertyCount)
		}
		if j%1024 == 0 {
			p.add(1024)
		}
	}
	d := time.Since(start)
	cpu := threadCPU() - cpu0
	e.allocs.end(n)
	slices.Sort(lat)
	return []float64{
		float64(lat[n/2].Nanoseconds()),
		float64(lat[n*99/100].Nanoseconds()),
		rate(n, d),
		float64(cpu) / float64(n),
	}, nil
}

// rangeRows is how many entities a range query returns.
const rangeRows = 100

// rangeBounds is one range query: RowKeys [lo, hi) of partition pk.
type rangeBounds struct{ pk, lo, hi string }

// rangeQueries returns n random range queries of rangeRows consecutive
// RowKeys, in partitions [0, partitions).
func rangeQueries(r *rand.Rand, n, partitions int) []rangeBounds {
	qs := make([]rangeBounds, n)
	for j := range qs {
		first := r.IntN(partitionSize - rangeRows + 1)
		qs[j] = rangeBounds{partitionKey(r.IntN(partitions)), rowKey(first), rowKey(first + rangeRows)}
	}
	return qs
}

func runRanges(e *env, side string, round int) ([]float64, error) {
	s, err := e.mainStore(side)
	if err != nil {
		return nil, err
	}
	n := e.sc.RangeQueries
	// The keys are made first, so the allocations counted are the
	// queries'.
	qs := rangeQueries(rand.New(rand.NewPCG(2, uint64(round))), n, e.sc.partitions())
	p := startProgress(side+" range", "queries", n)
	defer p.finish()
	var spent time.Duration
	e.allocs.begin()
	for j := 0; j < n; j++ {
		pk, lo, hi := qs[j].pk, qs[j].lo, qs[j].hi
		t0 := time.Now()
		got, err := s.rangeQuery(e.ctx, pk, lo, hi)
		spent += time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("range %s [%s, %s): %w", pk, lo, hi, err)
		}
		if got != rangeRows {
			return nil, fmt.Errorf("range %s [%s, %s): %d entities, want %d", pk, lo, hi, got, rangeRows)
		}
		p.add(1)
	}
	e.allocs.end(n * rangeRows)
	return []float64{rate(n, spent)}, nil
}

func runPartitionScans(e *env, side string, round int) ([]float64, error) {
	s, err := e.mainStore(side)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(3, uint64(round)))
	n := e.sc.PartScans
	pks := make([]string, n)
	for j := range pks {
		pks[j] = partitionKey(r.IntN(e.sc.partitions()))
	}
	p := startProgress(side+" partition-scan", "entities", n*partitionSize)
	defer p.finish()
	var spent time.Duration
	e.allocs.begin()
	for j := 0; j < n; j++ {
		pk := pks[j]
		t0 := time.Now()
		got, err := s.partitionScan(e.ctx, pk)
		spent += time.Since(t0)
		if err != nil {
			return nil, fmt.Errorf("partition %s: %w", pk, err)
		}
		if got != partitionSize {
			return nil, fmt.Errorf("partition %s: %d entities, want %d", pk, got, partitionSize)
		}
		p.add(got)
	}
	e.allocs.end(n * partitionSize)
	return []float64{rate(n*partitionSize, spent)}, nil
}

func runFilterScans(e *env, side string, round int) ([]float64, error) {
	s, err := e.mainStore(side)
	if err != nil {
		return nil, err
	}
	want := countMatches(e.sc.Entities)
	var spent time.Duration
	e.allocs.begin()
	for pass := 0; pass < e.sc.FilterPasses; pass++ {
		t0 := time.Now()
		got, err := s.filterScan(e.ctx, filterBucket)
		spent += time.Since(t0)
		if err != nil {
			return nil, err
		}
		if got != want {
			return nil, fmt.Errorf("filter matched %d entities, want %d", got, want)
		}
	}
	e.allocs.end(want * e.sc.FilterPasses)
	logf("  %s filter-scan: %d passes over %s entities in %s", side, e.sc.FilterPasses,
		commas(float64(e.sc.Entities)), spent.Round(time.Millisecond))
	return []float64{rate(e.sc.Entities*e.sc.FilterPasses, spent)}, nil
}

func runPaging(e *env, side string, round int) ([]float64, error) {
	s, err := e.mainStore(side)
	if err != nil {
		return nil, err
	}
	want := min(e.sc.Pages*pageTop, e.sc.Entities)
	p := startProgress(side+" paging", "entities", want)
	defer p.finish()
	token, total := "", 0
	e.allocs.begin()
	start := time.Now()
	for pages := 0; pages < e.sc.Pages; pages++ {
		n, next, err := s.page(e.ctx, token, pageTop)
		if err != nil {
			return nil, fmt.Errorf("page %d: %w", pages+1, err)
		}
		total += n
		p.add(n)
		if next == "" {
			break
		}
		token = next
	}
	d := time.Since(start)
	e.allocs.end(total)
	if total != want {
		return nil, fmt.Errorf("paging read %d entities, want %d", total, want)
	}
	return []float64{rate(total, d)}, nil
}

// hotPartition is the partition the read-modify-write writers share.
const hotPartition = "hot"

func runRMW(e *env, side string, round int) ([]float64, error) {
	s, err := e.open(side, true)
	if err != nil {
		return nil, err
	}
	recs := make([]record, hotRows)
	for i := range recs {
		genRecordKeys(&recs[i], i, hotPartition, rowKey(i))
	}
	if err := s.upsertBatch(e.ctx, recs); err != nil {
		return nil, fmt.Errorf("seed hot rows: %w", err)
	}
	deadline := time.Now().Add(e.sc.WriteDuration)
	var done, conflicts atomic.Int64
	errs := make([]error, writers)
	var wg sync.WaitGroup
	e.allocs.begin()
	start := time.Now()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), uint64(round)))
			for time.Now().Before(deadline) {
				rk := rowKey(r.IntN(hotRows))
				err := s.readModifyWrite(e.ctx, hotPartition, rk)
				switch {
				case err == nil:
					done.Add(1)
				case errors.Is(err, errConflict):
					conflicts.Add(1)
				default:
					errs[w] = fmt.Errorf("rmw %s/%s: %w", hotPartition, rk, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	e.allocs.end(int(done.Load() + conflicts.Load()))
	// The writers chose their keys inside the measured part.
	e.allocs.discount(int(done.Load()+conflicts.Load()), func(i int) { _ = rowKey(i % hotRows) })
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	logf("  %s rmw: %d updates, %d conflicts in %s", side, done.Load(), conflicts.Load(), d.Round(time.Millisecond))
	// Every successful update must show in the counts: none lost.
	var sum int64
	for i := range recs {
		c, err := s.readCount(e.ctx, hotPartition, recs[i].RK)
		if err != nil {
			return nil, fmt.Errorf("read back %s/%s: %w", hotPartition, recs[i].RK, err)
		}
		sum += int64(c - recs[i].Count)
	}
	if sum != done.Load() {
		return nil, fmt.Errorf("lost updates: counts grew by %d, %d updates succeeded", sum, done.Load())
	}
	return []float64{rate(int(done.Load()), d)}, nil
}

// threadCPU returns the CPU time the calling thread has used, ns, from
// /proc/thread-self/schedstat (Linux; NaN elsewhere). The goroutine must
// be locked to its thread.
func threadCPU() float64 {
	b, err := os.ReadFile("/proc/thread-self/schedstat")
	if err != nil {
		return math.NaN()
	}
	v, _ := leadingInt(b)
	return float64(v)
}
