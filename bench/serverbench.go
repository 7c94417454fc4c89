package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
	"github.com/tablestore/tablestore/tablestoretest/azurite"
)

// The server mode (-server) drives two Table service servers over HTTP
// with a load generator of its own (restclient.go), the same workloads
// in one run: `tablestore serve` on a directory, synced (the command
// built from ../cmd/tablestore), and Azurite in memory, as its users run
// it. Each server runs in a process of its own; its CPU time per phase
// is read from /proc/<pid>/stat, and so is this process's (the client's).

// serverConfig is the server mode's command line.
type serverConfig struct {
	entities int
	conns    int
	duration time.Duration
	rounds   int
	servers  []string
	bin      string
	outDir   string
	dataDir  string
	keep     bool
	cpuProf  string
	// inProcess serves tablestore from this process (server.New over
	// tablestore.Open), so a CPU profile shows the handler.
	inProcess bool
}

func parseServerFlags(args []string) (serverConfig, error) {
	fs := flag.NewFlagSet("bench -server", flag.ContinueOnError)
	entities := fs.Int("entities", 100_000, "entities to load with $batch (a multiple of 1,000)")
	conns := fs.Int("conns", 16, "concurrent connections of the concurrent workloads ($batch load, gets, inserts)")
	duration := fs.Duration("duration", 3*time.Second, "how long each round of gets and inserts runs")
	rounds := fs.Int("rounds", 3, "rounds of gets, inserts and paging passes, servers interleaved; the best round is reported")
	servers := fs.String("servers", "tablestore,azurite", "comma-separated servers to drive")
	bin := fs.String("tablestore-bin", "", "the tablestore command to run (default: built from ../cmd/tablestore)")
	out := fs.String("out", "results", "directory for server.json and server.png")
	data := fs.String("data", "", "directory for the server's store (default: a new temporary directory, removed at the end)")
	keep := fs.Bool("keep", false, "keep the data directory")
	cpuProf := fs.String("cpuprofile", "", "write a CPU profile of this process (the load generator, and with -in-process the server) to this file")
	inProcess := fs.Bool("in-process", false, "serve tablestore from this process (server.New over tablestore.Open, synced) instead of the command, for profiling; its CPU is then this process's, client included")
	if err := fs.Parse(args); err != nil {
		return serverConfig{}, err
	}
	c := serverConfig{entities: *entities, conns: *conns, duration: *duration, rounds: *rounds, bin: *bin,
		outDir: *out, dataDir: *data, keep: *keep, cpuProf: *cpuProf, inProcess: *inProcess}
	if c.entities <= 0 || c.entities%partitionSize != 0 {
		return c, fmt.Errorf("-entities must be a positive multiple of %d", partitionSize)
	}
	if c.conns < 1 || c.rounds < 1 || c.duration <= 0 {
		return c, fmt.Errorf("-conns, -rounds and -duration must be positive")
	}
	for _, s := range strings.Split(*servers, ",") {
		s = strings.TrimSpace(s)
		if s != serverTablestore && s != serverAzurite {
			return c, fmt.Errorf("unknown server %q (want tablestore, azurite)", s)
		}
		if !slices.Contains(c.servers, s) {
			c.servers = append(c.servers, s)
		}
	}
	return c, nil
}

// The tables the server mode uses: the loaded data set, and the target
// of the single inserts (apart, so paging reads the data set alone).
const (
	srvTable    = "bench"
	srvInsTable = "benchins"
)

// srvFigure is one measured figure of the server mode.
type srvFigure struct {
	ID             string `json:"id"`
	Label          string `json:"label"`
	Unit           string `json:"unit"`
	HigherIsBetter bool   `json:"higherIsBetter"`
	// Goal is tablestore's ratio to Azurite (speed: tablestore over
	// Azurite for per-second figures, Azurite over tablestore for times)
	// the project aims at; 0 for none.
	Goal float64 `json:"goal,omitempty"`
}

var srvFigures = []srvFigure{
	{"batch", "$batch load, 100 inserts per batch", "entities/s", true, 15},
	{"get1-p50", "point get p50, 1 connection", "µs", false, 0},
	{"get1-p99", "point get p99, 1 connection", "µs", false, 0},
	{"get1", "point gets, 1 connection", "gets/s", true, 0},
	{"getN-p50", "point get p50, N connections", "µs", false, 0},
	{"getN-p99", "point get p99, N connections", "µs", false, 0},
	{"getN", "point gets, N connections", "gets/s", true, 5},
	{"insertN", "single inserts, N connections", "inserts/s", true, 0},
	{"page-none", "paging $top=1000, no metadata", "entities/s", true, 15},
	{"page-full", "paging $top=1000, full metadata", "entities/s", true, 0},
}

// The goals for the server's own CPU: what tablestore serve spends per
// entity over the library's floor for the same work in process
// (LoadFloor, PagingFloor), in µs.
const (
	batchOverFloorGoal  = 2.0
	pagingOverFloorGoal = 0.5
)

// overFloorLine is the goal line for the server's CPU per entity over
// the floor's (both in µs; NaN when unknown) against goal.
func overFloorLine(what string, server, floor, goal float64) string {
	over := server - floor
	if math.IsNaN(over) {
		return fmt.Sprintf("  server CPU over the library floor per %s  n/a   goal <= %g µs", what, goal)
	}
	return fmt.Sprintf("  server CPU over the library floor per %s  %6.2f µs (server %.2f, floor %.2f)   goal <= %g µs  %s",
		what, over, server, floor, goal, okMiss(over <= goal))
}

// floorGoal is the server's CPU per entity an over-floor goal allows
// above a floor of floorCPU µs, to the hundredth of a µs.
func floorGoal(floorCPU, over float64) float64 {
	return math.Round((floorCPU+over)*100) / 100
}

// srvGoal is figure id's goal, a ratio to Azurite (0: none).
func srvGoal(id string) float64 {
	for _, f := range srvFigures {
		if f.ID == id {
			return f.Goal
		}
	}
	return 0
}

// srvPhase is the CPU a phase cost, and what it did.
type srvPhase struct {
	ID        string  `json:"id"`
	Requests  int     `json:"requests"`
	Entities  int     `json:"entities"`  // entities written or read
	ServerCPU float64 `json:"serverCpu"` // seconds
	ClientCPU float64 `json:"clientCpu"` // seconds
	Wall      float64 `json:"wall"`      // seconds
	// Switches is how many times the server's threads were switched
	// out (voluntary and not) over the phase, -1 when unknown.
	Switches int64 `json:"contextSwitches"`
	// ServerWait and ClientWait are the seconds the server's and this
	// process's threads waited, runnable, for a CPU over the phase
	// (summed over threads; -1 when unknown).
	ServerWait float64 `json:"serverRunQueueWait"`
	ClientWait float64 `json:"clientRunQueueWait"`
}

