package plan

import (
	"slices"
	"strings"
)

// Upto returns the ranges still to read when a reverse read resumes at k:
// ranges wholly after k are dropped and the range holding k ends just
// after it, so k is the first position read. The ranges stay in ascending
// order; a reverse reader takes them last first. The result shares no
// memory with p.Ranges that a caller could change.
func (p *Plan) Upto(k Key) []KeyRange {
	end := Key{PartitionKey: k.PartitionKey, RowKey: Successor(k.RowKey)}
	out := make([]KeyRange, 0, len(p.Ranges))
	for _, r := range p.Ranges {
		if Compare(r.Start, end) >= 0 {
			continue
		}
		if r.Unbounded || Compare(r.End, end) > 0 {
			r.End, r.Unbounded = end, false
		}
		out = append(out, r)
	}
	return out
}

// FormatReverse prints the plan of a reverse read of ranges: as Format,
// with ", reverse" after the kind and the ranges in the order they are
// read, last first:
//
//	plan: range, reverse
//	ranges:
//	  PartitionKey = 'Sales', 'B' <= RowKey < 'C'
//	  PartitionKey = 'Sales', 'A' <= RowKey < 'B'
//	residual: none
func (p *Plan) FormatReverse(ranges []KeyRange) string {
	rev := slices.Clone(ranges)
	slices.Reverse(rev)
	s := p.Format(rev)
	line, rest, _ := strings.Cut(s, "\n")
	return line + ", reverse\n" + rest
}
