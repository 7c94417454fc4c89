package modeltest

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"time"
	"unicode/utf8"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// Generate returns the workload cfg describes: the creation of two
// tables, then cfg.Ops random operations, with cfg.Reopens reopens spread
// evenly among them. It reads cfg.Seed, Ops, Reopens, BigValue and Quirks
// and nothing else (no store, no clock, no map order): the same Config
// gives the same operations, byte for byte.
//
// The generator runs each operation on a model of its own, so that it
// writes to tables that exist, reads keys that are there and names
// versions an entity has had; the choices are only ever drawn from the
// seeded source, over sorted names and keys.
func Generate(cfg Config) []Op {
	return newGenerator(cfg).generate()
}

// generator makes a workload from a seed.
type generator struct {
	cfg Config
	rng *rand.Rand
	ref reference
	ops []Op
}

func newGenerator(cfg Config) *generator {
	return &generator{cfg: cfg, rng: rand.New(rand.NewSource(cfg.Seed)), ref: newReference()}
}

func (g *generator) generate() []Op {
	for _, name := range tableBases[:2] {
		g.emit(Op{kind: kindCreateTable, table: name})
	}
	reopens := map[int]int{}
	for i := 1; i <= g.cfg.Reopens; i++ {
		reopens[i*g.cfg.Ops/(g.cfg.Reopens+1)]++
	}
	for i := 0; i < g.cfg.Ops; i++ {
		for range reopens[i] {
			g.emit(Op{kind: kindReopen})
		}
		// A step emits one operation or, when the state does not suit
		// it (no table to read), none; then another step is drawn.
		for n := len(g.ops); len(g.ops) == n; {
			g.step()
		}
	}
	return g.ops
}

// emit appends op to the workload and runs it on the generator's model.
func (g *generator) emit(op Op) {
	g.ops = append(g.ops, op)
	g.apply(&op)
}

// apply runs op's writes on the generator's model, as the runner runs
// them on its own (see runner.exec): reads change nothing.
func (g *generator) apply(op *Op) {
	r := &g.ref
	wrote := func(e *ts.Entity, etag ts.ETag, err error) {
		if err == nil {
			r.wrote(idOf(op.table, e.PartitionKey, e.RowKey), etag)
		}
	}
	switch op.kind {
	case kindCreateTable:
		if r.m.CreateTable(op.table) == nil {
			r.forgetTable(op.table)
		}
	case kindDeleteTable:
		if r.m.DeleteTable(op.table) == nil {
			r.forgetTable(op.table)
		}
	case kindInsert, kindPartitionInsert:
		etag, err := r.m.Insert(op.table, copyEntity(op.entity))
		wrote(op.entity, etag, err)
	case kindUpsert, kindPartitionUpsert:
		etag, err := r.m.Upsert(op.table, copyEntity(op.entity), op.mode)
		wrote(op.entity, etag, err)
	case kindUpdate, kindPartitionUpdate:
		ifm, _ := r.modelETag(idOf(op.table, op.entity.PartitionKey, op.entity.RowKey), op.ifMatch)
		etag, err := r.m.Update(op.table, copyEntity(op.entity), op.mode, ifm)
		wrote(op.entity, etag, err)
	case kindDelete:
		id := idOf(op.table, op.pk, op.rk)
		ifm, _ := r.modelETag(id, op.ifMatch)
		if r.m.Delete(op.table, op.pk, op.rk, ifm) == nil {
			r.forget(id)
		}
	case kindTransaction:
		etags, err := r.m.SubmitTransaction(op.table, r.modelActions(op.table, op.actions))
		if err == nil {
			r.committed(op.table, op.actions, etags)
		}
	case kindQueryWrites:
		for _, w := range op.writes {
			e := w.entity
			if w.typ == ts.ActionDelete {
				if r.m.Delete(op.table, e.PartitionKey, e.RowKey, ts.ETagAny) == nil {
					r.forget(idOf(op.table, e.PartitionKey, e.RowKey))
				}
				continue
			}
			etag, err := r.m.Upsert(op.table, copyEntity(e), ts.Replace)
			wrote(e, etag, err)
		}
	case kindPartitionDelete:
		if r.m.DeleteRange(op.table, op.pk, op.from, op.to) == nil {
			r.forgetRange(op.table, op.pk, op.from, op.to)
		}
	case kindCreateIndex:
		_ = r.m.CreateIndex(op.table, op.indexSpec())
	case kindDropIndex:
		_ = r.m.DropIndex(op.table, op.index)
	case kindSetTTL:
		_ = r.m.SetTTL(op.table, ts.TTL{Default: op.dur, Property: op.prop})
	case kindAdvance:
		r.m.Advance(op.dur)
	case kindEnableFeed:
		_ = r.m.EnableChangeFeed(op.table, op.images)
	case kindDisableFeed:
		_ = r.m.DisableChangeFeed(op.table)
	}
}

