package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/internal/rootapi"
)

// The library's floor under the server mode's two heaviest workloads:
// the work the server's handler hands to the library for a $batch load
// and for a page without metadata, done in this process with no HTTP,
// no multipart parsing and no response to write. Its throughput and CPU
// per entity bound what the server can show on this machine: the ratios
// to Azurite and the server CPU goals cannot be met by a server whose
// library alone falls short of them.

// srvFloor is one floor figure: the best run's throughput and the CPU
// this process spent per entity over that run.
type srvFloor struct {
	How string `json:"how"`
	// Rate is the best run's entities/s; Runs holds every run's.
	Rate float64   `json:"entitiesPerSecond"`
	Runs []float64 `json:"runs"`
	// CPU is this process's CPU time (utime+stime, Getrusage) per entity
	// over the best run, µs.
	CPU float64 `json:"cpuMicrosPerEntity"`
	// Switches is, for the write floors, the context switches of this
	// process's threads per commit (a transaction or an insert) over
	// the best run; 0 when not counted.
	Switches float64 `json:"switchesPerCommit,omitempty"`
}

// keep records run v with cpu µs per entity, keeping the best.
func (f *srvFloor) keep(v, cpu float64) { f.keepRun(floorRun{rate: v, cpu: cpu}) }

// floorRun is one run of a floor: entities/s, CPU µs per entity and
// context switches per commit (0 when not counted).
type floorRun struct{ rate, cpu, switches float64 }

// keepRun records run r, keeping the best.
func (f *srvFloor) keepRun(r floorRun) {
	f.Runs = append(f.Runs, r.rate)
	if r.rate > f.Rate {
		f.Rate, f.CPU, f.Switches = r.rate, r.cpu, r.switches
	}
}

// floorLoadBudget bounds the load floor's runs: after a run, another
// starts only if the runs so far took less than this.
const floorLoadBudget = 30 * time.Second

// libraryLoadFloor loads ents, as the $batch phase sent them, into a new
// store in a fresh directory under parent, the way the server commits a
// $batch: each body decoded with RawEntity.UnmarshalJSON, each group of
// batchSize (one partition, the $batch phase's groups) written with
// SubmitTransaction, c.conns goroutines taking the next group as the
// connections take the next request. The store is synced, with default
// options, as `tablestore serve` opens it. It runs c.rounds times, each
// into a new directory, unless the runs so far took floorLoadBudget.
//
// The CPU is this process's from the first transaction until the
// process is idle after the last one's return: like the server's $batch
// phase (see srvResult.measure), it counts the background work the load
// causes (flushes, compactions) whether it runs during the load or
// after, but not a close.
func libraryLoadFloor(ctx context.Context, parent string, c serverConfig, ents [][]byte) (*srvFloor, error) {
	how := fmt.Sprintf("RawEntity.UnmarshalJSON + SubmitTransaction of %d inserts, synced store, %d goroutines", batchSize, c.conns)
	return floorRuns(c, parent, "library load floor", how, func(dir string) (floorRun, error) {
		return libraryLoadRunIn(ctx, dir, c, ents)
	})
}

// rawLoadFloor is libraryLoadFloor's work done by raw Pebble: the data
// set's records, made before the clock starts, encoded in the raw side's
// format and written as batches of batchSize Sets (no existence check,
// so less work than an insert) into a new Pebble store, each batch
// synced, c.conns goroutines taking the next batch. It is the least CPU
// per loaded entity that any store on Pebble spends here, whatever sits
// above it.
func rawLoadFloor(ctx context.Context, parent string, c serverConfig) (*srvFloor, error) {
	recs := make([]record, c.entities)
	for i := range recs {
		genRecord(&recs[i], i)
	}
	how := fmt.Sprintf("raw Pebble batches of %d Sets, each synced, %d goroutines", batchSize, c.conns)
	return floorRuns(c, parent, "raw Pebble load floor", how, func(dir string) (floorRun, error) {
		return rawLoadRunIn(ctx, dir, c, recs)
	})
}

