package tablestore

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/engine"
	"github.com/tablestore/tablestore/internal/keys"
)

// The index model: a plain in-memory table with indexes, written for this
// test. It knows nothing of index entries: it answers every query by
// filtering every entity (and, for reads in index order, sorting them by
// the index's order) and enforces uniqueness by comparing every entity.

type imRow = map[string]any

type imKey struct{ pk, rk string }

type imTable struct {
	rows    map[imKey]imRow
	indexes []IndexSpec // in creation order
}

// tuple returns the index's value tuple of props, encoded as the index
// orders it, and whether every property is present.
func imTuple(spec IndexSpec, props imRow) ([]byte, bool) {
	var t []byte
	complete := true
	for _, p := range spec.Properties {
		v, ok := props[p]
		if !ok {
			t = keys.AppendAbsent(t)
			complete = false
			continue
		}
		fv, err := encodeValue(p, v)
		if err != nil {
			panic(err)
		}
		t = keys.AppendValue(t, fv)
	}
	return t, complete
}

// imErr is the model's answer to a write: a code, the failing action of
// a transaction (-1 for none), and for a uniqueness failure the index.
type imErr struct {
	code  Code
	index int
	uniq  string
}

// uniqueClash returns the first unique index (in creation order) that
// refuses giving (pk, rk) the properties props, its old ones being old
// (nil: absent), in the state rows.
func (m *imTable) uniqueClash(rows map[imKey]imRow, pk, rk string, old, props imRow) string {
	for _, spec := range m.indexes {
		if !spec.Unique || props == nil {
			continue
		}
		nt, complete := imTuple(spec, props)
		if !complete {
			continue
		}
		if old != nil {
			if ot, _ := imTuple(spec, old); bytes.Equal(ot, nt) {
				continue
			}
		}
		for k, r := range rows {
			if k == (imKey{pk, rk}) || (spec.Partitioned && k.pk != pk) {
				continue
			}
			if t, ok := imTuple(spec, r); ok && bytes.Equal(t, nt) {
				return spec.Name
			}
		}
	}
	return ""
}

// apply applies one action to rows, or returns why it fails.
func (m *imTable) apply(rows map[imKey]imRow, a TransactionAction) *imErr {
	e := a.Entity.(*Entity)
	k := imKey{e.PartitionKey, e.RowKey}
	old, exists := rows[k]
	var next imRow
	switch a.Type {
	case ActionInsert:
		if exists {
			return &imErr{code: edm.CodeEntityAlreadyExists}
		}
		next = maps.Clone(e.Properties)
	case ActionUpdateMerge, ActionUpdateReplace, ActionDelete:
		if !exists {
			return &imErr{code: edm.CodeResourceNotFound}
		}
	}
	switch a.Type {
	case ActionUpdateMerge, ActionUpsertMerge:
		next = maps.Clone(old)
		if next == nil {
			next = imRow{}
		}
		maps.Copy(next, e.Properties)
	case ActionUpdateReplace, ActionUpsertReplace:
		next = maps.Clone(e.Properties)
	}
	if a.Type == ActionDelete {
		delete(rows, k)
		return nil
	}
	if next == nil {
		next = imRow{}
	}
	if name := m.uniqueClash(rows, k.pk, k.rk, old, next); name != "" {
		return &imErr{code: edm.CodeEntityAlreadyExists, uniq: name}
	}
	rows[k] = next
	return nil
}

// transact applies actions atomically, in order.
func (m *imTable) transact(actions []TransactionAction) *imErr {
	rows := maps.Clone(m.rows)
	for i, a := range actions {
		if e := m.apply(rows, a); e != nil {
			e.index = i
			return e
		}
	}
	m.rows = rows
	return nil
}

// createIndex adds an index unless a unique one meets duplicates.
func (m *imTable) createIndex(spec IndexSpec) *imErr {
	if spec.Unique {
		seen := map[string]bool{}
		for k, r := range m.rows {
			t, ok := imTuple(spec, r)
			if !ok {
				continue
			}
			scope := string(t)
			if spec.Partitioned {
				scope = k.pk + "\x00" + scope
			}
			if seen[scope] {
				return &imErr{code: edm.CodeEntityAlreadyExists, uniq: spec.Name}
			}
			seen[scope] = true
		}
	}
	m.indexes = append(m.indexes, spec)
	return nil
}

