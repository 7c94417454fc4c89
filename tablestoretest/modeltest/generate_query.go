package modeltest

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	ts "github.com/tablestore/tablestore"
)

// This file generates the reads: filters, queries, queries with writes
// between their pages, and the operations through a Partition view or on
// segments.

// literal is a filter literal of some type, as text.
func (g *generator) literal() string {
	switch g.rng.Intn(8) {
	case 0:
		return "'" + strings.ReplaceAll(g.pick(literalStrings), "'", "''") + "'"
	case 1:
		return strconv.Itoa(int(int32Pool[g.rng.Intn(len(int32Pool))]))
	case 2:
		return strconv.FormatInt(int64Pool[g.rng.Intn(len(int64Pool))], 10) + "L"
	case 3:
		return g.pick([]string{"-1.5", "0.0", "0.5", "1.0", "2.0", "3.25"})
	case 4:
		return g.pick([]string{"true", "false"})
	case 5:
		tm := timePool[g.rng.Intn(len(timePool))]
		return "datetime'" + tm.Format("2006-01-02T15:04:05.0000000Z") + "'"
	case 6:
		return "guid'" + guidPool[g.rng.Intn(len(guidPool))].String() + "'"
	default:
		return "X'" + fmt.Sprintf("%X", binaryPool[g.rng.Intn(len(binaryPool))]) + "'"
	}
}

var compareOps = []string{"eq", "ne", "gt", "ge", "lt", "le"}

// stampLiteral returns a placeholder for a Timestamp literal: {stamp 0}
// is the clock's start, {stamp N} the Nth of the Timestamps the store
// has given (see runner.stamps). The store's Timestamps are not known
// when the workload is generated; the runner puts the literal in.
func (g *generator) stampLiteral() string {
	if g.rng.Intn(4) == 0 {
		return "{stamp 0}"
	}
	return fmt.Sprintf("{stamp %d}", 1+g.rng.Intn(1000))
}

// quotedKey returns a key from pool as a filter string literal.
func (g *generator) quotedKey(pool []string) string {
	return strings.ReplaceAll(g.pick(pool), "'", "''")
}

// randomFilter returns a filter of the given nesting depth over keys and
// user properties; keys get string literals most of the time so the
// planner's ranges are exercised.
func (g *generator) randomFilter(depth int) string {
	if depth <= 0 || g.rng.Intn(3) == 0 {
		leaves := 10
		if g.cfg.Quirks.PropertyFilters {
			leaves = 4 // keys, and Timestamp below
		}
		switch r := g.rng.Intn(leaves); {
		case r == 3 && g.cfg.Quirks.PropertyFilters && !g.cfg.Quirks.TimestampFilters:
			return fmt.Sprintf("Timestamp %s %s", g.pick(compareOps), g.stampLiteral())
		case r == 0 || r == 1:
			return fmt.Sprintf("PartitionKey %s '%s'", g.pick(compareOps), g.quotedKey(pkPool))
		case r == 2 || r == 3:
			return fmt.Sprintf("RowKey %s '%s'", g.pick(compareOps), g.quotedKey(rkPool))
		case r == 4:
			if g.rng.Intn(2) == 0 && !g.cfg.Quirks.TimestampFilters {
				return fmt.Sprintf("Timestamp %s %s", g.pick(compareOps), g.stampLiteral())
			}
			return g.pick([]string{"Flag", "A", "B"})
		case r == 5:
			return fmt.Sprintf("%s %s %s", g.literal(), g.pick(compareOps), g.pick(propPool))
		default:
			return fmt.Sprintf("%s %s %s", g.pick(propPool), g.pick(compareOps), g.literal())
		}
	}
	switch g.rng.Intn(4) {
	case 0:
		return "not (" + g.randomFilter(depth-1) + ")"
	case 1:
		return g.randomFilter(depth-1) + " or " + g.randomFilter(depth-1)
	default:
		return "(" + g.randomFilter(depth-1) + ") and (" + g.randomFilter(depth-1) + ")"
	}
}

// queryFilter returns a random filter: mostly well formed, shaped like the
// queries the planner turns into points, ranges and partition scans.
func (g *generator) queryFilter() string {
	pk := g.quotedKey(pkPool)
	rk := g.quotedKey(rkPool)
	switch g.rng.Intn(12) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("PartitionKey eq '%s' and RowKey eq '%s'", pk, rk)
	case 2:
		return fmt.Sprintf("PartitionKey eq '%s' and RowKey %s '%s'", pk, g.pick(compareOps), rk)
	case 3:
		return fmt.Sprintf("PartitionKey eq '%s' and (%s)", pk, g.randomFilter(2))
	case 4:
		return fmt.Sprintf("(PartitionKey eq '%s' and RowKey eq '%s') or (PartitionKey eq '%s' and RowKey ge '%s')",
			pk, rk, g.quotedKey(pkPool), g.quotedKey(rkPool))
	case 5:
		return fmt.Sprintf("PartitionKey ge '%s' and PartitionKey lt '%s'", pk, g.quotedKey(pkPool))
	case 6:
		return g.pick([]string{"A eq", "A eq B", "1 eq 2", "(A eq 1", "A eq 'x", "A eq 99999999999", "A eq null", "Count gt 1 and"})
	default:
		return g.randomFilter(3)
	}
}

