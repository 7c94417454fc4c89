package modeltest

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
)

var (
	replayFlag = flag.String("modeltest.replay", "",
		"run the operation log in this `file` (as a failing run saves it) instead of generating a workload")
	logDirFlag = flag.String("modeltest.logdir", "",
		"`directory` for the operation log of a failing run (default: the system's temporary directory)")
)

// Config is one run of the workload.
type Config struct {
	// Name names the run in failure messages and in the saved log's file
	// name.
	Name string
	// Seed seeds every random choice of the workload and of the clock
	// given to the Opener; the same seed generates the same operations.
	Seed int64
	// Ops is the number of random operations.
	Ops int
	// Reopens closes and reopens the store this many times, evenly
	// spread, checking every table after each reopen. It needs an Opener
	// that reaches the same stored data again.
	Reopens int
	// BigValue makes some values approach Azure's size limits.
	BigValue bool
	// Dir is the store's directory, to report its files; "" for none.
	Dir string
	// Quirks are the known divergences of a remote service under test.
	Quirks Quirks
	// Advance moves the store's clock forward by d, for a store that
	// keeps its own clock (a server: tablestoretest.Clock's Advance).
	// nil: the workload moves the clock it gives the Opener.
	Advance func(d time.Duration)
	// DistinctTimestamps submits every transaction with
	// driver.CommitOptions.DistinctTimestamps, as the server's Cosmos
	// flavor does (the store's driver must implement
	// driver.OptionCommitter).
	DistinctTimestamps bool
}

// Opener opens the store under test. The runner calls it once at the
// start and again at each reopen, when every call must reach the same
// stored data (the previous DB is closed first). clock is the workload's
// deterministic clock, which mostly moves forward, sometimes stalls and
// sometimes steps back: an engine that takes Options.Clock should use it;
// a remote service keeps its own. Opener fails t itself if it cannot
// open.
type Opener func(t *testing.T, clock func() time.Time) *ts.DB

// Run generates the workload of cfg (see Generate) and replays it against
// the store open gives (see Replay). With the flag
// -modeltest.replay=FILE it replays the log in FILE instead, on the
// clock seeded by the log's seed; cfg then only names the run.
func Run(t *testing.T, open Opener, cfg Config) {
	t.Helper()
	if *replayFlag != "" {
		l, err := LoadLog(*replayFlag)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: replaying %s: %d operations, seed %d", cfg.Name, *replayFlag, len(l.Ops), l.Seed)
		Replay(t, open, cfg, l)
		return
	}
	Replay(t, open, cfg, &Log{Seed: cfg.Seed, Ops: Generate(cfg)})
}

// Replay runs every operation of l against the store open gives and
// against the model, then compares the table listing and every table's
// contents. Of cfg it reads Name, Dir and DistinctTimestamps.
//
// At the first divergence it saves the operations up to the failing one
// in a file (in the directory -modeltest.logdir names, else
// os.TempDir()) and fails t with the seed, the operation, the recent
// history and the command that replays the file.
func Replay(t *testing.T, open Opener, cfg Config, l *Log) {
	t.Helper()
	_, f := execute(t, open, cfg, l)
	if f == nil {
		return
	}
	msg := fmt.Sprintf("config %s, seed %d: %v", cfg.Name, l.Seed, f)
	path, err := saveLog(cfg, l, f)
	if err != nil {
		t.Fatalf("%s\ncannot save the operation log: %v", msg, err)
	}
	t.Fatalf("%s\noperation log: %s\nreplay: go test -run '%s' -modeltest.replay=%s", msg, path, runPattern(t.Name()), path)
}

// runPattern returns the -run pattern that selects exactly the test
// named name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// saveLog writes the operations of l up to and including the failing one
// to a new file and returns its path.
func saveLog(cfg Config, l *Log, f *failure) (string, error) {
	dir := *logDirFlag
	if dir == "" {
		dir = os.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '_'
	}, cfg.Name)
	file, err := os.CreateTemp(dir, fmt.Sprintf("modeltest-%s-%d-*.log", name, l.Seed))
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# modeltest operation log: config %s, seed %d\n", cfg.Name, l.Seed)
	for _, line := range strings.Split(f.Error(), "\n") {
		b.WriteString("# " + line + "\n")
	}
	if _, err := file.WriteString(b.String()); err != nil {
		file.Close()
		return "", err
	}
	saved := &Log{Seed: l.Seed, Ops: l.Ops[:min(f.op+1, len(l.Ops))]}
	if _, err := saved.WriteTo(file); err != nil {
		file.Close()
		return "", err
	}
	return file.Name(), file.Close()
}

// failure is a divergence between the store and the model.
type failure struct {
	op     int    // index of the operation in the log; len(Ops) for the final check
	line   string // the operation
	msg    string
	recent []string // the operations before it, with their indexes
}

func (f *failure) Error() string {
	line := f.line
	if len(line) > 1000 {
		line = line[:1000] + "..."
	}
	return fmt.Sprintf("op %d (%s): %s\nrecent operations:\n  %s", f.op, line, f.msg, strings.Join(f.recent, "\n  "))
}

// clockStart is where the workload's clock starts.
var clockStart = time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)