// query returns the rows matching f: in key order, or in the order of
// index spec when order is set.
func (m *imTable) query(f *filter.Filter, spec *IndexSpec) []*Entity {
	var out []*Entity
	for k, r := range m.rows {
		e := &Entity{PartitionKey: k.pk, RowKey: k.rk, Properties: r}
		if filter.Eval(f.Root, entityProps{e}) {
			out = append(out, e)
		}
	}
	byKey := func(a, b *Entity) int {
		return cmp.Or(strings.Compare(a.PartitionKey, b.PartitionKey), strings.Compare(a.RowKey, b.RowKey))
	}
	if spec == nil {
		slices.SortFunc(out, byKey)
		return out
	}
	slices.SortFunc(out, func(a, b *Entity) int {
		ta, _ := imTuple(*spec, a.Properties)
		tb, _ := imTuple(*spec, b.Properties)
		if spec.Partitioned {
			return cmp.Or(strings.Compare(a.PartitionKey, b.PartitionKey), bytes.Compare(ta, tb), strings.Compare(a.RowKey, b.RowKey))
		}
		return cmp.Or(bytes.Compare(ta, tb), byKey(a, b))
	})
	return out
}

// imGen draws the model test's operations from small domains, so that
// equalities hit, unique values clash and keys repeat.
type imGen struct{ r *rand.Rand }

var (
	imPKs   = []string{"a", "b", "c", "d"}
	imRKs   = []string{"0", "1", "2", "3", "4", "5", "6", "7"}
	imPool  = []IndexSpec{{Name: "IA", Properties: []string{"A"}}, {Name: "IAB", Properties: []string{"A", "B"}}, {Name: "UB", Properties: []string{"B"}, Unique: true}, {Name: "PC", Properties: []string{"C"}, Partitioned: true}, {Name: "PUA", Properties: []string{"A"}, Partitioned: true, Unique: true}, {Name: "UBC", Properties: []string{"B", "C"}, Unique: true}, {Name: "ICAB", Properties: []string{"C", "A", "B"}}}
	imNames = []string{"A", "B", "C"}
)

func (g *imGen) value(name string) any {
	if name == "C" {
		return []string{"x", "y", "z"}[g.r.IntN(3)]
	}
	switch g.r.IntN(7) {
	case 0, 1:
		return int32(g.r.IntN(4))
	case 2:
		return int64(g.r.IntN(4))
	case 3:
		return []float64{0, 1, 2.5}[g.r.IntN(3)]
	case 4:
		return []string{"x", "y"}[g.r.IntN(2)]
	case 5:
		return g.r.IntN(2) == 0
	}
	return []byte{byte(g.r.IntN(2))}
}

func (g *imGen) props() imRow {
	p := imRow{}
	for _, n := range imNames {
		if g.r.IntN(4) != 0 {
			p[n] = g.value(n)
		}
	}
	if g.r.IntN(3) == 0 {
		p["D"] = int32(g.r.IntN(3))
	}
	return p
}

func (g *imGen) literal(name string) string {
	fv, err := encodeValue(name, g.value(name))
	if err != nil {
		panic(err)
	}
	return filter.FormatLiteral(fv)
}

// keyOrderFilter draws a filter an index may serve in key order.
func (g *imGen) keyOrderFilter() string {
	eq := func(n string) string { return n + " eq " + g.literal(n) }
	var f string
	switch g.r.IntN(7) {
	case 0:
		f = eq("A")
	case 1:
		f = eq("A") + " and " + eq("B")
	case 2:
		f = "(" + eq("A") + " or " + eq("A") + ")"
	case 3:
		f = "((" + eq("A") + " and " + eq("B") + ") or (" + eq("A") + " and " + eq("B") + "))"
	case 4:
		f = eq("B") + " and " + eq("C")
	case 5:
		f = eq("C") + " and " + eq("A") + " and " + eq("B")
	default:
		f = eq("C")
	}
	switch g.r.IntN(6) {
	case 0:
		f += " and D ne 1"
	case 1:
		f = "PartitionKey eq '" + imPKs[g.r.IntN(len(imPKs))] + "' and " + f
	case 2:
		f = "(PartitionKey eq 'a' or PartitionKey eq 'c') and " + f
	case 3:
		f = "PartitionKey ge 'b' and " + f
	case 4:
		f = "PartitionKey eq 'b' and RowKey ge '3' and " + f
	}
	return f
}

