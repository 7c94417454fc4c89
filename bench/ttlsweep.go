package main

// The -ttl-sweep mode: point gets on live entities while the background
// sweeper removes a table of expired ones, against the same gets on the
// idle store; and the cost of TTL settings on reads that expire nothing.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablestore/tablestore"
)

// Tables of the -ttl-sweep store, each holding the data set.
const (
	ttlLiveTable     = "live"     // no TTL settings
	ttlLiveTTLTable  = "livettl"  // TTL settings under which nothing expires
	ttlExpiringTable = "expiring" // TTL settings under which all expire
)

// Goals of the -ttl-sweep mode.
const (
	sweepP99Goal    = 1.5 // live get p99 during the sweep over idle, at most
	ttlOverheadGoal = 1.1 // TTL table over plain table, get p50 time and paging time, at most
)

// ttlSweepResult is what -ttl-sweep measures; it goes to ttlsweep.json.
type ttlSweepResult struct {
	Command  string `json:"command"`
	Scale    string `json:"scale"`
	Entities int    `json:"entities"`
	// SweepRate is Options.SweepRate (0: the library's default).
	SweepRate int `json:"sweepRate"`
	// LoadAverage is /proc/loadavg at the start and at the end.
	LoadAverage [2]string `json:"loadAverage"`
	// LoadRate is the batch-100 unsynced load of each table, entities/s.
	LoadRate map[string]float64 `json:"loadRate"`
	// SetTTLSeconds is how long SetTTL took on each loaded table.
	SetTTLSeconds map[string]float64 `json:"setTTLSeconds"`

	// The TTL read overhead: the same gets and pages on the table without
	// TTL and on the one with TTL settings, alternating between the two
	// (see overheadRound); medians over every round.
	GetP50Plain float64 `json:"getP50PlainNs"`
	GetP50TTL   float64 `json:"getP50TTLNs"`
	PagingPlain float64 `json:"pagingPlain"` // entities/s: 1000 over the median page time
	PagingTTL   float64 `json:"pagingTTL"`
	// The reading thread's mean CPU time per get and per page, without
	// TTL and with (schedstat, which the kernel brings up to date at
	// ticks and switches: a mean over many operations, not moved by
	// waits for a CPU).
	GetCPUNs  [2]float64 `json:"getCPUNs"`
	PageCPUNs [2]float64 `json:"pageCPUNs"`
	// Every round's figures (its median get and page), by table.
	GetP50Rounds  map[string][]float64 `json:"getP50Rounds"`
	PagingRounds  map[string][]float64 `json:"pagingRounds"`
	GetOverhead   float64              `json:"getOverhead"`   // ttl p50 / plain p50
	PageOverhead  float64              `json:"pageOverhead"`  // plain rate / ttl rate
	OverheadGoal  float64              `json:"overheadGoal"`  // at most
	OverheadPass  bool                 `json:"overheadPass"`  // both within the goal
	SweepP99Goal  float64              `json:"sweepP99Goal"`  // at most
	SweepP99Ratio float64              `json:"sweepP99Ratio"` // during / idle before
	SweepP50Ratio float64              `json:"sweepP50Ratio"`
	SweepPass     bool                 `json:"sweepPass"`

	// The sweep: from the clock's jump to ExpiredCount's first 0.
	SweepSeconds float64 `json:"sweepSeconds"`
	SweptPerSec  float64 `json:"sweptPerSecond"`
	// Polls are (seconds since the jump, ExpiredCount) pairs.
	Polls [][2]float64 `json:"polls"`
	// CPUSeconds is the process's CPU time over the sweep, every thread
	// (the reader's and the polls' included).
	CPUSeconds float64 `json:"cpuSeconds"`
	// Live gets on the table without TTL: idle before the sweep, during
	// it, idle after it.
	IdleBefore latencies `json:"idleBefore"`
	During     latencies `json:"during"`
	IdleAfter  latencies `json:"idleAfter"`
	// The same gets' latencies less the time their thread waited for a
	// CPU during each (run-queue time).
	IdleBeforeNet latencies `json:"idleBeforeNetOfCPUWait"`
	DuringNet     latencies `json:"duringNetOfCPUWait"`
	IdleAfterNet  latencies `json:"idleAfterNetOfCPUWait"`
	// SweepP99NetRatio is DuringNet's p99 over IdleBeforeNet's (0
	// where schedstat cannot be read).
	SweepP99NetRatio float64 `json:"sweepP99NetRatio"`
	Seconds          float64 `json:"seconds"`
}

