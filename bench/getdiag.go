package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// The get diagnosis (-getdiag) looks for the cause of the point-get tail:
// it loads the main stores as load-nosync does, then measures rounds of
// the get workload on every side in several states of the stores, with
// each get instrumented:
//
//   - after load: at once, as a run of -workloads=get does;
//   - settled: once the process has been idle (no flush or compaction
//     running) for a second;
//   - compacted: every store compacted into its last level (tablestore's
//     closed, compacted by raw Pebble with the same options, reopened);
//   - compacted, GC off: the same with the collector disabled during
//     the gets;
//   - files: raw Pebble's Get and a copy of the value, no decoding, on
//     raw Pebble's store and on a checkpoint of tablestore's store (same
//     options, same cache size): the files alone, without either side's
//     code.
//
// Per get it records the latency, the read system calls of the reading
// thread (block cache misses: each reads a block with pread) and its
// time waiting for a CPU (run queue, from schedstat); per round, the GC
// cycles, pauses and assist time (runtime/metrics), the CPU the rest of
// the process used meanwhile (flushes, compactions, GC workers) and, on
// raw Pebble's stores, the block cache hit rate and compactions.

// getRound is one instrumented round of point gets.
type getRound struct {
	Phase string `json:"phase"`
	Side  string `json:"side"`
	Round int    `json:"round"`
	Gets  int    `json:"gets"`
	// Latencies, ns.
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"` // of the gets' own times (the probes' excluded)
	// ReadsPerGet are read system calls per get on the reading thread
	// (block cache misses), BytesPerGet the bytes they read.
	ReadsPerGet float64 `json:"readsPerGet"`
	BytesPerGet float64 `json:"bytesPerGet"`
	// The slowest 1% of gets: read calls per get, share with at least
	// one read, and mean time waiting for a CPU (ns).
	SlowReads    float64 `json:"slowReadsPerGet"`
	SlowWithRead float64 `json:"slowShareWithRead"`
	SlowRunq     float64 `json:"slowRunqueueNs"`
	// The median get's neighbourhood (40th to 60th percentile): reads.
	MidReads float64 `json:"midReadsPerGet"`
	// Runq is the mean time per get waiting for a CPU, ns.
	Runq float64 `json:"runqueueNs"`
	// GC during the round.
	GCCycles   uint64  `json:"gcCycles"`
	GCPauses   uint64  `json:"gcPauses"`
	GCPauseSum float64 `json:"gcPauseSumNs"`
	GCPauseMax float64 `json:"gcPauseMaxNs"`
	AssistCPU  float64 `json:"gcAssistCpuNs"`
	GCCPU      float64 `json:"gcCpuNs"`
	// Background is the CPU the process used on other threads than the
	// reading one during the round, ns.
	Background float64 `json:"backgroundCpuNs"`
	// Raw Pebble stores only (-1 otherwise).
	CacheHit    float64 `json:"cacheHitRate"`
	Compactions int64   `json:"compactions"`
	AllocsPer   float64 `json:"allocsPerGet"`
}

// getDiag is the diagnosis's result.
type getDiag struct {
	Scale   scale                          `json:"scale"`
	Command string                         `json:"command"`
	Started time.Time                      `json:"started"`
	Load    map[string]float64             `json:"loadEntitiesPerSecond"`
	Shapes  map[string]map[string]lsmShape `json:"shapes"` // phase -> side -> shape
	Settle  float64                        `json:"settleSeconds"`
	Rounds  []getRound                     `json:"rounds"`
	Uptime  map[string]string              `json:"loadAverage"` // phase -> /proc/loadavg
}

// getter is one way of reading an entity by key for the diagnosis.
type getter func(ctx context.Context, pk, rk string) (int, error)

