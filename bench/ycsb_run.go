package main

// Running YCSB workloads on a ycsbStore, and the worker process that
// holds one embedded side, so every side's CPU time and peak RSS are its
// own.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// ycsbLoadBatch is the records per atomic batch of the load phase.
const ycsbLoadBatch = 100

// opStats are one operation type's latencies in a cell.
type opStats struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
}

func statsOf(lat []time.Duration) opStats {
	s := summarize(lat, 0)
	return opStats{Count: s.Count, P50: s.P50 / 1e3, P99: s.P99 / 1e3, P999: s.P999 / 1e3}
}

// cellResult is one round of one workload on one side.
type cellResult struct {
	Ops     int                `json:"ops"`
	Seconds float64            `json:"seconds"`
	All     opStats            `json:"all"`
	PerOp   map[string]opStats `json:"per_op"`
	CPU     float64            `json:"cpu_seconds"`
	Err     string             `json:"error,omitempty"`
}

// runWorkloadYCSB runs ops operations of w (or until maxDur passes) on s
// with threads threads, each its own generator seeded from seed; counter
// hands out insert keys and bounds the keys read. It fails on the first
// error or a record read with the wrong field count.
func runWorkloadYCSB(s ycsbStore, w ycsbWorkload, counter *ackCounter, ops, threads int, seed uint64, maxDur time.Duration) cellResult {
	records := counter.last() + 1
	var (
		mu       sync.Mutex
		lat      [ycsbOpCount][]time.Duration
		all      []time.Duration
		firstErr error
		done     int
	)
	// The choosers are made before the clock starts: "latest" sums zeta
	// over every record.
	choosers := make([]keyChooser, threads)
	for th := range choosers {
		choosers[th] = w.chooser(records, int64(ops))
	}
	start := time.Now()
	var wg sync.WaitGroup
	for th := range threads {
		n := ops / threads
		if th < ops%threads {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(th)))
			keys := choosers[th]
			var my [ycsbOpCount][]time.Duration
			val := make([]byte, ycsbFieldLength)
			var err error
			i := 0
			for ; i < n && err == nil; i++ {
				if time.Since(start) > maxDur {
					break
				}
				op := w.pick(r)
				t0 := time.Now()
				switch op {
				case opRead, opRMW:
					key := ycsbKey(keys.next(r, counter.last()))
					var got int
					if got, err = s.read(key); err == nil && got != ycsbFieldCount {
						err = fmt.Errorf("read %s: %d fields", key, got)
					}
					if op == opRMW && err == nil {
						ycsbValue(r, val)
						err = s.update(key, r.IntN(ycsbFieldCount), val)
					}
				case opUpdate:
					key := ycsbKey(keys.next(r, counter.last()))
					ycsbValue(r, val)
					err = s.update(key, r.IntN(ycsbFieldCount), val)
				case opInsert:
					k := counter.take()
					if err = s.insert(ycsbKey(k), ycsbRecord(r)); err == nil {
						counter.ack(k)
					}
				case opScan:
					_, err = s.scan(ycsbKey(keys.next(r, counter.last())), 1+r.IntN(w.maxScan))
				}
				my[op] = append(my[op], time.Since(t0))
				if err != nil {
					err = fmt.Errorf("%s: %w", ycsbOpNames[op], err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil && firstErr == nil {
				firstErr = err
			}
			for op := range my {
				lat[op] = append(lat[op], my[op]...)
				all = append(all, my[op]...)
				done += len(my[op])
			}
		}()
	}
	wg.Wait()
	res := cellResult{Ops: done, Seconds: time.Since(start).Seconds(), PerOp: map[string]opStats{}}
	if firstErr != nil {
		res.Err = firstErr.Error()
	}
	for op := range lat {
		if len(lat[op]) > 0 {
			res.PerOp[ycsbOpNames[op]] = statsOf(lat[op])
		}
	}
	res.All = statsOf(all)
	return res
}

// loadYCSB inserts records 0..records-1 in YCSB's insert order, in
// batches; only the commits are timed (values are made before).
func loadYCSB(s ycsbStore, records int) cellResult {
	r := rand.New(rand.NewPCG(1, 1))
	var took time.Duration
	var lat []time.Duration
	for i := 0; i < records; i += ycsbLoadBatch {
		n := min(ycsbLoadBatch, records-i)
		keys := make([]string, n)
		recs := make([][][]byte, n)
		for j := range n {
			keys[j], recs[j] = ycsbKey(int64(i+j)), ycsbRecord(r)
		}
		t0 := time.Now()
		if err := s.load(keys, recs); err != nil {
			return cellResult{Err: fmt.Sprintf("load batch at %d: %v", i, err)}
		}
		d := time.Since(t0)
		took += d
		lat = append(lat, d)
	}
	return cellResult{Ops: records, Seconds: took.Seconds(), All: statsOf(lat)}
}

// selfCPU is this process's user and system CPU time so far.
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// ycsbWorkerArg runs this program as one side's worker: it reads
// commands (ycsbCmd, one JSON object a line) on stdin and answers each
// with one JSON cellResult line on stdout.
const ycsbWorkerArg = "-ycsb-worker"

// ycsbCmd is one command to a worker.
type ycsbCmd struct {
	Op       string        `json:"op"` // open, close, load, run
	Sync     bool          `json:"sync,omitempty"`
	Records  int           `json:"records,omitempty"`
	Workload string        `json:"workload,omitempty"`
	Ops      int           `json:"ops,omitempty"`
	Seed     uint64        `json:"seed,omitempty"`
	MaxDur   time.Duration `json:"max_dur,omitempty"`
}

// runYCSBWorker serves commands for side in dir with cache bytes of
// cache until stdin closes.
func runYCSBWorker(side, dir, cache string) error {
	cacheSize, err := strconv.ParseInt(cache, 10, 64)
	if err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	var s ycsbStore
	var counter *ackCounter
	defer func() {
		if s != nil {
			s.close()
		}
	}()
	for in.Scan() {
		var c ycsbCmd
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			return err
		}
		cpu0 := selfCPU()
		var res cellResult
		func() {
			defer func() {
				if p := recover(); p != nil {
					res.Err = fmt.Sprint("panic: ", p)
				}
			}()
			switch c.Op {
			case "open":
				if s, err = openYCSB(side, dir, storeSettings{sync: c.Sync, cacheSize: cacheSize}); err != nil {
					res.Err = err.Error()
				}
			case "close":
				if err := s.close(); err != nil {
					res.Err = err.Error()
				}
				s = nil
			case "load":
				res = loadYCSB(s, c.Records)
				counter = newAckCounter(int64(c.Records))
			case "run":
				w, ok := ycsbWorkloadNamed(c.Workload)
				if !ok || counter == nil {
					res.Err = "no such workload or nothing loaded"
					return
				}
				res = runWorkloadYCSB(s, w, counter, c.Ops, 1, c.Seed, c.MaxDur)
			default:
				res.Err = "unknown command " + c.Op
			}
		}()
		res.CPU = selfCPU() - cpu0
		if err := out.Encode(res); err != nil {
			return err
		}
	}
	return in.Err()
}