// offsetClock is a store clock that can jump forward.
type offsetClock struct{ off atomic.Int64 }

func (c *offsetClock) now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

// openBenchStore opens the tablestore store in dir with the run's
// settings and opts' Clock and SweepRate.
func openBenchStore(dir string, c config, noSync bool, clock func() time.Time, sweepRate int) (*tablestore.DB, error) {
	return tablestore.Open(dir, &tablestore.Options{NoSync: noSync, CacheSize: c.cacheSize, BlockSize: c.blockSize,
		Clock: clock, SweepRate: sweepRate})
}

// createTables creates the named tables (or opens existing ones).
func createTables(ctx context.Context, db *tablestore.DB, names ...string) ([]*tablestore.Table, error) {
	ts := make([]*tablestore.Table, len(names))
	for i, name := range names {
		t, err := db.CreateTableIfNotExists(ctx, name)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// loadTable writes entities 0..n-1 of the data set into t in batches of
// 100 upserts of one partition, unsynced or not as t's store is, and
// returns the time in the store: building the entities from the
// generated records and committing (load-nosync's method). build turns
// a record into its entity (recordEntity when nil).
func loadTable(ctx context.Context, t *tablestore.Table, label string, n int, build func(rec *record, i int) *tablestore.Entity) (time.Duration, error) {
	return loadTableEach(ctx, t, label, n, build, nil)
}

// loadTableEach is loadTable calling each (when not nil) with every
// batch's time in the store.
func loadTableEach(ctx context.Context, t *tablestore.Table, label string, n int, build func(rec *record, i int) *tablestore.Entity, each func(time.Duration)) (time.Duration, error) {
	if build == nil {
		build = func(rec *record, _ int) *tablestore.Entity { return recordEntity(rec) }
	}
	p := startProgress(label, "entities", n)
	defer p.finish()
	recs := make([]record, batchSize)
	acts := make([]tablestore.TransactionAction, batchSize)
	var spent time.Duration
	for i := 0; i < n; i += batchSize {
		m := min(batchSize, n-i)
		for j := range m {
			genRecord(&recs[j], i+j)
		}
		t0 := time.Now()
		for j := range m {
			acts[j] = tablestore.TransactionAction{Type: tablestore.ActionUpsertReplace, Entity: build(&recs[j], i+j)}
		}
		if err := t.SubmitTransaction(ctx, acts[:m]); err != nil {
			return 0, fmt.Errorf("%s: batch at entity %d: %w", label, i, err)
		}
		d := time.Since(t0)
		spent += d
		if each != nil {
			each(d)
		}
		p.add(m)
	}
	return spent, nil
}

// timedGets gets the entities at keys in order on one goroutine locked
// to its thread, checks each has want properties, and returns each
// get's latency and the wall time of the whole run.
func timedGets(ctx context.Context, t *tablestore.Table, pks, rks []string, want int) ([]time.Duration, time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lat := make([]time.Duration, len(pks))
	start := time.Now()
	for j := range pks {
		t0 := time.Now()
		e, err := t.Get(ctx, pks[j], rks[j], nil)
		lat[j] = time.Since(t0)
		if err != nil {
			return nil, 0, fmt.Errorf("get %s/%s: %w", pks[j], rks[j], err)
		}
		if len(e.Properties) != want {
			return nil, 0, fmt.Errorf("get %s/%s: %d properties, want %d", pks[j], rks[j], len(e.Properties), want)
		}
	}
	return lat, time.Since(start), nil
}

// schedStat reads the calling thread's CPU and run-queue times from
// /proc/thread-self/schedstat; the goroutine must be locked to the
// thread that opened it. Where the file cannot be read, f is nil and
// read returns zeros.
type schedStat struct {
	f   *os.File
	buf []byte
}

func openSchedStat() *schedStat {
	f, _ := os.Open("/proc/thread-self/schedstat")
	return &schedStat{f: f, buf: make([]byte, 128)}
}

// read returns the thread's CPU time and its time waiting for a CPU, ns.
func (s *schedStat) read() (cpu, runq int64) {
	if s.f == nil {
		return 0, 0
	}
	m, err := s.f.ReadAt(s.buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return 0, 0
	}
	return parseSchedStat(s.buf[:m])
}

func (s *schedStat) close() {
	if s.f != nil {
		s.f.Close()
	}
}

// parseSchedStat returns the first two fields of a schedstat line: CPU
// time and run-queue time, ns.
func parseSchedStat(b []byte) (cpu, runq int64) {
	cpu, rest := leadingInt(b)
	runq, _ = leadingInt(bytes.TrimLeft(rest, " "))
	return cpu, runq
}

// liveReader gets random entities of the data set's n from t, one at a
// time on a goroutine locked to its thread (the keys made outside the
// timed get, from seed), until done says so (asked after each get). It
// returns each get's latency, the same less the time the thread waited
// for a CPU meanwhile (the run-queue time of /proc/thread-self/schedstat,
// read around the get; on a loaded machine most of a slow get's time;
// nil where the file cannot be read), and the wall time of the run.
func liveReader(ctx context.Context, t *tablestore.Table, n int, seed uint64, done func(count int, el time.Duration) bool) (lat, net []time.Duration, wall time.Duration, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sched := openSchedStat()
	defer sched.close()
	rng := rand.New(rand.NewPCG(seed, 7))
	start := time.Now()
	for {
		i := rng.IntN(n)
		pk, rk := partitionKey(i/partitionSize), rowKey(i%partitionSize)
		_, q0 := sched.read()
		t0 := time.Now()
		e, err := t.Get(ctx, pk, rk, nil)
		d := time.Since(t0)
		_, q1 := sched.read()
		waited := time.Duration(q1 - q0)
		lat = append(lat, d)
		if sched.f != nil {
			net = append(net, max(d-waited, 0))
		}
		if err == nil && len(e.Properties) != propertyCount {
			err = fmt.Errorf("%d properties, want %d", len(e.Properties), propertyCount)
		}
		if err != nil {
			return nil, nil, 0, fmt.Errorf("get %s/%s: %w", pk, rk, err)
		}
		if done(len(lat), time.Since(start)) {
			return lat, net, time.Since(start), nil
		}
	}
}

// overheadRound gets the entities at keys from both tables, one get on
// each in turn (which table goes first alternates), on a goroutine
// locked to its thread, then reads pages Top-1000 pages of each from
// their starts, one page of each in turn; it returns every get's and
// every page's time per table, and the reading thread's CPU time for
// each (schedstat; zeros where it cannot be read). Alternating makes a drift in the
// machine's speed slow both tables alike.
func overheadRound(ctx context.Context, ts [2]*tablestore.Table, pks, rks []string, pages int) (gets, pageTimes, getCPU, pageCPU [2][]time.Duration, err error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	sched := openSchedStat()
	defer sched.close()
	for j := range pks {
		for x := range 2 {
			k := (j + x) % 2
			c0, _ := sched.read()
			t0 := time.Now()
			e, err := ts[k].Get(ctx, pks[j], rks[j], nil)
			d := time.Since(t0)
			c1, _ := sched.read()
			if err == nil && len(e.Properties) != propertyCount {
				err = fmt.Errorf("%d properties, want %d", len(e.Properties), propertyCount)
			}
			if err != nil {
				return gets, pageTimes, getCPU, pageCPU, fmt.Errorf("get %s/%s from %s: %w", pks[j], rks[j], ts[k].Name(), err)
			}
			gets[k] = append(gets[k], d)
			getCPU[k] = append(getCPU[k], time.Duration(c1-c0))
		}
	}
	var tokens [2]string
	for pg := range pages {
		for x := range 2 {
			k := (pg + x) % 2
			c0, _ := sched.read()
			t0 := time.Now()
			p, err := ts[k].QueryPage(ctx, tablestore.Query{Top: pageTop, Continuation: tokens[k]})
			d := time.Since(t0)
			c1, _ := sched.read()
			if err == nil && len(p.Entities) != pageTop {
				err = fmt.Errorf("%d entities, want %d", len(p.Entities), pageTop)
			}
			if err != nil {
				return gets, pageTimes, getCPU, pageCPU, fmt.Errorf("page %d of %s: %w", pg+1, ts[k].Name(), err)
			}
			tokens[k] = p.Continuation
			pageTimes[k] = append(pageTimes[k], d)
			pageCPU[k] = append(pageCPU[k], time.Duration(c1-c0))
		}
	}
	return gets, pageTimes, getCPU, pageCPU, nil
}

// pollWait returns how long to wait before the next ExpiredCount poll
// when remaining entities are left to sweep at rate per second: half the
// time they should take, within [100 ms, 10 s], so the polls (each reads
// the entries left) are few while much is left and the end is seen
// within a tenth of a second.
func pollWait(remaining int64, rate int) time.Duration {
	if rate <= 0 {
		rate = 10_000
	}
	d := time.Duration(float64(remaining) / float64(rate) / 2 * float64(time.Second))
	return min(max(d, 100*time.Millisecond), 10*time.Second)
}

// runTTLSweep is the -ttl-sweep mode.
func runTTLSweep(ctx context.Context, c config, dataDir string, args []string) error {
	n := c.scale.Entities
	res := &ttlSweepResult{Command: commandLine("go run .", args), Scale: c.scale.Name, Entities: n, SweepRate: c.sweepRate,
		LoadRate: map[string]float64{}, SetTTLSeconds: map[string]float64{},
		GetP50Rounds: map[string][]float64{}, PagingRounds: map[string][]float64{}, OverheadGoal: ttlOverheadGoal, SweepP99Goal: sweepP99Goal}
	res.LoadAverage[0] = loadAvg()
	started := time.Now()
	logf("ttl-sweep: scale %s, %s entities per table, load average %s", c.scale.Name, commas(float64(n)), res.LoadAverage[0])
	dir := filepath.Join(dataDir, "ttl-sweep", "tablestore")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	clk := &offsetClock{}
	db, err := openBenchStore(dir, c, true, clk.now, c.sweepRate)
	if err != nil {
		return err
	}
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	names := []string{ttlLiveTable, ttlLiveTTLTable, ttlExpiringTable}
	tables, err := createTables(ctx, db, names...)
	if err != nil {
		return err
	}
	for i, t := range tables {
		d, err := loadTable(ctx, t, "load "+names[i], n, nil)
		if err != nil {
			return err
		}
		res.LoadRate[names[i]] = rate(n, d)
	}
	// Nothing expires under livettl's settings within the run; every
	// entity of expiring does once the clock jumps two hours.
	for _, s := range []struct {
		name string
		ttl  tablestore.TTL
	}{{ttlLiveTTLTable, tablestore.TTL{Default: 10 * 365 * 24 * time.Hour}}, {ttlExpiringTable, tablestore.TTL{Default: time.Hour}}} {
		t0 := time.Now()
		if err := db.Table(s.name).SetTTL(ctx, s.ttl); err != nil {
			return fmt.Errorf("SetTTL %s: %w", s.name, err)
		}
		res.SetTTLSeconds[s.name] = time.Since(t0).Seconds()
		logf("ttl-sweep: SetTTL on %s took %s", s.name, time.Since(t0).Round(time.Millisecond))
	}
	// Settle: compact the store whole, so every phase reads the same
	// LSM shape and no load compaction runs during the gets.
	if err := db.Close(); err != nil {
		return err
	}
	db = nil
	t0 := time.Now()
	if err := compactClosedStore(ctx, dir, storeSettings{cacheSize: c.cacheSize, blockSize: c.blockSize}); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	logf("ttl-sweep: compacted in %s", time.Since(t0).Round(time.Millisecond))
	if db, err = openBenchStore(dir, c, true, clk.now, c.sweepRate); err != nil {
		return err
	}
	live, liveTTL, expiring := db.Table(ttlLiveTable), db.Table(ttlLiveTTLTable), db.Table(ttlExpiringTable)
	if left, err := expiring.ExpiredCount(ctx); err != nil || left != 0 {
		return fmt.Errorf("before the jump: ExpiredCount %d, %v; want 0", left, err)
	}

	// Warm-up, then the TTL read overhead: the two tables side by side.
	wpks, wrks := randomKeys(c.scale, min(c.scale.Gets, 2000), 99)
	for _, t := range []*tablestore.Table{live, liveTTL} {
		if _, _, err := timedGets(ctx, t, wpks, wrks, propertyCount); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
	}
	pages := min(c.scale.Pages, n/pageTop)
	var allGets, allPages, allGetCPU, allPageCPU [2][]time.Duration
	for r := range c.rounds {
		pks, rks := randomKeys(c.scale, c.scale.Gets, 1+uint64(r))
		gets, pageTimes, getCPU, pageCPU, err := overheadRound(ctx, [2]*tablestore.Table{live, liveTTL}, pks, rks, pages)
		if err != nil {
			return err
		}
		for k, t := range []*tablestore.Table{live, liveTTL} {
			p50 := float64(median(gets[k]))
			pr := float64(pageTop) / median(pageTimes[k]).Seconds()
			logf("ttl-sweep: round %d, %s: get p50 %s ns, paging %s entities/s (median page)", r+1, t.Name(), commas(p50), commas(pr))
			res.GetP50Rounds[t.Name()] = append(res.GetP50Rounds[t.Name()], p50)
			res.PagingRounds[t.Name()] = append(res.PagingRounds[t.Name()], pr)
			allGets[k] = append(allGets[k], gets[k]...)
			allPages[k] = append(allPages[k], pageTimes[k]...)
			allGetCPU[k] = append(allGetCPU[k], getCPU[k]...)
			allPageCPU[k] = append(allPageCPU[k], pageCPU[k]...)
		}
	}
	res.GetP50Plain, res.GetP50TTL = float64(median(allGets[0])), float64(median(allGets[1]))
	res.PagingPlain = float64(pageTop) / median(allPages[0]).Seconds()
	res.PagingTTL = float64(pageTop) / median(allPages[1]).Seconds()
	for k := range 2 {
		res.GetCPUNs[k] = meanOf(allGetCPU[k])
		res.PageCPUNs[k] = meanOf(allPageCPU[k])
	}
	res.GetOverhead = ratio(res.GetP50TTL, res.GetP50Plain)
	res.PageOverhead = ratio(res.PagingPlain, res.PagingTTL)
	res.OverheadPass = res.GetOverhead <= ttlOverheadGoal && res.PageOverhead <= ttlOverheadGoal

	// Idle gets before the sweep: at least -gets of them and a tenth of
	// the time the sweep should take at the configured rate.
	rateHint := c.sweepRate
	if rateHint <= 0 {
		rateHint = 10_000
	}
	idleFor := time.Duration(float64(n) / float64(rateHint) / 10 * float64(time.Second))
	idle := func(count int, el time.Duration) bool { return count >= c.scale.Gets && el >= idleFor }
	lat, net, wall, err := liveReader(ctx, live, n, 1000, idle)
	if err != nil {
		return err
	}
	res.IdleBefore, res.IdleBeforeNet = summarize(lat, wall), summarize(net, 0)

	// The jump: every entity of expiring has expired; the sweeper finds
	// them within its idle wait (a second) and removes them at its rate.
	clk.off.Store(int64(2 * time.Hour))
	jump := time.Now()
	cpu0 := processCPU()
	if _, err := expiring.Get(ctx, partitionKey(0), rowKey(0), nil); !errors.Is(err, tablestore.ErrResourceNotFound) {
		return fmt.Errorf("an expired entity: get returned %v, want ResourceNotFound", err)
	}
	var stop atomic.Bool
	var during, duringNet []time.Duration
	var duringErr error
	var readerWall time.Duration
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		during, duringNet, readerWall, duringErr = liveReader(ctx, live, n, 2000, func(int, time.Duration) bool { return stop.Load() })
	}()
	p := startProgress("sweep of "+commas(float64(n))+" expired entities", "entities", n)
	left := int64(n)
	for {
		if err := sleepCtx(ctx, pollWait(left, rateHint)); err != nil {
			stop.Store(true)
			wg.Wait()
			p.finish()
			return err
		}
		var err error
		if left, err = expiring.ExpiredCount(ctx); err != nil {
			stop.Store(true)
			wg.Wait()
			p.finish()
			return fmt.Errorf("ExpiredCount: %w", err)
		}
		el := time.Since(jump)
		res.Polls = append(res.Polls, [2]float64{el.Seconds(), float64(left)})
		p.done.Store(int64(n) - left)
		if left == 0 {
			res.SweepSeconds = el.Seconds()
			break
		}
	}
	stop.Store(true)
	wg.Wait()
	p.finish()
	res.CPUSeconds = float64(processCPU()-cpu0) / 1e9
	if duringErr != nil {
		return fmt.Errorf("during the sweep: %w", duringErr)
	}
	res.SweptPerSec = float64(n) / res.SweepSeconds
	res.During, res.DuringNet = summarize(during, readerWall), summarize(duringNet, 0)

	// Idle gets after the sweep, and what is left of the expired table.
	if lat, net, wall, err = liveReader(ctx, live, n, 3000, idle); err != nil {
		return err
	}
	res.IdleAfter, res.IdleAfterNet = summarize(lat, wall), summarize(net, 0)
	page, err := expiring.QueryPage(ctx, tablestore.Query{Top: 1})
	if err != nil || len(page.Entities) != 0 {
		return fmt.Errorf("the expired table after the sweep: %v, %v; want no entity", page, err)
	}
	res.SweepP99Ratio = ratio(res.During.P99, res.IdleBefore.P99)
	res.SweepP50Ratio = ratio(res.During.P50, res.IdleBefore.P50)
	if res.IdleBeforeNet.P99 > 0 {
		res.SweepP99NetRatio = res.DuringNet.P99 / res.IdleBeforeNet.P99
	}
	res.SweepPass = res.SweepP99Ratio <= sweepP99Goal
	res.LoadAverage[1] = loadAvg()
	res.Seconds = time.Since(started).Seconds()
	printTTLSweep(os.Stdout, res)
	return writeResultJSON(c.outDir, "ttlsweep.json", res)
}

// sleepCtx sleeps for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// writeResultJSON writes v, indented, to name in dir.
func writeResultJSON(dir, name string, v any) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, name)
	fmt.Printf("\nwrote %s\n", path)
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