// switchesPerRequest is the phase's context switches per request; NaN
// when unknown.
func (p srvPhase) switchesPerRequest() float64 {
	if p.Switches < 0 || p.Requests == 0 {
		return math.NaN()
	}
	return float64(p.Switches) / float64(p.Requests)
}

// contextSwitches sums the voluntary and involuntary context switches
// of process pid's threads (/proc/pid/task/*/status); -1 when they
// cannot be read. A thread that ends takes its count with it, so over a
// phase the difference can only miss switches, not add any.
func contextSwitches(pid int) int64 {
	var n int64
	ok := eachThreadFile(pid, "status", func(b []byte) bool {
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(line, ":")
			if ok && (k == "voluntary_ctxt_switches" || k == "nonvoluntary_ctxt_switches") {
				x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return false
				}
				n += x
			}
		}
		return true
	})
	if !ok {
		return -1
	}
	return n
}

// eachThreadFile calls f with the file name of each thread of process
// pid (/proc/pid/task/*/name), skipping threads that end meanwhile,
// until f returns false; it reports whether the threads could be listed
// and f never returned false.
func eachThreadFile(pid int, name string, f func([]byte) bool) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return false
	}
	for _, t := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/%s", pid, t.Name(), name))
		if err != nil {
			continue // the thread ended
		}
		if !f(b) {
			return false
		}
	}
	return true
}

// srvResult is one server's figures.
type srvResult struct {
	Server string `json:"server"`
	How    string `json:"how"`
	// Values holds the best round of each figure; Rounds every round.
	Values map[string]float64   `json:"values"`
	Rounds map[string][]float64 `json:"rounds"`
	// Phases holds the CPU of the phase of each figure's best round
	// (batch, get1, getN, insertN, page-none, page-full).
	Phases  map[string]srvPhase `json:"phases"`
	PeakRSS int64               `json:"peakRssBytes"`
	Err     string              `json:"error,omitempty"`
	// pending holds the latencies of the round being measured.
	pending map[string]float64
}

// srvResults is the server mode's output.
type srvResults struct {
	Command  string                `json:"command"`
	Started  time.Time             `json:"started"`
	Entities int                   `json:"entities"`
	Conns    int                   `json:"conns"`
	Duration string                `json:"duration"`
	Rounds   int                   `json:"rounds"`
	Servers  map[string]*srvResult `json:"servers"`
	// LibraryPaging is the library's own in-process map paging over the
	// same store (QueryPage, Top 1000), entities/s, best pass.
	LibraryPaging float64 `json:"libraryPaging"`
	// LoadFloor and PagingFloor are the library's floor under the $batch
	// load and under paging without metadata (floors.go): the same work
	// in this process, without HTTP.
	LoadFloor   *srvFloor `json:"loadFloor,omitempty"`
	PagingFloor *srvFloor `json:"pagingFloor,omitempty"`
	// GetFloor is the library's floor under the point gets of the getN
	// phase: Table.GetJSON at no metadata, as many goroutines as
	// connections (libraryGetFloor).
	GetFloor *srvFloor `json:"getFloor,omitempty"`
	// Get1Floor is GetFloor from one goroutine, under the get1 phase;
	// PagingFullFloor is PagingFloor at full metadata, under page-full.
	Get1Floor       *srvFloor `json:"get1Floor,omitempty"`
	PagingFullFloor *srvFloor `json:"pagingFullFloor,omitempty"`
	// RawLoadFloor is raw Pebble's floor under the $batch load: the same
	// entities written as synced batches of Sets (rawLoadFloor).
	RawLoadFloor *srvFloor `json:"rawLoadFloor,omitempty"`
	// InsertFloor is the library's floor under the insertN phase: the
	// same single inserts, each decoded and committed synced, as many
	// goroutines as connections (libraryInsertFloor).
	InsertFloor *srvFloor `json:"insertFloor,omitempty"`
	// Bare is the transport floor (bare.go): the batch, get and insert
	// phases against a server that only reads requests and answers
	// tablestore's captured bytes.
	Bare *srvResult `json:"bare,omitempty"`
	// OneProc is the $batch phase against tablestore serve run with
	// GOMAXPROCS=1, and LoadFloorOneProc the load floor run the same
	// way: how much of the server's CPU over the floor is the scheduling
	// of its goroutines across this machine's CPUs.
	OneProc          *srvResult `json:"oneProc,omitempty"`
	LoadFloorOneProc *srvFloor  `json:"loadFloorOneProc,omitempty"`
	// BareOneProc is the transport floor's $batch phase with
	// GOMAXPROCS=1 in its server.
	BareOneProc *srvResult `json:"bareOneProc,omitempty"`
	// CPUs is how many CPUs the run had (runtime.NumCPU), shared by the
	// servers and this client.
	CPUs int `json:"cpus"`
	// BatchMachineBound is the most entities/s a $batch load could reach
	// here if the server cost nothing over LoadFloor, given this
	// client's CPU per entity in tablestore's $batch phase (see
	// machineBound); 0 when unknown.
	BatchMachineBound float64 `json:"batchMachineBound,omitempty"`
	// LoadAverage is /proc/loadavg at the start and the end.
	LoadAverage [2]string `json:"loadAverage"`
	Seconds     float64   `json:"seconds"`
}

// srvTarget is a running server.
type srvTarget struct {
	name     string
	how      string
	host     string // 127.0.0.1:port
	endpoint string // http://host/account
	pid      int
	storeDir string // tablestore's directory
	// metricsURL is the server's /metrics, whose request durations give
	// its own time per get (gettail.go); "" for none.
	metricsURL string
	stop       func()
}

