package tablestore

import (
	"context"

	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/plan"
)

// PlanKind says how a query reads a table, from cheapest to costliest, in
// the terms of Azure's table design guide.
type PlanKind uint8

// The plan kinds.
const (
	// PlanEmpty reads nothing: the filter contradicts itself on the keys,
	// as in `PartitionKey eq 'a' and PartitionKey eq 'b'`.
	PlanEmpty PlanKind = PlanKind(plan.Empty)
	// PlanPoint reads single entities by PartitionKey and RowKey, as in
	// `PartitionKey eq 'a' and RowKey eq '1'`. A disjunction of such
	// terms is a few point reads, where Azure would scan.
	PlanPoint PlanKind = PlanKind(plan.Point)
	// PlanRange reads RowKey ranges inside known partitions, as in
	// `PartitionKey eq 'a' and RowKey ge 'S' and RowKey lt 'T'`.
	PlanRange PlanKind = PlanKind(plan.Range)
	// PlanPartitionScan reads whole partitions, as in
	// `PartitionKey eq 'a' and Age gt 30`.
	PlanPartitionScan PlanKind = PlanKind(plan.PartitionScan)
	// PlanTableScan reads across partitions: no PartitionKey equality.
	// Bounds on PartitionKey still narrow it.
	PlanTableScan PlanKind = PlanKind(plan.TableScan)
)

// String returns "empty", "point", "range", "partition scan" or
// "table scan".
func (k PlanKind) String() string { return plan.Kind(k).String() }

// QueryPlan describes how a query runs. See Table.Plan.
type QueryPlan struct {
	Kind PlanKind
	// Ranges describe the key ranges read, in order, one per element, as
	// conditions on the keys (see String).
	Ranges []string
	// Residual is the canonical text of the filter evaluated on each
	// entity in the ranges; "" when every entity there matches.
	Residual string
	// Reverse is set for a Reverse query, whose Ranges are listed in the
	// order they are read: last first.
	Reverse bool
	// Index names the secondary index the query reads, "" for none. In
	// key order (chosen by the planner) Ranges stay the key ranges, each
	// read for every value tuple the text lists; in index order
	// (Query.Index) Ranges describe the ranges of the index read. Residual
	// is then what the index does not guarantee.
	Index string

	text string
}

// String returns the plan as text, one item per line:
//
//	plan: range
//	ranges:
//	  PartitionKey = 'Sales', 'A' <= RowKey < 'B'
//	residual: Age gt 30
//
// Each range line describes one half-open range of (PartitionKey, RowKey)
// positions by the conditions that hold exactly inside it, written with
// <, <=, >= and > so they are not mistaken for the filter:
//
//	PartitionKey = 'p', RowKey = 'r'            one entity
//	PartitionKey = 'p', 'a' <= RowKey < 'b'     part of one partition
//	PartitionKey = 'p'                          a whole partition
//	(PartitionKey, RowKey) >= ('a', 'm'), PartitionKey < 'c'
//	all                                         the whole table
//
// "ranges: none" means nothing is read; "residual: none" means no entity
// in the ranges is filtered out. A Reverse query's plan line ends with
// ", reverse" ("plan: range, reverse") and its ranges are listed in the
// order they are read, last first.
func (p *QueryPlan) String() string { return p.text }

// Plan returns how q would run: its kind, the key ranges it reads (from
// q.Continuation on, when given) and its residual filter. It reads no
// entity. Errors are those of QueryPage for the same query.
func (t *Table) Plan(q Query) (*QueryPlan, error) { return t.plan(q, nil) }

// plan is Plan in the table, or in part when not nil.
func (t *Table) plan(q Query, part *Partition) (*QueryPlan, error) {
	ctx := context.Background()
	pq, err := t.prepareIn(ctx, q, part)
	if err != nil {
		return nil, err
	}
	if err := t.drv.Exists(ctx); err != nil {
		return nil, mapError(err, false)
	}
	p := pq.plan
	qp := &QueryPlan{Kind: PlanKind(p.Kind), Reverse: pq.reverse}
	if pq.reverse {
		qp.text = p.FormatReverse(pq.ranges)
		for i := len(pq.ranges) - 1; i >= 0; i-- {
			qp.Ranges = append(qp.Ranges, pq.ranges[i].String())
		}
	} else {
		qp.text = p.Format(pq.ranges)
		for _, r := range pq.ranges {
			qp.Ranges = append(qp.Ranges, r.String())
		}
	}
	if p.Residual != nil {
		qp.Residual = filter.Format(p.Residual)
	}
	if pq.index != nil {
		explainIndex(pq, qp)
	}
	return qp, nil
}

// Explain describes how q would run: the plan kind, the key ranges and the
// residual filter, in the format of QueryPlan.String.
func (t *Table) Explain(q Query) (string, error) { return explain(t.Plan(q)) }

func explain(p *QueryPlan, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return p.String(), nil
}
