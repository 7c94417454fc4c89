// Package modeltest runs a seeded random workload against a store and
// against internal/model, the plain in-memory reference, and demands that
// every result and every error agree. It drives the store only through
// the public API, so the same workload checks every driver: the embedded
// engine from the root package's tests, a remote driver from its module.
//
// A failure prints the seed and the index of the operation; the root
// package's tests replay it with
//
//	go test -run 'TestModel/<config>' -seed=<seed> .
//
// (or TABLESTORE_SEED=<seed>).
package modeltest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/internal/model"
)

// Config is one run of the workload.
type Config struct {
	// Name names the run in failure messages.
	Name string
	// Seed seeds every random choice; the same seed replays the same run.
	Seed int64
	// Ops is the number of operations.
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
}

// Opener opens the store under test. Run calls it once at the start and
// again after each reopen, when every call must reach the same stored data
// (the previous DB is closed first). clock is the workload's deterministic
// clock, which mostly moves forward, sometimes stalls and sometimes steps
// back: an engine that takes Options.Clock should use it; a remote service
// keeps its own. Opener fails t itself if it cannot open.
type Opener func(t *testing.T, clock func() time.Time) *ts.DB

// Run runs the workload of cfg against the store open gives, then checks
// every table against the model. It fails t at the first divergence.
func Run(t *testing.T, open Opener, cfg Config) {
	h := newHarness(t, open, cfg)
	defer h.close()
	h.run(cfg.Ops)
}

// testClock is a deterministic clock for the engine that mostly moves
// forward, sometimes stalls and sometimes steps back, so the engine's
// per-entity Timestamp ordering cannot lean on the clock.
type testClock struct {
	mu  sync.Mutex
	rng *rand.Rand
	now time.Time
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

// entityID names one entity; table is lowercased.
type entityID struct{ table, pk, rk string }

// versions pairs, for one lifetime of one entity (from its creation to its
// deletion), the engine's ETag of each version with the model's.
type versions struct {
	toModel  map[ts.ETag]ts.ETag
	toEngine map[ts.ETag]ts.ETag
	stamp    map[ts.ETag]time.Time // engine ETag -> engine Timestamp
	pairs    [][2]ts.ETag          // known (engine, model) pairs, oldest first
	last     time.Time             // Timestamp of the newest write seen
}

// harness runs one configuration of the workload.
type harness struct {
	t       *testing.T
	ctx     context.Context
	cfg     Config
	seed    int64
	rng     *rand.Rand
	opener  Opener
	clock   func() time.Time
	db      *ts.DB
	m       *model.Model
	handles map[string]*ts.Table // handles kept across DeleteTable/CreateTable
	vers    map[entityID]*versions
	op      int
	desc    string
	kind    string // of the operation running, or "readback"
	recent  []string
	stats   map[string]int
	// outcomes counts results by operation and code, to show the
	// workload reaches both successes and each failure.
	outcomes map[string]int
}

// tableBases are the table names the workload uses; it addresses them in
// random letter case.
var tableBases = []string{"alpha", "Beta", "gamma7", "DeltaTable"}

var (
	pkPool   = []string{"p0", "p1", "p2", "p3", "P1", "pé", "p q", "p'x", "日本", "p1a"}
	rkPool   = []string{"r00", "r01", "r02", "r03", "r04", "r05", "r06", "r07", "r08", "r09", "r10", "r11", "R00", "r'1", "r 2", "ü", "r1", "r100"}
	propPool = []string{"A", "B", "C", "Name", "Count", "Flag", "When", "Id", "Blob", "Price", "_x", "Big"}
	// selectPool adds a name no entity has.
	selectPool = []string{"A", "B", "C", "Name", "Count", "Flag", "When", "Id", "Blob", "Price", "_x", "Big", "Missing", "PartitionKey", "RowKey", "Timestamp"}
	// literalStrings adds strings equal to keys.
	literalStrings = []string{"", "a", "b", "abc", "B", "zz", "O'Neil", "héllo", "日本語", "a b", "p1", "p2", "r05", "r1", "P1"}
)

func newHarness(t *testing.T, open Opener, cfg Config) *harness {
	seed := cfg.Seed
	h := &harness{
		opener:   open,
		t:        t,
		ctx:      context.Background(),
		cfg:      cfg,
		seed:     seed,
		rng:      rand.New(rand.NewSource(seed)),
		m:        model.New(),
		vers:     map[entityID]*versions{},
		stats:    map[string]int{},
		outcomes: map[string]int{},
	}
	clock := &testClock{rng: rand.New(rand.NewSource(seed + 1)), now: time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)}
	h.clock = clock.Now
	h.open()
	return h
}

func (h *harness) open() {
	h.db = h.opener(h.t, h.clock)
	if h.db == nil {
		h.failf("open: no store")
	}
	h.handles = map[string]*ts.Table{}
}

func (h *harness) close() {
	if h.db != nil {
		if err := h.db.Close(); err != nil {
			h.t.Errorf("close: %v", err)
		}
		h.db = nil
	}
}

// failf stops the test with the seed, the operation and the recent
// history.
func (h *harness) failf(format string, args ...any) {
	h.t.Helper()
	h.t.Fatalf("seed %d, config %s, op %d (%s): %s\nrecent operations:\n  %s\nreplay: go test -run 'TestModel/%s' -seed=%d .",
		h.seed, h.cfg.Name, h.op, h.desc, fmt.Sprintf(format, args...),
		strings.Join(h.recent, "\n  "), h.cfg.Name, h.seed)
}

// begin records the description of the operation about to run.
func (h *harness) begin(kind, format string, args ...any) {
	h.kind = kind
	h.desc = kind + " " + fmt.Sprintf(format, args...)
	if len(h.desc) > 300 {
		h.desc = h.desc[:300] + "..."
	}
	h.recent = append(h.recent, fmt.Sprintf("%d: %s", h.op, h.desc))
	if len(h.recent) > 15 {
		h.recent = h.recent[1:]
	}
	h.stats[kind]++
}

func (h *harness) run(ops int) {
	for _, name := range tableBases[:2] {
		h.begin("setup", "%s", name)
		h.createTable(name)
	}
	reopenAt := map[int]bool{}
	for i := 1; i <= h.cfg.Reopens; i++ {
		reopenAt[i*ops/(h.cfg.Reopens+1)] = true
	}
	for h.op = 0; h.op < ops; h.op++ {
		if reopenAt[h.op] {
			h.reopen()
		}
		h.step()
	}
	h.begin("final", "verify all")
	h.verifyAll()
	h.t.Logf("%s: %d ops: %v", h.cfg.Name, ops, h.stats)
	h.t.Logf("%s: outcomes: %v", h.cfg.Name, h.outcomes)
	if h.cfg.Dir != "" {
		h.t.Logf("%s: %s", h.cfg.Name, h.storeFiles())
	}
}

// step runs one random operation.
func (h *harness) step() {
	switch r := h.rng.Intn(1100); {
	case r >= 1000:
		h.partitionOp()
	case r < 130:
		h.opInsert()
	case r < 230:
		h.opGet()
	case r < 350:
		h.opUpdate()
	case r < 460:
		h.opUpsert()
	case r < 520:
		h.opDelete()
	case r < 680:
		h.opTransaction()
	case r < 760:
		h.opQuery()
	case r < 780:
		h.opQueryWithWrites()
	case r < 850:
		h.opInvalidEntity()
	case r < 880:
		h.opMissingTable()
	case r < 900:
		h.opListTables()
	case r < 925:
		h.opCreateTable()
	case r < 935:
		h.opInvalidTableName()
	case r < 940:
		h.opDeleteTable()
	default:
		h.opCheckEntity()
	}
}

// ---- random inputs ----

func (h *harness) pick(pool []string) string { return pool[h.rng.Intn(len(pool))] }

// randomCase returns name with each letter's case flipped at random
// (unchanged under Quirks.TableNameCase).
func (h *harness) randomCase(name string) string {
	if h.cfg.Quirks.TableNameCase {
		return name
	}
	b := []byte(name)
	for i, c := range b {
		if h.rng.Intn(3) == 0 {
			switch {
			case c >= 'a' && c <= 'z':
				b[i] = c - 'a' + 'A'
			case c >= 'A' && c <= 'Z':
				b[i] = c - 'A' + 'a'
			}
		}
	}
	return string(b)
}

