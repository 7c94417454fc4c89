package modeltest

import (
	"context"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/engine"
	"github.com/tablestore/tablestore/internal/plan"
)

// smallLog is a committed workload of every kind of operation.
const smallLog = "testdata/small.log"

// diskOpener opens the store in dir, at each call the same one, with
// small pages so that queries take several.
func diskOpener(dir string) Opener {
	return func(t *testing.T, clock func() time.Time) *ts.DB {
		db, err := ts.Open(dir, &ts.Options{Clock: clock, NoSync: true, PageScanLimit: 5})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return db
	}
}

// brokenOpener opens the embedded engine in dir behind a driver that
// breaks one answer (see brokenState).
func brokenOpener(dir string, s *brokenState) Opener {
	return func(t *testing.T, clock func() time.Time) *ts.DB {
		e, err := engine.Open(dir, engine.Options{
			NoSync: true, CacheSize: 1 << 20, MemTableSize: 1 << 20, BloomBitsPerKey: 10,
			Clock: clock, PageScanLimit: 5, PageTimeLimit: time.Minute,
		})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		db, err := ts.OpenDriver(&brokenConn{Conn: e, s: s}, nil)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return db
	}
}

// brokenState says which answer a brokenConn breaks: after `after`
// correct answers of the kind fault names, exactly one wrong one.
//
//	drop-row        a query page leaves out its first entity
//	lose-entity     a Get of an entity that exists answers ResourceNotFound
//	drop-change     a read of a change feed leaves out its first change
//	drop-index-row  a page read through an index leaves out its first entity
//	ttl-late        SetTTL keeps a Default two steps longer than asked, and
//	                TTL reads back the one asked for
type brokenState struct {
	fault string
	after int

	mu     sync.Mutex
	calls  int
	broken bool
	asked  time.Duration // ttl-late: the Default asked for
}

// trigger counts one answer the fault applies to and reports whether it
// is the one to break.
// brokenDivergence runs l on a store broken by s and returns the
// divergence reported, which must come from the fault and match want.
func brokenDivergence(t *testing.T, s *brokenState, cfg Config, l *Log, want string) *failure {
	t.Helper()
	_, f := execute(t, brokenOpener(t.TempDir(), s), cfg, l)
	if f == nil {
		t.Fatalf("no divergence reported (fault fired: %v)", s.broken)
	}
	if !s.broken {
		t.Fatalf("divergence without the fault: %v", f)
	}
	if !regexp.MustCompile(want).MatchString(f.msg) {
		t.Errorf("message %q does not match %q", f.msg, want)
	}
	return f
}

// dropFirst wraps emit so that, with fault set, the first item of a
// read is dropped when s triggers.
func dropFirst[T any](s *brokenState, fault string, emit func(T) error) func(T) error {
	first := true
	return func(v T) error {
		if first {
			first = false
			if s.fault == fault && s.trigger() {
				return nil
			}
		}
		return emit(v)
	}
}

func (s *brokenState) trigger() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return false
	}
	s.calls++
	s.broken = s.calls > s.after
	return s.broken
}

// brokenConn is the embedded engine with one wrong answer.
type brokenConn struct {
	driver.Conn
	s *brokenState
}

func (c *brokenConn) Table(name string) driver.Table {
	t := c.Conn.Table(name)
	// The engine's extensions pass through unchanged.
	return &brokenTable{Table: t, Indexer: t.(driver.Indexer), ChangeFeeder: t.(driver.ChangeFeeder), TTLTable: t.(driver.TTLTable), s: c.s}
}

type brokenTable struct {
	driver.Table
	driver.Indexer
	driver.ChangeFeeder
	driver.TTLTable
	s *brokenState
}

func (t *brokenTable) Get(ctx context.Context, pk, rk string, sel []string) (driver.Row, error) {
	row, err := t.Table.Get(ctx, pk, rk, sel)
	if err == nil && t.s.fault == "lose-entity" && t.s.trigger() {
		return driver.Row{}, &driver.Error{Code: "ResourceNotFound", Message: "entity lost on purpose"}
	}
	return row, err
}