// floorRuns runs a load floor c.rounds times, each into a new directory
// under parent removed after it, unless the runs so far took
// floorLoadBudget, and keeps the best; run loads into dir and returns
// entities/s and CPU µs per entity.
func floorRuns(c serverConfig, parent, label, how string, run func(dir string) (floorRun, error)) (*srvFloor, error) {
	f := &srvFloor{How: how}
	start := time.Now()
	for r := range c.rounds {
		if r > 0 && time.Since(start) >= floorLoadBudget {
			logf("server: %s: %d of %d runs (they took %.0f s)", label, r, c.rounds, time.Since(start).Seconds())
			break
		}
		dir, err := os.MkdirTemp(parent, "floor-load-")
		if err != nil {
			return nil, err
		}
		run, err := run(dir)
		os.RemoveAll(dir)
		if err != nil {
			return nil, err
		}
		logf("server: %s, run %d: %s entities/s, CPU %.2f µs/entity, %.1f switches/commit", label, r+1, commas(run.rate), run.cpu, run.switches)
		f.keepRun(run)
	}
	return f, nil
}

// timedLoad runs batches 0 to batches-1 on conns goroutines, each taking
// the next batch number and handing it to its own worker (made by
// newWorker, so a goroutine keeps its buffers), until a worker fails or
// ctx ends. It returns the time until the last batch's return and this
// process's CPU, counted until the process is idle again: as for the
// server's $batch phase, the flushes and compactions a load causes are
// its cost, whenever they run.
func timedLoad(ctx context.Context, conns, batches int, newWorker func() func(int) error) (loadMeasure, error) {
	var next atomic.Int64
	errs := make([]error, conns)
	var wg sync.WaitGroup
	runtime.GC() // the garbage of the phases before is not this run's
	cpu0, x0, t0 := processCPU(), contextSwitches(os.Getpid()), time.Now()
	for w := range conns {
		wg.Go(func() {
			work := newWorker()
			for ctx.Err() == nil {
				b := int(next.Add(1) - 1)
				if b >= batches {
					return
				}
				if err := work(b); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	m := loadMeasure{d: time.Since(t0)}
	quiesce(os.Getpid())
	m.cpu = processCPU() - cpu0
	if x1 := contextSwitches(os.Getpid()); x0 >= 0 && x1 >= 0 {
		m.switches = float64(x1-x0) / float64(batches)
	}
	if err := errors.Join(errs...); err != nil {
		return m, err
	}
	return m, ctx.Err()
}

// loadMeasure is what timedLoad measured: the time until the last
// batch's return, this process's CPU (ns) and its context switches per
// batch (0 when they could not be read).
type loadMeasure struct {
	d        time.Duration
	cpu      int64
	switches float64
}

// run is m as a floor run of n entities.
func (m loadMeasure) run(n int) floorRun {
	return floorRun{rate: rate(n, m.d), cpu: float64(m.cpu) / 1e3 / float64(n), switches: m.switches}
}

// rawLoadRunIn is one run of rawLoadFloor into a new store in dir. Its
// CPU is counted as libraryLoadRunIn's is, until the process is idle.
func rawLoadRunIn(ctx context.Context, dir string, c serverConfig, recs []record) (floorRun, error) {
	o := rawPebbleOptions(storeSettings{cacheSize: 64 << 20}) // each commit syncs
	db, err := pebble.Open(dir, o)
	o.Cache.Unref()
	if err != nil {
		return floorRun{}, err
	}
	defer db.Close()
	m, err := timedLoad(ctx, c.conns, len(recs)/batchSize, func() func(int) error {
		var k, v []byte
		return func(n int) error {
			b := db.NewBatch()
			defer b.Close()
			ts := nowTicks()
			for i := n * batchSize; i < (n+1)*batchSize; i++ {
				k = rawKey(k[:0], recs[i].PK, recs[i].RK)
				v = encodeRaw(v[:0], &recs[i], ts)
				if err := b.Set(k, v, nil); err != nil {
					return err
				}
			}
			if err := b.Commit(pebble.Sync); err != nil {
				return fmt.Errorf("batch %d: %w", n, err)
			}
			return nil
		}
	})
	if err != nil {
		return floorRun{}, err
	}
	last := &recs[len(recs)-1]
	_, closer, err := db.Get(rawKey(nil, last.PK, last.RK))
	if err != nil {
		return floorRun{}, fmt.Errorf("after the load: %w", err)
	}
	closer.Close()
	return m.run(len(recs)), nil
}

// libraryLoadRunIn is one run of libraryLoadFloor into a new store in
// dir: entities/s and CPU µs per entity.
func libraryLoadRunIn(ctx context.Context, dir string, c serverConfig, ents [][]byte) (floorRun, error) {
	db, err := tablestore.Open(dir, nil)
	if err != nil {
		return floorRun{}, err
	}
	defer db.Close()
	t, err := db.CreateTable(ctx, srvTable)
	if err != nil {
		return floorRun{}, err
	}
	m, err := timedLoad(ctx, c.conns, len(ents)/batchSize, func() func(int) error {
		// One goroutine's entities and actions, reused from one
		// transaction to the next once it has returned.
		raws := make([]tablestore.RawEntity, batchSize)
		actions := make([]tablestore.TransactionAction, batchSize)
		return func(b int) error {
			for i, body := range ents[b*batchSize : (b+1)*batchSize] {
				if err := raws[i].UnmarshalJSON(body); err != nil {
					return fmt.Errorf("batch %d, entity %d: %w", b, i, err)
				}
				actions[i] = tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: &raws[i]}
			}
			if err := t.SubmitTransaction(ctx, actions); err != nil {
				return fmt.Errorf("batch %d: %w", b, err)
			}
			return nil
		}
	})
	if err != nil {
		return floorRun{}, err
	}
	// The last entity is there (outside the measure).
	var rec record
	genRecord(&rec, len(ents)-1)
	if _, err := t.Get(ctx, rec.PK, rec.RK, nil); err != nil {
		return floorRun{}, fmt.Errorf("after the load: %w", err)
	}
	if err := db.Close(); err != nil {
		return floorRun{}, err
	}
	return m.run(len(ents)), nil
}

// floorInserts is how many single inserts one run of the insert floor
// makes in the server mode.
const floorInserts = 20_000

// libraryInsertFloor inserts n new entities one at a time, the way the
// server commits an insert request: each body (made before the clock
// starts, as the insertN phase's client makes them) decoded with
// RawEntity.UnmarshalJSON and written by a SubmitTransaction of one
// insert into a new synced store, c.conns goroutines each in a
// partition of its own as the phase's connections are. Its CPU is
// counted as libraryLoadFloor's is, until the process is idle.
func libraryInsertFloor(ctx context.Context, parent string, c serverConfig, n int) (*srvFloor, error) {
	bodies := make([][]byte, n)
	var rec record
	for i := range bodies {
		genRecordKeys(&rec, i, fmt.Sprintf("ins-%02d", i%c.conns), rowKey(i))
		var err error
		if bodies[i], err = recordEntity(&rec).MarshalJSON(); err != nil {
			return nil, err
		}
	}
	how := fmt.Sprintf("RawEntity.UnmarshalJSON + SubmitTransaction of one insert, synced store, %d goroutines", c.conns)
	return floorRuns(c, parent, "library insert floor", how, func(dir string) (floorRun, error) {
		db, err := tablestore.Open(dir, nil)
		if err != nil {
			return floorRun{}, err
		}
		defer db.Close()
		t, err := db.CreateTable(ctx, srvInsTable)
		if err != nil {
			return floorRun{}, err
		}
		m, err := timedLoad(ctx, c.conns, len(bodies), func() func(int) error {
			var raw tablestore.RawEntity
			action := []tablestore.TransactionAction{{Type: tablestore.ActionInsert, Entity: &raw}}
			return func(i int) error {
				raw.Reset()
				if err := raw.UnmarshalJSON(bodies[i]); err != nil {
					return fmt.Errorf("insert %d: %w", i, err)
				}
				if err := t.SubmitTransaction(ctx, action); err != nil {
					return fmt.Errorf("insert %d: %w", i, err)
				}
				return nil
			}
		})
		if err != nil {
			return floorRun{}, err
		}
		genRecordKeys(&rec, len(bodies)-1, fmt.Sprintf("ins-%02d", (len(bodies)-1)%c.conns), rowKey(len(bodies)-1))
		if _, err := t.Get(ctx, rec.PK, rec.RK, nil); err != nil {
			return floorRun{}, fmt.Errorf("after the inserts: %w", err)
		}
		return m.run(len(bodies)), db.Close()
	})
}

// libraryPagingFloor opens the server's store in dir and pages through
// the data set as the server's query handler does without HTTP:
// the server's AppendPageJSON at no metadata, Top 1000, into one reused buffer.
// A first pass warms the store's cache (the server's paging phase reads
// a pass before it measures too) and checks the first page's JSON; then
// c.rounds passes are measured, each with this process's CPU over it.
func libraryPagingFloor(ctx context.Context, dir string, c serverConfig) (*srvFloor, error) {
	return libraryPagingFloorAt(ctx, dir, c, &tablestore.JSONOptions{Metadata: tablestore.NoMetadata},
		"the server's AppendPageJSON, no metadata, Top 1000, one reused buffer")
}

// libraryPagingFullFloor is libraryPagingFloor at full metadata, with the
// type and links a server on the default port writes: the floor under
// the page-full phase.
func libraryPagingFullFloor(ctx context.Context, dir string, c serverConfig) (*srvFloor, error) {
	opts := &tablestore.JSONOptions{Metadata: tablestore.FullMetadata, Type: "devstoreaccount1." + srvTable,
		LinkBase: "http://127.0.0.1:10002/devstoreaccount1/", LinkTable: srvTable}
	return libraryPagingFloorAt(ctx, dir, c, opts, "the server's AppendPageJSON, full metadata, Top 1000, one reused buffer")
}

// libraryPagingFloorAt is libraryPagingFloor at opts; how describes it.
func libraryPagingFloorAt(ctx context.Context, dir string, c serverConfig, opts *tablestore.JSONOptions, how string) (*srvFloor, error) {
	db, err := tablestore.Open(dir, nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	t := db.Table(srvTable)
	buf := make([]byte, 0, 1<<20)
	pass := func(check bool) (int, error) {
		total, token := 0, ""
		for {
			var p *tablestore.Page
			var err error
			buf, p, err = root.AppendPageJSON(t, ctx, buf[:0], tablestore.Query{Top: pageTop, Continuation: token}, *opts, nil)
			if err != nil {
				return 0, err
			}
			// No filter: every entity the page examined is on it.
			if p.Examined < 0 {
				return 0, errors.New("the store does not count a page's entities")
			}
			if check && total == 0 {
				if err := checkPageJSON(buf, p.Examined); err != nil {
					return 0, err
				}
			}
			total += p.Examined
			if p.Continuation == "" {
				break
			}
			token = p.Continuation
		}
		if total != c.entities {
			return 0, fmt.Errorf("paging read %d entities, want %d", total, c.entities)
		}
		return total, nil
	}
	if _, err := pass(true); err != nil {
		return nil, err
	}
	f := &srvFloor{How: how}
	for range c.rounds {
		runtime.GC()
		cpu0, t0 := processCPU(), time.Now()
		n, err := pass(false)
		if err != nil {
			return nil, err
		}
		d, cpu := time.Since(t0), processCPU()-cpu0
		f.keep(rate(n, d), float64(cpu)/1e3/float64(n))
	}
	return f, nil
}

// floorGets is how many point gets one run of libraryGetFloor makes.
const floorGets = 100_000

// libraryGetFloor opens the server's store in dir and reads entities as
// the server's get handler does without HTTP: the server's GetJSON at no
// metadata into a reused buffer, conns goroutines each reading random
// entities of the data set (as the get phases choose them) until
// floorGets are done, c.rounds runs, each with this process's CPU over
// it. Each goroutine's first get is checked to hold its keys.
func libraryGetFloor(ctx context.Context, dir string, c serverConfig, conns int) (*srvFloor, error) {
	db, err := tablestore.Open(dir, nil)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	t := db.Table(srvTable)
	opts := &tablestore.JSONOptions{Metadata: tablestore.NoMetadata}
	f := &srvFloor{How: fmt.Sprintf("the server's GetJSON, no metadata, %d goroutines, one reused buffer each", conns)}
	for round := range c.rounds {
		var next atomic.Int64
		errs := make([]error, conns)
		var wg sync.WaitGroup
		runtime.GC()
		cpu0, t0 := processCPU(), time.Now()
		for w := range conns {
			wg.Go(func() {
				rnd := rand.New(rand.NewPCG(uint64(round), uint64(w)))
				var buf []byte
				for first := true; next.Add(1) <= floorGets && ctx.Err() == nil; first = false {
					i := rnd.IntN(c.entities)
					pk, rk := partitionKey(i/partitionSize), rowKey(i%partitionSize)
					var err error
					if buf, _, err = root.GetJSON(t, ctx, buf[:0], pk, rk, *opts); err != nil {
						errs[w] = fmt.Errorf("get %s/%s: %w", pk, rk, err)
						return
					}
					if first && !bytes.Contains(buf, []byte(`"RowKey":"`+rk+`"`)) {
						errs[w] = fmt.Errorf("get %s/%s: %.200s", pk, rk, buf)
						return
					}
				}
			})
		}
		wg.Wait()
		d, cpu := time.Since(t0), processCPU()-cpu0
		if err := errors.Join(errs...); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f.keep(rate(floorGets, d), float64(cpu)/1e3/floorGets)
	}
	return f, nil
}

// root is the library's operations for the server (internal/rootapi): the
// floors measure the server's own reads without HTTP.
var root = rootapi.Get[*tablestore.DB, *tablestore.Table, tablestore.Query, *tablestore.Page, tablestore.JSONOptions, tablestore.TransactionAction]()

// checkPageJSON decodes the elements AppendPageJSON wrote: n entities,
// each with its keys and the data set's properties.
func checkPageJSON(elems []byte, n int) error {
	body := append(append([]byte(`{"value":[`), elems...), "]}"...)
	return checkPage(body, n)
}

// floorLines returns the goals section's lines for a floor: its
// throughput against Azurite's figure az (NaN when Azurite did not run)
// and its CPU per entity against the server's (serverCPU, NaN when not
// measured) and the goal's (goalCPU, NaN for none). what names the work,
// azWhat Azurite's figure.
func floorLines(what, azWhat string, f *srvFloor, az, serverCPU, goalCPU float64) []string {
	ratio := " (Azurite not run: no ratio)"
	if !math.IsNaN(az) && az > 0 {
		ratio = " = " + formatRatio(f.Rate/az) + " Azurite's " + azWhat
	}
	lines := []string{fmt.Sprintf("  library floor: %s: %s entities/s%s, CPU %.2f µs/entity",
		what, commas(f.Rate), ratio, f.CPU)}
	over := "server's CPU over the floor: n/a"
	if !math.IsNaN(serverCPU) {
		over = fmt.Sprintf("server's CPU over the floor: %.2f µs/entity (server %.2f, floor %.2f)", serverCPU-f.CPU, serverCPU, f.CPU)
	}
	if math.IsNaN(goalCPU) { // no goal for the server's CPU here
		return append(lines, "    "+over)
	}
	budget := fmt.Sprintf("the %g µs goal leaves %.2f µs/entity for the server's work above the floor", goalCPU, goalCPU-f.CPU)
	if f.CPU > goalCPU {
		budget = fmt.Sprintf("the floor alone is over the %g µs goal", goalCPU)
	}
	return append(lines, "    "+over+"; "+budget)
}

// rawFloorLine describes raw Pebble's load floor f against the goal for
// the server's CPU per loaded entity (goalCPU µs).
func rawFloorLine(f *srvFloor, goalCPU float64) string {
	line := fmt.Sprintf("  raw Pebble floor: %s: %s entities/s, CPU %.2f µs/entity", f.How, commas(f.Rate), f.CPU)
	if f.CPU > goalCPU {
		return line + fmt.Sprintf("; the %g µs goal is below raw Pebble's own CPU per loaded entity on this machine", goalCPU)
	}
	return line + fmt.Sprintf("; the %g µs goal leaves %.2f µs/entity for everything above raw Pebble", goalCPU, goalCPU-f.CPU)
}

// machineBound is the most entities/s a server could load on cpus CPUs
// shared with its client, if it cost nothing over the library's floor:
// every loaded entity takes at least the floor's CPU (floorCPU µs) in
// the server and the client's (clientCPU µs) beside it. NaN when either
// is unknown.
func machineBound(cpus int, floorCPU, clientCPU float64) float64 {
	if cpus <= 0 || math.IsNaN(floorCPU) || math.IsNaN(clientCPU) || floorCPU+clientCPU <= 0 {
		return math.NaN()
	}
	return float64(cpus) * 1e6 / (floorCPU + clientCPU)
}

// machineBoundLine describes machineBound's figure for those arguments
// against Azurite's rate az and the goal (a ratio to Azurite).
func machineBoundLine(cpus int, floorCPU, clientCPU, az, goal float64) string {
	bound := machineBound(cpus, floorCPU, clientCPU)
	if math.IsNaN(bound) {
		return "    machine bound: n/a"
	}
	line := fmt.Sprintf("    machine bound: %d CPUs shared by the floor's %.2f µs and this client's %.2f µs per entity allow at most %s entities/s",
		cpus, floorCPU, clientCPU, commas(bound))
	if math.IsNaN(az) || az <= 0 {
		return line + " (Azurite not run: no ratio)"
	}
	r := bound / az
	verdict := "within reach"
	if r < goal {
		verdict = "beyond this machine"
	}
	return line + fmt.Sprintf(" = %s Azurite's, even for a server costing nothing over the floor: the %gx goal is %s", formatRatio(r), goal, verdict)
}
