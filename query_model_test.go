package tablestore

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// entityProps presents an in-memory entity to filter.Eval, independently
// of the stored encoding.
type entityProps struct{ e *Entity }

func (p entityProps) Lookup(name string) (edm.Value, bool) {
	switch name {
	case entityenc.NamePartitionKey:
		return edm.Value{Type: edm.TypeString, Bytes: []byte(p.e.PartitionKey)}, true
	case entityenc.NameRowKey:
		return edm.Value{Type: edm.TypeString, Bytes: []byte(p.e.RowKey)}, true
	case entityenc.NameTimestamp:
		return edm.Value{Type: edm.TypeDateTime, Int: edm.TicksFromTime(p.e.Timestamp)}, true
	}
	v, ok := p.e.Properties[name]
	if !ok {
		return edm.Value{}, false
	}
	fv, err := encodeValue(name, v)
	if err != nil {
		panic(err) // the generator makes only valid values
	}
	return fv, true
}

// modelGen draws random entities and filters from small domains, so that
// equalities hit, keys share prefixes, and every type meets every other.
type modelGen struct {
	r     *rand.Rand
	times []time.Time
}

var (
	modelPKs       = []string{"a", "a b", "ab", "b", "ba", "c"}
	modelRKAtoms   = []string{"0", "1", "a", "a ", "b", "z"}
	modelPropNames = []string{"I", "L", "D", "S", "X"}
	modelGUIDs     = []GUID{{1}, {2, 3}}
)

func (g *modelGen) rowKey() string {
	n := 1 + g.r.IntN(3)
	s := ""
	for range n {
		s += modelRKAtoms[g.r.IntN(len(modelRKAtoms))]
	}
	return s
}

// value returns a random value of a random type.
func (g *modelGen) value() any {
	switch g.r.IntN(8) {
	case 0:
		return int32(g.r.IntN(5) - 2)
	case 1:
		return int64(g.r.IntN(5) - 2)
	case 2:
		return []float64{-1.5, 0, 1, 2.5}[g.r.IntN(4)]
	case 3:
		return []string{"", "x", "y", "xy"}[g.r.IntN(4)]
	case 4:
		return g.r.IntN(2) == 0
	case 5:
		return g.times[g.r.IntN(len(g.times))]
	case 6:
		return modelGUIDs[g.r.IntN(len(modelGUIDs))]
	}
	return [][]byte{{}, {1}, {1, 2}}[g.r.IntN(3)]
}

func (g *modelGen) entity() *Entity {
	e := &Entity{PartitionKey: modelPKs[g.r.IntN(len(modelPKs))], RowKey: g.rowKey(), Properties: map[string]any{}}
	for _, name := range modelPropNames {
		if g.r.IntN(4) != 0 {
			e.Properties[name] = g.value()
		}
	}
	return e
}

// keyLiteral is a string near the keys (a key, a prefix, a successor) or,
// rarely, a value of another type.
func (g *modelGen) keyLiteral(pk bool) edm.Value {
	if g.r.IntN(8) == 0 {
		v, _ := encodeValue("", g.value())
		return v
	}
	var s string
	if pk {
		s = modelPKs[g.r.IntN(len(modelPKs))]
	} else {
		s = g.rowKey()
	}
	switch g.r.IntN(6) {
	case 0:
		s = s[:g.r.IntN(len(s)+1)]
	case 1:
		s += " "
	}
	return edm.Value{Type: edm.TypeString, Bytes: []byte(s)}
}