func runGetDiag(ctx context.Context, c config, dataDir string, args []string) error {
	d := &getDiag{Scale: c.scale, Command: commandLine("go run .", args), Started: time.Now().UTC(),
		Load: map[string]float64{}, Shapes: map[string]map[string]lsmShape{}, Uptime: map[string]string{}}
	e := newEnv(ctx, c.scale, dataDir, c.cacheSize, c.blockSize)
	defer e.closeAll()
	sides := slices.DeleteFunc(slices.Clone(c.sides), func(s string) bool { return s == sideSQLite })
	for _, side := range sides {
		vals, err := runLoadNoSync(e, side, 0)
		if err != nil {
			return fmt.Errorf("load %s: %w", side, err)
		}
		d.Load[side] = vals[0]
	}
	getters := func() (map[string]getter, error) {
		m := map[string]getter{}
		for _, side := range sides {
			s, err := e.mainStore(side)
			if err != nil {
				return nil, err
			}
			m[side] = s.get
		}
		return m, nil
	}
	phase := func(name string, gcOff bool) error {
		if err := d.shapes(e, name, sides); err != nil {
			return err
		}
		g, err := getters()
		if err != nil {
			return err
		}
		return d.rounds(e, name, sides, g, c.rounds, gcOff)
	}
	if err := phase("after load", false); err != nil {
		return err
	}
	t0 := time.Now()
	waitIdle(ctx, time.Second, 5*time.Minute)
	d.Settle = time.Since(t0).Seconds()
	logf("getdiag: process idle after %.1f s", d.Settle)
	if err := phase("settled", false); err != nil {
		return err
	}
	for _, side := range sides {
		if _, err := compactMain(e, side); err != nil {
			return fmt.Errorf("compact %s: %w", side, err)
		}
	}
	waitIdle(ctx, time.Second, time.Minute)
	if err := phase("compacted", false); err != nil {
		return err
	}
	if err := phase("compacted, GC off", true); err != nil {
		return err
	}
	if err := d.filesPhase(e, c.rounds); err != nil {
		return err
	}
	printGetDiag(os.Stdout, d, sides)
	if err := os.MkdirAll(c.outDir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(c.outDir, "getdiag.json")
	fmt.Printf("\nwrote %s\n", path)
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// loadAvg returns the first three fields of /proc/loadavg.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "n/a"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "n/a"
	}
	return strings.Join(f[:3], " ")
}

func (d *getDiag) shapes(e *env, phase string, sides []string) error {
	d.Shapes[phase] = map[string]lsmShape{}
	d.Uptime[phase] = loadAvg()
	for _, side := range sides {
		sh, err := storeShape(e, side)
		if err != nil {
			return fmt.Errorf("shape of %s: %w", side, err)
		}
		d.Shapes[phase][side] = sh
		logf("getdiag: %s: %s: %s", phase, side, sh)
	}
	return nil
}

// rounds measures rounds rounds of gets on every side, rotating the
// order each round.
func (d *getDiag) rounds(e *env, phase string, sides []string, g map[string]getter, rounds int, gcOff bool) error {
	for r := range rounds {
		for k := range sides {
			side := sides[(k+r)%len(sides)]
			var db *pebble.DB
			switch s := e.main[side].(type) {
			case *pebbleStore:
				db = s.db
			case pebbleMapsStore:
				db = s.db
			}
			gr, err := measureGetRound(e, g[side], db, r, gcOff)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", phase, side, err)
			}
			gr.Phase, gr.Side = phase, side
			d.Rounds = append(d.Rounds, gr)
			logf("getdiag: %s: %s round %d: p50 %s p99 %s mean %s, %.2f reads/get, slowest 1%%: %.2f reads, runq %s",
				phase, side, r+1, ns(gr.P50), ns(gr.P99), ns(gr.Mean), gr.ReadsPerGet, gr.SlowReads, ns(gr.SlowRunq))
		}
	}
	return nil
}

func ns(v float64) string { return time.Duration(v).Round(100 * time.Nanosecond).String() }

// threadProbe reads the calling thread's read system calls and bytes
// (/proc/thread-self/io) and CPU and run-queue time
// (/proc/thread-self/schedstat). The goroutine must be locked to its
// thread.
type threadProbe struct {
	io, sched *os.File
	buf       []byte
	// ownCalls and ownBytes are what one sample adds to the counters
	// itself, measured by calibrate and taken off every sample.
	ownCalls, ownBytes int64
	taken              int64 // samples taken
}

type threadSample struct {
	syscr, rchar  int64
	cpuNs, runqNs int64
}