// tableName returns a name of one of the workload's tables (existing or
// not), in random case.
func (h *harness) tableName() string {
	return h.randomCase(h.pick(tableBases))
}

// existingTable returns the name of an existing table in random case, or
// "" if there is none.
func (h *harness) existingTable() string {
	names := h.m.TableNames()
	if len(names) == 0 {
		return ""
	}
	return h.randomCase(names[h.rng.Intn(len(names))])
}

// table returns a handle, sometimes one kept from earlier (which must
// address the current table of that name).
func (h *harness) table(name string) *ts.Table {
	lower := strings.ToLower(name)
	if tb, ok := h.handles[lower]; ok && h.rng.Intn(2) == 0 {
		return tb
	}
	tb := h.db.Table(name)
	h.handles[lower] = tb
	return tb
}

var (
	timePool = []time.Time{
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 999999900, time.UTC),
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2000, 1, 1, 12, 0, 0, 0, time.UTC),
		time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
	}
	guidPool = []ts.GUID{
		{},
		{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	}
	stringPool = []string{"", "a", "b", "abc", "B", "zz", "O'Neil", "héllo", "日本語", "a b"}
	int32Pool  = []int32{-2, -1, 0, 1, 2, 3, math.MaxInt32, math.MinInt32}
	int64Pool  = []int64{-2, -1, 0, 1, 2, 3, 1 << 40, math.MaxInt64, math.MinInt64}
	floatPool  = []float64{-1.5, 0, 0.5, 1, 2, 3.25, 1e300, -1e-300, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN()}
	binaryPool = [][]byte{{}, {0}, {1, 2}, {0xff}, {1, 2, 3}}
)

// randomValue returns a value of a random EDM type from small domains, so
// that filters match often; nil now and then.
func (h *harness) randomValue() any {
	switch h.rng.Intn(9) {
	case 0:
		if h.cfg.BigValue && h.rng.Intn(8) == 0 {
			return strings.Repeat(string(rune('a'+h.rng.Intn(26))), 500+h.rng.Intn(3000))
		}
		return h.pick(stringPool)
	case 1:
		return int32Pool[h.rng.Intn(len(int32Pool))]
	case 2:
		return int64Pool[h.rng.Intn(len(int64Pool))]
	case 3:
		f := floatPool[h.rng.Intn(len(floatPool))]
		if f == 0 && h.cfg.Quirks.NegativeZero {
			return 0.0
		}
		return f
	case 4:
		return h.rng.Intn(2) == 0
	case 5:
		tm := timePool[h.rng.Intn(len(timePool))]
		if h.rng.Intn(2) == 0 {
			// The same instant in another zone: the store keeps UTC.
			tm = tm.In(time.FixedZone("x", (h.rng.Intn(25)-12)*3600))
		}
		return tm
	case 6:
		return guidPool[h.rng.Intn(len(guidPool))]
	case 7:
		if h.cfg.BigValue && h.rng.Intn(8) == 0 {
			b := make([]byte, 500+h.rng.Intn(4000))
			h.rng.Read(b)
			return b
		}
		return append([]byte{}, binaryPool[h.rng.Intn(len(binaryPool))]...)
	default:
		if h.rng.Intn(4) == 0 {
			return nil
		}
		return int32(h.rng.Intn(5))
	}
}

func (h *harness) randomProps() map[string]any {
	props := map[string]any{}
	for n := h.rng.Intn(6); n > 0; n-- {
		props[h.pick(propPool)] = h.randomValue()
	}
	return props
}

// randomKey returns a key that exists in the table half of the time.
func (h *harness) randomKey(table string) (string, string) {
	if keys := h.m.Keys(table); len(keys) > 0 && h.rng.Intn(2) == 0 {
		k := keys[h.rng.Intn(len(keys))]
		return k.PK, k.RK
	}
	return h.pick(pkPool), h.pick(rkPool)
}

func (h *harness) randomEntity(table string) *ts.Entity {
	pk, rk := h.randomKey(table)
	return &ts.Entity{PartitionKey: pk, RowKey: rk, Properties: h.randomProps()}
}

// copyEntity returns a deep copy, so engine and model never share maps or
// byte slices.
func copyEntity(e *ts.Entity) *ts.Entity {
	c := *e
	if e.Properties != nil {
		c.Properties = map[string]any{}
		for k, v := range e.Properties {
			if b, ok := v.([]byte); ok {
				v = append([]byte{}, b...)
			}
			c.Properties[k] = v
		}
	}
	return &c
}

// etagOf is the ETag Azure derives from a Timestamp.
func etagOf(tm time.Time) ts.ETag {
	s := tm.UTC().Format("2006-01-02T15:04:05.0000000Z")
	return ts.ETag(`W/"datetime'` + strings.ReplaceAll(s, ":", "%3A") + `'"`)
}

// staleETag is well formed but older than every ETag the test clock makes.
const staleETag ts.ETag = `W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`

// pickIfMatch returns an If-Match value for the entity, as an (engine,
// model) pair naming the same logical version: "*", the current version,
// an older version of the same lifetime, or one that never existed.
func (h *harness) pickIfMatch(id entityID) (ts.ETag, ts.ETag, string) {
	v := h.vers[id]
	cur, err := h.m.Get(id.table, id.pk, id.rk, nil)
	switch r := h.rng.Intn(10); {
	case r < 5 && err == nil && v != nil && v.toEngine[cur.ETag] != "":
		return v.toEngine[cur.ETag], cur.ETag, "current"
	case r < 7 && v != nil && len(v.pairs) > 0:
		p := v.pairs[h.rng.Intn(len(v.pairs))]
		return p[0], p[1], "known"
	case r < 8:
		return staleETag, `W/"never-existed"`, "stale"
	case r < 9:
		return "garbage", "garbage", "garbage"
	}
	return ts.ETagAny, ts.ETagAny, "*"
}

// ---- observing ETags and Timestamps ----

func (h *harness) lifetime(id entityID) *versions {
	v := h.vers[id]
	if v == nil {
		v = &versions{toModel: map[ts.ETag]ts.ETag{}, toEngine: map[ts.ETag]ts.ETag{}, stamp: map[ts.ETag]time.Time{}}
		h.vers[id] = v
	}
	return v
}

// forget ends the lifetime of an entity (it was deleted).
func (h *harness) forget(id entityID) { delete(h.vers, id) }

// forgetTable ends the lifetime of every entity of a table.
func (h *harness) forgetTable(table string) {
	lower := strings.ToLower(table)
	for id := range h.vers {
		if id.table == lower {
			delete(h.vers, id)
		}
	}
}

// observe checks that the engine's (ETag, Timestamp) and the model's ETag
// name the same version: one engine ETag per model version and back. A
// write must also carry a Timestamp later than every earlier one of the
// same lifetime, and an ETag derived from it.
func (h *harness) observe(id entityID, engineETag ts.ETag, stamp time.Time, modelETag ts.ETag, write bool) {
	h.t.Helper()
	if engineETag == "" {
		h.failf("entity %v: engine returned an empty ETag", id)
	}
	if want := etagOf(stamp); engineETag != want {
		h.failf("entity %v: ETag %s does not match Timestamp %s (want %s)", id, engineETag, stamp.Format(time.RFC3339Nano), want)
	}
	v := h.lifetime(id)
	if m, ok := v.toModel[engineETag]; ok && m != modelETag {
		h.failf("entity %v: engine ETag %s names two versions (model %s and %s)", id, engineETag, m, modelETag)
	}
	if e, ok := v.toEngine[modelETag]; ok && e != engineETag {
		h.failf("entity %v: one version (model %s) has two engine ETags: %s then %s", id, modelETag, e, engineETag)
	}
	if s, ok := v.stamp[engineETag]; ok && !s.Equal(stamp) {
		h.failf("entity %v: ETag %s came with Timestamp %v, now %v", id, engineETag, s, stamp)
	}
	if _, ok := v.toModel[engineETag]; !ok {
		if write && !stamp.After(v.last) {
			h.failf("entity %v: Timestamp %v of a new version is not after %v", id, stamp, v.last)
		}
		if write {
			h.m.SetTimestamp(id.table, id.pk, id.rk, stamp)
		}
		v.toModel[engineETag] = modelETag
		v.toEngine[modelETag] = engineETag
		v.stamp[engineETag] = stamp
		v.pairs = append(v.pairs, [2]ts.ETag{engineETag, modelETag})
		if stamp.After(v.last) {
			v.last = stamp
		}
	}
}

