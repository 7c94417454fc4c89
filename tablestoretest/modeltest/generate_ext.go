package modeltest

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	ts "github.com/tablestore/tablestore"
)

// This file generates the operations of tablestore's extensions to
// Azure's API: secondary indexes, the change feed and time-to-live, each
// family switched off by its quirk.

// ttlStep is the unit of the workload's clock moves; TTL defaults are
// an odd number of half steps, so an entity's expiry is always half a
// step away from any instant the clock's moves reach, far more than the
// store's clock runs by itself during a run: the model predicts expiry
// without ties.
const ttlStep = time.Hour

// feedRetention is the retention of the workload's change feeds, far
// longer than its clock moves add up to.
const feedRetention = 100 * 24 * time.Hour

var (
	indexNames = []string{"ByA", "byCount", "ByName_2", "w"}
	indexProps = []string{"A", "B", "Count", "Name", "When", "Price"}
)

// ttlHome reports whether the workload sets time-to-live on the table
// mostly, and turns its change feed on seldom (the others: the reverse),
// so that both get used: a table has at most one of them at a time.
func ttlHome(table string) bool {
	return strings.EqualFold(table, tableBases[2]) || strings.EqualFold(table, tableBases[3])
}

// indexSpec returns a create-index's spec.
func (op *Op) indexSpec() ts.IndexSpec {
	return ts.IndexSpec{Name: op.index, Properties: append([]string(nil), op.props...), Partitioned: op.partitioned}
}

// extensionOp emits one operation of an extension the quirks leave on,
// or none.
func (g *generator) extensionOp() {
	q := g.cfg.Quirks
	switch r := g.rng.Intn(60); {
	case r < 20 && !q.NoIndexes:
		g.indexOp()
	case r >= 20 && r < 40 && !q.NoChangeFeed:
		g.feedOp()
	case r >= 40 && !q.NoTTL:
		g.ttlOp()
	}
}

func (g *generator) indexOp() {
	table := g.existingTable()
	if table == "" {
		return
	}
	specs, _ := g.ref.m.Indexes(table)
	switch r := g.rng.Intn(20); {
	case r < 4:
		op := Op{kind: kindCreateIndex, table: table, kept: g.kept(), index: g.pick(indexNames), partitioned: g.rng.Intn(3) == 0}
		for n := 1 + g.rng.Intn(2); n > 0; n-- {
			op.props = append(op.props, g.pick(indexProps))
		}
		if g.rng.Intn(10) == 0 {
			// One fault: the model names the code.
			switch g.rng.Intn(3) {
			case 0:
				op.index = g.pick([]string{"9x", "a-b", strings.Repeat("i", 64)})
			case 1:
				op.props = append(op.props, "RowKey")
			default:
				op.props = []string{}
			}
		} else {
			op.props = dedupe(op.props)
		}
		g.emit(op)
	case r < 6:
		g.emit(Op{kind: kindDropIndex, table: table, kept: g.kept(), index: g.pick(indexNames)})
	case len(specs) == 0:
		g.query()
	default:
		spec := specs[g.rng.Intn(len(specs))]
		op := Op{kind: kindQuery, table: table, kept: g.kept(), top: []int{0, 1, 2, 5, 1000}[g.rng.Intn(5)], iterate: g.rng.Intn(3) == 0}
		eq := fmt.Sprintf("%s eq %s", spec.Properties[0], g.literalFor(table, spec.Properties[0]))
		if len(spec.Properties) > 1 && g.rng.Intn(2) == 0 {
			eq += fmt.Sprintf(" and %s eq %s", spec.Properties[1], g.literalFor(table, spec.Properties[1]))
		}
		if spec.Partitioned {
			pk, _ := g.randomKey(table)
			eq = fmt.Sprintf("PartitionKey eq '%s' and %s", strings.ReplaceAll(pk, "'", "''"), eq)
		}
		switch g.rng.Intn(5) {
		case 0, 1: // in index order, narrowed or not
			op.index = spec.Name
			op.filter = g.pick([]string{"", eq, g.queryFilter(),
				fmt.Sprintf("%s ge %s", spec.Properties[0], g.literalFor(table, spec.Properties[0]))})
			if g.rng.Intn(15) == 0 {
				op.index = "Missing"
			}
		default: // in key order, the planner's choice
			op.filter = eq
			if g.rng.Intn(3) == 0 {
				op.filter = fmt.Sprintf("(%s) or (%s eq %s)", eq, spec.Properties[0], g.literalFor(table, spec.Properties[0]))
			}
		}
		g.emit(op)
	}
}

