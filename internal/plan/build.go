package plan

import (
	"github.com/tablestore/tablestore/edm"
	"slices"

	"github.com/tablestore/tablestore/filter"
)

// The names of the key properties, as filters spell them.
const (
	partitionKeyName = "PartitionKey"
	rowKeyName       = "RowKey"
)

// New plans a checked filter; nil matches every entity and plans as a
// table scan of the whole table, and the constant false reads nothing.
//
// The key constraints come from comparisons of PartitionKey or RowKey with
// a string literal (eq, gt, ge, lt, le) combined with and and or. A
// comparison of a key with a literal of another type never matches for eq,
// gt and ge and always matches for ne, lt and le (Azure's type mismatch
// rule), so the first reads nothing and the second reads everything. ne,
// not, and comparisons of other properties do not narrow the ranges; they
// stay in the residual.
//
// The residual is the filter minus the top-level conjuncts that the ranges
// already guarantee (and minus conjuncts that always hold).
func New(root filter.Node) *Plan {
	if root == nil {
		return &Plan{Kind: TableScan, Ranges: []KeyRange{{Unbounded: true}}}
	}
	conjuncts := flattenAnd(root, nil)
	sets := make([]boxSet, len(conjuncts))
	exact := make([]bool, len(conjuncts))
	all, allExact := fullSet, true
	for i, c := range conjuncts {
		sets[i], exact[i] = keySet(c)
		var ok bool
		all, ok = all.intersect(sets[i])
		allExact = allExact && ok
	}
	ranges, rangesExact := toRanges(all)
	p := &Plan{Kind: Empty, Ranges: ranges}
	if len(ranges) == 0 {
		p.Residual = root
		return p
	}
	for _, r := range ranges {
		p.Kind = max(p.Kind, rangeKind(r))
	}
	// When the ranges hold exactly the keys of the intersection, every
	// conjunct whose key set is exact is implied. Otherwise a conjunct is
	// implied when its key set is a single box holding every range.
	implied := func(i int) bool {
		if !exact[i] {
			return false
		}
		if allExact && rangesExact {
			return true
		}
		if len(sets[i]) != 1 {
			return false
		}
		for _, r := range ranges {
			if !sets[i][0].holds(r) {
				return false
			}
		}
		return true
	}
	var residual filter.Node
	for i, c := range conjuncts {
		if implied(i) {
			continue
		}
		if residual == nil {
			residual = c
		} else {
			residual = &filter.AndNode{X: residual, Y: c}
		}
	}
	p.Residual = residual
	return p
}

// flattenAnd appends the conjuncts of n, left to right.
func flattenAnd(n filter.Node, dst []filter.Node) []filter.Node {
	if a, ok := n.(*filter.AndNode); ok {
		return flattenAnd(a.Y, flattenAnd(a.X, dst))
	}
	return append(dst, n)
}

// keySet returns a set of boxes holding the key of every entity that n
// matches, and whether n matches every entity whose key lies in the set
// (so that n is implied by it).
func keySet(n filter.Node) (boxSet, bool) {
	switch n := n.(type) {
	case *filter.AndNode:
		x, xExact := keySet(n.X)
		y, yExact := keySet(n.Y)
		r, ok := x.intersect(y)
		return r, xExact && yExact && ok
	case *filter.OrNode:
		x, xExact := keySet(n.X)
		y, yExact := keySet(n.Y)
		r, ok := x.union(y)
		return r, xExact && yExact && ok
	case *filter.CompareNode:
		return compareSet(n)
	case *filter.ConstNode:
		if n.Value {
			return fullSet, true
		}
		return nil, true
	}
	// not, and any node type this planner does not know, read everything.
	return fullSet, false
}

// compareSet is keySet of one comparison.
func compareSet(n *filter.CompareNode) (boxSet, bool) {
	var onPK bool
	switch n.Property {
	case partitionKeyName:
		onPK = true
	case rowKeyName:
	default:
		return fullSet, false
	}
	if n.Value.Type != edm.TypeString {
		switch n.Op {
		case filter.OpNE, filter.OpLT, filter.OpLE:
			return fullSet, true
		}
		return nil, true
	}
	iv, ok := stringInterval(n.Op, string(n.Value.Bytes))
	if !ok {
		return fullSet, false
	}
	if iv.empty() {
		return nil, true
	}
	if onPK {
		return boxSet{{pk: iv}}, true
	}
	return boxSet{{rk: iv}}, true
}

// stringInterval returns the key strings s satisfying `s op lit`; ok is
// false for ne, which no interval expresses. A literal holding a byte below
// 0x20 is no key: it cuts to its prefix before that byte followed by a
// space, the smallest key string above it.
func stringInterval(op filter.Op, lit string) (interval, bool) {
	cut := -1
	for i := 0; i < len(lit); i++ {
		if lit[i] < 0x20 {
			cut = i
			break
		}
	}
	if cut >= 0 {
		above := Successor(lit[:cut]) // every key > lit is >= above
		switch op {
		case filter.OpEQ:
			return interval{hasHi: true}, true // empty
		case filter.OpGT, filter.OpGE:
			return interval{lo: above}, true
		case filter.OpLT, filter.OpLE:
			return interval{hi: above, hasHi: true}, true
		}
		return interval{}, false
	}
	switch op {
	case filter.OpEQ:
		return interval{lo: lit, hi: Successor(lit), hasHi: true}, true
	case filter.OpGT:
		return interval{lo: Successor(lit)}, true
	case filter.OpGE:
		return interval{lo: lit}, true
	case filter.OpLT:
		return interval{hi: lit, hasHi: true}, true
	case filter.OpLE:
		return interval{hi: Successor(lit), hasHi: true}, true
	}
	return interval{}, false
}

// toRanges maps a box set to sorted, non-overlapping key ranges, merging
// ranges that overlap or touch. exact reports whether the ranges hold
// exactly the keys of s. Past MaxRanges ranges it returns the one range
// covering them all.
func toRanges(s boxSet) (ranges []KeyRange, exact bool) {
	exact = true
	for _, b := range s {
		if b.empty() {
			continue
		}
		r, ok := b.toRange()
		exact = exact && ok
		ranges = append(ranges, r)
	}
	slices.SortFunc(ranges, func(a, b KeyRange) int { return Compare(a.Start, b.Start) })
	merged := ranges[:0]
	for _, r := range ranges {
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			if last.Unbounded || Compare(r.Start, last.End) <= 0 {
				if r.Unbounded || (!last.Unbounded && Compare(r.End, last.End) > 0) {
					last.End, last.Unbounded = r.End, r.Unbounded
				}
				continue
			}
		}
		merged = append(merged, r)
	}
	if len(merged) > MaxRanges {
		last := merged[len(merged)-1]
		return []KeyRange{{Start: merged[0].Start, End: last.End, Unbounded: last.Unbounded}}, false
	}
	return merged, exact
}
