package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/tablestoretest/azurite"
)

// The sdk mode drives two Table service servers through the same aztables
// SDK calls on this machine: tablestore's REST server in a process of its
// own, and Azurite. See runSDK.

// sdkConfig is the sdk mode's command line.
type sdkConfig struct {
	entities   int
	gets       int
	workers    int
	servers    []string
	serveBin   string
	cpuProfile string
}

const (
	serverTablestore = "tablestore"
	serverAzurite    = "azurite"
	// serverBare is the transport floor's server (bare.go).
	serverBare = "bare net/http"
)

func parseSDKFlags(args []string) (sdkConfig, error) {
	fs := flag.NewFlagSet("bench -sdk", flag.ContinueOnError)
	entities := fs.Int("entities", 100_000, "entities to load (a multiple of 1,000)")
	gets := fs.Int("gets", 2_000, "point gets measured (after 200 warm-up gets)")
	workers := fs.Int("workers", 4, "concurrent SubmitTransaction callers during the load")
	servers := fs.String("servers", "tablestore,azurite", "comma-separated servers to drive")
	bin := fs.String("tablestore-bin", "", "a tablestore binary to run as `serve --in-memory --addr 127.0.0.1:<port>` (default: this program serves tablestore's REST handler over an in-memory store in a child process)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of this process (the SDK client side) to this file")
	if err := fs.Parse(args); err != nil {
		return sdkConfig{}, err
	}
	c := sdkConfig{entities: *entities, gets: *gets, workers: *workers, serveBin: *bin, cpuProfile: *cpuProfile}
	if c.entities <= 0 || c.entities%partitionSize != 0 {
		return c, fmt.Errorf("-entities must be a positive multiple of %d", partitionSize)
	}
	if c.gets < 100 || c.workers < 1 {
		return c, fmt.Errorf("-gets must be at least 100 and -workers at least 1")
	}
	for _, s := range strings.Split(*servers, ",") {
		s = strings.TrimSpace(s)
		if s != serverTablestore && s != serverAzurite {
			return c, fmt.Errorf("unknown server %q (want tablestore, azurite)", s)
		}
		c.servers = append(c.servers, s)
	}
	return c, nil
}

// sdkResult holds one server's figures.
type sdkResult struct {
	server     string
	how        string        // how the server was run
	load       float64       // entities/s
	loadTime   time.Duration //
	getP50     time.Duration //
	getP99     time.Duration //
	getRate    float64       // gets/s, sequential
	paging     float64       // entities/s
	pagingTime time.Duration //
	pages      int           //
	peakRSS    int64         // VmHWM of the server process, bytes
	// CPU seconds the server process and this process (the SDK client)
	// spent in each phase: load, gets, paging.
	serverCPU, clientCPU [3]float64
	err                  error
	failedPhase          string
}