// literalFor returns a filter literal for property name: the value an
// entity of the table has, most of the time, so that equalities match.
func (g *generator) literalFor(table, name string) string {
	keys := g.ref.m.Keys(table)
	for tries := 0; tries < 4 && len(keys) > 0; tries++ {
		k := keys[g.rng.Intn(len(keys))]
		e, err := g.ref.m.Get(table, k.PK, k.RK, nil)
		if err != nil {
			continue
		}
		if lit, ok := literalOf(e.Properties[name]); ok {
			return lit
		}
	}
	return g.literal()
}

// literalOf returns v as a filter literal, or false for a value no
// literal writes (NaN, infinities, nil).
func literalOf(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return "'" + strings.ReplaceAll(v, "'", "''") + "'", len(v) < 100
	case int32:
		return strconv.Itoa(int(v)), true
	case int64:
		return strconv.FormatInt(v, 10) + "L", true
	case float64:
		if math.IsNaN(v) || math.Abs(v) > 1e15 || v != 0 && math.Abs(v) < 1e-6 || math.Signbit(v) && v == 0 {
			return "", false
		}
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0" // a Double literal, not an Int32
		}
		return s, true
	case bool:
		return strconv.FormatBool(v), true
	case time.Time:
		return "datetime'" + v.UTC().Format("2006-01-02T15:04:05.0000000Z") + "'", true
	case ts.GUID:
		return "guid'" + v.String() + "'", true
	case []byte:
		return "X'" + hex.EncodeToString(v) + "'", len(v) < 100
	}
	return "", false
}

func (g *generator) feedOp() {
	table := g.existingTable()
	if table == "" {
		return
	}
	ttl, _ := g.ref.m.TTL(table)
	switch r := g.rng.Intn(20); {
	case r < 5:
		if ttl != (ts.TTL{}) || ttlHome(table) && g.rng.Intn(4) != 0 {
			return // expiries are recorded when the store sweeps: not modelled
		}
		op := Op{kind: kindEnableFeed, table: table, kept: g.kept()}
		if g.rng.Intn(2) == 0 {
			op.images = ts.ImagesNew
		}
		g.emit(op)
	case r < 6:
		g.emit(Op{kind: kindDisableFeed, table: table, kept: g.kept()})
	default:
		if !g.ref.m.FeedOn(table) && g.rng.Intn(8) != 0 {
			return
		}
		op := Op{kind: kindReadChanges, table: table, kept: g.kept(), n: g.rng.Intn(1000),
			top: []int{1, 3, 10, 1000}[g.rng.Intn(4)], iterate: g.rng.Intn(3) == 0}
		if g.rng.Intn(4) == 0 {
			op.pk, _ = g.randomKey(table)
		}
		g.emit(op)
	}
}

func (g *generator) ttlOp() {
	if g.rng.Intn(2) == 0 {
		g.emit(Op{kind: kindAdvance, dur: time.Duration(1+g.rng.Intn(2)) * ttlStep})
		return
	}
	table := g.existingTable()
	if table == "" || g.ref.m.FeedOn(table) || !ttlHome(table) && g.rng.Intn(4) != 0 {
		return
	}
	op := Op{kind: kindSetTTL, table: table, kept: g.kept()}
	if g.rng.Intn(4) != 0 {
		op.dur = time.Duration(2*g.rng.Intn(4)+1) * ttlStep / 2
	}
	if g.rng.Intn(3) == 0 {
		op.prop = "When"
	}
	if g.rng.Intn(12) == 0 {
		// One fault.
		if g.rng.Intn(2) == 0 {
			op.dur = -ttlStep
		} else {
			op.prop = g.pick([]string{"RowKey", "1bad", "a-b"})
		}
	}
	g.emit(op)
}