func runServerBench(ctx context.Context, args []string) error {
	c, err := parseServerFlags(args)
	if err != nil {
		return err
	}
	res := &srvResults{Command: commandLine("go run . -server", args), Started: time.Now().UTC(),
		Entities: c.entities, Conns: c.conns, Duration: c.duration.String(), Rounds: c.rounds,
		Servers: map[string]*srvResult{}, CPUs: runtime.NumCPU()}
	res.LoadAverage[0] = loadAvg()
	stopProfile, err := startCPUProfile(c.cpuProf)
	if err != nil {
		return err
	}
	defer stopProfile()
	dataDir := c.dataDir
	if dataDir == "" {
		if dataDir, err = os.MkdirTemp("", "tablestore-server-bench-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	if !c.keep {
		defer os.RemoveAll(dataDir)
	}
	if c.bin == "" && !c.inProcess && slices.Contains(c.servers, serverTablestore) {
		if c.bin, err = buildTablestore(ctx, dataDir); err != nil {
			return err
		}
	}
	// The entities' JSON, as the SDKs send it, made once.
	ents := make([][]byte, c.entities)
	var rec record
	for i := range ents {
		genRecord(&rec, i)
		if ents[i], err = recordEntity(&rec).MarshalJSON(); err != nil {
			return err
		}
	}
	// Both servers run at once, so the rounds can alternate between
	// them; only one is driven at a time.
	targets := map[string]*srvTarget{}
	defer func() {
		for _, t := range targets {
			t.stop()
		}
	}()
	for _, name := range c.servers {
		r := newSrvResult(name, "")
		res.Servers[name] = r
		t, err := startServer(ctx, name, c, dataDir)
		if err != nil {
			r.Err = "start: " + err.Error()
			logf("server: %s: %v", name, err)
			continue
		}
		targets[name] = t
		r.How = t.how
		logf("server: %s (%s) at %s, pid %d", name, t.how, t.endpoint, t.pid)
	}
	// The load, one server after the other.
	for _, name := range c.servers {
		t := targets[name]
		if t == nil {
			continue
		}
		r := res.Servers[name]
		if err := srvBatchPhase(ctx, t, c, r, ents); err != nil {
			r.Err = err.Error()
		}
	}
	phases := serverPhases(ctx, c)
	for _, ph := range phases {
		for round := range c.rounds {
			for k := range c.servers {
				name := c.servers[(k+round)%len(c.servers)]
				t, r := targets[name], res.Servers[name]
				if t == nil || r.Err != "" || ctx.Err() != nil {
					continue
				}
				logf("server: %s: %s, round %d/%d", ph.id, name, round+1, c.rounds)
				if err := ph.measureRound(t, r, round); err != nil {
					r.Err = err.Error()
				}
			}
		}
	}
	var answers *bareAnswers
	if t := targets[serverTablestore]; t != nil && res.Servers[serverTablestore].Err == "" && ctx.Err() == nil {
		if answers, err = captureBareAnswers(t, c.entities); err != nil {
			logf("server: capturing tablestore's answers for the transport floor: %v", err)
		}
	}
	// Every server stops before the library is measured in this process.
	storeDir := ""
	for _, name := range c.servers {
		if t := targets[name]; t != nil {
			if hwm, err := vmHWM(t.pid); err == nil {
				res.Servers[name].PeakRSS = hwm
			}
			t.stop()
			delete(targets, name)
			if name == serverTablestore {
				storeDir = t.storeDir
			}
		}
	}
	if answers != nil && ctx.Err() == nil {
		logf("server: the transport floor: the same requests against a server answering tablestore's bytes")
		if res.Bare, err = runBare(ctx, c, answers, dataDir, ents, true); err != nil {
			logf("server: transport floor: %v", err)
		}
		if res.BareOneProc, err = runBare(ctx, c, answers, dataDir, ents, false, "GOMAXPROCS=1"); err != nil {
			logf("server: transport floor with GOMAXPROCS=1: %v", err)
		}
	}
	if storeDir != "" && c.bin != "" && ctx.Err() == nil {
		logf("server: the $batch load against tablestore serve with GOMAXPROCS=1")
		if res.OneProc, err = runOneProc(ctx, c, dataDir, ents); err != nil {
			logf("server: GOMAXPROCS=1: %v", err)
		}
	}
	if storeDir != "" && ctx.Err() == nil {
		logf("server: the library's own paging over the server's store")
		v, err := libraryPaging(ctx, storeDir, c)
		if err != nil {
			logf("server: library paging: %v", err)
		}
		res.LibraryPaging = v
		logf("server: the library's floor under the $batch load (a new store) and under paging (the server's store)")
		if res.LoadFloor, err = libraryLoadFloor(ctx, dataDir, c, ents); err != nil {
			logf("server: library load floor: %v", err)
		}
		if res.OneProc != nil {
			prev := runtime.GOMAXPROCS(1)
			res.LoadFloorOneProc, err = libraryLoadFloor(ctx, dataDir, c, ents)
			runtime.GOMAXPROCS(prev)
			if err != nil {
				logf("server: library load floor with GOMAXPROCS=1: %v", err)
			}
		}
		if res.RawLoadFloor, err = rawLoadFloor(ctx, dataDir, c); err != nil {
			logf("server: raw Pebble load floor: %v", err)
		}
		if res.InsertFloor, err = libraryInsertFloor(ctx, dataDir, c, floorInserts); err != nil {
			logf("server: library insert floor: %v", err)
		}
		if res.PagingFloor, err = libraryPagingFloor(ctx, storeDir, c); err != nil {
			logf("server: library paging floor: %v", err)
		}
		if res.PagingFullFloor, err = libraryPagingFullFloor(ctx, storeDir, c); err != nil {
			logf("server: library paging floor at full metadata: %v", err)
		}
		if res.Get1Floor, err = libraryGetFloor(ctx, storeDir, c, 1); err != nil {
			logf("server: library get floor, one goroutine: %v", err)
		}
		if res.GetFloor, err = libraryGetFloor(ctx, storeDir, c, c.conns); err != nil {
			logf("server: library get floor: %v", err)
		}
	}
	res.LoadAverage[1] = loadAvg()
	if ts := res.Servers[serverTablestore]; ts != nil && res.LoadFloor != nil {
		if b := machineBound(res.CPUs, res.LoadFloor.CPU, ts.Phases["batch"].clientPerEntity()); !math.IsNaN(b) {
			res.BatchMachineBound = b
		}
	}
	res.Seconds = time.Since(res.Started).Seconds()
	printServer(os.Stdout, res)
	if err := os.MkdirAll(c.outDir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	jsonPath, pngPath := filepath.Join(c.outDir, "server.json"), filepath.Join(c.outDir, "server.png")
	if err := os.WriteFile(jsonPath, append(b, '\n'), 0o644); err != nil {
		return err
	}
	if err := writePNG(pngPath, drawChart(serverChartRows(res), fmt.Sprintf("tablestore serve relative to Azurite over HTTP (%s entities, %d connections)",
		commas(float64(c.entities)), c.conns), []chartSide{{serverAzurite, "vs Azurite", colSQLite}})); err != nil {
		return err
	}
	fmt.Printf("\nwrote %s and %s (%.0f s)\n", jsonPath, pngPath, res.Seconds)
	for _, name := range c.servers {
		if e := res.Servers[name].Err; e != "" {
			return fmt.Errorf("%s: %s", name, e)
		}
	}
	return nil
}

// measure runs one round of figure id (and its companions: the
// percentiles of a get phase) and keeps the best.
func (r *srvResult) measure(t *srvTarget, id string, run func() (float64, srvPhase, error)) error {
	// A phase starts on an idle server, so the background work an earlier
	// phase left (flushes, compactions) is not counted as this phase's.
	// A write phase's own background work is its cost: its server CPU
	// runs until the server is idle again (its rate does not wait).
	if waited, idle := quiesce(t.pid); !idle {
		logf("server: %s not idle after %.0f s; measuring %s anyway", r.Server, waited.Seconds(), id)
	}
	s0, c0, x0 := cpuSeconds(t.pid), float64(processCPU())/1e9, contextSwitches(t.pid)
	sw0, cw0 := runQueueWait(t.pid), runQueueWait(os.Getpid())
	t0 := time.Now()
	v, ph, err := run()
	if err != nil {
		return err
	}
	ph.ID, ph.Wall = id, time.Since(t0).Seconds()
	c1 := float64(processCPU())/1e9 - c0
	if id == "batch" || id == "insertN" {
		quiesce(t.pid)
	}
	ph.ServerCPU, ph.ClientCPU = cpuSeconds(t.pid)-s0, c1
	ph.ServerWait, ph.ClientWait = waitSince(t.pid, sw0), waitSince(os.Getpid(), cw0)
	if x1 := contextSwitches(t.pid); x0 >= 0 && x1 >= 0 {
		ph.Switches = x1 - x0
	} else {
		ph.Switches = -1
	}
	r.Rounds[id] = append(r.Rounds[id], v)
	if old, ok := r.Values[id]; !ok || v > old {
		r.Values[id] = v
		r.Phases[id] = ph
		// A get phase's latencies go with its best throughput round.
		for _, q := range getCompanions {
			if x, ok := r.pending[id+q]; ok {
				r.Values[id+q] = x
			}
		}
	}
	for _, q := range getCompanions {
		if x, ok := r.pending[id+q]; ok {
			r.Rounds[id+q] = append(r.Rounds[id+q], x)
			delete(r.pending, id+q)
		}
	}
	logf("server: %s: %s %s (server CPU %.2f s, client CPU %.2f s, %d requests)", r.Server, id, commas(v), ph.ServerCPU, ph.ClientCPU, ph.Requests)
	return nil
}

// quiesce waits until the process pid uses under 5% of a core over
// 300 ms (its CPU read from /proc at clock-tick precision), for 30 s at
// most; it returns how long it waited and whether pid went idle.
func quiesce(pid int) (time.Duration, bool) {
	const window, limit = 300 * time.Millisecond, 30 * time.Second
	start := time.Now()
	for time.Since(start) < limit {
		c0 := cpuSeconds(pid)
		time.Sleep(window)
		if cpuSeconds(pid)-c0 <= 0.05*window.Seconds()+0.0101 {
			return time.Since(start), true
		}
	}
	return time.Since(start), false
}

// buildTablestore builds ../cmd/tablestore into dir.
func buildTablestore(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "tablestore")
	logf("building the tablestore command")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/tablestore")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building the command (run from bench/): %w", err)
	}
	return bin, nil
}