// ---- comparing results ----

// sentinelOf maps a code to its sentinel, to check errors.Is.
var sentinelOf = map[ts.Code]error{
	ts.CodeTableAlreadyExists:                      ts.ErrTableAlreadyExists,
	ts.CodeTableNotFound:                           ts.ErrTableNotFound,
	ts.CodeResourceNotFound:                        ts.ErrResourceNotFound,
	ts.CodeEntityAlreadyExists:                     ts.ErrEntityAlreadyExists,
	ts.CodeUpdateConditionNotSatisfied:             ts.ErrUpdateConditionNotSatisfied,
	ts.CodePropertiesNeedValue:                     ts.ErrPropertiesNeedValue,
	ts.CodeInvalidInput:                            ts.ErrInvalidInput,
	ts.CodeOutOfRangeInput:                         ts.ErrOutOfRangeInput,
	ts.CodeInvalidResourceName:                     ts.ErrInvalidResourceName,
	ts.CodePropertyValueTooLarge:                   ts.ErrPropertyValueTooLarge,
	ts.CodeEntityTooLarge:                          ts.ErrEntityTooLarge,
	ts.CodeTooManyProperties:                       ts.ErrTooManyProperties,
	ts.CodeKeyValueTooLarge:                        ts.ErrKeyValueTooLarge,
	ts.CodePropertyNameInvalid:                     ts.ErrPropertyNameInvalid,
	ts.CodePropertyNameTooLong:                     ts.ErrPropertyNameTooLong,
	ts.CodeDuplicatePropertiesSpecified:            ts.ErrDuplicatePropertiesSpecified,
	ts.CodeInvalidValueType:                        ts.ErrInvalidValueType,
	ts.CodeInvalidDuplicateRow:                     ts.ErrInvalidDuplicateRow,
	ts.CodeCommandsInBatchActOnDifferentPartitions: ts.ErrCommandsInBatchActOnDifferentPartitions,
	ts.CodeNotImplemented:                          ts.ErrNotImplemented,
	ts.CodeRequestBodyTooLarge:                     ts.ErrRequestBodyTooLarge,
}

// sameError checks the engine's error against the model's: both nil, or
// the same code (and errors.Is its sentinel) and, for a transaction, the
// same failing index. checkIndex false compares only the code.
func (h *harness) sameError(got, want error, checkIndex bool) {
	h.t.Helper()
	kind := h.kind
	if want == nil {
		h.outcomes[kind+":ok"]++
	} else if we, ok := want.(*model.Error); ok {
		h.outcomes[kind+":"+string(we.Code)]++
	}
	switch {
	case got == nil && want == nil:
		return
	case want == nil:
		h.failf("engine failed, model succeeded: %v", got)
	case got == nil:
		h.failf("engine succeeded, model failed with %v", want)
	}
	var we *model.Error
	if !errors.As(want, &we) {
		h.failf("model returned a foreign error %v", want)
	}
	code := ts.ErrorCode(got)
	if code != we.Code {
		h.failf("engine error %q (%v), model %s", code, got, we)
	}
	if sentinelOf[code] == nil || !errors.Is(got, sentinelOf[code]) {
		h.failf("engine error %v does not match sentinel %v with errors.Is", got, sentinelOf[code])
	}
	if we.Index >= 0 {
		var be *ts.BatchError
		if !errors.As(got, &be) {
			h.failf("engine transaction error %v is not a *BatchError (model %s)", got, we)
		}
		if checkIndex && be.Index != we.Index {
			h.failf("engine failed at action %d (%v), model at %d (%s)", be.Index, got, we.Index, we)
		}
	}
}

// sameValue reports whether an engine value equals a model value: the
// same Go type and the same value (times by instant).
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case time.Time:
		g, ok := got.(time.Time)
		return ok && g.Equal(w)
	case []byte:
		g, ok := got.([]byte)
		return ok && bytes.Equal(g, w)
	case float64:
		g, ok := got.(float64)
		return ok && (g == w || (math.IsNaN(g) && math.IsNaN(w))) && math.Signbit(g) == math.Signbit(w)
	}
	return got == want
}

// describe prints an entity's keys and properties in name order.
// Describe formats an entity for failure messages: keys, then each
// property's name, Go type and value (long values cut), in name order.
func Describe(e *ts.Entity) string {
	if e == nil {
		return "<nil>"
	}
	names := make([]string, 0, len(e.Properties))
	for n := range e.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "(%q,%q){", e.PartitionKey, e.RowKey)
	for i, n := range names {
		if i > 0 {
			b.WriteString(" ")
		}
		v := e.Properties[n]
		if s, ok := v.(string); ok && len(s) > 20 {
			v = fmt.Sprintf("%q...(%d)", s[:20], len(s))
		}
		if s, ok := v.([]byte); ok && len(s) > 20 {
			v = fmt.Sprintf("%x...(%d)", s[:20], len(s))
		}
		fmt.Fprintf(&b, "%s:%T=%v", n, e.Properties[n], v)
	}
	b.WriteString("}")
	return b.String()
}

// sameEntity checks an engine entity against the model's: keys and
// properties (a nil engine value counts as absent), and the ETag by
// behaviour.
func (h *harness) sameEntity(table string, got, want *ts.Entity) {
	h.t.Helper()
	if got == nil {
		h.failf("engine returned a nil entity, model %s", Describe(want))
	}
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey {
		h.failf("engine entity %s, model %s", Describe(got), Describe(want))
	}
	n := 0
	for name, g := range got.Properties {
		if g == nil {
			continue
		}
		n++
		w, ok := want.Properties[name]
		if !ok || !sameValue(g, w) {
			h.failf("property %s differs: engine %s, model %s", name, Describe(got), Describe(want))
		}
	}
	if n != len(want.Properties) {
		h.failf("property sets differ: engine %s, model %s", Describe(got), Describe(want))
	}
	if !want.Timestamp.IsZero() && !got.Timestamp.Equal(want.Timestamp) {
		h.failf("entity %s: engine Timestamp %v, written with %v", Describe(want), got.Timestamp, want.Timestamp)
	}
	for _, name := range []string{"PartitionKey", "RowKey", "Timestamp"} {
		if _, ok := got.Properties[name]; ok {
			h.failf("engine entity holds system property %s in Properties", name)
		}
	}
	h.observe(entityID{strings.ToLower(table), want.PartitionKey, want.RowKey}, got.ETag, got.Timestamp, want.ETag, false)
}

// ---- operations ----

// writeTable returns an existing table to write to; when there is none it
// creates one instead and returns false.
func (h *harness) writeTable() (string, bool) {
	table := h.existingTable()
	if table == "" {
		h.opCreateTable()
		return "", false
	}
	return table, true
}

// write runs one single-entity write of e on the engine (on a copy, which
// receives the engine's Timestamp and ETag) and on the model, compares
// their errors and, on success, pairs the engine's new version with the
// model's.
func (h *harness) write(table string, e *ts.Entity, engine func(*ts.Entity) error, model func() (ts.ETag, error)) {
	ee := copyEntity(e)
	gotErr := engine(ee)
	etag, wantErr := model()
	h.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		h.observe(entityID{strings.ToLower(table), e.PartitionKey, e.RowKey}, ee.ETag, ee.Timestamp, etag, true)
	}
}

func (h *harness) opInsert() {
	table, ok := h.writeTable()
	if !ok {
		return
	}
	e := h.randomEntity(table)
	h.begin("insert", "%s %s", table, Describe(e))
	h.write(table, e, func(ee *ts.Entity) error { return h.table(table).Insert(h.ctx, ee) },
		func() (ts.ETag, error) { return h.m.Insert(table, e) })
}

