// Package plan turns a checked filter into a query plan: the key ranges a
// query must read and the residual predicate it must evaluate on each
// entity found there.
//
// Ranges are expressed in (PartitionKey, RowKey) terms, never in table
// bytes, with the driver's types (driver.Key, driver.KeyRange), so they go
// to a driver as they are; the embedded engine maps each Key to a stored
// key with internal/keys.
// Keys order by PartitionKey, then RowKey, byte-wise, which is the order of
// the stored keys because keys never contain bytes below 0x20.
//
// The planner relies on that rule for its bound arithmetic: the smallest
// string greater than s that a key can hold is s+" " (Successor), so
// `RowKey gt 'x'` reads from RowKey 'x ' and `RowKey le 'x'` ends before
// RowKey 'x ', and the first position after partition p is
// (p+" ", "").
//
// Every plan is sound: every entity matching the filter lies in one of the
// ranges and satisfies the residual. Ranges may hold entities that do not
// match; the residual rejects them.
package plan

import (
	"fmt"
	"strings"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
)

// Kind classifies a plan by the cheapest access path that serves it, in the
// vocabulary of Azure's table design guide.
type Kind uint8

// The plan kinds, cheapest first.
const (
	// Empty reads nothing: the filter contradicts itself on the keys.
	Empty Kind = iota + 1
	// Point reads single entities by (PartitionKey, RowKey).
	Point
	// Range reads RowKey ranges inside known partitions.
	Range
	// PartitionScan reads whole partitions.
	PartitionScan
	// TableScan reads ranges that cross partition boundaries, possibly the
	// whole table.
	TableScan
)

var kindNames = [...]string{
	Empty:         "empty",
	Point:         "point",
	Range:         "range",
	PartitionScan: "partition scan",
	TableScan:     "table scan",
}

// String returns the kind's name: "empty", "point", "range",
// "partition scan" or "table scan".
func (k Kind) String() string {
	if k == 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", uint8(k))
	}
	return kindNames[k]
}

// Plan says how to answer a filter: read Ranges in order and return the
// entities that satisfy Residual.
type Plan struct {
	Kind Kind
	// Ranges are sorted, non-overlapping and non-empty. Empty plans have
	// none.
	Ranges []KeyRange
	// Residual is the part of the filter the ranges do not already
	// guarantee; nil means every entity in Ranges matches. An Empty plan
	// keeps the whole filter here, for display; nothing is evaluated.
	Residual filter.Node
}

// MaxRanges bounds the number of ranges in a plan, and the number of key
// boxes the planner tracks for any part of a filter. A part that would need
// more (a long chain of `or`, or the product of two large ones under `and`)
// is replaced by the one box bounding it, and a plan that would still have
// more ranges reads the single range covering them all. The key conditions
// so coarsened stay in the residual, so results stay exact; only the read
// grows.
const MaxRanges = 100

// From returns the ranges still to read when reading resumes at k:
// driver.RangesFrom(p.Ranges, k), a new slice.
func (p *Plan) From(k Key) []KeyRange { return driver.RangesFrom(p.Ranges, k) }

// String prints the plan with its own ranges; see Format.
func (p *Plan) String() string { return p.Format(p.Ranges) }

// Format prints a plan, using ranges in place of p.Ranges so a caller can
// print the ranges left after a continuation. The format is stable:
//
//	plan: range
//	ranges:
//	  PartitionKey = 'Sales', 'A' <= RowKey < 'B'
//	residual: Age gt 30
//
// Each range line describes one half-open range of (PartitionKey, RowKey)
// positions; see KeyRange.String. The residual is in the canonical text of
// filter.Format. An empty plan prints "ranges: none", a plan without
// residual prints "residual: none".
func (p *Plan) Format(ranges []KeyRange) string {
	var b strings.Builder
	b.WriteString("plan: ")
	b.WriteString(p.Kind.String())
	b.WriteByte('\n')
	writeRanges(&b, ranges)
	writeResidual(&b, p.Residual)
	return b.String()
}

// writeRanges writes the "ranges:" lines of a printed plan.
func writeRanges(b *strings.Builder, ranges []KeyRange) {
	if len(ranges) == 0 {
		b.WriteString("ranges: none\n")
		return
	}
	b.WriteString("ranges:\n")
	for _, r := range ranges {
		b.WriteString("  ")
		b.WriteString(r.String())
		b.WriteByte('\n')
	}
}

// writeResidual writes the "residual:" line of a printed plan.
func writeResidual(b *strings.Builder, residual filter.Node) {
	b.WriteString("residual: ")
	if residual == nil {
		b.WriteString("none")
	} else {
		b.WriteString(filter.Format(residual))
	}
	b.WriteByte('\n')
}