// srvPhaseRun is one of the phases after the load: run drives t for
// one round, with r the server's results (the get phases keep their
// latencies there).
type srvPhaseRun struct {
	id  string
	run func(t *srvTarget, r *srvResult, round int) (float64, srvPhase, error)
	// warm, when set, runs before each round, outside its measure.
	warm func(t *srvTarget) error
}

// measureRound warms t for the phase, when the phase warms, and
// measures its round into r; its error names the phase.
func (ph srvPhaseRun) measureRound(t *srvTarget, r *srvResult, round int) error {
	if ph.warm != nil {
		if err := ph.warm(t); err != nil {
			return fmt.Errorf("%s: warming: %w", ph.id, err)
		}
	}
	if err := r.measure(t, ph.id, func() (float64, srvPhase, error) { return ph.run(t, r, round) }); err != nil {
		return fmt.Errorf("%s: %w", ph.id, err)
	}
	return nil
}

// serverPhases are the phases after the load, in order.
func serverPhases(ctx context.Context, c serverConfig) []srvPhaseRun {
	return []srvPhaseRun{
		{id: "get1", run: func(t *srvTarget, r *srvResult, round int) (float64, srvPhase, error) {
			return srvGets(ctx, t, c, 1, round, r)
		}},
		{id: "getN", run: func(t *srvTarget, r *srvResult, round int) (float64, srvPhase, error) {
			return srvGets(ctx, t, c, c.conns, round, r)
		}},
		{id: "insertN", run: func(t *srvTarget, _ *srvResult, round int) (float64, srvPhase, error) {
			return srvInserts(ctx, t, c, round)
		}},
		{id: "page-none", run: func(t *srvTarget, _ *srvResult, round int) (float64, srvPhase, error) {
			return srvPaging(ctx, t, c, acceptNoMeta)
		}, warm: func(t *srvTarget) error {
			// One pass first, as the paging floors read one before
			// they measure: the load left most of the data set out of
			// the store's block cache, and the gets read only some.
			_, _, err := srvPagingPasses(ctx, t, c, acceptNoMeta, 1)
			return err
		}},
		{id: "page-full", run: func(t *srvTarget, _ *srvResult, round int) (float64, srvPhase, error) {
			return srvPaging(ctx, t, c, acceptFullMeta)
		}},
	}
}

// newSrvResult is an empty result for a server.
func newSrvResult(name, how string) *srvResult {
	return &srvResult{Server: name, How: how, Values: map[string]float64{}, Rounds: map[string][]float64{}, Phases: map[string]srvPhase{}}
}

// srvBatchPhase sets t's tables up and measures its $batch load of ents
// into r.
func srvBatchPhase(ctx context.Context, t *srvTarget, c serverConfig, r *srvResult, ents [][]byte) error {
	if err := srvSetup(t); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	// The bodies are made before the phase, so its client CPU is
	// sending them and reading the responses.
	bodies, ctypes := batchBodies(t, ents)
	if err := r.measure(t, "batch", func() (float64, srvPhase, error) { return srvLoad(ctx, t, c, bodies, ctypes) }); err != nil {
		return fmt.Errorf("batch load: %w", err)
	}
	return nil
}

// runBare measures the $batch load against the transport floor's server
// answering a, run with env added to this process's environment; then,
// with all set, c.rounds rounds of the get and insert phases.
func runBare(ctx context.Context, c serverConfig, a *bareAnswers, dataDir string, ents [][]byte, all bool, env ...string) (*srvResult, error) {
	t, err := startBare(ctx, a, dataDir, env...)
	if err != nil {
		return nil, err
	}
	defer t.stop()
	r := newSrvResult(t.name, t.how)
	if err := srvBatchPhase(ctx, t, c, r, ents); err != nil {
		return nil, err
	}
	var phases []srvPhaseRun
	if all {
		phases = serverPhases(ctx, c)
	}
	for _, ph := range phases {
		if ph.id == "page-full" || ph.id == "page-none" && a.Pages == nil {
			continue // only the pages at no metadata are captured
		}
		for round := range c.rounds {
			if err := ph.measureRound(t, r, round); err != nil {
				return nil, err
			}
		}
	}
	if hwm, err := vmHWM(t.pid); err == nil {
		r.PeakRSS = hwm
	}
	return r, nil
}

