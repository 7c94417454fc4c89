// Command bench measures tablestore against raw Pebble (hand-built keys
// and values: the floor) and SQLite (through database/sql) on the same
// workloads in one process, and prints one table of figures and ratios.
//
//	go run .                        # default small scale, a few minutes
//	go run . -scale=1m -targets     # 1,000,000 entities, with the targets
//	go run . -workloads=get,paging  # a subset
//	go run . -sdk                   # tablestore's REST server against Azurite, through aztables
//
// Results also go to <out>/results.json and <out>/results.png.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// config is the parsed command line.
type config struct {
	scale      scale
	workloads  []string // selected, in run order
	sides      []string
	outDir     string
	dataDir    string
	keep       bool
	targets    bool
	cacheSize  int64
	blockSize  int
	cpuProfile string
	rounds     int
	// jsonl, with n, makes the run only write the data set as JSON lines.
	jsonl string
	n     string
	// cliImport makes the run only compare `tablestore import` with the
	// library's bulk load.
	cliImport bool
	// interleavedImport makes the run only compare the bulk writer and
	// `tablestore import` on interleaved input with the batch-100 load.
	interleavedImport bool
	// getDiag makes the run only diagnose the point-get tail.
	getDiag bool
	// ttlSweep makes the run only measure reads during a TTL sweep and
	// the cost of TTL settings on reads; sweepRate is its
	// Options.SweepRate (0: the library's default).
	ttlSweep  bool
	sweepRate int
	// indexBuild makes the run only measure secondary indexes: a build
	// beside a writer, equality queries, the cost on writes.
	indexBuild bool
	// encryption makes the run only compare an encrypted store with a
	// plain one (see encryption.go).
	encryption bool
	// txnOnly makes the run only measure unsynced transactions of 100
	// upserts on the chosen sides (see txn100.go).
	txnOnly bool
	// settle compacts every main store after the bulk load.
	settle bool
	// testkitStart makes the run only measure the start of serve
	// --testkit beside Azurite's.
	testkitStart bool
	// cliBin is a prebuilt tablestore command for -cli-import and the
	// import targets ("" builds ../cmd/tablestore).
	cliBin string
}