// orderFilter draws a filter for a read of spec in index order.
func (g *imGen) orderFilter(spec IndexSpec) string {
	p0 := spec.Properties[0]
	ops := []string{"eq", "ne", "gt", "ge", "lt", "le"}
	cmpOf := func(n string) string { return n + " " + ops[g.r.IntN(len(ops))] + " " + g.literal(n) }
	var f string
	switch g.r.IntN(6) {
	case 0:
		return ""
	case 1:
		f = cmpOf(p0)
	case 2:
		f = cmpOf(p0) + " and " + cmpOf(p0)
	case 3:
		if len(spec.Properties) > 1 {
			f = p0 + " eq " + g.literal(p0) + " and " + cmpOf(spec.Properties[1])
		} else {
			f = cmpOf(p0) + " and D eq 1"
		}
	case 4:
		f = "(" + p0 + " eq " + g.literal(p0) + " or " + p0 + " eq " + g.literal(p0) + ")"
	default:
		f = cmpOf(imNames[g.r.IntN(3)])
	}
	if g.r.IntN(4) == 0 {
		f = "PartitionKey eq '" + imPKs[g.r.IntN(len(imPKs))] + "' and " + f
	}
	return f
}

// TestIndexModel runs seeded random histories of every write path
// (single writes, transactions, range deletions, index creation and
// drops, table drops) against the store and the model above, and after
// each step queries through indexes: every query the planner serves with
// an index, and every read in index order, must return the model's
// entities page for page (with PageScanLimit high enough that only Top
// ends a page), or, under a small PageScanLimit, the same entities in
// pages of at most Top. Writes must fail exactly when the model's do,
// with its code, action and index. Check runs now and then. Set
// TABLESTORE_INDEX_SEED to replay a failure.
func TestIndexModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TABLESTORE_INDEX_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("seed %d (TABLESTORE_INDEX_SEED=%d to replay)", seed, seed)
	for _, budget := range []bool{false, true} {
		t.Run(fmt.Sprintf("budget=%v", budget), func(t *testing.T) {
			runIndexModel(t, seed, budget)
		})
	}
}

