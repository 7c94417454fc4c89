package main

// The -ycsb mode: YCSB's core workloads A to F on every embedded side,
// synced and unsynced, in interleaved rounds, and over HTTP against
// tablestore's server and Azurite with 1 and 16 client threads.

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

// ycsbConfig is the -ycsb mode's command line.
type ycsbConfig struct {
	records, ops  int
	httpRecords   int
	httpOps       int
	rounds        int
	maxDur        time.Duration
	sides         []string
	http          []string
	threads       []int
	cacheSize     int64
	outDir        string
	dataDir       string
	workloads     []string
	durabilities  []string
	tablestoreBin string
	// render only rewrites ycsb.md and ycsb.png from outDir's JSON.
	render bool
}

func parseYCSBFlags(args []string) (ycsbConfig, error) {
	f := flag.NewFlagSet("bench -ycsb", flag.ContinueOnError)
	records := f.Int("records", 100_000, "records loaded into every embedded side (YCSB recordcount)")
	ops := f.Int("ops", 0, "operations per round of each workload on each side (0: as many as records, at most 200,000)")
	httpRecords := f.Int("http-records", 0, "records loaded into each HTTP server (0: as -records, at most 100,000)")
	httpOps := f.Int("http-ops", 0, "operations per round over HTTP (0: as -ops, at most 20,000)")
	rounds := f.Int("rounds", 3, "interleaved rounds of every workload; the best round is reported, every round is in ycsb.json")
	maxDur := f.Duration("max-round", 20*time.Second, "a round stops after this long even if its operations are not done")
	sides := f.String("sides", strings.Join(ycsbSides, ","), "embedded sides")
	httpSides := f.String("http", ycsbServer+","+ycsbAzurite, "HTTP servers to drive (empty: none)")
	threads := f.String("http-threads", "1,16", "client threads of the HTTP runs")
	cacheMiB := f.Int64("cache", 64, "block/page cache MiB of every side")
	out := f.String("out", "results", "directory for ycsb.json, ycsb.md and ycsb.png")
	data := f.String("data", "", "directory for the stores (default: a new temporary directory, removed at the end)")
	wl := f.String("workloads", "A,B,C,F,D,E", "workloads, in run order")
	dur := f.String("durability", "synced,unsynced", "durability modes of the embedded sides")
	bin := f.String("tablestore-bin", "", "the tablestore command whose serve the HTTP runs drive (default: built from ../cmd/tablestore; \"self\": this program's in-memory server child)")
	render := f.Bool("render", false, "only rewrite ycsb.md and ycsb.png from the JSON files in -out")
	if err := f.Parse(args); err != nil {
		return ycsbConfig{}, err
	}
	c := ycsbConfig{render: *render, records: *records, ops: *ops, httpRecords: *httpRecords, httpOps: *httpOps, rounds: *rounds,
		maxDur: *maxDur, cacheSize: *cacheMiB << 20, outDir: *out, dataDir: *data, tablestoreBin: *bin}
	if c.records < 1 || c.rounds < 1 || c.cacheSize <= 0 {
		return c, fmt.Errorf("records, rounds and cache must be positive")
	}
	if c.ops == 0 {
		c.ops = min(c.records, 200_000)
	}
	if c.httpRecords == 0 {
		c.httpRecords = min(c.records, 100_000)
	}
	if c.httpOps == 0 {
		c.httpOps = min(c.ops, 20_000)
	}
	for _, s := range splitList(*sides) {
		if !slices.Contains(ycsbSides, s) {
			return c, fmt.Errorf("unknown side %q (want %s)", s, strings.Join(ycsbSides, ", "))
		}
		c.sides = append(c.sides, s)
	}
	for _, s := range splitList(*httpSides) {
		if s != ycsbServer && s != ycsbAzurite {
			return c, fmt.Errorf("unknown HTTP server %q (want server, azurite)", s)
		}
		c.http = append(c.http, s)
	}
	for _, s := range splitList(*threads) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return c, fmt.Errorf("bad thread count %q", s)
		}
		c.threads = append(c.threads, n)
	}
	for _, s := range splitList(*wl) {
		if _, ok := ycsbWorkloadNamed(s); !ok {
			return c, fmt.Errorf("unknown workload %q (want A to F)", s)
		}
		c.workloads = append(c.workloads, s)
	}
	for _, s := range splitList(*dur) {
		if s != "synced" && s != "unsynced" {
			return c, fmt.Errorf("unknown durability %q (want synced, unsynced)", s)
		}
		c.durabilities = append(c.durabilities, s)
	}
	return c, nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// ycsbResult is one row of ycsb.json: the best round of one workload on