// filter returns a random filter, anchored on keys more often than a
// uniform tree would be, so that every plan kind is exercised.
func (g *modelGen) filter() filter.Node {
	pkEq := func() filter.Node {
		return &filter.CompareNode{Property: entityenc.NamePartitionKey, Op: filter.OpEQ, Value: g.keyLiteral(true)}
	}
	rkCmp := func() filter.Node {
		return &filter.CompareNode{Property: entityenc.NameRowKey, Op: filter.Op(1 + g.r.IntN(6)), Value: g.keyLiteral(false)}
	}
	switch g.r.IntN(10) {
	case 0, 1, 2:
		return &filter.AndNode{X: pkEq(), Y: g.node(g.r.IntN(3))}
	case 3, 4:
		var n filter.Node
		for range 1 + g.r.IntN(3) {
			var term filter.Node = &filter.AndNode{X: pkEq(), Y: rkCmp()}
			if g.r.IntN(2) == 0 {
				term = &filter.AndNode{X: term, Y: rkCmp()}
			}
			if n == nil {
				n = term
			} else {
				n = &filter.OrNode{X: n, Y: term}
			}
		}
		if g.r.IntN(2) == 0 {
			n = &filter.AndNode{X: n, Y: g.node(1)}
		}
		return n
	}
	return g.node(1 + g.r.IntN(4))
}

func (g *modelGen) node(depth int) filter.Node {
	if depth <= 0 || g.r.IntN(3) == 0 {
		c := &filter.CompareNode{Op: filter.Op(1 + g.r.IntN(6))}
		switch k := g.r.IntN(10); {
		case k < 3:
			c.Property, c.Value = entityenc.NamePartitionKey, g.keyLiteral(true)
		case k < 6:
			c.Property, c.Value = entityenc.NameRowKey, g.keyLiteral(false)
		case k < 7:
			c.Property = entityenc.NameTimestamp
			c.Value, _ = encodeValue("", g.times[g.r.IntN(len(g.times))])
		default:
			c.Property = modelPropNames[g.r.IntN(len(modelPropNames))]
			c.Value, _ = encodeValue("", g.value())
		}
		return c
	}
	switch g.r.IntN(6) {
	case 0:
		return &filter.NotNode{X: g.node(depth - 1)}
	case 1, 2:
		return &filter.OrNode{X: g.node(depth - 1), Y: g.node(depth - 1)}
	}
	return &filter.AndNode{X: g.node(depth - 1), Y: g.node(depth - 1)}
}