func runIndexModel(t *testing.T, seed uint64, budget bool) {
	r := rand.New(rand.NewPCG(seed, uint64(len(fmt.Sprint(budget)))))
	g := &imGen{r: r}
	opts := &Options{NoSync: true}
	if budget {
		opts.PageScanLimit = 1 + r.IntN(5)
	}
	db := openTestDB(t, opts)
	eng := db.conn.(*engine.Engine)
	tbl, err := db.CreateTable(ctx, "Model")
	require.NoError(t, err)
	m := &imTable{rows: map[imKey]imRow{}}
	steps := 1500
	if testing.Short() {
		steps = 300
	}
	var stats struct{ writes, fails, uniq, keyOrder, indexOrder, plain int }
	fail := func(step int, format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d budget %v step %d: %s", seed, budget, step, fmt.Sprintf(format, args...))
	}
	// checkWrite compares a write's error with the model's answer.
	checkWrite := func(step int, what string, err error, want *imErr) {
		t.Helper()
		stats.writes++
		if want == nil {
			if err != nil {
				fail(step, "%s: %v, the model succeeds", what, err)
			}
			return
		}
		stats.fails++
		if err == nil {
			fail(step, "%s: succeeds, the model fails with %s (index %q)", what, want.code, want.uniq)
		}
		if got := ErrorCode(err); got != want.code {
			fail(step, "%s: %v, the model fails with %s (index %q)", what, err, want.code, want.uniq)
		}
		if want.index >= 0 {
			var be *BatchError
			if !errors.As(err, &be) || be.Index != want.index {
				fail(step, "%s: %v, the model fails at action %d", what, err, want.index)
			}
		}
		if want.uniq != "" {
			stats.uniq++
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", want.uniq)) {
				fail(step, "%s: %v, the model fails on index %q", what, err, want.uniq)
			}
		} else if strings.Contains(err.Error(), "unique index") {
			fail(step, "%s: %v, the model fails without a unique index", what, err)
		}
	}
	entity := func() *Entity {
		return &Entity{PartitionKey: imPKs[r.IntN(len(imPKs))], RowKey: imRKs[r.IntN(len(imRKs))], Properties: g.props()}
	}
	// compare runs q page by page against want.
	compare := func(step int, q Query, want []*Entity) {
		t.Helper()
		var got []*Entity
		q.Continuation = ""
		for pages := 0; ; pages++ {
			page, err := tbl.QueryPage(ctx, q)
			if err != nil {
				fail(step, "query %+v: %v", q, err)
			}
			if len(page.Entities) > q.Top {
				fail(step, "query %+v: page of %d", q, len(page.Entities))
			}
			if !budget {
				from := min(pages*q.Top, len(want))
				chunk := want[from:min(from+q.Top, len(want))]
				if msg := imDiff(chunk, page.Entities); msg != "" {
					p, _ := explainText(tbl, q)
					fail(step, "query %+v: page %d: %s\n%s", q, pages, msg, p)
				}
			}
			got = append(got, page.Entities...)
			if page.Continuation == "" {
				break
			}
			if pages > 4*len(m.rows)+40 {
				fail(step, "query %+v: too many pages", q)
			}
			q.Continuation = page.Continuation
		}
		if msg := imDiff(want, got); msg != "" {
			p, _ := explainText(tbl, q)
			fail(step, "query %+v: %s\n%s", q, msg, p)
		}
	}
	for step := range steps {
		switch k := r.IntN(100); {
		case k < 25:
			e := entity()
			want := m.transact([]TransactionAction{{Type: ActionInsert, Entity: e}})
			if want != nil {
				want.index = -1
			}
			checkWrite(step, "insert", tbl.Insert(ctx, e), want)
		case k < 35:
			e := entity()
			mode, typ := Merge, ActionUpdateMerge
			if r.IntN(2) == 0 {
				mode, typ = Replace, ActionUpdateReplace
			}
			want := m.transact([]TransactionAction{{Type: typ, Entity: e}})
			if want != nil {
				want.index = -1
			}
			checkWrite(step, "update", tbl.Update(ctx, e, mode, ETagAny), want)
		case k < 50:
			e := entity()
			mode, typ := Merge, ActionUpsertMerge
			if r.IntN(2) == 0 {
				mode, typ = Replace, ActionUpsertReplace
			}
			want := m.transact([]TransactionAction{{Type: typ, Entity: e}})
			if want != nil {
				want.index = -1
			}
			checkWrite(step, "upsert", tbl.Upsert(ctx, e, mode), want)
		case k < 58:
			e := entity()
			want := m.transact([]TransactionAction{{Type: ActionDelete, Entity: e}})
			if want != nil {
				want.index = -1
			}
			checkWrite(step, "delete", tbl.Delete(ctx, e.PartitionKey, e.RowKey, ETagAny), want)
		case k < 70:
			pk := imPKs[r.IntN(len(imPKs))]
			rks := slices.Clone(imRKs)
			r.Shuffle(len(rks), func(i, j int) { rks[i], rks[j] = rks[j], rks[i] })
			acts := make([]TransactionAction, 1+r.IntN(5))
			for i := range acts {
				acts[i] = TransactionAction{Type: ActionType(1 + r.IntN(6)),
					Entity: &Entity{PartitionKey: pk, RowKey: rks[i], Properties: g.props()}}
				switch acts[i].Type {
				case ActionUpdateMerge, ActionUpdateReplace, ActionDelete:
					acts[i].IfMatch = ETagAny
				}
			}
			sent := make([]TransactionAction, len(acts))
			for i, a := range acts {
				sent[i] = a
				e := a.Entity.(*Entity)
				sent[i].Entity = &Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Properties: maps.Clone(e.Properties)}
			}
			checkWrite(step, fmt.Sprintf("transaction of %d", len(acts)), tbl.SubmitTransaction(ctx, sent), m.transact(acts))
		case k < 76:
			pk := imPKs[r.IntN(len(imPKs))]
			from, to := "", ""
			if r.IntN(2) == 0 {
				from = imRKs[r.IntN(len(imRKs))]
				to = imRKs[r.IntN(len(imRKs))]
				if from > to {
					from, to = to, from
				}
				if r.IntN(3) == 0 {
					to = ""
				}
			}
			for key := range m.rows {
				if key.pk == pk && (from == "" || key.rk >= from) && (to == "" || key.rk < to) {
					delete(m.rows, key)
				}
			}
			checkWrite(step, "range deletion", tbl.Partition(pk).DeleteRange(ctx, from, to), nil)
		case k < 80:
			spec := imPool[r.IntN(len(imPool))]
			if slices.ContainsFunc(m.indexes, func(s IndexSpec) bool { return s.Name == spec.Name }) {
				m.indexes = slices.DeleteFunc(m.indexes, func(s IndexSpec) bool { return s.Name == spec.Name })
				checkWrite(step, "drop index "+spec.Name, tbl.DropIndex(ctx, spec.Name), nil)
				break
			}
			want := m.createIndex(spec)
			if want != nil {
				want.index = -1
			}
			checkWrite(step, "create index "+spec.Name, tbl.CreateIndex(ctx, spec), want)
		case k < 81:
			if r.IntN(4) == 0 {
				require.NoError(t, db.DeleteTable(ctx, "Model"))
				_, err := db.CreateTable(ctx, "Model")
				require.NoError(t, err)
				m.rows, m.indexes = map[imKey]imRow{}, nil
				infos, err := tbl.Indexes(ctx)
				require.NoError(t, err)
				require.Empty(t, infos)
			}
		case k < 83:
			if r.IntN(2) == 0 {
				require.NoError(t, eng.SweepIndexes(ctx))
			}
			checkClean(t, db)
		}
		// Query after every step.
		if r.IntN(2) == 0 {
			text := g.keyOrderFilter()
			f, err := filter.Compile(text, nil)
			require.NoError(t, err, text)
			q := Query{Filter: text, Top: 1 + r.IntN(4)}
			p, err := tbl.Plan(ctx, q)
			require.NoError(t, err)
			if p.Index != "" {
				stats.keyOrder++
			} else {
				stats.plain++
			}
			compare(step, q, m.query(f, nil))
		} else if len(m.indexes) > 0 {
			spec := m.indexes[r.IntN(len(m.indexes))]
			text := g.orderFilter(spec)
			f, err := filter.Compile(text, nil)
			require.NoError(t, err, text)
			stats.indexOrder++
			compare(step, Query{Filter: text, Index: spec.Name, Top: 1 + r.IntN(4)}, m.query(f, &spec))
		}
	}
	checkClean(t, db)
	require.NoError(t, eng.SweepIndexes(ctx))
	checkClean(t, db)
	t.Logf("%+v", stats)
	require.Greater(t, stats.keyOrder, steps/20, "queries served by an index in key order")
	require.Greater(t, stats.uniq, 0, "uniqueness failures")
}

// imDiff describes the first difference between the entities wanted and
// got (keys and properties), or returns "".
func imDiff(want, got []*Entity) string {
	for i := range max(len(want), len(got)) {
		switch {
		case i >= len(want):
			return fmt.Sprintf("extra entity %d: %s/%s %v", i, got[i].PartitionKey, got[i].RowKey, got[i].Properties)
		case i >= len(got):
			return fmt.Sprintf("missing entity %d: %s/%s %v (got %d)", i, want[i].PartitionKey, want[i].RowKey, want[i].Properties, len(got))
		}
		w, g := want[i], got[i]
		if w.PartitionKey != g.PartitionKey || w.RowKey != g.RowKey || len(w.Properties) != len(g.Properties) {
			return fmt.Sprintf("entity %d: want %s/%s %v, got %s/%s %v", i, w.PartitionKey, w.RowKey, w.Properties, g.PartitionKey, g.RowKey, g.Properties)
		}
		for n, v := range w.Properties {
			if !sameValue(v, g.Properties[n]) {
				return fmt.Sprintf("entity %d (%s/%s): property %s: want %#v, got %#v", i, w.PartitionKey, w.RowKey, n, v, g.Properties[n])
			}
		}
	}
	return ""
}
