package plan

import (
	"bytes"
	"github.com/tablestore/tablestore/edm"
	"slices"
	"strings"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/keys"
)

// Index describes a secondary index to the planner: an ordered list of 1
// to 4 user properties. Entries of a table-wide index order by (value
// tuple, PartitionKey, RowKey); those of a Partitioned index by
// (PartitionKey, value tuple, RowKey). See package keys for the encoding.
type Index = driver.IndexSpec

// MaxIndexTuples bounds the value tuples a key-order index read looks up:
// an equality on an Int32 literal matches three values (Int32, Int64 and
// Double), so four such equalities on a four-property index already make
// 81 tuples.
const MaxIndexTuples = 100

// IndexScan is a plan that reads a secondary index. Every entry read is
// checked against its entity, which is then filtered by Residual; so,
// like Plan, it is sound: every matching entity lies in what it reads.
//
// In key order (Order false) it looks up each of Tuples, reading the
// entries of the tuple inside the key ranges Ranges, and merges the
// tuples' entries into (PartitionKey, RowKey) order: the order, pages and
// continuation positions of a plain query. In index order (Order true)
// it reads Spans of index suffixes (see package keys), in the index's own
// order.
type IndexScan struct {
	driver.IndexScan
	// desc holds, by span (index order), the conditions it stands for,
	// for Format.
	desc []string
}

// Span is a half-open range [Start, End) of index suffixes; a nil Start
// starts at the index's first entry and a nil End runs to its end.
type Span = driver.IndexSpan

// ChooseIndex returns a key-order read of one of indexes that serves the
// filter root planned as p, or nil when none does or p is no scan (a
// point or range read is cheaper than any index). An index serves when
// the filter pins every one of its properties to a few values: a top
// level conjunct `P eq literal` (or comparisons bounding P to single
// values) for each property P, or a top level `or` whose every branch
// does so. For a Partitioned index every range of p must also lie inside
// one partition. The comparisons the index guarantees leave the residual.
// Among serving indexes it prefers a unique one, then more properties,
// then fewer tuples, then a table-wide one, then the first name.
func ChooseIndex(root filter.Node, p *Plan, indexes []Index) *IndexScan {
	if root == nil || p.Kind < PartitionScan || p.Residual == nil {
		return nil
	}
	var best *IndexScan
	for _, ix := range indexes {
		s := keyOrderScan(p, ix)
		if s != nil && (best == nil || better(s, best)) {
			best = s
		}
	}
	return best
}

// better reports whether a is preferred to b (see ChooseIndex).
func better(a, b *IndexScan) bool {
	switch {
	case a.Index.Unique != b.Index.Unique:
		return a.Index.Unique
	case len(a.Index.Properties) != len(b.Index.Properties):
		return len(a.Index.Properties) > len(b.Index.Properties)
	case len(a.Tuples) != len(b.Tuples):
		return len(a.Tuples) < len(b.Tuples)
	case a.Index.Partitioned != b.Index.Partitioned:
		return !a.Index.Partitioned
	}
	return a.Index.Name < b.Index.Name
}

// keyOrderScan is ChooseIndex for one index, or nil.
func keyOrderScan(p *Plan, ix Index) *IndexScan {
	if ix.Partitioned {
		for _, r := range p.Ranges {
			if _, ok := r.Partition(); !ok {
				return nil
			}
		}
	}
	conj := flattenAnd(p.Residual, nil)
	top, used := propertySets(conj, ix.Properties)
	// Candidates: the top-level sets alone, then each top-level `or`.
	var tuples [][]byte
	drop := -1 // the `or` conjunct the tuples make implied, if any
	found := false
	if t, ok := pointTuples(top, nil); ok {
		tuples, found = t, true
	} else {
		for i, c := range conj {
			or, ok := c.(*filter.OrNode)
			if !ok {
				continue
			}
			t, exact, ok := orTuples(or, top, ix.Properties)
			if !ok {
				continue
			}
			tuples, found = t, true
			if exact {
				drop = i
			}
			break
		}
	}
	if !found {
		return nil
	}
	s := &IndexScan{IndexScan: driver.IndexScan{Index: ix, Tuples: tuples, Ranges: p.Ranges}}
	for i, c := range conj {
		if used[i] || i == drop {
			continue
		}
		s.Residual = and(s.Residual, c)
	}
	return s
}