func (t *brokenTable) QueryPage(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	if q.Filter == nil && q.Top == ts.PlanSampleSize {
		// Plan's sample read for its warnings: no result shows it.
		return t.Table.QueryPage(ctx, q, emit)
	}
	return t.Table.QueryPage(ctx, q, dropFirst(t.s, "drop-row", emit))
}

func (t *brokenTable) ReadChanges(ctx context.Context, req driver.ChangesRequest, emit func(driver.ChangeRecord) error) (driver.ChangesResult, error) {
	return t.ChangeFeeder.ReadChanges(ctx, req, dropFirst(t.s, "drop-change", emit))
}

func (t *brokenTable) QueryIndexPage(ctx context.Context, q *driver.IndexQueryRequest, emit func(driver.Row) error) (driver.IndexPageResult, error) {
	return t.Indexer.QueryIndexPage(ctx, q, dropFirst(t.s, "drop-index-row", emit))
}

func (t *brokenTable) SetTTL(ctx context.Context, s driver.TTL) error {
	if t.s.fault == "ttl-late" && s.Default > 0 && t.s.trigger() {
		t.s.mu.Lock()
		t.s.asked = s.Default
		t.s.mu.Unlock()
		s.Default += 2 * ttlStep
	}
	return t.TTLTable.SetTTL(ctx, s)
}

func (t *brokenTable) TTL(ctx context.Context) (driver.TTL, error) {
	s, err := t.TTLTable.TTL(ctx)
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if t.s.asked != 0 && s.Default == t.s.asked+2*ttlStep {
		s.Default = t.s.asked
	}
	return s, err
}

// The engine's optional operations pass through unchanged.

func (t *brokenTable) DeleteRange(ctx context.Context, pk, from, to string) (driver.DeleteRangeResult, error) {
	return t.Table.(driver.RangeDeleter).DeleteRange(ctx, pk, from, to)
}

func (t *brokenTable) QueryPageReverse(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	return t.Table.(driver.ReverseQuerier).QueryPageReverse(ctx, q, emit)
}

func (t *brokenTable) Segments(ctx context.Context, n int) ([]plan.Key, error) {
	return t.Table.(driver.Segmenter).Segments(ctx, n)
}

// TestReplayTestdata replays the committed log against the embedded
// engine: every operation agrees with the model, and the log is a real
// workload (every kind of operation, successes and failures, entities
// left to compare at the end). The same log run against a store that
// drops one row of one page fails.
func TestReplayTestdata(t *testing.T) {
	l, err := LoadLog(smallLog)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[kind]int{}
	for _, op := range l.Ops {
		seen[op.kind]++
	}
	for _, k := range kinds {
		if seen[k] == 0 {
			t.Errorf("%s has no %s operation", smallLog, k)
		}
	}

	r, f := execute(t, diskOpener(t.TempDir()), Config{Name: "testdata"}, l)
	if f != nil {
		t.Fatalf("replay of %s: %v", smallLog, f)
	}
	for _, outcome := range []string{"insert:ok", "insert:EntityAlreadyExists", "tx:ok", "query:ok", "update:UpdateConditionNotSatisfied", "readback:ok"} {
		if r.outcomes[outcome] == 0 {
			t.Errorf("no outcome %s: %v", outcome, r.outcomes)
		}
	}
	if r.outcomes["query-rows"] == 0 {
		t.Errorf("no query returned an entity: %v", r.outcomes)
	}
	entities := 0
	for _, name := range r.ref.m.TableNames() {
		entities += r.ref.m.Len(name)
	}
	if entities == 0 {
		t.Errorf("no entity left for the final check")
	}

	broken := &brokenState{fault: "drop-row", after: 3}
	if _, f := execute(t, brokenOpener(t.TempDir(), broken), Config{Name: "testdata"}, l); f == nil || !broken.broken {
		t.Fatalf("replay against a broken store passed (fault fired: %v)", broken.broken)
	}
}