// runSDK runs the sdk mode: for each server, start it, load the data set
// in transactions of 100, measure point gets and a full paging pass
// (Top 1000), read its peak memory and stop it; then print both and the
// ratios.
func runSDK(ctx context.Context, args []string) error {
	c, err := parseSDKFlags(args)
	if err != nil {
		return err
	}
	stopProfile, err := startCPUProfile(c.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	var results []*sdkResult
	for _, name := range c.servers {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r := &sdkResult{server: name}
		results = append(results, r)
		srv, err := startSDKServer(ctx, name, c)
		if err != nil {
			r.err, r.failedPhase = err, "start"
			logf("sdk: %s: %v", name, err)
			continue
		}
		r.how = srv.how
		logf("sdk: %s (%s) at %s, pid %d", name, srv.how, srv.endpoint, srv.pid)
		driveSDK(ctx, c, srv, r)
		if hwm, err := vmHWM(srv.pid); err == nil {
			r.peakRSS = hwm
		} else {
			logf("sdk: %s: peak memory: %v", name, err)
		}
		srv.stop()
	}
	printSDK(os.Stdout, c, results)
	for _, r := range results {
		if r.err != nil {
			return fmt.Errorf("%s failed during %s: %w", r.server, r.failedPhase, r.err)
		}
	}
	return nil
}

// sdkServer is a running server process.
type sdkServer struct {
	how      string
	endpoint string
	connStr  string
	pid      int
	exited   chan struct{} // closed when a child started here exits
	stop     func()
}

func startSDKServer(ctx context.Context, name string, c sdkConfig) (*sdkServer, error) {
	switch name {
	case serverAzurite:
		p, err := azurite.Launch(ctx)
		if err != nil {
			return nil, err
		}
		return &sdkServer{how: "azurite-table 3.37.0, --inMemoryPersistence", endpoint: p.Endpoint(),
			connStr: p.ConnectionString(), pid: p.PID(), stop: func() { p.Close() }}, nil
	default:
		return startTablestoreServer(ctx, c)
	}
}

// startTablestoreServer runs tablestore's REST server in a process of its
// own (so its peak memory is its own): c.serveBin when set, else this
// program in serve mode (runSDKServe). It reads the listening address
// from the first line the process prints.
func startTablestoreServer(ctx context.Context, c sdkConfig) (*sdkServer, error) {
	var cmd *exec.Cmd
	var how string
	if c.serveBin != "" {
		port, err := freeLoopbackPort()
		if err != nil {
			return nil, err
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		cmd = exec.Command(c.serveBin, "serve", "--in-memory", "--addr", addr)
		how = c.serveBin + " serve --in-memory"
		cmd.Stdout = io.Discard
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		s := processServer(cmd, how, "http://"+addr)
		if err := waitListening(ctx, addr, s.exited); err != nil {
			s.stop()
			return nil, err
		}
		return s, nil
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	s, addr, err := startListening(ctx, exec.Command(self, sdkServeArg), "server.New over tablestore.OpenInMemory, child process", "tablestore child")
	if err != nil {
		return nil, err
	}
	s.endpoint = "http://" + addr
	s.connStr = devConnString(s.endpoint)
	return s, nil
}

// processServer tracks a started child: stop interrupts it, waits ten
// seconds, then kills it.
func processServer(cmd *exec.Cmd, how, base string) *sdkServer {
	var once sync.Once
	s := &sdkServer{how: how, pid: cmd.Process.Pid, endpoint: base, exited: make(chan struct{})}
	if base != "" {
		s.connStr = devConnString(base)
	}
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	s.stop = func() {
		once.Do(func() {
			cmd.Process.Signal(os.Interrupt)
			select {
			case <-s.exited:
			case <-time.After(10 * time.Second):
				cmd.Process.Kill()
				<-s.exited
			}
		})
	}
	return s
}

// devConnString returns the development account's connection string for
// a server at base (http://host:port), path-style.
func devConnString(base string) string {
	return "DefaultEndpointsProtocol=http;AccountName=" + azurite.Account + ";AccountKey=" + azurite.Key +
		";TableEndpoint=" + strings.TrimSuffix(base, "/") + "/" + azurite.Account
}

func readFirstLine(ctx context.Context, r io.Reader, limit time.Duration) (string, error) {
	type res struct {
		s   string
		err error
	}
	ch := make(chan res, 1)
	go func() {
		s, err := bufio.NewReader(r).ReadString('\n')
		ch <- res{strings.TrimSpace(s), err}
	}()
	select {
	case x := <-ch:
		return x.s, x.err
	case <-time.After(limit):
		return "", errors.New("no address printed within " + limit.String())
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func driveSDK(ctx context.Context, c sdkConfig, srv *sdkServer, r *sdkResult) {
	opts := &aztables.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
	svc, err := aztables.NewServiceClientFromConnectionString(srv.connStr, opts)
	if err != nil {
		r.err, r.failedPhase = err, "client"
		return
	}
	client := svc.NewClient("benchsdk")
	if _, err := client.CreateTable(ctx, nil); err != nil {
		r.err, r.failedPhase = err, "create table"
		return
	}
	phase := func(i int, name string, f func() error) bool {
		s0, c0 := cpuSeconds(srv.pid), cpuSeconds(os.Getpid())
		if err := f(); err != nil {
			r.err, r.failedPhase = err, name
			return false
		}
		r.serverCPU[i], r.clientCPU[i] = cpuSeconds(srv.pid)-s0, cpuSeconds(os.Getpid())-c0
		return true
	}
	bodies := make([][]byte, c.entities)
	var rec record
	for i := range bodies {
		genRecord(&rec, i)
		if bodies[i], err = sdkEntity(&rec); err != nil {
			r.err, r.failedPhase = err, "encode"
			return
		}
	}
	if !phase(0, "load", func() (err error) { r.loadTime, err = sdkLoad(ctx, client, c, bodies); return err }) {
		return
	}
	r.load = rate(c.entities, r.loadTime)
	logf("sdk: %s load: %s entities/s", r.server, commas(r.load))
	if !phase(1, "gets", func() error { return sdkGets(ctx, client, c, r) }) {
		return
	}
	logf("sdk: %s gets: p50 %s, p99 %s", r.server, r.getP50, r.getP99)
	if !phase(2, "paging", func() error { return sdkPaging(ctx, client, c, r) }) {
		return
	}
	logf("sdk: %s paging: %s entities/s", r.server, commas(r.paging))
}

// sdkEntity returns entity i of the data set as the SDK's JSON.
func sdkEntity(rec *record) ([]byte, error) {
	return json.Marshal(aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: rec.PK, RowKey: rec.RK},
		Properties: map[string]any{
			"Name":    rec.Name,
			"Email":   rec.Email,
			"City":    rec.City,
			"Note":    rec.Note,
			"Count":   rec.Count,
			"Bucket":  rec.Bucket,
			"Score":   aztables.EDMInt64(rec.Score),
			"Amount":  rec.Amount,
			"Active":  rec.Active,
			"Created": aztables.EDMDateTime(ticksToTime(rec.Created)),
		},
	})
}

// sdkLoad inserts the data set in transactions of batchSize entities,
// c.workers transactions at a time; bodies[i] is entity i's JSON.
func sdkLoad(ctx context.Context, client *aztables.Client, c sdkConfig, bodies [][]byte) (time.Duration, error) {
	batches := c.entities / batchSize
	var next atomic.Int64
	p := startProgress("load", "entities", c.entities)
	defer p.finish()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	start := time.Now()
	for range c.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			actions := make([]aztables.TransactionAction, batchSize)
			for ctx.Err() == nil {
				b := int(next.Add(1) - 1)
				if b >= batches {
					return
				}
				for k := range batchSize {
					actions[k] = aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: bodies[b*batchSize+k]}
				}
				// The SDK reports any failed sub-response as an error.
				if _, err := client.SubmitTransaction(ctx, actions, nil); err != nil {
					cancel(fmt.Errorf("batch %d: %w", b, err))
					return
				}
				p.add(batchSize)
			}
		}()
	}
	wg.Wait()
	d := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return 0, err
	}
	return d, nil
}