// TestQueryModel checks the planner and the executor together against the
// definition of a query: for thousands of random filters, paging through
// the results (small Top, small PageScanLimit, so most queries take many
// pages) must return exactly the entities that filter.Eval accepts in a
// scan of every entity, in (PartitionKey, RowKey) order, with the selected
// properties. Set TABLESTORE_QUERY_SEED to replay a failure.
func TestQueryModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TABLESTORE_QUERY_SEED"); s != "" {
		var err error
		seed, err = strconv.ParseUint(s, 10, 64)
		require.NoError(t, err)
	}
	t.Logf("seed %d (TABLESTORE_QUERY_SEED=%d to replay)", seed, seed)
	r := rand.New(rand.NewPCG(seed, seed>>32))
	filters := 5000
	if testing.Short() {
		filters = 500
	}

	// Timestamps come from the clock; a fake one makes them deterministic
	// and lets filters compare against them.
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var tick int
	clock := func() time.Time { tick++; return base.Add(time.Duration(tick) * time.Millisecond) }
	g := &modelGen{r: r, times: []time.Time{base, base.Add(200 * time.Millisecond), base.Add(time.Hour)}}

	scanLimit := 1 + r.IntN(16)
	db := openTestDB(t, &Options{PageScanLimit: scanLimit, Clock: clock})
	tbl, err := db.CreateTable(ctx, "Model")
	require.NoError(t, err)
	var all []*Entity
	seen := map[[2]string]bool{}
	for len(all) < 300 {
		e := g.entity()
		if seen[[2]string{e.PartitionKey, e.RowKey}] {
			continue
		}
		seen[[2]string{e.PartitionKey, e.RowKey}] = true
		require.NoError(t, tbl.Insert(ctx, e))
		all = append(all, e)
	}
	slices.SortFunc(all, func(a, b *Entity) int {
		return cmp.Or(cmp.Compare(a.PartitionKey, b.PartitionKey), cmp.Compare(a.RowKey, b.RowKey))
	})

	kinds := map[PlanKind]int{}
	for i := range filters {
		text := filter.Format(g.filter())
		f, err := filter.Compile(text, nil)
		if err != nil {
			t.Fatalf("seed %d: filter %s does not compile: %v", seed, text, err)
		}
		q := Query{Filter: text, Top: 1 + r.IntN(7)}
		if r.IntN(4) == 0 {
			q.Select = []string{modelPropNames[r.IntN(len(modelPropNames))], modelPropNames[r.IntN(len(modelPropNames))]}
		}
		var want []*Entity
		for _, e := range all {
			if filter.Eval(f.Root, entityProps{e}) {
				want = append(want, e)
			}
		}
		var got []*Entity
		if i%2 == 0 {
			for e, err := range tbl.Query(ctx, q) {
				if err != nil {
					t.Fatalf("seed %d: filter %s: %v", seed, text, err)
				}
				got = append(got, e)
			}
		} else {
			for pages := 0; ; pages++ {
				page, err := tbl.QueryPage(ctx, q)
				if err != nil {
					t.Fatalf("seed %d: filter %s: %v", seed, text, err)
				}
				if len(page.Entities) > q.Top {
					t.Fatalf("seed %d: filter %s: page of %d entities, top %d", seed, text, len(page.Entities), q.Top)
				}
				got = append(got, page.Entities...)
				if page.Continuation == "" {
					break
				}
				if pages > len(all) {
					t.Fatalf("seed %d: filter %s: more pages than entities", seed, text)
				}
				q.Continuation = page.Continuation
			}
		}
		if msg := diffEntities(want, got, q.Select); msg != "" {
			p, _ := explainText(tbl, Query{Filter: text})
			t.Fatalf("seed %d (scan limit %d, top %d, select %v): filter %s\n%s\n%s", seed, scanLimit, q.Top, q.Select, text, msg, p)
		}
		p, err := tbl.Plan(ctx, Query{Filter: text})
		if err != nil {
			t.Fatalf("seed %d: filter %s: plan: %v", seed, text, err)
		}
		kinds[p.Kind]++
	}
	t.Logf("plan kinds over %d filters: %v", filters, kinds)
}

// diffEntities describes the first difference between the expected and
// the returned entities, or returns "".
func diffEntities(want, got []*Entity, sel []string) string {
	for i := range max(len(want), len(got)) {
		if i >= len(want) {
			return fmt.Sprintf("extra entity %d: %s", i, formatTestEntity(got[i], true))
		}
		if i >= len(got) {
			return fmt.Sprintf("missing entity %d: %s (got %d entities)", i, formatTestEntity(want[i], true), len(got))
		}
		w, g := want[i], got[i]
		if w.PartitionKey != g.PartitionKey || w.RowKey != g.RowKey || !w.Timestamp.Equal(g.Timestamp) || w.ETag != g.ETag {
			return fmt.Sprintf("entity %d: want %s, got %s", i, formatTestEntity(w, false), formatTestEntity(g, false))
		}
		wantProps := 0
		for name, wv := range w.Properties {
			if sel != nil && !slices.Contains(sel, name) {
				continue
			}
			wantProps++
			gv, ok := g.Properties[name]
			if !ok || !sameValue(wv, gv) {
				return fmt.Sprintf("entity %d: property %s: want %#v, got %#v", i, name, wv, gv)
			}
		}
		if len(g.Properties) != wantProps {
			return fmt.Sprintf("entity %d: got properties %v, want %d", i, g.Properties, wantProps)
		}
	}
	return ""
}

func sameValue(a, b any) bool {
	va, errA := encodeValue("", a)
	vb, errB := encodeValue("", b)
	return errA == nil && errB == nil && va.Type == vb.Type && va.Int == vb.Int &&
		math.Float64bits(va.Float) == math.Float64bits(vb.Float) && bytes.Equal(va.Bytes, vb.Bytes)
}