func (h *harness) opGet() {
	table := h.existingTable()
	if table == "" {
		table = h.tableName()
	}
	pk, rk := h.randomKey(table)
	if h.rng.Intn(30) == 0 {
		switch h.rng.Intn(3) {
		case 0:
			pk = h.pick([]string{"", "a/b", "x#", "q?", "t\tt"})
		default:
			rk = h.pick([]string{"", "a\\b", "\u0080", strings.Repeat("k", 1025), "\xff"})
		}
	}
	var sel []string
	if h.rng.Intn(3) == 0 {
		sel = []string{}
		for n := 1 + h.rng.Intn(3); n > 0; n-- {
			sel = append(sel, h.pick(selectPool))
		}
		sel = dedupe(sel)
	}
	h.begin("get", "%s (%q,%q) select %q", table, pk, rk, sel)
	var opts *ts.GetOptions
	if sel != nil {
		opts = &ts.GetOptions{Select: sel}
	}
	got, gotErr := h.table(table).Get(h.ctx, pk, rk, opts)
	want, wantErr := h.m.Get(table, pk, rk, sel)
	h.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		h.sameEntity(table, got, want)
	}
	typed, typedErr := ts.GetAs[typedRow](h.ctx, h.table(table), pk, rk, opts)
	h.sameTyped("GetAs", got, gotErr, typed, typedErr)
}

// typedRow maps the workload's property names to one Go type each, so
// the typed reads meet both properties that fit and ones that do not.
type typedRow struct {
	PartitionKey, RowKey string
	Timestamp            time.Time
	ETag                 ts.ETag
	A                    string
	B                    int64
	C                    float64
	Name                 string
	Count                int32
	Flag                 bool
	When                 time.Time
	Id                   ts.GUID
	Blob                 []byte
	Price                float64
	X                    int64 `table:"_x"`
	Big                  string
}

// sameTyped checks a typed read against the map read it mirrors: the map
// read's entity through UnmarshalEntity gives the same value or the same
// error.
func (h *harness) sameTyped(what string, e *ts.Entity, mapErr error, got typedRow, gotErr error) {
	h.t.Helper()
	var want typedRow
	wantErr := mapErr
	if wantErr == nil {
		wantErr = ts.UnmarshalEntity(e, &want)
	}
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		h.failf("%s: error %v, the map path's %v", what, gotErr, wantErr)
	}
	if wantErr == nil && fmt.Sprintf("%+v", want) != fmt.Sprintf("%+v", got) {
		h.failf("%s: %+v, the map path gives %+v", what, got, want)
	}
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func (h *harness) randomMode() ts.UpdateMode {
	if h.rng.Intn(2) == 0 {
		return ts.Merge
	}
	return ts.Replace
}

func (h *harness) opUpdate() {
	table, ok := h.writeTable()
	if !ok {
		return
	}
	e := h.randomEntity(table)
	mode := h.randomMode()
	id := entityID{strings.ToLower(table), e.PartitionKey, e.RowKey}
	engineETag, modelETag, kind := h.pickIfMatch(id)
	if h.rng.Intn(40) == 0 {
		engineETag, modelETag, kind = "", "", "empty"
	}
	h.begin("update", "%s %s %s if-match %s (%s)", table, mode, Describe(e), engineETag, kind)
	h.write(table, e, func(ee *ts.Entity) error { return h.table(table).Update(h.ctx, ee, mode, engineETag) },
		func() (ts.ETag, error) { return h.m.Update(table, e, mode, modelETag) })
}

func (h *harness) opUpsert() {
	table, ok := h.writeTable()
	if !ok {
		return
	}
	e := h.randomEntity(table)
	mode := h.randomMode()
	h.begin("upsert", "%s %s %s", table, mode, Describe(e))
	h.write(table, e, func(ee *ts.Entity) error { return h.table(table).Upsert(h.ctx, ee, mode) },
		func() (ts.ETag, error) { return h.m.Upsert(table, e, mode) })
}

func (h *harness) opDelete() {
	table, ok := h.writeTable()
	if !ok {
		return
	}
	pk, rk := h.randomKey(table)
	id := entityID{strings.ToLower(table), pk, rk}
	engineETag, modelETag, kind := h.pickIfMatch(id)
	if h.rng.Intn(40) == 0 {
		engineETag, modelETag, kind = "", "", "empty"
	}
	h.begin("delete", "%s (%q,%q) if-match %s (%s)", table, pk, rk, engineETag, kind)
	gotErr := h.table(table).Delete(h.ctx, pk, rk, engineETag)
	wantErr := h.m.Delete(table, pk, rk, modelETag)
	h.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		h.forget(id)
	}
}

// opCheckEntity reads one entity on both sides, to learn the engine ETags
// of versions written by transactions and to catch stray writes.
func (h *harness) opCheckEntity() {
	table := h.existingTable()
	if table == "" {
		return
	}
	keys := h.m.Keys(table)
	if len(keys) == 0 {
		return
	}
	k := keys[h.rng.Intn(len(keys))]
	h.begin("check", "%s (%q,%q)", table, k.PK, k.RK)
	h.checkKey(table, k.PK, k.RK)
}

// checkKey compares one key on both sides, present or absent.
func (h *harness) checkKey(table, pk, rk string) {
	h.t.Helper()
	defer func(kind string) { h.kind = kind }(h.kind)
	h.kind = "readback"
	got, gotErr := h.db.Table(table).Get(h.ctx, pk, rk, nil)
	want, wantErr := h.m.Get(table, pk, rk, nil)
	h.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		h.sameEntity(table, got, want)
	}
}

// invalidEntity returns an entity with exactly one problem and the code
// the problem must produce.
//
// If pk is not "", the entity has that PartitionKey and the problem is
// elsewhere (a transaction reports a different partition first).
func (h *harness) invalidEntity(table, pk string) (*ts.Entity, ts.Code) {
	e := h.randomEntity(table)
	if pk != "" {
		e.PartitionKey = pk
	}
	switch h.rng.Intn(17) {
	case 13:
		e.RowKey = "r\xffx"
		return e, ts.CodeOutOfRangeInput
	case 14:
		e.Properties["S"] = "bad\xc3"
		return e, ts.CodeInvalidInput
	case 15:
		e.Properties["N\xff"] = int32(1)
		return e, ts.CodePropertyNameInvalid
	case 16:
		e.Properties[h.pick([]string{"PartitionKey", "RowKey", "Timestamp"})] = "x"
		return e, ts.CodeInvalidInput
	case 0:
		bad := "bad" + string("/\\#?\t\n\x00\x1f\x7f"[h.rng.Intn(9)]) + "key"
		if pk == "" && h.rng.Intn(2) == 0 {
			e.PartitionKey = bad
		} else {
			e.RowKey = bad
		}
		return e, ts.CodeOutOfRangeInput
	case 1:
		e.RowKey = "r\u0085"
		return e, ts.CodeOutOfRangeInput
	case 2:
		if pk == "" && h.rng.Intn(2) == 0 {
			e.PartitionKey = ""
		} else {
			e.RowKey = ""
		}
		return e, ts.CodePropertiesNeedValue
	case 3:
		e.RowKey = strings.Repeat("k", 1025)
		return e, ts.CodeKeyValueTooLarge
	case 4:
		e.Properties = map[string]any{}
		for i := 0; i < 253; i++ {
			e.Properties[fmt.Sprintf("P%d", i)] = int32(i)
		}
		return e, ts.CodeTooManyProperties
	case 5:
		e.Properties[h.pick([]string{"1abc", "a-b", "has space", "x.y"})] = int32(1)
		return e, ts.CodePropertyNameInvalid
	case 6:
		e.Properties["N"+strings.Repeat("n", 255)] = int32(1)
		return e, ts.CodePropertyNameTooLong
	case 7:
		e.Properties["Bad"] = []any{new(int), complex(1, 0), []int{7}, float32(1), struct{}{}, []string{"a"}, map[string]int{}}[h.rng.Intn(7)]
		return e, ts.CodeInvalidValueType
	case 8:
		e.Properties["Long"] = strings.Repeat("s", 40_000)
		return e, ts.CodePropertyValueTooLarge
	case 9:
		e.Properties["Long"] = make([]byte, 70_000)
		return e, ts.CodePropertyValueTooLarge
	case 10:
		e.Properties["Old"] = time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC)
		return e, ts.CodeOutOfRangeInput
	case 11:
		e.Properties = map[string]any{}
		for i := 0; i < 20; i++ {
			e.Properties[fmt.Sprintf("Chunk%d", i)] = make([]byte, 60_000)
		}
		return e, ts.CodeEntityTooLarge
	default:
		e.Properties["Old"] = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
		return e, ts.CodeOutOfRangeInput
	}
}