// sdkGets reads random entities one at a time, checking each has all its
// properties, and records latency percentiles.
func sdkGets(ctx context.Context, client *aztables.Client, c sdkConfig, r *sdkResult) error {
	sc := scale{Entities: c.entities}
	get := func(pk, rk string) error {
		resp, err := client.GetEntity(ctx, pk, rk, nil)
		if err != nil {
			return fmt.Errorf("get %s/%s: %w", pk, rk, err)
		}
		var e aztables.EDMEntity
		if err := json.Unmarshal(resp.Value, &e); err != nil {
			return fmt.Errorf("get %s/%s: %w", pk, rk, err)
		}
		if e.PartitionKey != pk || e.RowKey != rk || len(e.Properties) != propertyCount {
			return fmt.Errorf("get %s/%s: got %s/%s with %d properties, want %d", pk, rk, e.PartitionKey, e.RowKey, len(e.Properties), propertyCount)
		}
		return nil
	}
	wpks, wrks := randomKeys(sc, 200, 99)
	for j := range wpks {
		if err := get(wpks[j], wrks[j]); err != nil {
			return err
		}
	}
	pks, rks := randomKeys(sc, c.gets, 1)
	lat := make([]time.Duration, c.gets)
	start := time.Now()
	for j := range pks {
		t0 := time.Now()
		if err := get(pks[j], rks[j]); err != nil {
			return err
		}
		lat[j] = time.Since(t0)
	}
	r.getRate = rate(c.gets, time.Since(start))
	slices.Sort(lat)
	r.getP50, r.getP99 = lat[len(lat)/2], lat[len(lat)*99/100]
	return nil
}