// modelActions returns the actions of a transaction for the generator's
// model: copies of the entities, with If-Match resolved in model terms.
// (The runner resolves each If-Match for both sides at once: see
// runner.ifMatch.)
func (r *reference) modelActions(table string, actions []action) []ts.TransactionAction {
	out := make([]ts.TransactionAction, len(actions))
	for i, a := range actions {
		etag, _ := r.modelETag(idOf(table, a.entity.PartitionKey, a.entity.RowKey), a.ifMatch)
		out[i] = ts.TransactionAction{Type: a.typ, Entity: copyEntity(a.entity), IfMatch: etag}
	}
	return out
}

// step emits one random operation, or none.
func (g *generator) step() {
	switch r := g.rng.Intn(1200); {
	case r >= 1100:
		g.extensionOp()
	case r >= 1000:
		g.partitionOp()
	case r < 130:
		g.insert()
	case r < 230:
		g.get()
	case r < 350:
		g.update()
	case r < 460:
		g.upsert()
	case r < 520:
		g.delete()
	case r < 680:
		g.transaction()
	case r < 760:
		g.query()
	case r < 780:
		g.queryWrites()
	case r < 850:
		g.invalidWrite()
	case r < 880:
		g.missingTable()
	case r < 900:
		g.listTables()
	case r < 925:
		g.createTable()
	case r < 935:
		g.invalidTableName()
	case r < 940:
		g.deleteTable()
	default:
		g.check()
	}
}

// ---- pools ----

// tableBases are the table names the workload uses; it addresses them in
// random letter case.
var tableBases = []string{"alpha", "Beta", "gamma7", "DeltaTable"}

// missingTableName is never created.
const missingTableName = "NoSuchTable"