func openThreadProbe() (*threadProbe, error) {
	io, err := os.Open("/proc/thread-self/io")
	if err != nil {
		return nil, err
	}
	sched, err := os.Open("/proc/thread-self/schedstat")
	if err != nil {
		io.Close()
		return nil, err
	}
	p := &threadProbe{io: io, sched: sched, buf: make([]byte, 512)}
	return p, p.calibrate()
}

// calibrate measures what a sample adds to the counters it reads: the
// smallest change between back-to-back samples.
func (p *threadProbe) calibrate() error {
	prev, err := p.sample()
	if err != nil {
		return err
	}
	calls, bytes := int64(math.MaxInt64), int64(math.MaxInt64)
	for range 20 {
		cur, err := p.sample()
		if err != nil {
			return err
		}
		calls = min(calls, cur.syscr-prev.syscr)
		bytes = min(bytes, cur.rchar-prev.rchar)
		prev = cur
	}
	p.ownCalls, p.ownBytes, p.taken = calls, bytes, 0
	return nil
}

func (p *threadProbe) close() { p.io.Close(); p.sched.Close() }

// sample reads both files, net of the reads of the samples before it.
func (p *threadProbe) sample() (threadSample, error) {
	var s threadSample
	n, err := p.io.ReadAt(p.buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return s, err
	}
	s.rchar = fieldAfter(p.buf[:n], "rchar: ")
	s.syscr = fieldAfter(p.buf[:n], "syscr: ")
	m, err := p.sched.ReadAt(p.buf, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return s, err
	}
	var rest []byte
	s.cpuNs, rest = leadingInt(p.buf[:m])
	s.runqNs, _ = leadingInt(bytes.TrimLeft(rest, " "))
	s.syscr -= p.taken * p.ownCalls
	s.rchar -= p.taken * p.ownBytes
	p.taken++
	return s, nil
}

// fieldAfter returns the decimal number after the first occurrence of
// label in b, or 0.
func fieldAfter(b []byte, label string) int64 {
	i := bytes.Index(b, []byte(label))
	if i < 0 {
		return 0
	}
	v, _ := leadingInt(b[i+len(label):])
	return v
}

// leadingInt parses the decimal digits at the start of b and returns the
// rest; it allocates nothing.
func leadingInt(b []byte) (int64, []byte) {
	var v int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + int64(b[i]-'0')
	}
	return v, b[i:]
}

// gcSample is the collector's cumulative counters: cycles, the
// histogram of stop-the-world pauses, and assist and total GC CPU
// seconds.
type gcSample struct {
	cycles        uint64
	assist, total float64
	counts        []uint64
	buckets       []float64
}

var gcMetricNames = []string{
	"/gc/cycles/total:gc-cycles",
	"/sched/pauses/total/gc:seconds",
	"/cpu/classes/gc/mark/assist:cpu-seconds",
	"/cpu/classes/gc/total:cpu-seconds",
}

func readGC() gcSample {
	ms := make([]metrics.Sample, len(gcMetricNames))
	for i, n := range gcMetricNames {
		ms[i].Name = n
	}
	metrics.Read(ms)
	var g gcSample
	if ms[0].Value.Kind() == metrics.KindUint64 {
		g.cycles = ms[0].Value.Uint64()
	}
	if ms[1].Value.Kind() == metrics.KindFloat64Histogram {
		h := ms[1].Value.Float64Histogram()
		g.counts = slices.Clone(h.Counts)
		g.buckets = h.Buckets
	}
	if ms[2].Value.Kind() == metrics.KindFloat64 {
		g.assist = ms[2].Value.Float64()
	}
	if ms[3].Value.Kind() == metrics.KindFloat64 {
		g.total = ms[3].Value.Float64()
	}
	return g
}