// one side in one durability mode (and, over HTTP, thread count).
type ycsbResult struct {
	Workload   string  `json:"workload"`
	Side       string  `json:"side"`
	Durability string  `json:"durability"`
	Threads    int     `json:"threads"`
	Records    int     `json:"records"`
	Ops        int     `json:"ops"`
	OpsPerSec  float64 `json:"ops_per_sec"`
	P50        float64 `json:"p50_us"`
	P99        float64 `json:"p99_us"`
	P999       float64 `json:"p999_us"`
	// CPUPerOp is the side's process CPU time per operation (the
	// worker's for embedded sides, the server's over HTTP), background
	// work included.
	CPUPerOp float64 `json:"cpu_us_per_op"`
	// ClientCPUPerOp is the HTTP client's (this process's) CPU time per
	// operation.
	ClientCPUPerOp float64            `json:"client_cpu_us_per_op,omitempty"`
	PerOp          map[string]opStats `json:"per_op,omitempty"`
	// DiskBytes is the side's store size after the load (blocks
	// allocated); PeakRSS the side's process peak resident set over the
	// whole run.
	DiskBytes int64     `json:"disk_bytes,omitempty"`
	PeakRSS   int64     `json:"peak_rss_bytes,omitempty"`
	Rounds    []float64 `json:"rounds_ops_per_sec"`
	Error     string    `json:"error,omitempty"`
}

// ycsbWorkerProc is a running worker process for one embedded side.
type ycsbWorkerProc struct {
	side string
	dir  string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
}

func startYCSBWorker(side, dir string, cacheSize int64) (*ycsbWorkerProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.Command(self, ycsbWorkerArg, side, dir, strconv.FormatInt(cacheSize, 10))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	return &ycsbWorkerProc{side: side, dir: dir, cmd: cmd, in: in, out: sc}, nil
}

func (w *ycsbWorkerProc) do(c ycsbCmd) (cellResult, error) {
	b, _ := json.Marshal(c)
	if _, err := w.in.Write(append(b, '\n')); err != nil {
		return cellResult{}, fmt.Errorf("%s worker: %w", w.side, err)
	}
	if !w.out.Scan() {
		return cellResult{}, fmt.Errorf("%s worker exited: %v", w.side, w.out.Err())
	}
	var r cellResult
	if err := json.Unmarshal(w.out.Bytes(), &r); err != nil {
		return r, err
	}
	if r.Err != "" {
		return r, fmt.Errorf("%s: %s", w.side, r.Err)
	}
	return r, nil
}

// stop ends the worker and returns its peak RSS.
func (w *ycsbWorkerProc) stop() int64 {
	rss, _ := vmHWM(w.cmd.Process.Pid)
	w.in.Close()
	w.cmd.Wait()
	if ru, ok := w.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && rss == 0 {
		rss = ru.Maxrss << 10
	}
	return rss
}

// diskUsage sums the blocks allocated to the files under dir.
func diskUsage(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					n += st.Blocks * 512
				}
			}
		}
		return nil
	})
	return n
}

// ycsbCell collects the rounds of one row.
type ycsbCell struct {
	res *ycsbResult
}