func parseFlags(args []string) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	scaleName := fs.String("scale", "small", "data set size: small (100,000 entities), 1m, 10m, or tiny (a 10,000-entity smoke test)")
	wl := fs.String("workloads", "all", "comma-separated workloads to run (see README), or all")
	sides := fs.String("sides", strings.Join(sideNames, ","), "comma-separated sides to run")
	out := fs.String("out", "results", "directory for results.json and results.png")
	data := fs.String("data", "", "directory for the stores (default: a new temporary directory, removed at the end)")
	keep := fs.Bool("keep", false, "keep the data directory")
	targets := fs.Bool("targets", false, "also measure and print the project's speed targets")
	cacheMiB := fs.Int64("cache", 64, "block/page cache size per store, MiB (tablestore's default is 64)")
	blockKiB := fs.Int("block-size", 0, "data block size of both Pebble sides, KiB (0: the default, 4)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the measured workloads to this file")
	rounds := fs.Int("rounds", 3, "rounds of each workload but load-nosync, sides interleaved; the best round is reported")
	jsonl := fs.String("jsonl", "", "only write the first -n entities of the data set to this file as JSON lines (tablestore import's input) and exit")
	n := fs.String("n", "1000000", "entities -jsonl writes")
	cliImport := fs.Bool("cli-import", false, "only compare `tablestore import` of the data set (-scale) with the library's batch-100 bulk load, unsynced and synced")
	interleavedImport := fs.Bool("interleaved-import", false, "only compare the library's bulk writer and `tablestore import` on the data set (-scale) with its partitions interleaved, and import sorted, with the library's batch-100 load, unsynced and synced")
	getDiag := fs.Bool("getdiag", false, "only diagnose the point-get tail: instrumented get rounds after the load, settled, compacted, with the GC off, and on each side's files (see getdiag.go)")
	ttlSweep := fs.Bool("ttl-sweep", false, "only measure point gets on live entities while the sweeper removes -scale's count of expired ones, and the cost of TTL settings on gets and paging (writes ttlsweep.json)")
	sweepRate := fs.Int("sweep-rate", 0, "Options.SweepRate of -ttl-sweep's store, expired entities per second (0: the library's default)")
	indexBuild := fs.Bool("index-build", false, "only measure secondary indexes on -scale's entities: a build beside a writer, an indexed equality against a scan and a range, the cost of one and two indexes on writes (writes indexbuild.json)")
	encryption := fs.Bool("encryption", false, "only compare tablestore with Options.Encryption against tablestore without it: load, point gets and paging on -scale's entities")
	txnOnly := fs.Bool("txn", false, "only measure unsynced transactions of 100 upserts on the -sides among tablestore, typed and pebble, -rounds interleaved rounds (-cpuprofile covers them)")
	gets := fs.Int("gets", 0, "point gets per round (0: the scale's)")
	cliBin := fs.String("tablestore-bin", "", "the tablestore command -cli-import and the import targets run (default: built from ../cmd/tablestore)")
	testkitStart := fs.Bool("testkit-start", false, "only measure how long `tablestore serve --testkit` and Azurite take from process start to the first successful request (-rounds starts each, at least 5)")
	settle := fs.Bool("settle", true, "compact every side's main store after the bulk load, so the reads see the same LSM shape on every side (false: read the stores as their loads left them)")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	sc, err := lookupScale(*scaleName)
	if err != nil {
		return config{}, err
	}
	c := config{scale: sc, outDir: *out, dataDir: *data, keep: *keep, targets: *targets,
		cacheSize: *cacheMiB << 20, blockSize: *blockKiB << 10, cpuProfile: *cpuProfile, rounds: *rounds,
		jsonl: *jsonl, n: *n, cliImport: *cliImport, interleavedImport: *interleavedImport, getDiag: *getDiag, settle: *settle, cliBin: *cliBin,
		ttlSweep: *ttlSweep, sweepRate: *sweepRate, indexBuild: *indexBuild, testkitStart: *testkitStart, encryption: *encryption, txnOnly: *txnOnly}
	if *gets > 0 {
		c.scale.Gets = *gets
	}
	if c.sweepRate < 0 {
		return config{}, fmt.Errorf("sweep rate must not be negative")
	}
	if c.rounds < 1 {
		return config{}, fmt.Errorf("rounds must be at least 1")
	}
	known := map[string]bool{}
	for _, w := range workloads() {
		known[w.name] = true
	}
	if *wl == "all" {
		for _, w := range workloads() {
			c.workloads = append(c.workloads, w.name)
		}
	} else {
		for _, name := range strings.Split(*wl, ",") {
			name = strings.TrimSpace(name)
			if !known[name] {
				return config{}, fmt.Errorf("unknown workload %q", name)
			}
			c.workloads = append(c.workloads, name)
		}
	}
	for _, name := range strings.Split(*sides, ",") {
		name = strings.TrimSpace(name)
		if !slices.Contains(sideNames, name) {
			return config{}, fmt.Errorf("unknown side %q (want %s)", name, strings.Join(sideNames, ", "))
		}
		c.sides = append(c.sides, name)
	}
	if c.blockSize < 0 {
		return config{}, fmt.Errorf("block size must not be negative")
	}
	if c.cacheSize <= 0 {
		return config{}, fmt.Errorf("cache size must be positive")
	}
	return c, nil
}

// readsData reports whether workload name reads the main data set.
func readsData(name string) bool {
	switch name {
	case "get", "range", "partition-scan", "filter-scan", "paging":
		return true
	}
	return false
}