func (h *harness) opInvalidEntity() {
	table, ok := h.writeTable()
	if !ok {
		return
	}
	e, code := h.invalidEntity(table, "")
	ee := copyEntity(e)
	var gotErr, wantErr error
	switch h.rng.Intn(3) {
	case 0:
		h.begin("insert-invalid", "%s %s want %s", table, Describe(e), code)
		gotErr = h.table(table).Insert(h.ctx, ee)
		_, wantErr = h.m.Insert(table, e)
	case 1:
		mode := h.randomMode()
		h.begin("upsert-invalid", "%s %s %s want %s", table, mode, Describe(e), code)
		gotErr = h.table(table).Upsert(h.ctx, ee, mode)
		_, wantErr = h.m.Upsert(table, e, mode)
	default:
		mode := h.randomMode()
		h.begin("update-invalid", "%s %s %s want %s", table, mode, Describe(e), code)
		gotErr = h.table(table).Update(h.ctx, ee, mode, ts.ETagAny)
		_, wantErr = h.m.Update(table, e, mode, ts.ETagAny)
	}
	// The model's prediction is checked too: it must agree with the code
	// the input was built to produce.
	var we *model.Error
	if !errors.As(wantErr, &we) || we.Code != code {
		h.failf("model gave %v for an input built to fail with %s", wantErr, code)
	}
	h.sameError(gotErr, wantErr, false)
	// The entity on that key, if any, is untouched.
	if checkKeyErr(e) == nil {
		h.checkKey(table, e.PartitionKey, e.RowKey)
	}
}

// checkKeyErr reports whether both keys are well formed, so a Get on them
// has a predictable answer.
func checkKeyErr(e *ts.Entity) error {
	for _, k := range []string{e.PartitionKey, e.RowKey} {
		if k == "" || len(k) > 1024 || strings.ContainsAny(k, "/\\#?\u0085") || !utf8.ValidString(k) {
			return errors.New("bad key")
		}
		for _, r := range k {
			if r < 0x20 || r == 0x7f {
				return errors.New("bad key")
			}
		}
	}
	return nil
}

// missingTableName is never created.
const missingTableName = "NoSuchTable"

func (h *harness) opMissingTable() {
	name := h.randomCase(missingTableName)
	tb := h.table(name)
	e := h.randomEntity(name)
	var gotErr, wantErr error
	switch h.rng.Intn(6) {
	case 0:
		h.begin("insert-missing-table", "%s", name)
		gotErr = tb.Insert(h.ctx, copyEntity(e))
		_, wantErr = h.m.Insert(name, e)
	case 1:
		h.begin("get-missing-table", "%s", name)
		_, gotErr = tb.Get(h.ctx, e.PartitionKey, e.RowKey, nil)
		_, wantErr = h.m.Get(name, e.PartitionKey, e.RowKey, nil)
	case 2:
		h.begin("update-missing-table", "%s", name)
		gotErr = tb.Update(h.ctx, copyEntity(e), ts.Merge, ts.ETagAny)
		_, wantErr = h.m.Update(name, e, ts.Merge, ts.ETagAny)
	case 3:
		h.begin("delete-missing-table", "%s", name)
		gotErr = tb.Delete(h.ctx, e.PartitionKey, e.RowKey, ts.ETagAny)
		wantErr = h.m.Delete(name, e.PartitionKey, e.RowKey, ts.ETagAny)
	case 4:
		h.begin("tx-missing-table", "%s", name)
		a := []ts.TransactionAction{{Type: ts.ActionUpsertMerge, Entity: e}}
		gotErr = tb.SubmitTransaction(h.ctx, []ts.TransactionAction{{Type: ts.ActionUpsertMerge, Entity: copyEntity(e)}})
		_, wantErr = h.m.SubmitTransaction(name, a)
		h.sameError(gotErr, wantErr, true)
		return
	default:
		h.begin("query-missing-table", "%s", name)
		_, gotErr = tb.QueryPage(h.ctx, ts.Query{})
		_, wantErr = h.queryModel(name, ts.Query{})
	}
	h.sameError(gotErr, wantErr, false)
}

// ---- tables ----

func (h *harness) createTable(name string) {
	h.t.Helper()
	tb, gotErr := h.db.CreateTable(h.ctx, name)
	wantErr := h.m.CreateTable(name)
	h.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		if tb == nil || !strings.EqualFold(tb.Name(), name) {
			h.failf("CreateTable returned handle %v", tb)
		}
		h.forgetTable(name)
	}
}

func (h *harness) opCreateTable() {
	name := h.tableName()
	h.begin("create-table", "%s", name)
	h.createTable(name)
}

func (h *harness) opInvalidTableName() {
	name := h.pick([]string{"ab", strings.Repeat("a", 64), "a-b-c", "9abc", "ab_c", "tables", "tab le"})
	h.begin("create-table-invalid", "%q", name)
	h.createTable(name)
}

func (h *harness) opDeleteTable() {
	name := h.tableName()
	h.begin("delete-table", "%s", name)
	gotErr := h.db.DeleteTable(h.ctx, name)
	wantErr := h.m.DeleteTable(name)
	h.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		h.forgetTable(name)
	}
}

func (h *harness) opListTables() {
	prefix := h.pick([]string{"", "a", "AL", "b", "g", "GAMMA7", "del", "x", "n"})
	top := []int{0, 1, 2, 3, 1000, -1, 1001}[h.rng.Intn(7)]
	h.begin("list-tables", "prefix %q top %d", prefix, top)
	want, wantErr := h.m.ListTables(prefix, top)
	got, gotErr := h.listAllTables(prefix, top)
	h.sameError(gotErr, wantErr, false)
	if wantErr == nil && strings.Join(got, ",") != strings.Join(want, ",") {
		h.failf("tables: engine %q, model %q", got, want)
	}
}

// listAllTables pages through ListTables, checking each page's size.
func (h *harness) listAllTables(prefix string, top int) ([]string, error) {
	var names []string
	cont := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			h.failf("ListTables does not end")
		}
		p, err := h.db.ListTables(h.ctx, &ts.ListTablesOptions{Prefix: prefix, Top: top, Continuation: cont})
		if err != nil {
			return nil, err
		}
		if limit := top; (limit > 0 && len(p.Names) > limit) || len(p.Names) > 1000 {
			h.failf("ListTables page of %d names for top %d", len(p.Names), top)
		}
		names = append(names, p.Names...)
		if p.Continuation == "" {
			return names, nil
		}
		cont = p.Continuation
	}
}

// ---- transactions ----

func (h *harness) randomActionType() ts.ActionType {
	return ts.ActionType(1 + h.rng.Intn(6))
}

// actionTypeFor picks an action that usually suits the entity's current
// existence (so that most transactions commit), and now and then any
// action.
func (h *harness) actionTypeFor(table string, e *ts.Entity) ts.ActionType {
	if h.rng.Intn(8) == 0 {
		return h.randomActionType()
	}
	if _, err := h.m.Get(table, e.PartitionKey, e.RowKey, nil); err == nil {
		return []ts.ActionType{ts.ActionUpdateMerge, ts.ActionUpdateReplace, ts.ActionUpsertMerge, ts.ActionUpsertReplace, ts.ActionDelete}[h.rng.Intn(5)]
	}
	return []ts.ActionType{ts.ActionInsert, ts.ActionUpsertMerge, ts.ActionUpsertReplace}[h.rng.Intn(3)]
}