// TestBrokenStoreFails runs one workload against stores that each give
// one wrong answer, after checking the healthy engine passes it: the
// harness must stop at the operation that got the wrong answer, and the
// log it saves must replay the failure at the same operation.
func TestBrokenStoreFails(t *testing.T) {
	cfg := Config{Name: "broken", Seed: 11, Ops: 400, Reopens: 1}
	l := &Log{Seed: cfg.Seed, Ops: Generate(cfg)}
	if _, f := execute(t, diskOpener(t.TempDir()), cfg, l); f != nil {
		t.Fatalf("healthy store: %v", f)
	}
	defer func(dir string) { *logDirFlag = dir }(*logDirFlag)
	*logDirFlag = t.TempDir()

	for _, tc := range []struct{ fault, want string }{
		{"drop-row", `(?s)^(query|QueryStructPage|property sets differ)`},
		{"lose-entity", `ResourceNotFound`},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			s := &brokenState{fault: tc.fault, after: 3}
			f := brokenDivergence(t, s, cfg, l, tc.want)
			if f.op >= len(l.Ops) || f.line != l.Ops[f.op].String() {
				t.Fatalf("failure at op %d names %q", f.op, f.line)
			}

			path, err := saveLog(cfg, l, f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(path, *logDirFlag) {
				t.Errorf("log saved at %s, outside -modeltest.logdir", path)
			}
			saved, err := LoadLog(path)
			if err != nil {
				t.Fatal(err)
			}
			if saved.Seed != l.Seed || len(saved.Ops) != f.op+1 {
				t.Fatalf("saved log: seed %d, %d ops; want %d, %d", saved.Seed, len(saved.Ops), l.Seed, f.op+1)
			}
			_, again := execute(t, brokenOpener(t.TempDir(), &brokenState{fault: tc.fault, after: 3}), cfg, saved)
			if again == nil || again.op != f.op {
				t.Fatalf("replay of the saved log: %v, want a failure at op %d", again, f.op)
			}
		})
	}
}

// TestBrokenExtensionsFail runs a workload against stores whose
// extensions each give one wrong answer, after checking the healthy
// engine passes it: a lost change of a feed, a lost entity of a read in
// index order, entities kept past the expiry asked for.
func TestBrokenExtensionsFail(t *testing.T) {
	cfg := Config{Name: "broken-ext", Seed: 12, Ops: 1500}
	l := &Log{Seed: cfg.Seed, Ops: Generate(cfg)}
	if _, f := execute(t, diskOpener(t.TempDir()), cfg, l); f != nil {
		t.Fatalf("healthy store: %v", f)
	}
	for _, tc := range []struct {
		fault string
		after int // answers left correct: the workload must show the broken one
		want  string
	}{
		{"drop-change", 1, `^change( feed:|\s\d+:)`},
		{"drop-index-row", 1, `^query`},
		// The third TTL with a Default: the clock moves past its expiry
		// before the table's next SetTTL.
		{"ttl-late", 2, `^query`},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			s := &brokenState{fault: tc.fault, after: tc.after}
			f := brokenDivergence(t, s, cfg, l, tc.want)
			if tc.fault == "ttl-late" && !strings.HasPrefix(f.line, "advance ") {
				t.Errorf("an entity kept past its expiry shows at %q, not at the clock's move", f.line)
			}
		})
	}
}