// testClock is a deterministic clock for the engine that mostly moves
// forward, sometimes stalls and sometimes steps back, so the engine's
// per-entity Timestamp ordering cannot lean on the clock.
type testClock struct {
	mu  sync.Mutex
	rng *rand.Rand
	now time.Time
}

// advance moves the clock forward by d.
func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch r := c.rng.Intn(100); {
	case r < 10: // stall
	case r < 14:
		c.now = c.now.Add(-time.Duration(c.rng.Intn(1000)) * time.Microsecond)
	default:
		c.now = c.now.Add(time.Duration(1+c.rng.Intn(5000)) * 100 * time.Nanosecond)
	}
	return c.now
}

// engineVersions pairs, for one lifetime of one entity, the store's ETag
// of each version with the model's.
type engineVersions struct {
	toModel  map[ts.ETag]ts.ETag
	toEngine map[ts.ETag]ts.ETag
	stamp    map[ts.ETag]time.Time // store ETag -> store Timestamp
	last     time.Time             // Timestamp of the newest write seen
}

// runner runs a log against a store and the model.
type runner struct {
	t       *testing.T
	ctx     context.Context
	cfg     Config
	log     *Log
	opener  Opener
	clock   func() time.Time
	advance func(time.Duration) // moves the store's clock
	db      *ts.DB
	ref     reference
	eng     map[entityID]*engineVersions
	handles map[string]*ts.Table // kept across operations (and DeleteTable/CreateTable)
	op      int                  // index of the running operation
	line    string               // its text
	kind    string               // its label in stats and outcomes, or "readback"
	note    string               // what a failure should add about the operation, if anything
	recent  []string
	stats   map[string]int
	// outcomes counts results by operation and code, to show the
	// workload reaches both successes and each failure.
	outcomes map[string]int
	// pairs maps each store version the runner has seen, of any lifetime,
	// to its model ETag, and back: the change feed names past versions.
	pairs     map[storeVersion]ts.ETag
	pairsBack map[ts.ETag]storeVersion
}

// storeVersion names a version the store wrote: its entity and ETag
// (entities of one transaction share an ETag).
type storeVersion struct {
	id   entityID
	etag ts.ETag
}

// execute runs l and returns the runner, for its counts and its model,
// and the first divergence, or nil. A panic in the store is a divergence
// too; the Opener's own t.Fatal is not.
func execute(t *testing.T, open Opener, cfg Config, l *Log) (r *runner, f *failure) {
	clock := &testClock{rng: rand.New(rand.NewSource(l.Seed + 1)), now: clockStart}
	r = &runner{
		t: t, ctx: context.Background(), cfg: cfg, log: l, opener: open, clock: clock.Now,
		ref: newReference(), eng: map[entityID]*engineVersions{},
		stats: map[string]int{}, outcomes: map[string]int{},
		pairs: map[storeVersion]ts.ETag{}, pairsBack: map[ts.ETag]storeVersion{},
	}
	r.advance = cfg.Advance
	if r.advance == nil {
		r.advance = clock.advance
	}
	defer func() {
		if x := recover(); x != nil {
			var ok bool
			if f, ok = x.(*failure); !ok {
				f = &failure{op: r.op, line: r.line, msg: fmt.Sprintf("panic: %v\n%s", x, debug.Stack()), recent: r.recent}
			}
		}
		r.close()
	}()
	r.open()
	r.run()
	return r, nil
}

// failf stops the run with a divergence at the running operation.
func (r *runner) failf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if r.note != "" {
		msg += "\n" + r.note
	}
	panic(&failure{op: r.op, line: r.line, msg: msg, recent: append([]string(nil), r.recent...)})
}

func (r *runner) open() {
	r.db = r.opener(r.t, r.clock)
	if r.db == nil {
		r.failf("open: no store")
	}
	r.handles = map[string]*ts.Table{}
}

func (r *runner) close() {
	if r.db != nil {
		if err := r.db.Close(); err != nil {
			r.t.Errorf("close: %v", err)
		}
		r.db = nil
	}
}

func (r *runner) run() {
	for r.op = 0; r.op < len(r.log.Ops); r.op++ {
		op := &r.log.Ops[r.op]
		r.begin(op)
		r.exec(op)
	}
	r.line, r.kind, r.note = "final check of every table", "final", ""
	r.verifyAll()
	r.t.Logf("%s: %d operations: %v", r.cfg.Name, len(r.log.Ops), r.stats)
	r.t.Logf("%s: outcomes: %v", r.cfg.Name, r.outcomes)
	if r.cfg.Dir != "" {
		r.t.Logf("%s: %s", r.cfg.Name, r.storeFiles())
	}
}

// begin records the operation about to run.
func (r *runner) begin(op *Op) {
	r.line, r.note = op.String(), ""
	r.kind = string(op.kind)
	switch {
	case op.index != "" && op.kind == kindQuery:
		r.kind += "-index"
	case op.want != "":
		r.kind += "-invalid"
	case strings.EqualFold(op.table, missingTableName):
		r.kind += "-missing-table"
	}
	desc := r.line
	if len(desc) > 300 {
		desc = desc[:300] + "..."
	}
	r.recent = append(r.recent, fmt.Sprintf("%d: %s", r.op, desc))
	if len(r.recent) > 15 {
		r.recent = r.recent[1:]
	}
	r.stats[r.kind]++
}