func (c *ycsbCell) add(r cellResult, cpu, clientCPU float64, err error) {
	if err != nil {
		if c.res.Error == "" {
			c.res.Error = err.Error()
		}
		return
	}
	rate := float64(r.Ops) / r.Seconds
	c.res.Rounds = append(c.res.Rounds, rate)
	if rate > c.res.OpsPerSec {
		c.res.OpsPerSec, c.res.Ops = rate, r.Ops
		c.res.P50, c.res.P99, c.res.P999 = r.All.P50, r.All.P99, r.All.P999
		c.res.PerOp = r.PerOp
		c.res.CPUPerOp = cpu / float64(r.Ops) * 1e6
		c.res.ClientCPUPerOp = clientCPU / float64(r.Ops) * 1e6
	}
}

// runYCSB is the -ycsb mode.
func runYCSB(ctx context.Context, args []string) error {
	c, err := parseYCSBFlags(args)
	if err != nil {
		return err
	}
	if c.render {
		return renderYCSB(c)
	}
	if err := os.MkdirAll(c.outDir, 0o755); err != nil {
		return err
	}
	dataDir := c.dataDir
	if dataDir == "" {
		if dataDir, err = os.MkdirTemp("", "tablestore-ycsb-"); err != nil {
			return err
		}
		defer os.RemoveAll(dataDir)
	}
	meta := ycsbMeta{Command: commandLine("go run . -ycsb", args), Started: time.Now().UTC(), Machine: machine(), CPUs: runtime.NumCPU(),
		GoVersion: runtime.Version(), Records: c.records, Ops: c.ops, HTTPRecords: c.httpRecords, HTTPOps: c.httpOps,
		Rounds: c.rounds, CacheBytes: c.cacheSize, LoadBefore: loadAvg()}
	var rows []*ycsbResult
	embedded, err := runYCSBEmbedded(ctx, c, dataDir)
	rows = append(rows, embedded...)
	if err != nil {
		return err
	}
	if len(c.http) > 0 {
		httpRows, err := runYCSBHTTP(ctx, c, dataDir)
		rows = append(rows, httpRows...)
		if err != nil {
			return err
		}
	}
	meta.Seconds = time.Since(meta.Started).Seconds()
	meta.LoadAfter = loadAvg()
	return writeYCSB(c, meta, rows)
}

// runYCSBEmbedded loads every side (each in its own worker process,
// one after another, unsynced batches of 100), then runs each
// workload in each durability mode in interleaved rounds.
func runYCSBEmbedded(ctx context.Context, c ycsbConfig, dataDir string) ([]*ycsbResult, error) {
	workers := map[string]*ycsbWorkerProc{}
	defer func() {
		for _, w := range workers {
			w.stop()
		}
	}()
	var rows []*ycsbResult
	loadRows := map[string]*ycsbResult{}
	for _, side := range c.sides {
		w, err := startYCSBWorker(side, filepath.Join(dataDir, side), c.cacheSize)
		if err != nil {
			return rows, err
		}
		workers[side] = w
		row := &ycsbResult{Workload: "load", Side: side, Durability: "unsynced", Threads: 1, Records: c.records}
		rows, loadRows[side] = append(rows, row), row
		logf("ycsb: loading %s records into %s", commas(float64(c.records)), side)
		cell := &ycsbCell{res: row}
		_, err = w.do(ycsbCmd{Op: "open"})
		if err == nil {
			var r cellResult
			r, err = w.do(ycsbCmd{Op: "load", Records: c.records})
			cell.add(r, r.CPU, 0, err)
			if err == nil {
				_, err = w.do(ycsbCmd{Op: "close"})
			}
		}
		if err != nil {
			row.Error = err.Error()
			continue
		}
		row.DiskBytes = diskUsage(w.dir)
		logf("ycsb: %s loaded at %s records/s, %s MiB on disk", side, commas(row.OpsPerSec), commas(float64(row.DiskBytes)/(1<<20)))
	}
	live := func() []string {
		var s []string
		for _, side := range c.sides {
			if loadRows[side].Error == "" {
				s = append(s, side)
			}
		}
		return s
	}
	for _, dur := range c.durabilities {
		sides := live()
		for _, side := range sides {
			if _, err := workers[side].do(ycsbCmd{Op: "open", Sync: dur == "synced"}); err != nil {
				return rows, err
			}
		}
		for _, wl := range c.workloads {
			cells := map[string]*ycsbCell{}
			for _, side := range sides {
				row := &ycsbResult{Workload: wl, Side: side, Durability: dur, Threads: 1, Records: c.records}
				rows = append(rows, row)
				cells[side] = &ycsbCell{res: row}
			}
			for r := range c.rounds {
				for k := range sides {
					if ctx.Err() != nil {
						return rows, ctx.Err()
					}
					side := sides[(k+r)%len(sides)]
					res, err := workers[side].do(ycsbCmd{Op: "run", Workload: wl, Ops: c.ops, Seed: ycsbSeed(wl, dur, r), MaxDur: c.maxDur})
					cells[side].add(res, res.CPU, 0, err)
					logf("ycsb: %s %s %s round %d: %s ops/s, p99 %.0f µs", wl, dur, side, r+1, commas(float64(res.Ops)/res.Seconds), res.All.P99)
				}
			}
		}
		for _, side := range sides {
			if _, err := workers[side].do(ycsbCmd{Op: "close"}); err != nil {
				return rows, err
			}
		}
	}
	for _, side := range c.sides {
		rss := workers[side].stop()
		delete(workers, side)
		for _, row := range rows {
			if row.Side == side {
				row.PeakRSS = rss
				row.DiskBytes = loadRows[side].DiskBytes
			}
		}
	}
	return rows, nil
}