// IndexOrder returns a read of ix in index order serving the filter root
// (nil: every entity) planned as p. Top level comparisons of the indexed
// properties with literals narrow the read: leading properties pinned to
// a few values, then one property bounded by ranges; they leave the
// residual. Any other condition, the keys' included, stays in the
// residual. A Partitioned index is read partition by partition, only
// those p's ranges hold when each lies inside one partition, else whole.
func IndexOrder(root filter.Node, p *Plan, ix Index) *IndexScan {
	var conj []filter.Node
	if root != nil {
		conj = flattenAnd(root, nil)
	}
	sets, used := propertySets(conj, ix.Properties)
	spans, descs, nUsed := tupleSpans(sets, ix.Properties)
	drop := -1
	if nUsed < len(ix.Properties) {
		// A top-level `or` of equalities on every property reads only
		// its tuples.
		for i, c := range conj {
			or, ok := c.(*filter.OrNode)
			if !ok {
				continue
			}
			tuples, exact, ok := orTuples(or, sets, ix.Properties)
			if !ok || len(tuples) > MaxRanges {
				continue
			}
			spans, descs, nUsed = nil, nil, len(ix.Properties)
			for _, t := range tuples {
				spans = append(spans, Span{Start: t, End: keys.ValueEnd(t)})
				descs = append(descs, describeTuple(t, ix.Properties))
			}
			if exact {
				drop = i
			}
			break
		}
	}
	s := &IndexScan{IndexScan: driver.IndexScan{Index: ix, Order: true}}
	if ix.Partitioned {
		var pks []string
		for _, r := range p.Ranges {
			pk, ok := r.Partition()
			if !ok {
				pks = nil
				break
			}
			if n := len(pks); n == 0 || pks[n-1] != pk {
				pks = append(pks, pk)
			}
		}
		if len(p.Ranges) > 0 && (pks == nil || len(pks)*len(spans) > MaxRanges) {
			// The whole index; no condition is implied.
			s.Spans, s.desc = []Span{{}}, []string{"all"}
			s.Residual = root
			return s
		}
		var ps []Span
		var pd []string
		for _, pk := range pks {
			pre := append([]byte(pk), keys.Sep)
			end := append([]byte(pk), keys.Sep+1)
			for i, sp := range spans {
				x := Span{Start: append(bytes.Clone(pre), sp.Start...), End: end}
				if sp.End != nil {
					x.End = append(bytes.Clone(pre), sp.End...)
				}
				ps = append(ps, x)
				whole := KeyRange{Start: Key{PartitionKey: pk}, End: driver.PartitionEnd(pk)}
				pd = append(pd, joinDesc(whole.String(), descs[i]))
			}
		}
		spans, descs = ps, pd
	}
	s.Spans, s.desc = spans, descs
	for i, c := range conj {
		if i == drop || used[i] && slices.Index(ix.Properties, c.(*filter.CompareNode).Property) < nUsed {
			continue
		}
		s.Residual = and(s.Residual, c)
	}
	return s
}

func and(x, y filter.Node) filter.Node {
	if x == nil {
		return y
	}
	return &filter.AndNode{X: x, Y: y}
}

func joinDesc(a, b string) string {
	if b == "all" {
		return a
	}
	return a + ", " + b
}

// propertySets returns, for each property of props, the set of encoded
// values the top level comparisons of conj allow (every value, absence
// included, when none constrains it), and which conjuncts are such
// comparisons: each is implied by its property's set.
func propertySets(conj []filter.Node, props []string) ([]valueSet, []bool) {
	sets := make([]valueSet, len(props))
	for j := range sets {
		sets[j] = allValues
	}
	used := make([]bool, len(conj))
	for i, c := range conj {
		cmp, ok := c.(*filter.CompareNode)
		if !ok {
			continue
		}
		j := slices.Index(props, cmp.Property)
		if j < 0 {
			continue
		}
		sets[j] = sets[j].intersect(compareValues(cmp.Op, cmp.Value))
		used[i] = true
	}
	return sets, used
}