// opTransaction submits a random transaction on one partition: usually
// valid in form (it may still fail a precondition), sometimes with one
// fault in form, which the model must predict.
func (h *harness) opTransaction() {
	table, ok := h.writeTable()
	if !ok {
		return
	}
	pk := h.pick(pkPool)
	if keys := h.m.Keys(table); len(keys) > 0 && h.rng.Intn(2) == 0 {
		pk = keys[h.rng.Intn(len(keys))].PK
	}
	rks := append([]string{}, rkPool...)
	n := 1 + h.rng.Intn(6)
	big := h.rng.Intn(40) == 0
	if big {
		n = 100
		for i := 0; i < 100; i++ {
			rks = append(rks, fmt.Sprintf("t%03d", i))
		}
		if h.rng.Intn(3) == 0 {
			n = 101
		}
	}
	h.rng.Shuffle(len(rks), func(i, j int) { rks[i], rks[j] = rks[j], rks[i] })
	fault := "none"
	if !big && h.rng.Intn(5) == 0 {
		fault = h.pick([]string{"partition", "duplicate", "entity", "ifmatch-on-insert", "no-ifmatch", "empty", "payload"})
	}
	if fault == "empty" {
		n = 0
	}
	var actions []ts.TransactionAction
	for i := 0; i < n; i++ {
		e := &ts.Entity{PartitionKey: pk, RowKey: rks[i%len(rks)], Properties: h.randomProps()}
		a := ts.TransactionAction{Type: h.actionTypeFor(table, e), Entity: e}
		if big || fault != "none" {
			// Faults in form are checked alone: no other action may fail.
			a.Type = ts.ActionUpsertMerge + ts.ActionType(h.rng.Intn(2))
		}
		actions = append(actions, a)
	}
	if fault != "none" && fault != "empty" && n < 2 {
		n = 2
		actions = append(actions, ts.TransactionAction{Type: ts.ActionUpsertReplace, Entity: &ts.Entity{PartitionKey: pk, RowKey: rks[1], Properties: h.randomProps()}})
	}
	if fault == "payload" {
		// Six entities of about 900 KB: the fifth passes 4 MiB.
		for len(actions) < 6 {
			actions = append(actions, ts.TransactionAction{Type: ts.ActionUpsertMerge, Entity: &ts.Entity{PartitionKey: pk, RowKey: rks[len(actions)]}})
		}
		n = len(actions)
		blob := make([]byte, 60_000)
		for i := range actions {
			actions[i].Entity.Properties = map[string]any{}
			for j := 0; j < 15; j++ {
				actions[i].Entity.Properties[fmt.Sprintf("Chunk%d", j)] = blob
			}
		}
	}
	modelIfMatch := make([]ts.ETag, n)
	for i := range actions {
		a := &actions[i]
		switch a.Type {
		case ts.ActionUpdateMerge, ts.ActionUpdateReplace, ts.ActionDelete:
			id := entityID{strings.ToLower(table), pk, a.Entity.RowKey}
			a.IfMatch, modelIfMatch[i], _ = h.pickIfMatch(id)
		}
	}
	at := 1 + h.rng.Intn(max(n-1, 1))
	if at >= n {
		at = n - 1
	}
	switch fault {
	case "partition":
		actions[at].Entity.PartitionKey = pk + "x"
	case "duplicate":
		actions[at].Entity.RowKey = actions[h.rng.Intn(at)].Entity.RowKey
	case "entity":
		bad, _ := h.invalidEntity(table, pk)
		if checkKeyErr(bad) == nil {
			// The fault is in the properties: keep the action's key.
			bad.RowKey = actions[at].Entity.RowKey
		}
		actions[at].Entity = bad
	case "ifmatch-on-insert":
		actions[at].Type = ts.ActionInsert
		actions[at].IfMatch = ts.ETagAny
		modelIfMatch[at] = ts.ETagAny
		// Insert fails its precondition if the entity exists; that
		// is checked after form, so the fault in form still wins.
	case "no-ifmatch":
		actions[at].Type = ts.ActionUpdateMerge
		actions[at].IfMatch = ""
		modelIfMatch[at] = ""
	}
	engineActions := make([]ts.TransactionAction, len(actions))
	modelActions := make([]ts.TransactionAction, len(actions))
	var desc []string
	for i, a := range actions {
		engineActions[i] = ts.TransactionAction{Type: a.Type, Entity: copyEntity(a.Entity), IfMatch: a.IfMatch}
		modelActions[i] = ts.TransactionAction{Type: a.Type, Entity: copyEntity(a.Entity), IfMatch: modelIfMatch[i]}
		if i < 12 {
			desc = append(desc, fmt.Sprintf("%d:%d %s if-match %q", i, a.Type, Describe(a.Entity), a.IfMatch))
		}
	}
	h.begin("tx", "%s fault=%s n=%d [%s]", table, fault, len(actions), strings.Join(desc, "; "))
	// Some actions go as structs (the typed form), which must behave as
	// the entity would.
	submitted := make([]ts.TransactionAction, len(engineActions))
	structs := make([]reflect.Value, len(engineActions))
	for i, a := range engineActions {
		submitted[i] = a
		if h.rng.Intn(3) == 0 {
			if v, ok := structOf(a.Entity); ok {
				submitted[i].Entity, submitted[i].Struct, structs[i] = nil, v.Interface(), v
			}
		}
	}
	gotErr := h.table(table).SubmitTransaction(h.ctx, submitted)
	for i, v := range structs {
		if v.IsValid() && engineActions[i].Type != ts.ActionDelete {
			e := engineActions[i].Entity
			e.Timestamp = v.Elem().FieldByName("Timestamp").Interface().(time.Time)
			e.ETag = v.Elem().FieldByName("ETag").Interface().(ts.ETag)
		}
	}
	etags, wantErr := h.m.SubmitTransaction(table, modelActions)
	if fault != "none" && wantErr == nil {
		h.failf("model accepted a transaction with fault %s", fault)
	}
	h.sameError(gotErr, wantErr, fault != "empty" && n <= 100)
	if wantErr == nil {
		for i, a := range engineActions {
			id := entityID{strings.ToLower(table), a.Entity.PartitionKey, a.Entity.RowKey}
			if a.Type == ts.ActionDelete {
				h.forget(id)
			} else if a.Entity.ETag != "" {
				h.observe(id, a.Entity.ETag, a.Entity.Timestamp, etags[i], true)
			}
		}
	}
	// All or nothing: every key the transaction named is as the model says.
	for i, a := range actions {
		if i >= 10 && !big {
			break
		}
		if checkKeyErr(a.Entity) == nil {
			h.checkKey(table, a.Entity.PartitionKey, a.Entity.RowKey)
		}
	}
}

// ---- queries ----

// literal is a filter literal of some type with its text.
func (h *harness) literal() string {
	switch h.rng.Intn(8) {
	case 0:
		return "'" + strings.ReplaceAll(h.pick(literalStrings), "'", "''") + "'"
	case 1:
		return strconv.Itoa(int(int32Pool[h.rng.Intn(len(int32Pool))]))
	case 2:
		return strconv.FormatInt(int64Pool[h.rng.Intn(len(int64Pool))], 10) + "L"
	case 3:
		return h.pick([]string{"-1.5", "0.0", "0.5", "1.0", "2.0", "3.25"})
	case 4:
		return h.pick([]string{"true", "false"})
	case 5:
		tm := timePool[h.rng.Intn(len(timePool))]
		return "datetime'" + tm.Format("2006-01-02T15:04:05.0000000Z") + "'"
	case 6:
		return "guid'" + guidPool[h.rng.Intn(len(guidPool))].String() + "'"
	default:
		return "X'" + fmt.Sprintf("%X", binaryPool[h.rng.Intn(len(binaryPool))]) + "'"
	}
}

var compareOps = []string{"eq", "ne", "gt", "ge", "lt", "le"}