var (
	pkPool   = []string{"", "p0", "p1", "p2", "p3", "P1", "pé", "p q", "p'x", "日本", "p1a"}
	rkPool   = []string{"", "r00", "r01", "r02", "r03", "r04", "r05", "r06", "r07", "r08", "r09", "r10", "r11", "R00", "r'1", "r 2", "ü", "r1", "r100"}
	propPool = []string{"A", "B", "C", "Name", "Count", "Flag", "When", "Id", "Blob", "Price", "_x", "Big"}
	// selectPool adds a name no entity has, and the system properties.
	selectPool = []string{"A", "B", "C", "Name", "Count", "Flag", "When", "Id", "Blob", "Price", "_x", "Big", "Missing", "PartitionKey", "RowKey", "Timestamp"}
	// literalStrings adds strings equal to keys.
	literalStrings = []string{"", "a", "b", "abc", "B", "zz", "O'Neil", "héllo", "日本語", "a b", "p1", "p2", "r05", "r1", "P1"}

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

// ---- random inputs ----

func (g *generator) pick(pool []string) string { return pool[g.rng.Intn(len(pool))] }

func (g *generator) pick2(a, b int) int {
	if g.rng.Intn(2) == 0 {
		return a
	}
	return b
}

// kept decides whether an operation addresses its table through the
// handle kept from an earlier one, which must reach the current table of
// that name.
func (g *generator) kept() bool { return g.rng.Intn(2) == 0 }

// randomCase returns name with each letter's case flipped at random
// (unchanged under Quirks.TableNameCase).
func (g *generator) randomCase(name string) string {
	if g.cfg.Quirks.TableNameCase {
		return name
	}
	b := []byte(name)
	for i, c := range b {
		if g.rng.Intn(3) == 0 {
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
func (g *generator) tableName() string { return g.randomCase(g.pick(tableBases)) }

// existingTable returns the name of an existing table in random case, or
// "" if there is none.
func (g *generator) existingTable() string {
	names := g.ref.m.TableNames()
	if len(names) == 0 {
		return ""
	}
	return g.randomCase(names[g.rng.Intn(len(names))])
}

// writeTable returns an existing table to write to; when there is none it
// emits the creation of one instead and returns false.
func (g *generator) writeTable() (string, bool) {
	table := g.existingTable()
	if table == "" {
		g.createTable()
		return "", false
	}
	return table, true
}

// randomValue returns a value of a random EDM type from small domains, so
// that filters match often; nil now and then.
func (g *generator) randomValue() any {
	switch g.rng.Intn(9) {
	case 0:
		if g.cfg.BigValue && g.rng.Intn(8) == 0 {
			return strings.Repeat(string(rune('a'+g.rng.Intn(26))), 500+g.rng.Intn(3000))
		}
		return g.pick(stringPool)
	case 1:
		return int32Pool[g.rng.Intn(len(int32Pool))]
	case 2:
		return int64Pool[g.rng.Intn(len(int64Pool))]
	case 3:
		f := floatPool[g.rng.Intn(len(floatPool))]
		if f == 0 && g.cfg.Quirks.NegativeZero {
			return 0.0
		}
		return f
	case 4:
		return g.rng.Intn(2) == 0
	case 5:
		tm := timePool[g.rng.Intn(len(timePool))]
		if g.rng.Intn(2) == 0 {
			// The same instant in another zone: the store keeps UTC.
			tm = tm.In(time.FixedZone("", (g.rng.Intn(25)-12)*3600))
		}
		return tm
	case 6:
		return guidPool[g.rng.Intn(len(guidPool))]
	case 7:
		if g.cfg.BigValue && g.rng.Intn(8) == 0 {
			b := make([]byte, 500+g.rng.Intn(4000))
			g.rng.Read(b)
			return b
		}
		return append([]byte{}, binaryPool[g.rng.Intn(len(binaryPool))]...)
	default:
		if g.rng.Intn(4) == 0 {
			return nil
		}
		return int32(g.rng.Intn(5))
	}
}

func (g *generator) randomProps() map[string]any {
	props := map[string]any{}
	for n := g.rng.Intn(6); n > 0; n-- {
		props[g.pick(propPool)] = g.randomValue()
	}
	return props
}

// randomKey returns a key that exists in the table half of the time.
func (g *generator) randomKey(table string) (string, string) {
	if keys := g.ref.m.Keys(table); len(keys) > 0 && g.rng.Intn(2) == 0 {
		k := keys[g.rng.Intn(len(keys))]
		return k.PK, k.RK
	}
	return g.pick(pkPool), g.pick(rkPool)
}

func (g *generator) randomEntity(table string) *ts.Entity {
	pk, rk := g.randomKey(table)
	return &ts.Entity{PartitionKey: pk, RowKey: rk, Properties: g.randomProps()}
}

func (g *generator) randomMode() ts.UpdateMode {
	if g.rng.Intn(2) == 0 {
		return ts.Merge
	}
	return ts.Replace
}

// pickIfMatch returns an If-Match for the entity: its current version,
// an older version of the same lifetime, one that never existed, a
// malformed one, or "*".
func (g *generator) pickIfMatch(id entityID) ifMatch {
	versions := len(g.ref.life[id])
	_, err := g.ref.m.Get(id.table, id.pk, id.rk, nil)
	switch r := g.rng.Intn(10); {
	case r < 5 && err == nil && versions > 0:
		return "current"
	case r < 7 && versions > 0:
		return ifMatch(fmt.Sprintf("v%d", g.rng.Intn(versions)))
	case r < 8:
		return "stale"
	case r < 9:
		return "garbage"
	}
	return "*"
}

// ---- single-entity operations ----

func (g *generator) insert() {
	table, ok := g.writeTable()
	if !ok {
		return
	}
	g.emit(Op{kind: kindInsert, table: table, kept: g.kept(), entity: g.randomEntity(table)})
}

func (g *generator) get() {
	table := g.existingTable()
	if table == "" {
		table = g.tableName()
	}
	pk, rk := g.randomKey(table)
	if g.rng.Intn(30) == 0 {
		switch g.rng.Intn(3) {
		case 0:
			pk = g.pick([]string{"", "a/b", "x#", "q?", "t\tt"})
		default:
			rk = g.pick([]string{"", "a\\b", "\u0080", strings.Repeat("k", 1025), "\xff"})
		}
	}
	var sel []string
	if g.rng.Intn(3) == 0 {
		sel = []string{}
		for n := 1 + g.rng.Intn(3); n > 0; n-- {
			sel = append(sel, g.pick(selectPool))
		}
		sel = dedupe(sel)
	}
	g.emit(Op{kind: kindGet, table: table, kept: g.kept(), pk: pk, rk: rk, sel: sel})
}

func dedupe(names []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func (g *generator) update() {
	table, ok := g.writeTable()
	if !ok {
		return
	}
	e := g.randomEntity(table)
	op := Op{kind: kindUpdate, table: table, kept: g.kept(), entity: e, mode: g.randomMode()}
	op.ifMatch = g.pickIfMatch(idOf(table, e.PartitionKey, e.RowKey))
	if g.rng.Intn(40) == 0 {
		op.ifMatch = ""
	}
	g.emit(op)
}

func (g *generator) upsert() {
	table, ok := g.writeTable()
	if !ok {
		return
	}
	g.emit(Op{kind: kindUpsert, table: table, kept: g.kept(), entity: g.randomEntity(table), mode: g.randomMode()})
}

func (g *generator) delete() {
	table, ok := g.writeTable()
	if !ok {
		return
	}
	pk, rk := g.randomKey(table)
	op := Op{kind: kindDelete, table: table, kept: g.kept(), pk: pk, rk: rk, ifMatch: g.pickIfMatch(idOf(table, pk, rk))}
	if g.rng.Intn(40) == 0 {
		op.ifMatch = ""
	}
	g.emit(op)
}

// check reads one existing entity on both sides, to learn the store's
// ETags of versions transactions wrote and to catch stray writes.
func (g *generator) check() {
	table := g.existingTable()
	if table == "" {
		return
	}
	keys := g.ref.m.Keys(table)
	if len(keys) == 0 {
		return
	}
	k := keys[g.rng.Intn(len(keys))]
	g.emit(Op{kind: kindCheck, table: table, pk: k.PK, rk: k.RK})
}

// invalidWrite writes an entity with exactly one problem, by insert,
// upsert or update, and names the code it must fail with.
func (g *generator) invalidWrite() {
	table, ok := g.writeTable()
	if !ok {
		return
	}
	e, code := g.invalidEntity(table, nil)
	op := Op{table: table, kept: g.kept(), entity: e, want: code}
	switch g.rng.Intn(3) {
	case 0:
		op.kind = kindInsert
	case 1:
		op.kind, op.mode = kindUpsert, g.randomMode()
	default:
		op.kind, op.mode, op.ifMatch = kindUpdate, g.randomMode(), "*"
	}
	g.emit(op)
}

// invalidEntity returns an entity with exactly one problem and the code
// the problem must produce.
//
// If pk is not nil, the entity has that PartitionKey (which may be "")
// and the problem is elsewhere (a transaction reports a different
// partition first).
func (g *generator) invalidEntity(table string, pk *string) (*ts.Entity, ts.Code) {
	e := g.randomEntity(table)
	if pk != nil {
		e.PartitionKey = *pk
	}
	switch g.rng.Intn(17) {
	case 13:
		e.RowKey = "r\xffx"
		return e, edm.CodeOutOfRangeInput
	case 14:
		e.Properties["S"] = "bad\xc3"
		return e, edm.CodeInvalidInput
	case 15:
		e.Properties["N\xff"] = int32(1)
		return e, edm.CodePropertyNameInvalid
	case 16:
		e.Properties[g.pick([]string{"PartitionKey", "RowKey", "Timestamp"})] = "x"
		return e, edm.CodeInvalidInput
	case 0:
		bad := "bad" + string("/\\#?\t\n\x00\x1f\x7f"[g.rng.Intn(9)]) + "key"
		if pk == nil && g.rng.Intn(2) == 0 {
			e.PartitionKey = bad
		} else {
			e.RowKey = bad
		}
		return e, edm.CodeOutOfRangeInput
	case 1:
		e.RowKey = "r\u0085"
		return e, edm.CodeOutOfRangeInput
	case 2:
		if pk == nil && g.rng.Intn(2) == 0 {
			e.PartitionKey = "p\u009f"
		} else {
			e.RowKey = "\u007f"
		}
		return e, edm.CodeOutOfRangeInput
	case 3:
		e.RowKey = strings.Repeat("k", 1025)
		return e, edm.CodeKeyValueTooLarge
	case 4:
		e.Properties = map[string]any{}
		for i := 0; i < 253; i++ {
			e.Properties[fmt.Sprintf("P%d", i)] = int32(i)
		}
		return e, edm.CodeTooManyProperties
	case 5:
		e.Properties[g.pick([]string{"1abc", "a-b", "has space", "x.y"})] = int32(1)
		return e, edm.CodePropertyNameInvalid
	case 6:
		e.Properties["N"+strings.Repeat("n", 255)] = int32(1)
		return e, edm.CodePropertyNameTooLong
	case 7:
		e.Properties["Bad"] = invalidValues[g.pick(invalidNames)]()
		return e, edm.CodeInvalidValueType
	case 8:
		e.Properties["Long"] = strings.Repeat("s", 40_000)
		return e, edm.CodePropertyValueTooLarge
	case 9:
		e.Properties["Long"] = make([]byte, 70_000)
		return e, edm.CodePropertyValueTooLarge
	case 10:
		e.Properties["Old"] = time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC)
		return e, edm.CodeOutOfRangeInput
	case 11:
		e.Properties = map[string]any{}
		for i := 0; i < 20; i++ {
			e.Properties[fmt.Sprintf("Chunk%d", i)] = make([]byte, 60_000)
		}
		return e, edm.CodeEntityTooLarge
	default:
		e.Properties["Old"] = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
		return e, edm.CodeOutOfRangeInput
	}
}

// missingTable runs one operation on a table that is never created.
func (g *generator) missingTable() {
	name := g.randomCase(missingTableName)
	e := g.randomEntity(name)
	op := Op{table: name, kept: g.kept()}
	switch g.rng.Intn(6) {
	case 0:
		op.kind, op.entity = kindInsert, e
	case 1:
		op.kind, op.pk, op.rk = kindGet, e.PartitionKey, e.RowKey
	case 2:
		op.kind, op.entity, op.mode, op.ifMatch = kindUpdate, e, ts.Merge, "*"
	case 3:
		op.kind, op.pk, op.rk, op.ifMatch = kindDelete, e.PartitionKey, e.RowKey, "*"
	case 4:
		op.kind, op.actions = kindTransaction, []action{{typ: ts.ActionUpsertMerge, entity: e}}
	default:
		op.kind = kindQuery
	}
	g.emit(op)
}

// ---- tables ----

func (g *generator) createTable() {
	g.emit(Op{kind: kindCreateTable, table: g.tableName()})
}

func (g *generator) invalidTableName() {
	name := g.pick([]string{"ab", strings.Repeat("a", 64), "a-b-c", "9abc", "ab_c", "tables", "tab le"})
	g.emit(Op{kind: kindCreateTable, table: name})
}

func (g *generator) deleteTable() {
	g.emit(Op{kind: kindDeleteTable, table: g.tableName()})
}

func (g *generator) listTables() {
	prefix := g.pick([]string{"", "a", "AL", "b", "g", "GAMMA7", "del", "x", "n"})
	top := []int{0, 1, 2, 3, 1000, -1, 1001}[g.rng.Intn(7)]
	g.emit(Op{kind: kindListTables, prefix: prefix, top: top})
}

// ---- transactions ----

// actionTypeFor picks an action that usually suits the entity's current
// existence (so that most transactions commit), and now and then any
// action.
func (g *generator) actionTypeFor(table string, e *ts.Entity) ts.ActionType {
	if g.rng.Intn(8) == 0 {
		return ts.ActionType(1 + g.rng.Intn(6))
	}
	if _, err := g.ref.m.Get(table, e.PartitionKey, e.RowKey, nil); err == nil {
		return []ts.ActionType{ts.ActionUpdateMerge, ts.ActionUpdateReplace, ts.ActionUpsertMerge, ts.ActionUpsertReplace, ts.ActionDelete}[g.rng.Intn(5)]
	}
	return []ts.ActionType{ts.ActionInsert, ts.ActionUpsertMerge, ts.ActionUpsertReplace}[g.rng.Intn(3)]
}

// transaction emits a random transaction on one partition: usually valid
// in form (it may still fail a precondition), sometimes with one fault in
// form, which the model must predict. Some actions go as structs.
func (g *generator) transaction() {
	table, ok := g.writeTable()
	if !ok {
		return
	}
	pk := g.pick(pkPool)
	if keys := g.ref.m.Keys(table); len(keys) > 0 && g.rng.Intn(2) == 0 {
		pk = keys[g.rng.Intn(len(keys))].PK
	}
	rks := append([]string{}, rkPool...)
	n := 1 + g.rng.Intn(6)
	big := g.rng.Intn(40) == 0
	if big {
		n = 100
		for i := 0; i < 100; i++ {
			rks = append(rks, fmt.Sprintf("t%03d", i))
		}
		if g.rng.Intn(3) == 0 {
			n = 101
		}
	}
	g.rng.Shuffle(len(rks), func(i, j int) { rks[i], rks[j] = rks[j], rks[i] })
	fault := ""
	if !big && g.rng.Intn(5) == 0 {
		fault = g.pick([]string{"partition", "duplicate", "entity", "ifmatch-on-insert", "no-ifmatch", "empty", "payload"})
	}
	if fault == "empty" {
		n = 0
	}
	var actions []action
	for i := 0; i < n; i++ {
		e := &ts.Entity{PartitionKey: pk, RowKey: rks[i%len(rks)], Properties: g.randomProps()}
		a := action{typ: g.actionTypeFor(table, e), entity: e}
		if big || fault != "" {
			// Faults in form are checked alone: no other action may fail.
			a.typ = ts.ActionUpsertMerge + ts.ActionType(g.rng.Intn(2))
		}
		actions = append(actions, a)
	}
	if fault != "" && fault != "empty" && n < 2 {
		n = 2
		actions = append(actions, action{typ: ts.ActionUpsertReplace, entity: &ts.Entity{PartitionKey: pk, RowKey: rks[1], Properties: g.randomProps()}})
	}
	if fault == "payload" {
		// Six entities of about 900 KB: the fifth passes 4 MiB.
		for len(actions) < 6 {
			actions = append(actions, action{typ: ts.ActionUpsertMerge, entity: &ts.Entity{PartitionKey: pk, RowKey: rks[len(actions)]}})
		}
		n = len(actions)
		for i := range actions {
			actions[i].entity.Properties = map[string]any{}
			for j := 0; j < 15; j++ {
				actions[i].entity.Properties[fmt.Sprintf("Chunk%d", j)] = make([]byte, 60_000)
			}
		}
	}
	for i := range actions {
		a := &actions[i]
		switch a.typ {
		case ts.ActionUpdateMerge, ts.ActionUpdateReplace, ts.ActionDelete:
			a.ifMatch = g.pickIfMatch(idOf(table, pk, a.entity.RowKey))
		}
	}
	at := 1 + g.rng.Intn(max(n-1, 1))
	if at >= n {
		at = n - 1
	}
	switch fault {
	case "partition":
		actions[at].entity.PartitionKey = pk + "x"
	case "duplicate":
		actions[at].entity.RowKey = actions[g.rng.Intn(at)].entity.RowKey
	case "entity":
		bad, _ := g.invalidEntity(table, &pk)
		if validKeys(bad) {
			// The fault is in the properties: keep the action's key.
			bad.RowKey = actions[at].entity.RowKey
		}
		actions[at].entity = bad
	case "ifmatch-on-insert":
		// Insert fails its precondition if the entity exists; that is
		// checked after form, so the fault in form still wins.
		actions[at].typ = ts.ActionInsert
		actions[at].ifMatch = "*"
	case "no-ifmatch":
		actions[at].typ = ts.ActionUpdateMerge
		actions[at].ifMatch = ""
	}
	for i := range actions {
		actions[i].asStruct = g.rng.Intn(3) == 0
	}
	g.emit(Op{kind: kindTransaction, table: table, kept: g.kept(), fault: fault, actions: actions})
}

// validKeys reports whether both keys of e are well formed, so a Get on
// them has a predictable answer.
func validKeys(e *ts.Entity) bool {
	for _, k := range []string{e.PartitionKey, e.RowKey} {
		if len(k) > 1024 || strings.ContainsAny(k, "/\\#?\u0085") || !utf8.ValidString(k) {
			return false
		}
		for _, r := range k {
			if r < 0x20 || r == 0x7f {
				return false
			}
		}
	}
	return true
}