// pointTuples returns the product of sets when each is a set of single
// values, at most MaxIndexTuples of them, with each tuple appended to
// prefix; ok is false otherwise.
func pointTuples(sets []valueSet, prefix []byte) ([][]byte, bool) {
	tuples := [][]byte{prefix}
	for _, s := range sets {
		var next [][]byte
		for _, sp := range s {
			v, ok := sp.point()
			if !ok {
				return nil, false
			}
			for _, t := range tuples {
				next = append(next, append(bytes.Clone(t), v...))
			}
		}
		if len(next) > MaxIndexTuples {
			return nil, false
		}
		tuples = next
	}
	slices.SortFunc(tuples, bytes.Compare)
	return tuples, true
}

// orTuples returns the tuples of an `or` whose every branch, and-ed with
// the top level sets, pins every property of props to single values;
// exact reports that the branches hold nothing else, so the tuples imply
// the `or`.
func orTuples(or *filter.OrNode, top []valueSet, props []string) (tuples [][]byte, exact, ok bool) {
	exact = true
	for _, d := range flattenOr(or, nil) {
		conj := flattenAnd(d, nil)
		sets, used := propertySets(conj, props)
		for j := range sets {
			sets[j] = sets[j].intersect(top[j])
		}
		t, ok := pointTuples(sets, nil)
		if !ok {
			return nil, false, false
		}
		tuples = append(tuples, t...)
		if len(tuples) > MaxIndexTuples {
			return nil, false, false
		}
		for _, u := range used {
			exact = exact && u
		}
	}
	slices.SortFunc(tuples, bytes.Compare)
	return slices.CompactFunc(tuples, bytes.Equal), exact, true
}

func flattenOr(n filter.Node, dst []filter.Node) []filter.Node {
	if o, ok := n.(*filter.OrNode); ok {
		return flattenOr(o.Y, flattenOr(o.X, dst))
	}
	return append(dst, n)
}

// tupleSpans turns the properties' sets into spans of value tuples, in
// order: the leading properties whose sets are a few single values make
// a product of prefixes, the next property with a constrained set adds
// its ranges, and the rest is unconstrained. nUsed is how many leading
// properties the spans account for exactly.
func tupleSpans(sets []valueSet, props []string) (spans []Span, descs []string, nUsed int) {
	prefixes := [][]byte{nil}
	pdescs := []string{""}
	for j, s := range sets {
		if len(s) == 0 {
			return nil, nil, len(sets) // a contradiction: nothing
		}
		if s.full() {
			break
		}
		if _, ok := pointTuples([]valueSet{s}, nil); ok && len(prefixes)*len(s) <= MaxRanges {
			var np [][]byte
			var nd []string
			for i, pre := range prefixes {
				for _, sp := range s {
					np = append(np, append(bytes.Clone(pre), sp.lo...))
					nd = append(nd, joinCond(pdescs[i], describeSpan(props[j], sp)))
				}
			}
			prefixes, pdescs, nUsed = np, nd, j+1
			continue
		}
		if len(prefixes)*len(s) > MaxRanges {
			break
		}
		for i, pre := range prefixes {
			for _, sp := range s {
				x := Span{Start: append(bytes.Clone(pre), sp.lo...)}
				switch {
				case sp.hi != nil:
					x.End = append(bytes.Clone(pre), sp.hi...)
				case pre != nil:
					x.End = keys.ValueEnd(pre)
				}
				if pre == nil && sp.lo == nil {
					x.Start = nil
				}
				spans = append(spans, x)
				descs = append(descs, joinCond(pdescs[i], describeSpan(props[j], sp)))
			}
		}
		return sortSpans(spans, descs), descs, j + 1
	}
	for i, pre := range prefixes {
		x := Span{}
		if pre != nil {
			x = Span{Start: pre, End: keys.ValueEnd(pre)}
		}
		spans = append(spans, x)
		d := pdescs[i]
		if d == "" {
			d = "all"
		}
		descs = append(descs, d)
	}
	return sortSpans(spans, descs), descs, nUsed
}

// sortSpans sorts spans, with their descriptions, by start.
func sortSpans(spans []Span, descs []string) []Span {
	idx := make([]int, len(spans))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return bytes.Compare(spans[a].Start, spans[b].Start) })
	s2 := make([]Span, len(spans))
	d2 := make([]string, len(spans))
	for i, j := range idx {
		s2[i], d2[i] = spans[j], descs[j]
	}
	copy(spans, s2)
	copy(descs, d2)
	return spans
}