// randomFilter returns a filter of the given nesting depth over keys and
// user properties; keys get string literals most of the time so the
// planner's ranges are exercised.
func (h *harness) randomFilter(depth int) string {
	if depth <= 0 || h.rng.Intn(3) == 0 {
		leaves := 10
		if h.cfg.Quirks.PropertyFilters {
			leaves = 4 // keys, and Timestamp below
		}
		switch r := h.rng.Intn(leaves); {
		case r == 3 && h.cfg.Quirks.PropertyFilters && !h.cfg.Quirks.TimestampFilters:
			return fmt.Sprintf("Timestamp %s datetime'%s'", h.pick(compareOps), h.someTimestamp().Format("2006-01-02T15:04:05.0000000Z"))
		case r == 0 || r == 1:
			return fmt.Sprintf("PartitionKey %s '%s'", h.pick(compareOps), strings.ReplaceAll(h.pick(pkPool), "'", "''"))
		case r == 2 || r == 3:
			return fmt.Sprintf("RowKey %s '%s'", h.pick(compareOps), strings.ReplaceAll(h.pick(rkPool), "'", "''"))
		case r == 4:
			if h.rng.Intn(2) == 0 && !h.cfg.Quirks.TimestampFilters {
				return fmt.Sprintf("Timestamp %s datetime'%s'", h.pick(compareOps), h.someTimestamp().Format("2006-01-02T15:04:05.0000000Z"))
			}
			return h.pick([]string{"Flag", "A", "B"})
		case r == 5:
			return fmt.Sprintf("%s %s %s", h.literal(), h.pick(compareOps), h.pick(propPool))
		default:
			return fmt.Sprintf("%s %s %s", h.pick(propPool), h.pick(compareOps), h.literal())
		}
	}
	switch h.rng.Intn(4) {
	case 0:
		return "not (" + h.randomFilter(depth-1) + ")"
	case 1:
		return h.randomFilter(depth-1) + " or " + h.randomFilter(depth-1)
	default:
		return "(" + h.randomFilter(depth-1) + ") and (" + h.randomFilter(depth-1) + ")"
	}
}

// someTimestamp returns the Timestamp of some version the engine wrote, or
// the test clock's start. It picks from the sorted stamps, so the choice
// and the random numbers it draws depend on the seed alone, never on map
// order.
func (h *harness) someTimestamp() time.Time {
	var stamps []time.Time
	for _, v := range h.vers {
		for _, stamp := range v.stamp {
			stamps = append(stamps, stamp)
		}
	}
	if len(stamps) == 0 || h.rng.Intn(4) == 0 {
		return time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)
	}
	slices.SortFunc(stamps, time.Time.Compare)
	return stamps[h.rng.Intn(len(stamps))]
}

// queryFilter returns a random filter: mostly well formed, shaped like the
// queries the planner turns into points, ranges and partition scans.
func (h *harness) queryFilter() string {
	pk := strings.ReplaceAll(h.pick(pkPool), "'", "''")
	rk := strings.ReplaceAll(h.pick(rkPool), "'", "''")
	switch h.rng.Intn(12) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("PartitionKey eq '%s' and RowKey eq '%s'", pk, rk)
	case 2:
		return fmt.Sprintf("PartitionKey eq '%s' and RowKey %s '%s'", pk, h.pick(compareOps), rk)
	case 3:
		return fmt.Sprintf("PartitionKey eq '%s' and (%s)", pk, h.randomFilter(2))
	case 4:
		return fmt.Sprintf("(PartitionKey eq '%s' and RowKey eq '%s') or (PartitionKey eq '%s' and RowKey ge '%s')",
			pk, rk, strings.ReplaceAll(h.pick(pkPool), "'", "''"), strings.ReplaceAll(h.pick(rkPool), "'", "''"))
	case 5:
		return fmt.Sprintf("PartitionKey ge '%s' and PartitionKey lt '%s'", pk, strings.ReplaceAll(h.pick(pkPool), "'", "''"))
	case 6:
		return h.pick([]string{"A eq", "A eq B", "1 eq 2", "(A eq 1", "A eq 'x", "A eq 99999999999", "A eq null", "Count gt 1 and"})
	default:
		return h.randomFilter(3)
	}
}

// queryModel asks the model for the whole result of q.
func (h *harness) queryModel(table string, q ts.Query) ([]*ts.Entity, error) {
	return h.m.Query(table, q)
}

func (h *harness) opQuery() {
	table := h.existingTable()
	if table == "" {
		table = h.tableName()
	}
	q := ts.Query{Filter: h.queryFilter()}
	if h.rng.Intn(3) == 0 {
		q.Select = dedupe([]string{h.pick(propPool), h.pick(selectPool)})
	}
	q.Top = []int{0, 1, 2, 3, 5, 10, 1000, 1 + h.rng.Intn(20)}[h.rng.Intn(8)]
	if h.rng.Intn(50) == 0 {
		q.Top = h.pick2(-1, 1001)
	}
	iterate := h.rng.Intn(4) == 0
	q.Reverse = h.rng.Intn(4) == 0 && !h.cfg.Quirks.NoKeyspaceOps
	h.begin("query", "%s filter %q select %q top %d iterate %v reverse %v", table, q.Filter, q.Select, q.Top, iterate, q.Reverse)
	want, wantErr := h.queryModel(table, q)
	var got []*ts.Entity
	var gotErr error
	if iterate {
		got, gotErr = h.queryIter(table, q)
	} else {
		got, gotErr = h.queryPages(table, q)
	}
	h.sameError(gotErr, wantErr, false)
	if wantErr != nil {
		return
	}
	h.sameEntities(table, got, want)
	if plan, err := h.table(table).Explain(q); err != nil || plan == "" {
		h.failf("Explain of a query that ran: %q, %v", plan, err)
	}
	h.outcomes["query-rows"] += len(want)
	if len(want) > 0 {
		h.outcomes["query:nonempty"]++
	}
}

// opQueryWithWrites pages through a query and, between pages, writes
// entities at or before the last one returned. A continuation token names
// the next key to read, so those writes must not show in later pages,
// while each page must hold exactly the matches between the previous
// page's last entity and its own last entity, as the model held them just
// before the page was read.
func (h *harness) opQueryWithWrites() {
	table := h.existingTable()
	if table == "" {
		return
	}
	q := ts.Query{Filter: h.queryFilter(), Top: 1 + h.rng.Intn(4)}
	h.begin("query-writes", "%s filter %q top %d", table, q.Filter, q.Top)
	tb := h.table(table)
	var last *model.Key
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			h.failf("query does not end")
		}
		all, err := h.queryModel(table, ts.Query{Filter: q.Filter})
		var rest []*ts.Entity
		for _, e := range all {
			if last == nil || last.Less(model.Key{PK: e.PartitionKey, RK: e.RowKey}) {
				rest = append(rest, e)
			}
		}
		p, gotErr := tb.QueryPage(h.ctx, q)
		h.sameError(gotErr, err, false)
		if err != nil {
			return
		}
		h.sameTypedPage(tb, q, p)
		if len(p.Entities) > q.Top {
			h.failf("page of %d entities for top %d", len(p.Entities), q.Top)
		}
		want := rest
		if p.Continuation != "" {
			n := 0
			if len(p.Entities) > 0 {
				end := p.Entities[len(p.Entities)-1]
				endKey := model.Key{PK: end.PartitionKey, RK: end.RowKey}
				for n < len(rest) && !endKey.Less(model.Key{PK: rest[n].PartitionKey, RK: rest[n].RowKey}) {
					n++
				}
			}
			want = rest[:n]
		}
		h.sameEntities(table, p.Entities, want)
		if p.Continuation == "" {
			return
		}
		if len(p.Entities) > 0 {
			end := p.Entities[len(p.Entities)-1]
			last = &model.Key{PK: end.PartitionKey, RK: end.RowKey}
			h.writeAtOrBefore(table, *last)
		}
		q.Continuation = p.Continuation
	}
}

