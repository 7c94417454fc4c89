package plan

import (
	"bytes"
	"github.com/tablestore/tablestore/edm"

	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/keys"
)

// valueSpan is a half-open range [lo, hi) of encoded property values (see
// package keys); nil lo is the first encoding, nil hi runs past the last.
type valueSpan struct{ lo, hi []byte }

// valueSet is a set of encoded values: sorted, non-overlapping spans.
type valueSet []valueSpan

// allValues holds every value and absence.
var allValues = valueSet{{}}

func (s valueSet) full() bool { return len(s) == 1 && s[0].lo == nil && s[0].hi == nil }

// point reports whether sp holds a single value, and its encoding.
func (sp valueSpan) point() ([]byte, bool) {
	if sp.lo == nil || len(sp.hi) != len(sp.lo)+1 || sp.hi[len(sp.lo)] != 0xff || !bytes.HasPrefix(sp.hi, sp.lo) {
		return nil, false
	}
	if n, ok := keys.ValueLen(sp.lo); !ok || n != len(sp.lo) {
		return nil, false
	}
	return sp.lo, true
}

// lessLo orders lower bounds (nil first); lessHi upper ones (nil last).
func maxLo(a, b []byte) []byte {
	if bytes.Compare(a, b) >= 0 {
		return a
	}
	return b
}

func minHi(a, b []byte) []byte {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case bytes.Compare(a, b) <= 0:
		return a
	}
	return b
}

// intersect returns the values in both s and t.
func (s valueSet) intersect(t valueSet) valueSet {
	var out valueSet
	i, j := 0, 0
	for i < len(s) && j < len(t) {
		lo, hi := maxLo(s[i].lo, t[j].lo), minHi(s[i].hi, t[j].hi)
		if hi == nil || bytes.Compare(lo, hi) < 0 {
			out = append(out, valueSpan{lo, hi})
		}
		// Advance the span that ends first.
		if s[i].hi != nil && (t[j].hi == nil || bytes.Compare(s[i].hi, t[j].hi) <= 0) {
			i++
		} else {
			j++
		}
	}
	return out
}

// compareValues returns the encoded values v of a property for which
// `v op lit` holds under filter.Compare's rules; an absent property never
// satisfies a comparison, so its encoding is never in the set.
func compareValues(op filter.Op, lit edm.Value) valueSet {
	var out valueSet
	add := func(lo, hi []byte) {
		if bytes.Compare(lo, hi) < 0 {
			out = append(out, valueSpan{lo, hi})
		}
	}
	for t := edm.TypeString; t <= edm.TypeBinary; t++ {
		start, end := keys.TypeStart(t), keys.TypeEnd(t)
		x, cut, rel := literalIn(t, lit)
		switch rel {
		case incomparable:
			// Azure's type mismatch: ne, lt and le hold, the rest do not.
			if op == filter.OpNE || op == filter.OpLT || op == filter.OpLE {
				add(start, end)
			}
		case exact:
			ex := keys.AppendValue(nil, x)
			after := keys.ValueEnd(ex)
			switch op {
			case filter.OpEQ:
				add(ex, after)
			case filter.OpNE:
				add(start, ex)
				add(after, end)
			case filter.OpGT:
				add(after, end)
			case filter.OpGE:
				add(ex, end)
			case filter.OpLT:
				add(start, ex)
			case filter.OpLE:
				add(start, after)
			}
		case between:
			// No value of t equals lit; those below cut are less.
			switch op {
			case filter.OpNE:
				add(start, end)
			case filter.OpGT, filter.OpGE:
				add(cut, end)
			case filter.OpLT, filter.OpLE:
				add(start, cut)
			}
		}
	}
	return out
}

// How a literal relates to the values of a property type.
const (
	incomparable = iota // a type mismatch
	exact               // equal to one value of the type
	between             // comparable, equal to none (an integer no double holds)
)

// literalIn returns lit as a value of type t (exact), or the first
// encoding of a value greater than lit (between), or incomparable, per
// filter.Compare's pairings of property and literal types.
func literalIn(t edm.Type, lit edm.Value) (edm.Value, []byte, int) {
	switch {
	case t == lit.Type:
		return lit, nil, exact
	case t == edm.TypeInt64 && lit.Type == edm.TypeInt32:
		return edm.Value{Type: edm.TypeInt64, Int: lit.Int}, nil, exact
	case t == edm.TypeDouble && (lit.Type == edm.TypeInt32 || lit.Type == edm.TypeInt64):
		d := edm.Value{Type: edm.TypeDouble, Float: float64(lit.Int)}
		if filter.Compare(d, filter.OpEQ, lit) {
			return d, nil, exact
		}
		enc := keys.AppendValue(nil, d)
		if filter.Compare(d, filter.OpGT, lit) {
			return edm.Value{}, enc, between // d is the least double above lit
		}
		return edm.Value{}, keys.ValueEnd(enc), between // d is the greatest below
	}
	return edm.Value{}, nil, incomparable
}