func (g *generator) query() {
	table := g.existingTable()
	if table == "" {
		table = g.tableName()
	}
	op := Op{kind: kindQuery, table: table, kept: g.kept(), filter: g.queryFilter()}
	if g.rng.Intn(3) == 0 {
		op.sel = dedupe([]string{g.pick(propPool), g.pick(selectPool)})
	}
	op.top = []int{0, 1, 2, 3, 5, 10, 1000, 1 + g.rng.Intn(20)}[g.rng.Intn(8)]
	if g.rng.Intn(50) == 0 {
		op.top = g.pick2(-1, 1001)
	}
	op.iterate = g.rng.Intn(4) == 0
	op.reverse = g.rng.Intn(4) == 0 && !g.cfg.Quirks.noScans()
	g.emit(op)
}

// queryWrites emits a paged query with up to four writes (a delete or a
// replacing upsert of an existing entity), in key order, which the runner
// makes behind the query's cursor as it passes them.
func (g *generator) queryWrites() {
	table := g.existingTable()
	if table == "" {
		return
	}
	op := Op{kind: kindQueryWrites, table: table, kept: g.kept(), filter: g.queryFilter(), top: 1 + g.rng.Intn(4)}
	keys := g.ref.m.Keys(table)
	for n := g.rng.Intn(5); n > 0 && len(keys) > 0; n-- {
		// Keys early in the table are likelier: the query passes them
		// sooner, so the writes land behind its cursor more often.
		k := keys[g.rng.Intn(1+g.rng.Intn(len(keys)))]
		w := action{typ: ts.ActionUpsertReplace, entity: &ts.Entity{PartitionKey: k.PK, RowKey: k.RK, Properties: map[string]any{}}}
		if g.rng.Intn(3) == 0 {
			w.typ = ts.ActionDelete
		} else {
			w.entity.Properties = g.randomProps()
		}
		op.writes = append(op.writes, w)
	}
	slices.SortStableFunc(op.writes, func(a, b action) int {
		return cmp.Or(strings.Compare(a.entity.PartitionKey, b.entity.PartitionKey), strings.Compare(a.entity.RowKey, b.entity.RowKey))
	})
	g.emit(op)
}

// ---- through a Partition ----

// partitionOp emits one operation through a Partition view.
func (g *generator) partitionOp() {
	r := g.rng.Intn(12)
	if g.cfg.Quirks.NoKeyspaceOps && r >= 6 {
		r %= 6 // no segments, no partition deletes
	}
	if g.cfg.Quirks.NoReverseOrSegments && r >= 10 {
		r -= 4 // a partition delete rather than segments
	}
	switch r {
	case 10, 11:
		g.segments()
	case 0, 1, 2:
		g.partitionWrite()
	case 3, 4, 5:
		g.partitionQuery()
	default:
		g.partitionDelete()
	}
}

// partitionWrite writes one entity through a Partition, leaving the
// entity's PartitionKey empty half the time.
func (g *generator) partitionWrite() {
	table, ok := g.writeTable()
	if !ok {
		return
	}
	e := g.randomEntity(table)
	op := Op{table: table, kept: g.kept(), entity: e, emptyPK: g.rng.Intn(2) == 0}
	mode := g.randomMode()
	switch g.rng.Intn(3) {
	case 0:
		op.kind = kindPartitionInsert
	case 1:
		op.kind, op.mode = kindPartitionUpsert, mode
	default:
		op.kind, op.mode = kindPartitionUpdate, mode
		op.ifMatch = g.pickIfMatch(idOf(table, e.PartitionKey, e.RowKey))
	}
	g.emit(op)
}

// partitionQuery reads a query through a Partition, by pages or by the
// iterator.
func (g *generator) partitionQuery() {
	table := g.existingTable()
	if table == "" {
		table = g.tableName()
	}
	pk, _ := g.randomKey(table)
	g.emit(Op{kind: kindPartitionQuery, table: table, kept: g.kept(), pk: pk, filter: g.queryFilter(),
		top:     []int{0, 1, 2, 3, 7}[g.rng.Intn(5)],
		reverse: g.rng.Intn(3) == 0 && !g.cfg.Quirks.noScans(),
		iterate: g.rng.Intn(3) == 0})
}

// partitionDelete deletes a partition, or a RowKey range of one.
func (g *generator) partitionDelete() {
	table, ok := g.writeTable()
	if !ok {
		return
	}
	pk, _ := g.randomKey(table)
	op := Op{kind: kindPartitionDelete, table: table, kept: g.kept(), pk: pk}
	switch g.rng.Intn(4) {
	case 0: // the whole partition
	case 1:
		op.from = g.pick(rkPool)
	case 2:
		op.to = g.pick(rkPool)
	default:
		op.from, op.to = g.pick(rkPool), g.pick(rkPool)
	}
	if g.rng.Intn(30) == 0 {
		op.from = g.pick([]string{"a/b", "x#", "\u0080"})
	}
	op.all = op.from == "" && op.to == "" && g.rng.Intn(2) == 0
	g.emit(op)
}

// segments splits a table into segments and reads each with one query.
func (g *generator) segments() {
	table := g.existingTable()
	if table == "" {
		return
	}
	g.emit(Op{kind: kindSegments, table: table, kept: g.kept(), n: 1 + g.rng.Intn(6), filter: g.queryFilter(),
		top: []int{0, 1, 3, 10}[g.rng.Intn(4)], reverse: g.rng.Intn(4) == 0})
}