// runOneProc measures the $batch load against tablestore serve run with
// GOMAXPROCS=1, on a new store in dataDir.
func runOneProc(ctx context.Context, c serverConfig, dataDir string, ents [][]byte) (*srvResult, error) {
	dir, err := os.MkdirTemp(dataDir, "one-proc-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	t, err := startServer(ctx, serverTablestore, c, dir, "GOMAXPROCS=1")
	if err != nil {
		return nil, err
	}
	defer t.stop()
	r := newSrvResult(t.name, t.how)
	if err := srvBatchPhase(ctx, t, c, r, ents); err != nil {
		return nil, err
	}
	return r, nil
}

// startServer starts one server on a free loopback port; tablestore's
// command runs with env added to this process's environment.
func startServer(ctx context.Context, name string, c serverConfig, dataDir string, env ...string) (*srvTarget, error) {
	if name == serverAzurite {
		p, err := azurite.Launch(ctx)
		if err != nil {
			return nil, err
		}
		u, err := url.Parse(p.Endpoint())
		if err != nil {
			p.Close()
			return nil, err
		}
		return &srvTarget{name: name, how: "azurite-table 3.37.0 --inMemoryPersistence", host: u.Host,
			endpoint: p.Endpoint(), pid: p.PID(), stop: func() { p.Close() }}, nil
	}
	dir := filepath.Join(dataDir, "serve-store")
	if c.inProcess {
		return startInProcess(dir)
	}
	// The store is made first, so the command only opens it.
	db, err := tablestore.Open(dir, nil)
	if err != nil {
		return nil, err
	}
	if err := db.Close(); err != nil {
		return nil, err
	}
	port, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	adminPort, err := freeLoopbackPort()
	if err != nil {
		return nil, err
	}
	admin := "127.0.0.1:" + strconv.Itoa(adminPort)
	cmd := exec.Command(c.bin, "serve", "--dir", dir, "--addr", host, "--log-level", "warn", "--admin-addr", admin)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	how := "tablestore serve --dir (synced) --log-level warn --admin-addr (metrics on)"
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
		how += ", environment " + strings.Join(env, " ")
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := processServer(cmd, "", "")
	if err := waitListening(ctx, host, s.exited); err != nil {
		s.stop()
		return nil, err
	}
	return &srvTarget{name: name, how: how, host: host, endpoint: "http://" + host + "/" + azurite.Account,
		pid: s.pid, storeDir: dir, metricsURL: "http://" + admin + "/metrics", stop: s.stop}, nil
}

// startInProcess serves tablestore's REST handler over the store in dir
// from this process.
func startInProcess(dir string) (*srvTarget, error) {
	db, err := tablestore.Open(dir, nil)
	if err != nil {
		return nil, err
	}
	h, err := server.New(db, nil)
	if err != nil {
		db.Close()
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		db.Close()
		return nil, err
	}
	srv := server.NewHTTPServer(l.Addr().String(), h)
	go srv.Serve(l)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			srv.Shutdown(ctx)
			db.Close()
		})
	}
	host := l.Addr().String()
	return &srvTarget{name: serverTablestore, how: "server.New over tablestore.Open (synced), in this process", host: host,
		endpoint: "http://" + host + "/" + azurite.Account, pid: os.Getpid(), storeDir: dir, stop: stop}, nil
}

// conn opens a connection to t as the development account.
func (t *srvTarget) conn() (*restConn, error) {
	return newRestConn(t.host, azurite.Account, azurite.Key)
}

// srvSetup creates the two tables.
func srvSetup(t *srvTarget) error {
	c, err := t.conn()
	if err != nil {
		return err
	}
	defer c.close()
	for _, name := range []string{srvTable, srvInsTable} {
		r, err := c.do("POST", "/Tables", "", acceptNoMeta, []string{"Prefer: return-no-content"}, "application/json",
			[]byte(`{"TableName":"`+name+`"}`))
		if err != nil {
			return err
		}
		if r.status != 201 && r.status != 204 {
			return fmt.Errorf("create table %s: status %d: %s", name, r.status, r.body)
		}
	}
	return nil
}