// gcDelta returns b - a: cycles, pauses (count, estimated sum and the
// largest bucket's upper bound, in ns), assist and GC CPU (ns).
func gcDelta(a, b gcSample) (cycles, pauses uint64, sum, mx, assist, total float64) {
	cycles = b.cycles - a.cycles
	for i := range b.counts {
		n := b.counts[i]
		if i < len(a.counts) {
			n -= a.counts[i]
		}
		if n == 0 {
			continue
		}
		lo, hi := b.buckets[i], b.buckets[i+1]
		if math.IsInf(lo, -1) {
			lo = 0
		}
		if math.IsInf(hi, 1) {
			hi = lo
		}
		pauses += n
		sum += float64(n) * (lo + hi) / 2 * 1e9
		mx = max(mx, hi*1e9)
	}
	return cycles, pauses, sum, mx, (b.assist - a.assist) * 1e9, (b.total - a.total) * 1e9
}

// processCPU returns the process's user and system CPU time, ns.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// measureGetRound runs one round of the get workload (the same warm-up
// and keys as runGets) through get on a goroutine locked to its thread,
// probing the thread around every get. db, when not nil, is the raw
// Pebble store read, for its cache and compaction counters.
func measureGetRound(e *env, get getter, db *pebble.DB, round int, gcOff bool) (getRound, error) {
	gr := getRound{Round: round + 1, CacheHit: -1, Compactions: -1}
	type res struct {
		gr  getRound
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		err := func() error {
			n := e.sc.Gets
			wpks, wrks := randomKeys(e.sc, min(n, 2000), 99)
			for j := range wpks {
				if _, err := get(e.ctx, wpks[j], wrks[j]); err != nil {
					return fmt.Errorf("warm-up get %s/%s: %w", wpks[j], wrks[j], err)
				}
			}
			pks, rks := randomKeys(e.sc, n, 1+uint64(round))
			probe, err := openThreadProbe()
			if err != nil {
				return err
			}
			defer probe.close()
			lat := make([]int64, n)
			reads := make([]int64, n)
			rbytes := make([]int64, n)
			runq := make([]int64, n)
			runtime.GC()
			if gcOff {
				old := debug.SetGCPercent(-1)
				defer debug.SetGCPercent(old)
			}
			var m0 *pebble.Metrics
			if db != nil {
				m0 = db.Metrics()
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			mallocs := ms.Mallocs
			g0 := readGC()
			p0 := processCPU()
			prev, err := probe.sample()
			if err != nil {
				return err
			}
			t0 := prev
			for j := range n {
				a := time.Now()
				props, err := get(e.ctx, pks[j], rks[j])
				lat[j] = int64(time.Since(a))
				if err != nil {
					return fmt.Errorf("get %s/%s: %w", pks[j], rks[j], err)
				}
				if props != propertyCount {
					return fmt.Errorf("get %s/%s: %d properties, want %d", pks[j], rks[j], props, propertyCount)
				}
				cur, err := probe.sample()
				if err != nil {
					return err
				}
				reads[j], rbytes[j], runq[j] = cur.syscr-prev.syscr, cur.rchar-prev.rchar, cur.runqNs-prev.runqNs
				prev = cur
			}
			p1 := processCPU()
			g1 := readGC()
			runtime.ReadMemStats(&ms)
			gr.AllocsPer = float64(ms.Mallocs-mallocs) / float64(n)
			gr.GCCycles, gr.GCPauses, gr.GCPauseSum, gr.GCPauseMax, gr.AssistCPU, gr.GCCPU = gcDelta(g0, g1)
			gr.Background = float64((p1 - p0) - (prev.cpuNs - t0.cpuNs))
			if db != nil {
				m1 := db.Metrics()
				h, m := m1.BlockCache.Hits-m0.BlockCache.Hits, m1.BlockCache.Misses-m0.BlockCache.Misses
				if h+m > 0 {
					gr.CacheHit = float64(h) / float64(h+m)
				}
				gr.Compactions = m1.Compact.Count - m0.Compact.Count
			}
			gr.Gets = n
			var sum int64
			for _, l := range lat {
				sum += l
			}
			gr.Mean = float64(sum) / float64(n)
			gr.fill(lat, reads, rbytes, runq)
			return nil
		}()
		ch <- res{gr, err}
	}()
	r := <-ch
	return r.gr, r.err
}

// fill computes the latency percentiles and the per-get attributions.
func (gr *getRound) fill(lat, reads, rbytes, runq []int64) {
	n := len(lat)
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return int(lat[a] - lat[b]) })
	at := func(q float64) float64 { return float64(lat[idx[min(n-1, int(q*float64(n)))]]) }
	gr.P50, gr.P90, gr.P99, gr.P999, gr.Max = at(0.5), at(0.9), at(0.99), at(0.999), float64(lat[idx[n-1]])
	var sr, sb, rq int64
	for i := range n {
		sr += reads[i]
		sb += rbytes[i]
		rq += runq[i]
	}
	gr.ReadsPerGet, gr.BytesPerGet, gr.Runq = float64(sr)/float64(n), float64(sb)/float64(n), float64(rq)/float64(n)
	slow := idx[n*99/100:]
	var with, rsum, qsum int64
	for _, i := range slow {
		rsum += reads[i]
		qsum += runq[i]
		if reads[i] > 0 {
			with++
		}
	}
	gr.SlowReads = float64(rsum) / float64(len(slow))
	gr.SlowWithRead = float64(with) / float64(len(slow))
	gr.SlowRunq = float64(qsum) / float64(len(slow))
	mid := idx[n*40/100 : n*60/100]
	var msum int64
	for _, i := range mid {
		msum += reads[i]
	}
	gr.MidReads = float64(msum) / float64(max(1, len(mid)))
}

