package plan

import (
	"bytes"
	"github.com/tablestore/tablestore/edm"
	"math"
	"testing"

	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/keys"
)

// indexTestValues are values of every type near each other's
// boundaries: numbers of all three numeric types around the same points,
// doubles no integer equals, strings and binaries with 0x00 and prefixes.
func indexTestValues() []edm.Value {
	var vs []edm.Value
	for _, n := range []int64{math.MinInt32, -5, -1, 0, 1, 5, math.MaxInt32} {
		vs = append(vs, edm.Value{Type: edm.TypeInt32, Int: n})
	}
	for _, n := range []int64{math.MinInt64, -5, 0, 5, 1 << 53, 1<<53 + 1, math.MaxInt64} {
		vs = append(vs, edm.Value{Type: edm.TypeInt64, Int: n})
	}
	for _, f := range []float64{math.Inf(-1), -5.5, -5, math.Copysign(0, -1), 0, 4.999, 5, 5.5, 1 << 53, 1<<53 + 2, 1 << 63, math.Inf(1), math.NaN()} {
		vs = append(vs, edm.Value{Type: edm.TypeDouble, Float: f})
	}
	for _, s := range []string{"", "a", "a\x00", "a\x00b", "ab", "b", "\xff"} {
		vs = append(vs, edm.Value{Type: edm.TypeString, Bytes: []byte(s)})
		vs = append(vs, edm.Value{Type: edm.TypeBinary, Bytes: []byte(s)})
	}
	vs = append(vs, edm.Value{Type: edm.TypeBoolean, Int: 0}, edm.Value{Type: edm.TypeBoolean, Int: 1})
	for _, t := range []int64{0, 1, 1 << 60} {
		vs = append(vs, edm.Value{Type: edm.TypeDateTime, Int: t})
	}
	vs = append(vs, edm.Value{Type: edm.TypeGuid, Bytes: make([]byte, 16)},
		edm.Value{Type: edm.TypeGuid, Bytes: bytes.Repeat([]byte{1}, 16)})
	return vs
}

// TestCompareValues checks the value sets against the definition of a
// comparison: for every property value v, literal lit and operator, the
// encoding of v lies in compareValues(op, lit) exactly when
// filter.Compare(v, op, lit) holds. Literals of a filter are never NaN
// or infinite, but the sets must hold for them too.
func TestCompareValues(t *testing.T) {
	vs := indexTestValues()
	for _, lit := range vs {
		for op := filter.OpEQ; op <= filter.OpLE; op++ {
			set := compareValues(op, lit)
			for i, sp := range set {
				if sp.hi != nil && bytes.Compare(sp.lo, sp.hi) >= 0 {
					t.Fatalf("%v %v: empty span %d", op, lit, i)
				}
				if i > 0 && bytes.Compare(set[i-1].hi, sp.lo) > 0 {
					t.Fatalf("%v %v: spans %d and %d overlap", op, lit, i-1, i)
				}
			}
			for _, v := range vs {
				want := filter.Compare(v, op, lit)
				if got := set.has(keys.AppendValue(nil, v)); got != want {
					t.Errorf("%s %v %s: in set %v, Compare %v", filter.FormatLiteral(v), op, filter.FormatLiteral(lit), got, want)
				}
			}
			if set.has(keys.AppendAbsent(nil)) {
				t.Errorf("%v %v: holds absence", op, lit)
			}
		}
	}
}

// TestValueEncodingOrder checks that the encoding orders values of one
// type as filter.Compare does and that equal values encode alike.
func TestValueEncodingOrder(t *testing.T) {
	vs := indexTestValues()
	for _, a := range vs {
		ea := keys.AppendValue(nil, a)
		if n, ok := keys.ValueLen(append(ea, 0x11)); !ok || n != len(ea) {
			t.Fatalf("%v: ValueLen %d %v, encoding %x", a, n, ok, ea)
		}
		d, _, _, err := keys.DecodeValue(ea)
		if err != nil || !filter.Compare(d, filter.OpEQ, a) && !(a.Type == edm.TypeDouble && math.IsNaN(a.Float)) {
			t.Fatalf("%v: decodes to %v, %v", a, d, err)
		}
		for _, b := range vs {
			if a.Type != b.Type {
				continue
			}
			eb := keys.AppendValue(nil, b)
			var want int
			switch {
			case filter.Compare(a, filter.OpLT, b):
				want = -1
			case filter.Compare(a, filter.OpGT, b):
				want = 1
			}
			if got := bytes.Compare(ea, eb); got != want {
				t.Errorf("%s vs %s: encodings compare %d, values %d", filter.FormatLiteral(a), filter.FormatLiteral(b), got, want)
			}
			// A value followed by more of a key stays below ValueEnd and
			// above every smaller value's end.
			if want > 0 && bytes.Compare(keys.ValueEnd(eb), append(ea, 0x08)) > 0 {
				t.Errorf("%s > %s but its keys sort before the end of the smaller", filter.FormatLiteral(a), filter.FormatLiteral(b))
			}
		}
	}
}

// has reports whether s holds the encoding e.
func (s valueSet) has(e []byte) bool {
	for _, sp := range s {
		if bytes.Compare(sp.lo, e) <= 0 && (sp.hi == nil || bytes.Compare(e, sp.hi) < 0) {
			return true
		}
	}
	return false
}
