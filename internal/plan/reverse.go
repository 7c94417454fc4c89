package plan

import (
	"slices"
	"strings"

	"github.com/tablestore/tablestore/driver"
)

// Upto returns the ranges still to read when a reverse read resumes at k:
// driver.RangesUpto(p.Ranges, k), a new slice in ascending order.
func (p *Plan) Upto(k Key) []KeyRange { return driver.RangesUpto(p.Ranges, k) }

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