// TestGeneratorFollowsRunner runs a workload and compares the model the
// generator kept with the runner's: the same tables, entities, ETags and
// version histories. The generator chooses operations for the state of
// its own model (tables that exist, keys that are there, versions that
// were written); were it to drift from the runner's, the workload would
// lose coverage without any failure showing it.
func TestGeneratorFollowsRunner(t *testing.T) {
	cfg := Config{Name: "follow", Seed: 5, Ops: 1500, Reopens: 1}
	g := newGenerator(cfg)
	ops := g.generate()
	r, f := execute(t, diskOpener(t.TempDir()), cfg, &Log{Seed: cfg.Seed, Ops: ops})
	if f != nil {
		t.Fatal(f)
	}
	names := r.ref.m.TableNames()
	if got := g.ref.m.TableNames(); !reflect.DeepEqual(got, names) {
		t.Fatalf("tables: generator %q, runner %q", got, names)
	}
	entities := 0
	for _, name := range names {
		want, _ := r.ref.m.Query(name, ts.Query{})
		got, _ := g.ref.m.Query(name, ts.Query{})
		if len(got) != len(want) {
			t.Fatalf("table %s: generator %d entities, runner %d", name, len(got), len(want))
		}
		for i := range want {
			if Describe(got[i]) != Describe(want[i]) || got[i].ETag != want[i].ETag {
				t.Fatalf("table %s: generator %s %s, runner %s %s", name, Describe(got[i]), got[i].ETag, Describe(want[i]), want[i].ETag)
			}
		}
		entities += len(want)
	}
	if entities == 0 {
		t.Fatal("no entities to compare")
	}
	if !reflect.DeepEqual(g.ref.life, r.ref.life) {
		t.Fatalf("version histories differ: generator %d entities, runner %d", len(g.ref.life), len(r.ref.life))
	}
}

// TestReplayFlag runs this test binary again with -modeltest.replay, as a
// developer replays a saved log: over the engine the committed log
// passes; over a store with one wrong answer the run fails, printing the
// seed and the path of a saved log, and the command to replay it.
func TestReplayFlag(t *testing.T) {
	if os.Getenv("MODELTEST_CHILD") != "" {
		t.Skip("in the child")
	}
	l, err := LoadLog(smallLog)
	if err != nil {
		t.Fatal(err)
	}
	child := func(store string, args ...string) (string, error) {
		cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestReplayFlagChild$", "-test.v", "-test.count=1"}, args...)...)
		cmd.Env = append(os.Environ(), "MODELTEST_CHILD="+store)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	out, err := child("healthy", "-modeltest.replay="+smallLog)
	if err != nil {
		t.Fatalf("replay over the engine failed: %v\n%s", err, out)
	}
	if want := "replaying " + smallLog + ": "; !strings.Contains(out, want) || !strings.Contains(out, "--- PASS: TestReplayFlagChild") {
		t.Fatalf("child output lacks %q or a pass:\n%s", want, out)
	}

	dir := t.TempDir()
	out, err = child("broken", "-modeltest.replay="+smallLog, "-modeltest.logdir="+dir)
	if err == nil {
		t.Fatalf("replay over a broken store passed:\n%s", out)
	}
	m := regexp.MustCompile(`operation log: (\S+)`).FindStringSubmatch(out)
	if m == nil || !strings.HasPrefix(m[1], dir) {
		t.Fatalf("no saved log under %s in the output:\n%s", dir, out)
	}
	for _, want := range []string{"seed " + strconv.FormatInt(l.Seed, 10), "-modeltest.replay=" + m[1], "^TestReplayFlagChild$"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	saved, err := LoadLog(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if saved.Seed != l.Seed || len(saved.Ops) == 0 || len(saved.Ops) > len(l.Ops) {
		t.Fatalf("saved log: seed %d, %d ops", saved.Seed, len(saved.Ops))
	}
}

// TestReplayFlagChild is the run TestReplayFlag starts; Seed and Ops are
// ignored under -modeltest.replay.
func TestReplayFlagChild(t *testing.T) {
	store := os.Getenv("MODELTEST_CHILD")
	if store == "" {
		t.Skip("run by TestReplayFlag")
	}
	open := diskOpener(t.TempDir())
	if store == "broken" {
		open = brokenOpener(t.TempDir(), &brokenState{fault: "drop-row", after: 3})
	}
	Run(t, open, Config{Name: "child", Seed: 99, Ops: 1})
}