// waitIdle waits until the process has used under 5% of a CPU for a
// whole quiet period (no flush, compaction or collection running), at
// most limit.
func waitIdle(ctx context.Context, quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		c0 := processCPU()
		time.Sleep(quiet)
		if float64(processCPU()-c0) < 0.05*float64(quiet) {
			return
		}
	}
}

// filesPhase reads the same keys with raw Pebble's Get and a copy of the
// value, no decoding, on raw Pebble's store and on a checkpoint of
// tablestore's store opened by raw Pebble with the same options: the two
// sets of files, read by the same code.
func (d *getDiag) filesPhase(e *env, rounds int) error {
	const phase = "files (raw Get + copy)"
	ps, err := e.mainStore(sidePebble)
	if err != nil {
		return nil // no raw side in this run
	}
	ts, err := e.mainStore(sideTablestore)
	if err != nil {
		return nil
	}
	dir := filepath.Join(e.dataDir, "files-checkpoint")
	os.RemoveAll(dir)
	if err := ts.(*tablestoreStore).db.Checkpoint(e.ctx, dir); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	o := rawPebbleOptions(e.settings(false))
	tdb, err := pebble.Open(dir, o)
	o.Cache.Unref()
	if err != nil {
		return err
	}
	defer tdb.Close()
	prefix, err := tablePrefixOf(tdb)
	if err != nil {
		return err
	}
	rawDB := ps.(*pebbleStore).db
	copyGet := func(db *pebble.DB, prefix []byte) getter {
		return func(_ context.Context, pk, rk string) (int, error) {
			var kb [64]byte
			k := append(append(append(append(kb[:0], prefix...), pk...), 0), rk...)
			v, closer, err := db.Get(k)
			if err != nil {
				return 0, err
			}
			out := append([]byte(nil), v...)
			closer.Close()
			if len(out) == 0 {
				return 0, errRawCorrupt
			}
			return propertyCount, nil
		}
	}
	rawPrefix, _ := rawTableBounds()
	g := map[string]getter{
		"raw pebble's files": copyGet(rawDB, rawPrefix),
		"tablestore's files": copyGet(tdb, prefix),
	}
	names := []string{"tablestore's files", "raw pebble's files"}
	tsh, err := shapeOf(tdb)
	if err != nil {
		return err
	}
	rsh, err := shapeOf(rawDB)
	if err != nil {
		return err
	}
	d.Shapes[phase] = map[string]lsmShape{"tablestore's files": tsh, "raw pebble's files": rsh}
	d.Uptime[phase] = loadAvg()
	for r := range rounds {
		for k := range names {
			name := names[(k+r)%len(names)]
			db := rawDB
			if name == "tablestore's files" {
				db = tdb
			}
			gr, err := measureGetRound(e, g[name], db, r, false)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			gr.Phase, gr.Side = phase, name
			d.Rounds = append(d.Rounds, gr)
			logf("getdiag: %s: %s round %d: p50 %s p99 %s mean %s, %.2f reads/get, cache hits %.1f%%",
				phase, name, r+1, ns(gr.P50), ns(gr.P99), ns(gr.Mean), gr.ReadsPerGet, 100*max(0, gr.CacheHit))
		}
	}
	return nil
}