// writeAtOrBefore upserts or deletes, on both sides, a random entity whose
// key is at or before k.
func (h *harness) writeAtOrBefore(table string, k model.Key) {
	var keys []model.Key
	for _, key := range h.m.Keys(table) {
		if !k.Less(key) {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 || h.rng.Intn(3) == 0 {
		return
	}
	key := keys[h.rng.Intn(len(keys))]
	id := entityID{strings.ToLower(table), key.PK, key.RK}
	if h.rng.Intn(3) == 0 {
		gotErr := h.table(table).Delete(h.ctx, key.PK, key.RK, ts.ETagAny)
		wantErr := h.m.Delete(table, key.PK, key.RK, ts.ETagAny)
		h.sameError(gotErr, wantErr, false)
		h.forget(id)
		return
	}
	e := &ts.Entity{PartitionKey: key.PK, RowKey: key.RK, Properties: h.randomProps()}
	h.write(table, e, func(ee *ts.Entity) error { return h.table(table).Upsert(h.ctx, ee, ts.Replace) },
		func() (ts.ETag, error) { return h.m.Upsert(table, e, ts.Replace) })
}

func (h *harness) pick2(a, b int) int {
	if h.rng.Intn(2) == 0 {
		return a
	}
	return b
}

// sameEntities compares a query result, in order.
func (h *harness) sameEntities(table string, got, want []*ts.Entity) {
	h.t.Helper()
	for i := 0; i < len(got) || i < len(want); i++ {
		switch {
		case i >= len(got):
			h.failf("query: engine returned %d entities, model %d; first missing %s", len(got), len(want), Describe(want[i]))
		case i >= len(want):
			h.failf("query: engine returned %d entities, model %d; first extra %s", len(got), len(want), Describe(got[i]))
		}
		if got[i].PartitionKey != want[i].PartitionKey || got[i].RowKey != want[i].RowKey {
			h.failf("query result %d: engine %s, model %s", i, Describe(got[i]), Describe(want[i]))
		}
		h.sameEntity(table, got[i], want[i])
	}
}

// queryPages reads every page, checking page sizes against Top.
func (h *harness) queryPages(table string, q ts.Query) ([]*ts.Entity, error) {
	return h.pages(q, h.table(table).QueryPage)
}

// pages reads every page of q with readPage, checking page sizes against
// Top.
func (h *harness) pages(q ts.Query, readPage func(context.Context, ts.Query) (*ts.Page, error)) ([]*ts.Entity, error) {
	limit := q.Top
	if limit == 0 {
		limit = 1000
	}
	var all []*ts.Entity
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			h.failf("query does not end after %d pages", pages)
		}
		p, err := readPage(h.ctx, q)
		if err != nil {
			if pages > 0 {
				h.failf("page %d failed: %v", pages, err)
			}
			return nil, err
		}
		if len(p.Entities) > limit {
			h.failf("page of %d entities for top %d", len(p.Entities), q.Top)
		}
		all = append(all, p.Entities...)
		if p.Continuation == "" {
			return all, nil
		}
		q.Continuation = p.Continuation
	}
}

// queryIter reads the result through Table.Query.
func (h *harness) queryIter(table string, q ts.Query) ([]*ts.Entity, error) {
	var all []*ts.Entity
	for e, err := range h.table(table).Query(h.ctx, q) {
		if err != nil {
			return nil, err
		}
		all = append(all, e)
		if len(all) > 100_000 {
			h.failf("query iterator does not end")
		}
	}
	return all, nil
}

// ---- reopen and full checks ----

// reopen closes the store, checks the closed handle refuses work, opens
// it again and checks every table against the model.
func (h *harness) reopen() {
	h.begin("reopen", "%s", h.cfg.Dir)
	if h.cfg.Dir != "" {
		h.t.Logf("reopen at op %d: %s", h.op, h.storeFiles())
	}
	old := h.db
	tb := old.Table(tableBases[0])
	if err := old.Close(); err != nil {
		h.failf("close: %v", err)
	}
	h.db = nil
	if _, err := tb.Get(h.ctx, "p", "r", nil); !errors.Is(err, ts.ErrClosed) {
		h.failf("Get after Close: %v, want ErrClosed", err)
	}
	h.open()
	h.verifyAll()
}

// storeFiles describes the store's files: how many sstables there are and
// the highest file number, which counts flushes and compactions.
func (h *harness) storeFiles() string {
	ssts, _ := filepath.Glob(filepath.Join(h.cfg.Dir, "*.sst"))
	highest := 0
	for _, f := range ssts {
		n, _ := strconv.Atoi(strings.TrimSuffix(filepath.Base(f), ".sst"))
		highest = max(highest, n)
	}
	return fmt.Sprintf("%d sstables, highest file number %d", len(ssts), highest)
}

// verifyAll compares the table listing and every table's full contents.
func (h *harness) verifyAll() {
	h.t.Helper()
	got, err := h.listAllTables("", 0)
	if err != nil {
		h.failf("list tables: %v", err)
	}
	want := h.m.TableNames()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		h.failf("tables: engine %q, model %q", got, want)
	}
	for _, name := range want {
		es, err := h.queryPages(name, ts.Query{})
		if err != nil {
			h.failf("scan %s: %v", name, err)
		}
		ms, err := h.queryModel(name, ts.Query{})
		if err != nil {
			h.failf("model scan %s: %v", name, err)
		}
		h.sameEntities(name, es, ms)
	}
}

// sameTypedPage reads page q again with QueryPageAs and checks it against
// the map page p: up to the first entity UnmarshalEntity rejects, the same
// values, then that entity's error.
func (h *harness) sameTypedPage(tb *ts.Table, q ts.Query, p *ts.Page) {
	h.t.Helper()
	tp, err := ts.QueryPageAs[typedRow](h.ctx, tb, q)
	for i, e := range p.Entities {
		var want typedRow
		if werr := ts.UnmarshalEntity(e, &want); werr != nil {
			if fmt.Sprint(werr) != fmt.Sprint(err) {
				h.failf("QueryPageAs: error %v, the map path's %v", err, werr)
			}
			return
		}
		if err != nil {
			continue // the typed page failed at a later entity
		}
		if i >= len(tp.Entities) || fmt.Sprintf("%+v", want) != fmt.Sprintf("%+v", tp.Entities[i]) {
			h.failf("QueryPageAs: entity %d differs from the map path's %+v", i, want)
			return
		}
	}
	if err != nil {
		h.failf("QueryPageAs: %v, where the map path succeeds", err)
		return
	}
	if len(tp.Entities) != len(p.Entities) || tp.Continuation != p.Continuation {
		h.failf("QueryPageAs: %d entities and continuation %q, the map path %d and %q",
			len(tp.Entities), tp.Continuation, len(p.Entities), p.Continuation)
	}
}

// structOf returns a pointer to a struct holding e: its keys, Timestamp
// and ETag fields, and one field per property tagged with its name, built
// with reflect.StructOf. ok is false when a struct cannot carry e as the
// map does: a name that is not a plain identifier or names a system
// field, a value of another Go type, a nil value or byte slice (a struct
// drops them, a map keeps an empty binary), or a time MarshalEntity
// rejects before validation.
func structOf(e *ts.Entity) (reflect.Value, bool) {
	fields := []reflect.StructField{
		{Name: "PartitionKey", Type: reflect.TypeFor[string]()},
		{Name: "RowKey", Type: reflect.TypeFor[string]()},
		{Name: "Timestamp", Type: reflect.TypeFor[time.Time]()},
		{Name: "ETag", Type: reflect.TypeFor[ts.ETag]()},
	}
	names := make([]string, 0, len(e.Properties))
	for name := range e.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, name := range names {
		if !plainIdentifier(name) || name == "PartitionKey" || name == "RowKey" || name == "Timestamp" || name == "ETag" {
			return reflect.Value{}, false
		}
		switch v := e.Properties[name].(type) {
		case string, int32, int64, float64, bool, ts.GUID:
		case []byte:
			if v == nil {
				return reflect.Value{}, false
			}
		case time.Time:
			if y := v.UTC().Year(); y < 1601 || y > 9999 {
				return reflect.Value{}, false
			}
		default:
			return reflect.Value{}, false
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("P%d", i),
			Type: reflect.TypeOf(e.Properties[name]), Tag: reflect.StructTag(`table:"` + name + `"`)})
	}
	v := reflect.New(reflect.StructOf(fields))
	v.Elem().Field(0).SetString(e.PartitionKey)
	v.Elem().Field(1).SetString(e.RowKey)
	for i, name := range names {
		v.Elem().Field(4 + i).Set(reflect.ValueOf(e.Properties[name]))
	}
	return v, true
}

// plainIdentifier reports whether name is an ASCII letter or '_' followed
// by ASCII letters, digits and '_'.
func plainIdentifier(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return name != ""
}