// srvLoad sends the $batch bodies (batchSize inserts each, see
// batchBodies), c.conns at a time; it returns entities/s.
func srvLoad(ctx context.Context, t *srvTarget, c serverConfig, bodies [][]byte, ctypes []string) (float64, srvPhase, error) {
	batches := len(bodies)
	entities := batches * batchSize
	p := startProgress(t.name+" $batch load", "entities", entities)
	defer p.finish()
	var next atomic.Int64
	errs := make([]error, c.conns)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c.conns {
		wg.Go(func() {
			conn, err := t.conn()
			if err != nil {
				errs[w] = err
				return
			}
			defer conn.close()
			for ctx.Err() == nil {
				b := int(next.Add(1) - 1)
				if b >= batches {
					return
				}
				r, err := conn.do("POST", "/$batch", "", acceptMinMeta, nil, ctypes[b], bodies[b])
				if err != nil {
					errs[w] = fmt.Errorf("batch %d: %w", b, err)
					return
				}
				if ok, failed := batchStatuses(r.body); r.status != 202 || ok != batchSize || failed != 0 {
					errs[w] = fmt.Errorf("batch %d: status %d, %d sub-responses ok, %d failed: %.300s", b, r.status, ok, failed, r.body)
					return
				}
				p.add(batchSize)
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, srvPhase{}, err
	}
	return rate(entities, d), srvPhase{Requests: batches, Entities: entities}, nil
}

// batchBodies makes t's $batch bodies of ents, batchSize entities each,
// and their Content-Types.
func batchBodies(t *srvTarget, ents [][]byte) (bodies [][]byte, ctypes []string) {
	batches := len(ents) / batchSize
	bodies, ctypes = make([][]byte, batches), make([]string, batches)
	for b := range bodies {
		bodies[b], ctypes[b] = batchBody(t.endpoint, srvTable, ents[b*batchSize:(b+1)*batchSize], b)
	}
	return bodies, ctypes
}

// srvGets reads random entities of the data set on conns connections
// for c.duration, after 200 warm-up gets per connection, and returns
// gets/s; p50 and p99 go to r.pending under id-p50 and id-p99.
func srvGets(ctx context.Context, t *srvTarget, c serverConfig, conns, round int, r *srvResult) (float64, srvPhase, error) {
	id := "get1"
	if conns > 1 {
		id = "getN"
	}
	lats := make([][]time.Duration, conns)
	errs := make([]error, conns)
	var wg sync.WaitGroup
	var ready, started sync.WaitGroup
	ready.Add(conns)
	started.Add(1)
	var start time.Time
	for w := range conns {
		wg.Go(func() {
			conn, err := t.conn()
			if err != nil {
				errs[w] = err
				ready.Done()
				return
			}
			defer conn.close()
			rnd := rand.New(rand.NewPCG(uint64(round), uint64(w)))
			get := func() error {
				i := rnd.IntN(c.entities)
				pk, rk := partitionKey(i/partitionSize), rowKey(i%partitionSize)
				resp, err := conn.do("GET", entityPath(srvTable, pk, rk), "", acceptNoMeta, nil, "", nil)
				if err != nil {
					return err
				}
				if resp.status != 200 || !bytes.Contains(resp.body, []byte(`"RowKey":"`+rk+`"`)) {
					return fmt.Errorf("get %s/%s: status %d: %.200s", pk, rk, resp.status, resp.body)
				}
				return nil
			}
			for range 200 {
				if err := get(); err != nil {
					errs[w] = err
					ready.Done()
					return
				}
			}
			ready.Done()
			started.Wait()
			deadline := start.Add(c.duration)
			for ctx.Err() == nil {
				t0 := time.Now()
				if !t0.Before(deadline) {
					return
				}
				if err := get(); err != nil {
					errs[w] = err
					return
				}
				lats[w] = append(lats[w], time.Since(t0))
			}
		})
	}
	ready.Wait()
	if err := errors.Join(errs...); err != nil {
		started.Done()
		wg.Wait()
		return 0, srvPhase{}, err
	}
	hist0, _ := scrapeGetHist(t.metricsURL)
	sched0 := schedLatencies()
	start = time.Now()
	started.Done()
	wg.Wait()
	d := time.Since(start)
	sched1 := schedLatencies()
	hist1, histOK := scrapeGetHist(t.metricsURL)
	if err := errors.Join(errs...); err != nil {
		return 0, srvPhase{}, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return 0, srvPhase{}, errors.New("no get finished")
	}
	slices.Sort(all)
	if r.pending == nil {
		r.pending = map[string]float64{}
	}
	r.pending[id+"-p50"] = float64(all[len(all)/2].Microseconds())
	r.pending[id+"-p99"] = float64(all[len(all)*99/100].Microseconds())
	if p99, n := quantileBound(hist0, hist1, 0.99); histOK && n > 0 && !math.IsInf(p99, 1) {
		r.pending[id+"-server-p99"] = p99 * 1e6
	}
	if p99 := schedQuantile(sched0, sched1, 0.99); !math.IsNaN(p99) && !math.IsInf(p99, 1) {
		r.pending[id+"-client-sched-p99"] = p99 * 1e6
	}
	return rate(len(all), d), srvPhase{Requests: len(all), Entities: len(all)}, nil
}

// srvInserts inserts new entities into srvInsTable on c.conns
// connections for c.duration, each connection in its own partition, and
// returns inserts/s. Each insert is acknowledged once durable on
// tablestore (synced store); Azurite keeps it in memory.
func srvInserts(ctx context.Context, t *srvTarget, c serverConfig, round int) (float64, srvPhase, error) {
	var total atomic.Int64
	errs := make([]error, c.conns)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(c.duration)
	for w := range c.conns {
		wg.Go(func() {
			conn, err := t.conn()
			if err != nil {
				errs[w] = err
				return
			}
			defer conn.close()
			pk := fmt.Sprintf("ins-%d-%02d", round, w)
			var rec record
			for i := 0; ctx.Err() == nil && time.Now().Before(deadline); i++ {
				genRecordKeys(&rec, i, pk, rowKey(i))
				body, err := recordEntity(&rec).MarshalJSON()
				if err != nil {
					errs[w] = err
					return
				}
				r, err := conn.do("POST", "/"+srvInsTable, "", acceptNoMeta, []string{"Prefer: return-no-content"}, "application/json", body)
				if err != nil {
					errs[w] = err
					return
				}
				if r.status != 204 {
					errs[w] = fmt.Errorf("insert %s/%s: status %d: %.200s", rec.PK, rec.RK, r.status, r.body)
					return
				}
				total.Add(1)
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return 0, srvPhase{}, err
	}
	n := int(total.Load())
	return rate(n, d), srvPhase{Requests: n, Entities: n}, nil
}

// srvPaging reads the whole data set in pages of $top=1000 at the given
// metadata level, following the continuation headers, checks the count
// and the order of the keys, and returns entities/s. The first page is
// decoded in full as a check; the others are counted by their RowKey
// members.
// pagingPasses is how many times a paging round reads the whole data
// set: the server's CPU is read in clock ticks (10 ms), and one pass of
// 100,000 entities takes about 0.15 s of it.
const pagingPasses = 3

func srvPaging(ctx context.Context, t *srvTarget, c serverConfig, accept string) (float64, srvPhase, error) {
	return srvPagingPasses(ctx, t, c, accept, pagingPasses)
}

// srvPagingPasses is srvPaging reading the data set passes times.
func srvPagingPasses(ctx context.Context, t *srvTarget, c serverConfig, accept string, passes int) (float64, srvPhase, error) {
	conn, err := t.conn()
	if err != nil {
		return 0, srvPhase{}, err
	}
	defer conn.close()
	total, pages, passTotal := 0, 0, 0
	npk, nrk := "", ""
	start := time.Now()
	for pass := 0; pass < passes && ctx.Err() == nil; {
		q := "$top=1000"
		if npk != "" {
			q += "&NextPartitionKey=" + url.QueryEscape(npk) + "&NextRowKey=" + url.QueryEscape(nrk)
		}
		r, err := conn.do("GET", "/"+srvTable+"()", q, accept, nil, "", nil)
		if err != nil {
			return 0, srvPhase{}, err
		}
		if r.status != 200 {
			return 0, srvPhase{}, fmt.Errorf("page %d: status %d: %.300s", pages+1, r.status, r.body)
		}
		n := bytes.Count(r.body, []byte(`"RowKey":`))
		if pages == 0 {
			if err := checkPage(r.body, n); err != nil {
				return 0, srvPhase{}, err
			}
		}
		// The page's first key must be the one after the last page's.
		var rec record
		genRecord(&rec, passTotal)
		if n > 0 && !bytes.Contains(r.body, []byte(`"RowKey":"`+rec.RK+`"`)) {
			return 0, srvPhase{}, fmt.Errorf("page %d does not hold entity %d (%s/%s)", pages+1, passTotal, rec.PK, rec.RK)
		}
		total += n
		passTotal += n
		pages++
		npk, nrk = r.header.Get("x-ms-continuation-NextPartitionKey"), r.header.Get("x-ms-continuation-NextRowKey")
		if npk == "" {
			if passTotal != c.entities {
				return 0, srvPhase{}, fmt.Errorf("paging pass %d read %d entities, want %d", pass+1, passTotal, c.entities)
			}
			pass, passTotal = pass+1, 0
		}
	}
	d := time.Since(start)
	if err := ctx.Err(); err != nil {
		return 0, srvPhase{}, err
	}
	return rate(total, d), srvPhase{Requests: pages, Entities: total}, nil
}

// checkPage decodes a page in full: n entities, each with its keys and
// the data set's ten properties.
func checkPage(body []byte, n int) error {
	var page struct {
		Value []map[string]any `json:"value"`
	}
	if err := json.Unmarshal(body, &page); err != nil {
		return fmt.Errorf("first page: %w", err)
	}
	if len(page.Value) != n || n == 0 {
		return fmt.Errorf("first page: %d entities decoded, %d counted", len(page.Value), n)
	}
	for _, e := range page.Value {
		for _, k := range []string{"PartitionKey", "RowKey", "Name", "Email", "City", "Note", "Count", "Bucket", "Score", "Amount", "Active", "Created"} {
			if _, ok := e[k]; !ok {
				return fmt.Errorf("first page: an entity lacks %s: %v", k, e)
			}
		}
	}
	return nil
}

// libraryPaging opens the server's store in this process and pages
// through the data set with QueryPage (Top 1000) into maps, c.rounds
// passes; it returns the best pass's entities/s.
func libraryPaging(ctx context.Context, dir string, c serverConfig) (float64, error) {
	db, err := tablestore.Open(dir, nil)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	t := db.Table(srvTable)
	best := 0.0
	for range c.rounds {
		total, token := 0, ""
		start := time.Now()
		for {
			p, err := t.QueryPage(ctx, tablestore.Query{Top: pageTop, Continuation: token})
			if err != nil {
				return 0, err
			}
			for _, e := range p.Entities {
				if len(e.Properties) != propertyCount {
					return 0, fmt.Errorf("%s/%s has %d properties", e.PartitionKey, e.RowKey, len(e.Properties))
				}
			}
			total += len(p.Entities)
			if p.Continuation == "" {
				break
			}
			token = p.Continuation
		}
		if total != c.entities {
			return 0, fmt.Errorf("library paging read %d entities, want %d", total, c.entities)
		}
		best = max(best, rate(total, time.Since(start)))
	}
	return best, nil
}

// serverChartRows returns the figures as chart rows: tablestore against
// Azurite.
func serverChartRows(res *srvResults) *results {
	r := &results{}
	ts, az := res.Servers[serverTablestore], res.Servers[serverAzurite]
	if ts == nil || az == nil {
		return r
	}
	for _, f := range srvFigures {
		x := &row{figure: figure{ID: f.ID, Label: srvLabel(f, res.Conns), Unit: f.Unit, HigherIsBetter: f.HigherIsBetter},
			Values: map[string]float64{}}
		if v, ok := ts.Values[f.ID]; ok {
			x.Values[sideTablestore] = v
		}
		if v, ok := az.Values[f.ID]; ok {
			x.Values[serverAzurite] = v
		}
		r.Rows = append(r.Rows, x)
	}
	return r
}

// srvLabel puts the connection count in a figure's label.
func srvLabel(f srvFigure, conns int) string {
	return strings.ReplaceAll(f.Label, "N connections", fmt.Sprintf("%d connections", conns))
}

// perRequest returns a phase's server CPU per request and per entity,
// µs.
func (p srvPhase) perRequest() (req, ent float64) {
	if p.Requests == 0 {
		return math.NaN(), math.NaN()
	}
	return p.ServerCPU / float64(p.Requests) * 1e6, p.ServerCPU / float64(max(p.Entities, 1)) * 1e6
}

// clientPerEntity is this client's CPU per entity in the phase, µs; NaN
// for a phase not run.
func (p srvPhase) clientPerEntity() float64 {
	if p.Entities == 0 {
		return math.NaN()
	}
	return p.ClientCPU / float64(p.Entities) * 1e6
}

func printServer(w io.Writer, res *srvResults) {
	fmt.Fprintf(w, "\nTable service over HTTP, %s entities loaded with $batch, %d connections for the concurrent rows, %s per round of gets and inserts, best of %d rounds;\n",
		commas(float64(res.Entities)), res.Conns, res.Duration, res.Rounds)
	fmt.Fprintf(w, "load average %s at the start, %s at the end\n\n", res.LoadAverage[0], res.LoadAverage[1])
	ts, az := res.Servers[serverTablestore], res.Servers[serverAzurite]
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tunit (better)\ttablestore\tazurite\ttablestore/azurite speed\tgoal\t")
	val := func(r *srvResult, id string) float64 {
		if r == nil {
			return math.NaN()
		}
		if v, ok := r.Values[id]; ok {
			return v
		}
		return math.NaN()
	}
	for _, f := range srvFigures {
		a, b := val(ts, f.ID), val(az, f.ID)
		ratio := a / b
		if !f.HigherIsBetter {
			ratio = b / a
		}
		goal := ""
		if f.Goal > 0 {
			goal = fmt.Sprintf(">= %gx", f.Goal)
			if !math.IsNaN(ratio) && ratio < f.Goal {
				goal += " MISS"
			} else if !math.IsNaN(ratio) {
				goal += " ok"
			}
		}
		fmt.Fprintf(tw, "%s\t%s (%s)\t%s\t%s\t%s\t%s\t\n", srvLabel(f, res.Conns), f.Unit, betterWord(f.HigherIsBetter),
			formatFigure(a), formatFigure(b), formatRatio(ratio), goal)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nserver CPU per request and per entity (µs; from /proc/<pid>/stat over each figure's best round), and this client's CPU per request:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\ttablestore µs/request\tµs/entity\tswitches/request\tclient µs/request\tazurite µs/request\tµs/entity\tswitches/request\tclient µs/request\t")
	for _, id := range []string{"batch", "get1", "getN", "insertN", "page-none", "page-full"} {
		fmt.Fprintf(tw, "%s\t", id)
		for _, r := range []*srvResult{ts, az} {
			p, ok := srvPhase{}, false
			if r != nil {
				p, ok = r.Phases[id]
			}
			if !ok {
				fmt.Fprint(tw, "n/a\tn/a\tn/a\tn/a\t")
				continue
			}
			req, ent := p.perRequest()
			fmt.Fprintf(tw, "%.1f\t%.2f\t%.1f\t%.1f\t", req, ent, p.switchesPerRequest(), p.ClientCPU/float64(max(p.Requests, 1))*1e6)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if b := res.Bare; b != nil {
		fmt.Fprintln(w, "\ntransport floor: the same requests against a server doing only net/http (server.NewHTTPServer) and answering tablestore's captured bytes, its CPU per request and per entity:")
		for _, id := range []string{"batch", "get1", "getN", "insertN", "page-none"} {
			if p, ok := b.Phases[id]; ok {
				req, ent := p.perRequest()
				fmt.Fprintf(w, "  %-8s %8.1f µs/request  %6.2f µs/entity  %5.1f switches/request  (%s %s/s)\n", id, req, ent, p.switchesPerRequest(), commas(b.Values[id]), srvUnit(id))
			}
		}
	}
	var tails []*srvResult
	for _, r := range []*srvResult{ts, az, res.Bare} {
		if r != nil {
			tails = append(tails, r)
		}
	}
	printGetTail(w, tails)
	if ts != nil {
		fmt.Fprintln(w, "\ntablestore goals:")
		batchCPU, pageCPU := math.NaN(), math.NaN()
		if p, ok := ts.Phases["batch"]; ok {
			_, batchCPU = p.perRequest()
		}
		if p, ok := ts.Phases["page-none"]; ok {
			_, pageCPU = p.perRequest()
		}
		if f := res.LoadFloor; f != nil {
			fmt.Fprintln(w, overFloorLine("$batch entity", batchCPU, f.CPU, batchOverFloorGoal))
			for _, l := range batchGapLines(res, batchCPU-f.CPU) {
				fmt.Fprintln(w, l)
			}
		}
		if f := res.PagingFloor; f != nil {
			fmt.Fprintln(w, overFloorLine("paged entity ", pageCPU, f.CPU, pagingOverFloorGoal))
			if l := transportShareLine(res.Bare, "page-none", pageCPU-f.CPU); l != "" {
				fmt.Fprintln(w, l)
			}
		}
		if v, ok := ts.Values["page-none"]; ok && res.LibraryPaging > 0 {
			fmt.Fprintf(w, "  paging over HTTP (no metadata) %s entities/s vs the library's in-process map paging %s: %.2fx, goal >= 0.3x  %s\n",
				commas(v), commas(res.LibraryPaging), v/res.LibraryPaging, okMiss(v/res.LibraryPaging >= 0.3))
		}
		if f := res.LoadFloor; f != nil {
			for _, l := range floorLines(fmt.Sprintf("the same $batch work in process (RawEntity + SubmitTransaction, synced, %d goroutines)", res.Conns),
				"$batch rate", f, val(az, "batch"), batchCPU, floorGoal(f.CPU, batchOverFloorGoal)) {
				fmt.Fprintln(w, l)
			}
			p := ts.Phases["batch"]
			fmt.Fprintln(w, machineBoundLine(res.CPUs, f.CPU, p.clientPerEntity(), val(az, "batch"), srvGoal("batch")))
			if rf := res.RawLoadFloor; rf != nil {
				fmt.Fprintln(w, rawFloorLine(rf, floorGoal(f.CPU, batchOverFloorGoal)))
			}
		}
		if f := res.PagingFloor; f != nil {
			for _, l := range floorLines("the same pages as JSON in process (AppendPageJSON)", "paging", f, val(az, "page-none"), pageCPU, floorGoal(f.CPU, pagingOverFloorGoal)) {
				fmt.Fprintln(w, l)
			}
		}
		if f := res.PagingFullFloor; f != nil {
			p, ok := ts.Phases["page-full"]
			_, ent := p.perRequest()
			if !ok {
				ent = math.NaN()
			}
			for _, l := range floorLines("the same pages at full metadata in process (AppendPageJSON)", "paging at full metadata", f, val(az, "page-full"), ent, math.NaN()) {
				fmt.Fprintln(w, l)
			}
		}
		for _, g := range []struct {
			id    string
			f     *srvFloor
			conns int
			what  string
		}{{"get1", res.Get1Floor, 1, "point gets as JSON in process (GetJSON, no metadata"},
			{"getN", res.GetFloor, res.Conns, "point gets as JSON in process (GetJSON, no metadata"},
			{"insertN", res.InsertFloor, res.Conns, "single inserts in process (RawEntity + SubmitTransaction of one insert, synced"}} {
			if g.f == nil {
				continue
			}
			p, ok := ts.Phases[g.id]
			req, _ := p.perRequest()
			if !ok {
				req = math.NaN()
			}
			for _, l := range floorLines(fmt.Sprintf("the same %s, %d goroutines)", g.what, g.conns),
				srvUnit(g.id)+"/s", g.f, val(az, g.id), req, math.NaN()) {
				fmt.Fprintln(w, l)
			}
		}
	}
	for _, r := range []*srvResult{ts, az} {
		if r == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s: %s, peak RSS %.0f MiB", r.Server, r.How, float64(r.PeakRSS)/(1<<20))
		if r.Err != "" {
			fmt.Fprintf(w, "; FAILED: %s", r.Err)
		}
	}
	fmt.Fprintln(w)
}

func okMiss(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISS"
}

// srvUnit is what a phase's figure counts, per second.
func srvUnit(id string) string {
	switch id {
	case "get1", "getN":
		return "gets"
	case "insertN":
		return "inserts"
	}
	return "entities"
}

// batchGapLines split tablestore's CPU over the library floor per $batch
// entity (over, µs): the transport floor's share, and the same load's
// CPU over the floor with serve and the floor each on one P.
func batchGapLines(res *srvResults, over float64) []string {
	var lines []string
	if l := transportShareLine(res.Bare, "batch", over); l != "" {
		lines = append(lines, l)
	}
	if o, f := res.OneProc, res.LoadFloorOneProc; o != nil && f != nil {
		if p, ok := o.Phases["batch"]; ok {
			_, srv := p.perRequest()
			lines = append(lines, fmt.Sprintf("    with GOMAXPROCS=1 in serve and in the floor: %.2f µs/entity over the floor (server %.2f at %s entities/s, %.1f switches/request; floor %.2f at %s)",
				srv-f.CPU, srv, commas(o.Values["batch"]), p.switchesPerRequest(), f.CPU, commas(f.Rate)))
			if b := res.BareOneProc; b != nil {
				if bp, ok := b.Phases["batch"]; ok {
					_, bare := bp.perRequest()
					lines = append(lines, fmt.Sprintf("      of it: the transport floor with GOMAXPROCS=1 %.2f µs/entity (%.1f switches/request), tablestore's handler and its interplay %.2f",
						bare, bp.switchesPerRequest(), srv-f.CPU-bare))
				}
			}
		}
	}
	return lines
}

// transportShareLine splits tablestore's CPU over the library floor per
// entity of phase id (over, µs) into the transport floor's CPU for the
// same phase (bare's) and the rest; "" when either is unknown.
func transportShareLine(bare *srvResult, id string, over float64) string {
	if bare == nil || math.IsNaN(over) {
		return ""
	}
	p, ok := bare.Phases[id]
	if !ok {
		return ""
	}
	_, b := p.perRequest()
	return fmt.Sprintf("    of it: the transport floor %.2f µs/entity, tablestore's handler and its interplay with the transport %.2f", b, over-b)
}