// tablePrefixOf finds the 8-byte table prefix of the data set's keys in
// a tablestore store: that of the key of entity 0.
func tablePrefixOf(db *pebble.DB) ([]byte, error) {
	it, err := db.NewIter(nil)
	if err != nil {
		return nil, err
	}
	defer it.Close()
	suffix := []byte(partitionKey(0) + "\x00" + rowKey(0))
	for valid := it.First(); valid; valid = it.Next() {
		k := it.Key()
		if len(k) == 8+len(suffix) && bytes.Equal(k[8:], suffix) {
			return bytes.Clone(k[:8]), nil
		}
	}
	return nil, errors.New("entity 0 not found in tablestore's store")
}

// printGetDiag writes the diagnosis's tables.
func printGetDiag(w io.Writer, d *getDiag, sides []string) {
	fmt.Fprintf(w, "\npoint-get diagnosis, scale %s (%s entities), %s gets per round, load average by phase in the shape table\n\n",
		d.Scale.Name, commas(float64(d.Scale.Entities)), commas(float64(d.Scale.Gets)))
	fmt.Fprintln(w, "bulk load (load-nosync), entities/s:")
	for _, side := range sides {
		if v, ok := d.Load[side]; ok {
			fmt.Fprintf(w, "  %-12s %s\n", side, commas(v))
		}
	}
	fmt.Fprintf(w, "settling after the load took %.1f s\n\nLSM shapes:\n", d.Settle)
	var phases []string
	for _, r := range d.Rounds {
		if !slices.Contains(phases, r.Phase) {
			phases = append(phases, r.Phase)
		}
	}
	for _, ph := range phases {
		fmt.Fprintf(w, "  %s (load average %s):\n", ph, d.Uptime[ph])
		var names []string
		for name := range d.Shapes[ph] {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			fmt.Fprintf(w, "    %-20s %s\n", name, d.Shapes[ph][name])
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tside\tround\tp50 µs\tp90 µs\tp99 µs\tp99.9 µs\tmean µs\treads/get\tKiB/get\tmid reads\tslow 1%: reads\twith read\trunq µs\tGC cycles\tpauses\tpause max µs\tassist ms\tGC CPU ms\tother CPU ms\tcache hit\tcompactions\tallocs/get\t")
	us := func(v float64) string { return fmt.Sprintf("%.1f", v/1e3) }
	for _, r := range d.Rounds {
		hit := "n/a"
		if r.CacheHit >= 0 {
			hit = fmt.Sprintf("%.1f%%", 100*r.CacheHit)
		}
		comp := "n/a"
		if r.Compactions >= 0 {
			comp = strconv.FormatInt(r.Compactions, 10)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f%%\t%s\t%d\t%d\t%s\t%.1f\t%.1f\t%.1f\t%s\t%s\t%.2f\t\n",
			r.Phase, r.Side, r.Round, us(r.P50), us(r.P90), us(r.P99), us(r.P999), us(r.Mean),
			r.ReadsPerGet, r.BytesPerGet/1024, r.MidReads, r.SlowReads, 100*r.SlowWithRead, us(r.SlowRunq),
			r.GCCycles, r.GCPauses, us(r.GCPauseMax), r.AssistCPU/1e6, r.GCCPU/1e6, r.Background/1e6, hit, comp, r.AllocsPer)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nreads/get: read system calls of the reading thread per get (block cache misses read a block each);")
	fmt.Fprintln(w, "mid reads: the same for the 40th-60th percentile gets; slow 1%: the slowest 1% of gets, their reads,")
	fmt.Fprintln(w, "the share with at least one read and their mean wait for a CPU; other CPU: the process's CPU on other")
	fmt.Fprintln(w, "threads during the round (flushes, compactions, GC workers); cache hit and compactions: raw Pebble only.")
}