// ycsbSeed seeds a round so every side draws the same operations.
func ycsbSeed(workload, durability string, round int) uint64 {
	h := uint64(14695981039346656037)
	for _, b := range []byte(workload + "/" + durability + "/" + strconv.Itoa(round)) {
		h = (h ^ uint64(b)) * 1099511628211
	}
	return h
}

// runYCSBHTTP loads each server and runs every workload with each
// thread count, the servers' rounds interleaved.
func runYCSBHTTP(ctx context.Context, c ycsbConfig, dataDir string) ([]*ycsbResult, error) {
	bin := c.tablestoreBin
	if bin == "" {
		var err error
		if bin, err = buildTablestore(ctx, dataDir); err != nil {
			return nil, err
		}
	}
	if bin == "self" {
		bin = ""
	}
	type target struct {
		name    string
		srv     *sdkServer
		store   *ycsbHTTP
		counter *ackCounter
		load    *ycsbResult
	}
	var targets []*target
	var rows []*ycsbResult
	defer func() {
		for _, t := range targets {
			t.srv.stop()
		}
	}()
	for _, name := range c.http {
		// Both servers keep their data in memory: Azurite as it runs
		// here, tablestore with serve --in-memory.
		sname := serverTablestore
		if name == ycsbAzurite {
			sname = serverAzurite
		}
		srv, err := startSDKServer(ctx, sname, sdkConfig{serveBin: bin})
		row := &ycsbResult{Workload: "load", Side: name, Durability: "unsynced", Threads: 1, Records: c.httpRecords}
		rows = append(rows, row)
		if err != nil {
			row.Error = err.Error()
			logf("ycsb: %s: %v", name, err)
			continue
		}
		t := &target{name: name, srv: srv, load: row}
		targets = append(targets, t)
		if t.store, err = newYCSBHTTP(ctx, srv.connStr); err != nil {
			row.Error = err.Error()
			continue
		}
		logf("ycsb: loading %s records into %s (%s)", commas(float64(c.httpRecords)), name, srv.how)
		cpu0, client0 := cpuSeconds(srv.pid), selfCPU()
		r := loadYCSB(t.store, c.httpRecords)
		var lerr error
		if r.Err != "" {
			lerr = fmt.Errorf("%s", r.Err)
		}
		(&ycsbCell{res: row}).add(r, cpuSeconds(srv.pid)-cpu0, selfCPU()-client0, lerr)
		t.counter = newAckCounter(int64(c.httpRecords))
	}
	var ok []*target
	for _, t := range targets {
		if t.load.Error == "" {
			ok = append(ok, t)
		}
	}
	for _, threads := range c.threads {
		for _, wl := range c.workloads {
			w, _ := ycsbWorkloadNamed(wl)
			cells := map[string]*ycsbCell{}
			for _, t := range ok {
				row := &ycsbResult{Workload: wl, Side: t.name, Durability: "unsynced", Threads: threads, Records: c.httpRecords}
				rows = append(rows, row)
				cells[t.name] = &ycsbCell{res: row}
			}
			for r := range c.rounds {
				for k := range ok {
					if ctx.Err() != nil {
						return rows, ctx.Err()
					}
					t := ok[(k+r)%len(ok)]
					cpu0, client0 := cpuSeconds(t.srv.pid), selfCPU()
					res := runWorkloadYCSB(t.store, w, t.counter, c.httpOps, threads, ycsbSeed(wl, "http", r), c.maxDur)
					var err error
					if res.Err != "" {
						err = fmt.Errorf("%s", res.Err)
					}
					cells[t.name].add(res, cpuSeconds(t.srv.pid)-cpu0, selfCPU()-client0, err)
					logf("ycsb: http %s %s threads %d round %d: %s ops/s, p99 %.0f µs", wl, t.name, threads, r+1, commas(float64(res.Ops)/res.Seconds), res.All.P99)
				}
			}
		}
	}
	for _, t := range ok {
		rss, _ := vmHWM(t.srv.pid)
		for _, row := range rows {
			if row.Side == t.name {
				row.PeakRSS = rss
			}
		}
	}
	return rows, nil
}