func printTTLSweep(w io.Writer, r *ttlSweepResult) {
	rateName := "library default"
	if r.SweepRate > 0 {
		rateName = commas(float64(r.SweepRate)) + "/s"
	}
	fmt.Fprintf(w, "ttl-sweep: %s entities per table, sweep rate %s, load average %s at the start, %s at the end (%.0f s)\n",
		commas(float64(r.Entities)), rateName, r.LoadAverage[0], r.LoadAverage[1], r.Seconds)
	fmt.Fprintf(w, "\nsweep of %s expired entities: %.1f s, %s entities/s, %.1f s of process CPU (%d ExpiredCount polls)\n",
		commas(float64(r.Entities)), r.SweepSeconds, commas(r.SweptPerSec), r.CPUSeconds, len(r.Polls))
	fmt.Fprintf(w, "\n%-34s %8s %10s %10s %10s %10s %12s\n", "live point gets (table without TTL)", "gets", "p50 ns", "p99 ns", "p99.9 ns", "max ns", "gets/s")
	for _, x := range []struct {
		name string
		l    latencies
	}{{"idle, before the sweep", r.IdleBefore}, {"during the sweep", r.During}, {"idle, after the sweep", r.IdleAfter}} {
		fmt.Fprintf(w, "%-34s %8s %10s %10s %10s %10s %12s\n", x.name, commas(float64(x.l.Count)), commas(x.l.P50),
			commas(x.l.P99), commas(x.l.P999), commas(x.l.Max), commas(x.l.Rate))
	}
	if r.DuringNet.Count > 0 {
		fmt.Fprintf(w, "%-34s\n", "the same, less each get's wait for a CPU:")
		for _, x := range []struct {
			name string
			l    latencies
		}{{"idle, before the sweep", r.IdleBeforeNet}, {"during the sweep", r.DuringNet}, {"idle, after the sweep", r.IdleAfterNet}} {
			fmt.Fprintf(w, "%-34s %8s %10s %10s %10s %10s\n", x.name, commas(float64(x.l.Count)), commas(x.l.P50),
				commas(x.l.P99), commas(x.l.P999), commas(x.l.Max))
		}
	}
	fmt.Fprintf(w, "\n%s\n", goalLine("live get p99 during the sweep / idle before", r.SweepP99Ratio, fmt.Sprintf("<= %.1fx", sweepP99Goal), r.SweepPass))
	fmt.Fprintf(w, "live get p50 during the sweep / idle before: %s; p99 during / idle after: %s; p99 less CPU waits, during / idle before: %s\n",
		formatRatio(r.SweepP50Ratio), formatRatio(ratio(r.During.P99, r.IdleAfter.P99)), formatRatio(r.SweepP99NetRatio))
	fmt.Fprintf(w, "\nTTL read overhead (nothing expired; the two tables alternating, medians over %d rounds):\n", len(r.GetP50Rounds[ttlLiveTable]))
	fmt.Fprintf(w, "  point get p50:  %s ns without TTL, %s ns with TTL\n", commas(r.GetP50Plain), commas(r.GetP50TTL))
	fmt.Fprintf(w, "  paging Top 1000: %s entities/s without TTL, %s with TTL (1000 over the median page time)\n", commas(r.PagingPlain), commas(r.PagingTTL))
	fmt.Fprintf(w, "  the reading thread's mean CPU time: per get %s ns without TTL, %s with (%s); per page %s ns without, %s with (%s)\n",
		commas(r.GetCPUNs[0]), commas(r.GetCPUNs[1]), formatRatio(ratio(r.GetCPUNs[1], r.GetCPUNs[0])),
		commas(r.PageCPUNs[0]), commas(r.PageCPUNs[1]), formatRatio(ratio(r.PageCPUNs[1], r.PageCPUNs[0])))
	fmt.Fprintf(w, "  %s\n", goalLine("get p50 time, TTL / none", r.GetOverhead, fmt.Sprintf("<= %.1fx", ttlOverheadGoal), r.GetOverhead <= ttlOverheadGoal))
	fmt.Fprintf(w, "  %s\n", goalLine("paging time, TTL / none", r.PageOverhead, fmt.Sprintf("<= %.1fx", ttlOverheadGoal), r.PageOverhead <= ttlOverheadGoal))
}