func joinCond(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// Format prints the scan, as Plan.Format prints a plan: for key order,
// the ranges left (ranges) and the tuples looked up in them,
//
//	plan: index ByColor (Color)
//	values:
//	  Color = 'red'
//	ranges:
//	  all
//	residual: Age gt 30
//
// and for index order the spans left after resuming at pos (nil: all),
// one line each, a span the position cuts marked "(resumed)":
//
//	plan: index ByColor (Color, Size), index order
//	index ranges:
//	  Color = 'red', 3 <= Size < 7
//	residual: none
func (s *IndexScan) Format(ranges []KeyRange, pos []byte) string {
	var b strings.Builder
	b.WriteString("plan: index ")
	b.WriteString(s.Index.Name)
	b.WriteString(" (")
	b.WriteString(strings.Join(s.Index.Properties, ", "))
	b.WriteString(")")
	if s.Index.Partitioned {
		b.WriteString(" partitioned")
	}
	if s.Index.Unique {
		b.WriteString(" unique")
	}
	if s.Order {
		b.WriteString(", index order\n")
		spans, idx := s.SpansFrom(pos)
		if len(spans) == 0 {
			b.WriteString("index ranges: none\n")
		} else {
			b.WriteString("index ranges:\n")
			for k, i := range idx {
				b.WriteString("  ")
				b.WriteString(s.desc[i])
				if !bytes.Equal(spans[k].Start, s.Spans[i].Start) {
					b.WriteString(" (resumed)")
				}
				b.WriteByte('\n')
			}
		}
	} else {
		b.WriteByte('\n')
		if len(s.Tuples) == 0 {
			b.WriteString("values: none\n")
		} else {
			b.WriteString("values:\n")
			for _, d := range s.Descriptions() {
				b.WriteString("  ")
				b.WriteString(d)
				b.WriteByte('\n')
			}
		}
		writeRanges(&b, ranges)
	}
	writeResidual(&b, s.Residual)
	return b.String()
}

// Descriptions returns the conditions of each tuple (key order) or span
// (index order), one line each, as Format prints them.
func (s *IndexScan) Descriptions() []string {
	if s.Order {
		return slices.Clone(s.desc)
	}
	out := make([]string, len(s.Tuples))
	for i, t := range s.Tuples {
		out[i] = describeTuple(t, s.Index.Properties)
	}
	return out
}

// describeTuple prints an encoded tuple as equalities.
func describeTuple(t []byte, props []string) string { return keys.FormatTuple(t, props) }

// describeSpan prints one span of one property's values.
func describeSpan(prop string, sp valueSpan) string {
	if v, ok := sp.point(); ok {
		return describeTuple(v, []string{prop})
	}
	if sp.lo == nil && sp.hi == nil {
		return prop + " any"
	}
	lo, loOp := boundText(sp.lo, true)
	hi, hiOp := boundText(sp.hi, false)
	switch {
	case lo == "" && hi == "":
		if len(sp.lo) == 1 && len(sp.hi) == 1 && sp.hi[0] == sp.lo[0]+1 {
			return prop + " is " + typeOfTag(sp.lo[0])
		}
		return prop + " in types " + typeOfTag(sp.lo[0]) + " to " + typeOfTag(sp.hi[0]-1)
	case lo == "":
		return prop + " " + hiOp + " " + hi
	case hi == "":
		return prop + " " + loOp + " " + lo
	}
	return lo + " " + flip(loOp) + " " + prop + " " + hiOp + " " + hi
}

func flip(op string) string {
	if op == ">=" {
		return "<="
	}
	return "<"
}

func typeOfTag(tag byte) string {
	if tag == keys.TagAbsent {
		return "absent"
	}
	return edm.Type(tag - keys.TypeStart(0)[0]).String()
}

// boundText prints one bound of a span: the literal and the operator
// (>=, > for a lower bound; <, <= for an upper one), or "" for a type's
// boundary.
func boundText(b []byte, lower bool) (string, string) {
	if len(b) <= 1 {
		return "", ""
	}
	after := b[len(b)-1] == 0xff
	if n, ok := keys.ValueLen(b); ok && n == len(b) {
		after = false
	} else if after {
		b = b[:len(b)-1]
	}
	v, _, _, err := keys.DecodeValue(b)
	if err != nil {
		return "invalid", "?"
	}
	lit := filter.FormatLiteral(v)
	switch {
	case lower && after:
		return lit, ">"
	case lower:
		return lit, ">="
	case after:
		return lit, "<="
	}
	return lit, "<"
}