// ycsbMeta describes a run: ycsb-run.json beside ycsb.json.
type ycsbMeta struct {
	Command     string    `json:"command"`
	Started     time.Time `json:"started"`
	Seconds     float64   `json:"seconds"`
	Machine     string    `json:"machine"`
	CPUs        int       `json:"cpus,omitempty"`
	GoVersion   string    `json:"go_version"`
	Records     int       `json:"records"`
	Ops         int       `json:"ops_per_round"`
	HTTPRecords int       `json:"http_records"`
	HTTPOps     int       `json:"http_ops_per_round"`
	Rounds      int       `json:"rounds"`
	CacheBytes  int64     `json:"cache_bytes"`
	LoadBefore  string    `json:"load_average_before"`
	LoadAfter   string    `json:"load_average_after"`
}

// machine describes the CPU this runs on.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d CPUs, %s/%s", model, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
}

// renderYCSB rewrites the Markdown and the chart of a finished run.
func renderYCSB(c ycsbConfig) error {
	var meta ycsbMeta
	var rows []*ycsbResult
	for name, dst := range map[string]any{"ycsb-run.json": &meta, "ycsb.json": &rows} {
		b, err := os.ReadFile(filepath.Join(c.outDir, name))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, dst); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return writeYCSB(c, meta, rows)
}