// sdkPaging reads the whole table in pages of pageTop entities and checks
// that every entity came exactly once, in key order.
func sdkPaging(ctx context.Context, client *aztables.Client, c sdkConfig, r *sdkResult) error {
	pager := client.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr(int32(pageTop))})
	p := startProgress("paging", "entities", c.entities)
	defer p.finish()
	var rec record
	total := 0
	start := time.Now()
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("page %d: %w", r.pages+1, err)
		}
		r.pages++
		if len(page.Entities) > pageTop {
			return fmt.Errorf("page %d holds %d entities, over Top %d", r.pages, len(page.Entities), pageTop)
		}
		for _, body := range page.Entities {
			var e aztables.Entity
			if err := json.Unmarshal(body, &e); err != nil {
				return err
			}
			genRecord(&rec, total)
			if e.PartitionKey != rec.PK || e.RowKey != rec.RK {
				return fmt.Errorf("entity %d is %s/%s, want %s/%s", total, e.PartitionKey, e.RowKey, rec.PK, rec.RK)
			}
			total++
		}
		p.add(len(page.Entities))
	}
	r.pagingTime = time.Since(start)
	if total != c.entities {
		return fmt.Errorf("paging read %d entities, want %d", total, c.entities)
	}
	r.paging = rate(total, r.pagingTime)
	return nil
}

// vmHWM returns a process's peak resident set size from /proc (Linux).
func vmHWM(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no VmHWM line")
}

// cpuSeconds returns the user plus system CPU time a process has used,
// from /proc/<pid>/stat (Linux; 0 elsewhere). Clock ticks are taken as
// 100 per second, the value on every Linux architecture Go supports.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, utime 14, stime 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100
}

func printSDK(w io.Writer, c sdkConfig, rs []*sdkResult) {
	fmt.Fprintf(w, "\nSame aztables v1.4.1 calls against each server on this machine: %s entities loaded with SubmitTransaction (100 per batch, %d concurrent), %s sequential point gets, one paging pass with Top %d.\n\n",
		commas(float64(c.entities)), c.workers, commas(float64(c.gets)), pageTop)
	fmt.Fprintf(w, "%-11s %14s %10s %10s %12s %16s %12s  %s\n", "server", "load ent/s", "get p50", "get p99", "gets/s", "paging ent/s", "peak RSS", "run as")
	for _, r := range rs {
		if r.err != nil {
			fmt.Fprintf(w, "%-11s failed during %s: %v\n", r.server, r.failedPhase, r.err)
			continue
		}
		fmt.Fprintf(w, "%-11s %14s %10s %10s %12s %16s %9.0f MiB  %s\n", r.server, commas(r.load),
			r.getP50.Round(time.Microsecond), r.getP99.Round(time.Microsecond), commas(r.getRate),
			commas(r.paging), float64(r.peakRSS)/(1<<20), r.how)
	}
	fmt.Fprintf(w, "\nCPU seconds per phase, server process / this process (the SDK client):\n")
	fmt.Fprintf(w, "%-11s %16s %16s %16s\n", "server", "load", "gets", "paging")
	for _, r := range rs {
		if r.err != nil {
			continue
		}
		fmt.Fprintf(w, "%-11s", r.server)
		for i := range r.serverCPU {
			fmt.Fprintf(w, " %16s", fmt.Sprintf("%.1f / %.1f", r.serverCPU[i], r.clientCPU[i]))
		}
		fmt.Fprintln(w)
	}
	var ts, az *sdkResult
	for _, r := range rs {
		if r.err == nil && r.server == serverTablestore {
			ts = r
		}
		if r.err == nil && r.server == serverAzurite {
			az = r
		}
	}
	if ts == nil || az == nil {
		return
	}
	fmt.Fprintf(w, "\n%-34s %10s %8s\n", "tablestore vs Azurite", "ratio", "goal")
	line := func(label string, v, goal float64) {
		mark := "met"
		if v < goal {
			mark = "MISSED"
		}
		fmt.Fprintf(w, "%-34s %10s %8s  %s\n", label, formatRatio(v), formatRatio(goal), mark)
	}
	line("batch load throughput", ts.load/az.load, 20)
	line("paging throughput", ts.paging/az.paging, 20)
	line("point get p50 (Azurite/tablestore)", float64(az.getP50)/float64(ts.getP50), 3)
	fmt.Fprintf(w, "%-34s %10s\n", "peak RSS (tablestore/Azurite)", formatRatio(float64(ts.peakRSS)/float64(az.peakRSS)))
}

// freeLoopbackPort returns a 127.0.0.1 port that was free a moment ago.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitListening waits, at most a minute, until addr accepts connections
// or the process exits.
func waitListening(ctx context.Context, addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("server exited before listening on %s", addr)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("nothing listening on %s after a minute", addr)
}