// plan returns the workloads to run, in order, and which of them to
// report: the selected ones, plus load-nosync when anything reads the
// data set, plus what the targets are computed from.
func plan(c config) (toRun []workload, shown map[string]bool) {
	shown = map[string]bool{}
	for _, w := range c.workloads {
		shown[w] = true
	}
	if c.targets {
		for _, w := range targetWorkloads {
			shown[w] = true
		}
	}
	needData := c.targets
	for w := range shown {
		needData = needData || readsData(w)
	}
	for _, w := range workloads() {
		if shown[w.name] || (w.name == "load-nosync" && needData) {
			toRun = append(toRun, w)
		}
	}
	return toRun, shown
}

func run(args []string) error {
	if len(args) > 0 && (args[0] == "-sdk" || args[0] == "--sdk" || args[0] == sdkServeArg) {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		if args[0] == sdkServeArg {
			return runSDKServe(ctx)
		}
		return runSDK(ctx, args[1:])
	}
	if len(args) == 2 && args[0] == bareServeArg {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		return runBareServe(ctx, args[1])
	}
	if len(args) == 4 && args[0] == ycsbWorkerArg {
		return runYCSBWorker(args[1], args[2], args[3])
	}
	if i := slices.IndexFunc(args, func(a string) bool { return a == "-ycsb" || a == "--ycsb" }); i >= 0 {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		return runYCSB(ctx, slices.Delete(slices.Clone(args), i, i+1))
	}
	if len(args) > 0 && (args[0] == "-server" || args[0] == "--server") {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		defer stop()
		return runServerBench(ctx, args[1:])
	}
	c, err := parseFlags(args)
	if err != nil {
		return err
	}
	if c.jsonl != "" {
		n, err := parseCount(c.n)
		if err != nil {
			return err
		}
		return writeJSONL(c.jsonl, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := os.MkdirAll(c.outDir, 0o755); err != nil {
		return err
	}
	dataDir := c.dataDir
	if dataDir == "" {
		if dataDir, err = os.MkdirTemp("", "tablestore-bench-"); err != nil {
			return err
		}
	} else if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	if !c.keep {
		defer os.RemoveAll(dataDir)
	}
	if c.interleavedImport {
		return runInterleavedImport(ctx, c, dataDir)
	}
	if c.cliImport {
		return runCLIImport(ctx, c, dataDir)
	}
	if c.testkitStart {
		return runTestkitStart(ctx, c, dataDir)
	}
	if c.getDiag {
		return runGetDiag(ctx, c, dataDir, args)
	}
	if c.ttlSweep {
		return runTTLSweep(ctx, c, dataDir, args)
	}
	if c.indexBuild {
		return runIndexBuild(ctx, c, dataDir, args)
	}
	if c.encryption {
		return runEncryption(ctx, c, dataDir)
	}
	if c.txnOnly {
		return runTxnOnly(ctx, c, dataDir)
	}
	res := &results{Scale: c.scale, Command: commandLine("go run .", args), Started: time.Now().UTC(),
		GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), CacheSize: c.cacheSize, BlockSize: c.blockSize, Rounds: c.rounds}
	e := newEnv(ctx, c.scale, dataDir, c.cacheSize, c.blockSize)
	defer e.closeAll()

	stopProfile, err := startCPUProfile(c.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()

	toRun, shown := plan(c)
	logf("bench: scale %s, %s entities, data in %s", c.scale.Name, commas(float64(c.scale.Entities)), dataDir)
	for _, w := range toRun {
		rows, allocs, cpu := runWorkload(ctx, e, w, c.sides, c.rounds)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if shown[w.name] {
			res.Rows = append(res.Rows, rows...)
			res.Allocs = append(res.Allocs, allocs)
			res.CPU = append(res.CPU, cpu)
		}
		if w.name == "load-nosync" {
			if err := settleStores(e, c, res); err != nil {
				return err
			}
		}
	}
	res.finish()
	if c.targets && slices.Contains(c.sides, sideTablestore) && slices.Contains(c.sides, sidePebble) {
		res.Targets = computeTargets(e, res)
		res.Targets = append(res.Targets, cliImportTargets(e, c.cliBin)...)
	}
	res.Seconds = time.Since(res.Started).Seconds()

	printTable(os.Stdout, res)
	if len(res.Targets) > 0 {
		printTargets(os.Stdout, res.Targets)
	}
	jsonPath := filepath.Join(c.outDir, "results.json")
	if err := writeJSON(jsonPath, res); err != nil {
		return err
	}
	pngPath := filepath.Join(c.outDir, "results.png")
	if err := writeChart(pngPath, res); err != nil {
		return err
	}
	fmt.Printf("\nwrote %s and %s (%.0f s)\n", jsonPath, pngPath, res.Seconds)
	return nil
}

// runWorkload runs w on every side for the given number of rounds
// (one for a once workload), rotating the side order each round so no
// side always runs first, and keeps each side's best value of every
// figure, and each side's lowest allocations per entity. A side that
// fails in any round gets no value.
func runWorkload(ctx context.Context, e *env, w workload, sides []string, rounds int) ([]*row, *allocRow, *allocRow) {
	rows := make([]*row, len(w.figures))
	for i, f := range w.figures {
		rows[i] = &row{figure: f, Values: map[string]float64{}, Errors: map[string]string{}, Rounds: map[string][]float64{}}
	}
	allocs := &allocRow{Workload: w.name, Label: w.about, Per: w.per,
		Values: map[string]float64{}, Rounds: map[string][]float64{}}
	cpu := &allocRow{Workload: w.name, Label: w.about, Per: w.per,
		Values: map[string]float64{}, Rounds: map[string][]float64{}}
	if w.once {
		rounds = 1
	}
	for r := 0; r < rounds; r++ {
		for k := range sides {
			side := sides[(k+r)%len(sides)]
			if ctx.Err() != nil {
				return rows, allocs, cpu
			}
			if _, failed := rows[0].Errors[side]; failed {
				continue
			}
			// A reads-only side loads its data set but reports no write.
			quiet := readsOnly(side) && !readsData(w.name)
			if quiet && w.name != "load-nosync" {
				continue
			}
			runtime.GC()
			logf("%s: %s, round %d/%d ...", w.name, side, r+1, rounds)
			t0 := time.Now()
			e.allocs = allocMeter{}
			vals, err := runSafely(w, e, side, r)
			if err != nil {
				logf("%s: %s failed: %v", w.name, side, err)
				for _, x := range rows {
					x.Errors[side] = err.Error()
					delete(x.Values, side)
				}
				delete(allocs.Values, side)
				delete(cpu.Values, side)
				continue
			}
			if quiet {
				logf("%s: %s done in %s (not reported: the side only reads)", w.name, side, time.Since(t0).Round(time.Millisecond))
				continue
			}
			if a := e.allocs.perEntity(); !math.IsNaN(a) {
				allocs.Rounds[side] = append(allocs.Rounds[side], a)
				if old, ok := allocs.Values[side]; !ok || a < old {
					allocs.Values[side] = a
				}
			}
			if c := e.allocs.cpuPerEntity(); !math.IsNaN(c) {
				cpu.Rounds[side] = append(cpu.Rounds[side], c)
				if old, ok := cpu.Values[side]; !ok || c < old {
					cpu.Values[side] = c
				}
			}
			for i, x := range rows {
				x.Rounds[side] = append(x.Rounds[side], vals[i])
				if old, ok := x.Values[side]; !ok || x.better(vals[i], old) {
					x.Values[side] = vals[i]
				}
			}
			logf("%s: %s done in %s", w.name, side, time.Since(t0).Round(time.Millisecond))
		}
	}
	return rows, allocs, cpu
}

// runSafely runs one round of a workload on one side, turning a panic
// into an error.
func runSafely(w workload, e *env, side string, round int) (vals []float64, err error) {
	defer recoverInto(&err)
	vals, err = w.run(e, side, round)
	if err == nil && len(vals) != len(w.figures) {
		err = fmt.Errorf("workload %s returned %d figures, want %d", w.name, len(vals), len(w.figures))
	}
	return vals, err
}