func writeYCSB(c ycsbConfig, meta ycsbMeta, rows []*ycsbResult) error {
	b, err := json.MarshalIndent(rows, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.outDir, "ycsb.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if b, err = json.MarshalIndent(meta, "", "  "); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.outDir, "ycsb-run.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var md strings.Builder
	printYCSB(&md, meta, rows)
	printYCSBGoals(&md, meta, rows)
	os.Stdout.WriteString(md.String())
	if err := os.WriteFile(filepath.Join(c.outDir, "ycsb.md"), []byte(md.String()), 0o644); err != nil {
		return err
	}
	return writePNG(filepath.Join(c.outDir, "ycsb.png"), drawYCSBChart(meta, rows))
}

// printYCSB writes the run as Markdown tables: every row, then each
// side's ratio to raw Pebble (embedded) or to Azurite (HTTP).
func printYCSB(w io.Writer, meta ycsbMeta, rows []*ycsbResult) {
	fmt.Fprintf(w, "# YCSB\n\n`%s` on %s, %s, %.0f s, load average %s before and %s after.\n\n",
		meta.Command, meta.Machine, meta.GoVersion, meta.Seconds, meta.LoadBefore, meta.LoadAfter)
	fmt.Fprintf(w, "%s records of 10 fields of 100 bytes; %s operations a round (HTTP: %s records, %s operations), best of %d interleaved rounds; cache %d MiB on every side.\n\n",
		commas(float64(meta.Records)), commas(float64(meta.Ops)), commas(float64(meta.HTTPRecords)), commas(float64(meta.HTTPOps)), meta.Rounds, meta.CacheBytes>>20)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', tabwriter.Debug)
	fmt.Fprintln(tw, "| workload\tside\tdurability\tthreads\tops/s\tp50 µs\tp99 µs\tp99.9 µs\tCPU µs/op\tclient CPU µs/op\tvs ref\tdisk MiB\tpeak RSS MiB\t")
	fmt.Fprintln(tw, "|---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t---\t")
	for _, r := range rows {
		if r.Error != "" {
			msg := strings.ReplaceAll(r.Error, "|", "/")
			if len(msg) > 60 {
				msg = msg[:60] + "... (ycsb.json has it all)"
			}
			fmt.Fprintf(tw, "| %s\t%s\t%s\t%d\tfailed: %s\t\t\t\t\t\t\t\t\t\n", r.Workload, r.Side, r.Durability, r.Threads, msg)
			continue
		}
		vs := ""
		if ref := ycsbRef(rows, r); ref != nil && ref.OpsPerSec > 0 && ref != r {
			vs = fmt.Sprintf("%.2fx %s", r.OpsPerSec/ref.OpsPerSec, ref.Side)
		}
		fmt.Fprintf(tw, "| %s\t%s\t%s\t%d\t%s\t%.0f\t%.0f\t%.0f\t%.1f\t%s\t%s\t%.1f\t%.0f\t\n", r.Workload, r.Side, r.Durability, r.Threads,
			commas(r.OpsPerSec), r.P50, r.P99, r.P999, r.CPUPerOp, clientCPU(r), vs, float64(r.DiskBytes)/(1<<20), float64(r.PeakRSS)/(1<<20))
	}
	tw.Flush()
	fmt.Fprintln(w)
}

// ycsbRef is the row r is compared with: raw Pebble's in the same
// workload and durability for an embedded side, Azurite's with the
// same threads over HTTP.
func ycsbRef(rows []*ycsbResult, r *ycsbResult) *ycsbResult {
	want := sidePebble
	if r.Side == ycsbServer || r.Side == ycsbAzurite {
		want = ycsbAzurite
	}
	for _, x := range rows {
		if x.Side == want && x.Workload == r.Workload && x.Durability == r.Durability && x.Threads == r.Threads && x.Error == "" {
			return x
		}
	}
	return nil
}

// clientCPU formats an HTTP row's client CPU per operation ("" for
// embedded rows, whose work is all in the side's process).
func clientCPU(r *ycsbResult) string {
	if r.ClientCPUPerOp == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", r.ClientCPUPerOp)
}

// ycsbFind returns the row of side in workload, durability and
// threads, nil when it is missing or failed.
func ycsbFind(rows []*ycsbResult, workload, side, durability string, threads int) *ycsbResult {
	for _, r := range rows {
		if r.Workload == workload && r.Side == side && r.Durability == durability && r.Threads == threads && r.Error == "" {
			return r
		}
	}
	return nil
}

// printYCSBGoals writes the goals measured in the run: typed and maps
// against raw Pebble, tablestore against Badger, bbolt and SQLite in
// each mode, the server against Azurite (with the ceiling the HTTP
// client's own CPU puts on that ratio), C's p99 at 16 threads, and the
// disk size after the load.
func printYCSBGoals(w io.Writer, meta ycsbMeta, rows []*ycsbResult) {
	fmt.Fprintln(w, "## Goals in this run")
	fmt.Fprintln(w)
	line := func(ok bool, format string, args ...any) {
		fmt.Fprintf(w, "- %s %s\n", okMiss(ok), fmt.Sprintf(format, args...))
	}
	for _, d := range []string{"synced", "unsynced"} {
		for _, wl := range ycsbWorkloads {
			p := ycsbFind(rows, wl.name, sidePebble, d, 1)
			if p == nil {
				continue
			}
			var parts []string
			good := true
			for _, g := range []struct {
				side string
				goal float64
			}{{sideTyped, 0.85}, {sideTablestore, 0.7}} {
				if r := ycsbFind(rows, wl.name, g.side, d, 1); r != nil {
					x := r.OpsPerSec / p.OpsPerSec
					good = good && x >= g.goal
					parts = append(parts, fmt.Sprintf("%s %.2fx (goal %.2f; CPU per op %.2fx raw Pebble's)", g.side, x, g.goal, r.CPUPerOp/p.CPUPerOp))
				}
			}
			if len(parts) > 0 {
				line(good, "%s %s vs raw Pebble: %s", wl.name, d, strings.Join(parts, ", "))
			}
			ts := ycsbFind(rows, wl.name, sideTyped, d, 1)
			if ts == nil {
				continue
			}
			var others []string
			ahead := true
			for _, o := range []string{sideBadger, sideBbolt, sideSQLite} {
				if r := ycsbFind(rows, wl.name, o, d, 1); r != nil {
					x := ts.OpsPerSec / r.OpsPerSec
					ahead = ahead && x >= 1
					others = append(others, fmt.Sprintf("%s %.2fx (CPU per op %.2fx)", o, x, ts.CPUPerOp/r.CPUPerOp))
				}
			}
			if len(others) > 0 {
				line(ahead, "%s %s typed over: %s", wl.name, d, strings.Join(others, ", "))
			}
		}
	}
	for _, th := range []int{1, 16} {
		for _, wl := range ycsbWorkloads {
			s, a := ycsbFind(rows, wl.name, ycsbServer, "unsynced", th), ycsbFind(rows, wl.name, ycsbAzurite, "unsynced", th)
			if s == nil || a == nil {
				continue
			}
			ceiling := ""
			if meta.CPUs > 0 && s.ClientCPUPerOp > 0 {
				// The machine's CPUs bound the operations per second
				// at CPUs / (client's + server's CPU per operation),
				// whatever the threads (a client's or server's
				// background work overlaps even one thread's
				// requests); with a server costing nothing, at CPUs /
				// the client's alone.
				busy := float64(meta.CPUs) * 1e6
				ceiling = fmt.Sprintf("; ceiling on %d CPUs: %.2fx with the server's %.0f µs and the client's %.0f µs of CPU per op, %.2fx were the server free",
					meta.CPUs, busy/(s.ClientCPUPerOp+s.CPUPerOp)/a.OpsPerSec, s.CPUPerOp, s.ClientCPUPerOp, busy/s.ClientCPUPerOp/a.OpsPerSec)
			}
			line(s.OpsPerSec >= 10*a.OpsPerSec, "%s HTTP %d threads: server %.2fx Azurite (goal 10x); server p99 %.0f µs%s", wl.name, th,
				s.OpsPerSec/a.OpsPerSec, s.P99, ceiling)
		}
	}
	if s := ycsbFind(rows, "C", ycsbServer, "unsynced", 16); s != nil {
		line(s.P99 <= 2000, "C HTTP 16 threads: server p99 %.0f µs (goal 2,000 µs), p50 %.0f µs", s.P99, s.P50)
	}
	if p := ycsbFind(rows, "load", sidePebble, "unsynced", 1); p != nil && p.DiskBytes > 0 {
		for _, side := range []string{sideTablestore, sideTyped, sideBadger, sideBbolt, sideSQLite} {
			if r := ycsbFind(rows, "load", side, "unsynced", 1); r != nil {
				x := float64(r.DiskBytes) / float64(p.DiskBytes)
				goal := ""
				ok := true
				if side == sideTablestore || side == sideTyped {
					goal, ok = " (goal 1.2x)", x <= 1.2
				}
				line(ok, "disk after the load: %s %.1f MiB, %.2fx raw Pebble's %.1f MiB%s", side, float64(r.DiskBytes)/(1<<20), x, float64(p.DiskBytes)/(1<<20), goal)
			}
		}
	}
	fmt.Fprintln(w)
}
