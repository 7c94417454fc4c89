package filter

import (
	"bytes"
	"github.com/tablestore/tablestore/edm"
	"math"
)

// Match reports whether the entity p satisfies f. A nil Filter or a nil
// Root matches every entity. Match allocates nothing beyond what p.Lookup
// does and is safe for concurrent use. It gives the same result as
// Eval(f.Root, p), faster for a Filter from Check or Compile, which holds
// Root compiled into a flat program; a Filter built by hand is evaluated
// with Eval.
func (f *Filter) Match(p Properties) bool {
	switch {
	case f == nil || f.Root == nil:
		return true
	case f.prog != nil:
		return run(f.prog, p)
	}
	return Eval(f.Root, p)
}

// Eval reports whether the entity p satisfies the checked tree n. A nil n
// matches every entity. See Compare for the comparison rules; an entity
// that lacks the property of a CompareNode fails it, whatever the operator,
// and NotNode simply negates its operand. The nodes of n must not be nil
// pointers.
func Eval(n Node, p Properties) bool {
	switch n := n.(type) {
	case *CompareNode:
		v, ok := p.Lookup(n.Property)
		return ok && compare(&v, n.Op, &n.Value)
	case *AndNode:
		return Eval(n.X, p) && Eval(n.Y, p)
	case *OrNode:
		return Eval(n.X, p) || Eval(n.Y, p)
	case *NotNode:
		return !Eval(n.X, p)
	case *ConstNode:
		return n.Value
	case nil:
		return true
	}
	return false
}

// Compare reports whether `prop op lit` holds for a property value prop
// and a literal lit, with Azure's observed semantics:
//
//   - Same type: strings and binaries compare byte-wise (ordinal; a prefix
//     sorts first), Guids by their 16 bytes in text order, DateTimes
//     chronologically, Booleans with false < true, numbers numerically.
//   - An Int64 property against an Int32 literal, and a Double property
//     against an Int32 or Int64 literal, compare numerically (exactly; no
//     rounding through float64).
//   - Any other pairing, including an Int32 property against an Int64 or
//     Double literal and an Int64 property against a Double literal, is a
//     mismatch: eq, gt and ge are false; ne, lt and le are true.
//   - Doubles are totally ordered: NaN equals NaN and sorts below every
//     other value, -0 equals +0.
func Compare(prop edm.Value, op Op, lit edm.Value) bool {
	return compare(&prop, op, &lit)
}

// compare is Compare on pointers, which spares the evaluator copying two
// Values per comparison.
func compare(prop *edm.Value, op Op, lit *edm.Value) bool {
	c, ok := order(prop, lit)
	if !ok {
		return op == OpNE || op == OpLT || op == OpLE
	}
	switch op {
	case OpEQ:
		return c == 0
	case OpNE:
		return c != 0
	case OpGT:
		return c > 0
	case OpGE:
		return c >= 0
	case OpLT:
		return c < 0
	case OpLE:
		return c <= 0
	}
	return false
}

// order returns the sign of prop - lit, and false when the two are not
// comparable.
func order(prop, lit *edm.Value) (int, bool) {
	switch prop.Type {
	case edm.TypeString, edm.TypeBinary, edm.TypeGuid:
		if lit.Type != prop.Type {
			return 0, false
		}
		return bytes.Compare(prop.Bytes, lit.Bytes), true
	case edm.TypeInt32, edm.TypeDateTime:
		if lit.Type != prop.Type {
			return 0, false
		}
		return cmpInt(prop.Int, lit.Int), true
	case edm.TypeBoolean:
		if lit.Type != edm.TypeBoolean {
			return 0, false
		}
		return cmpInt(b2i(prop.Int), b2i(lit.Int)), true
	case edm.TypeInt64:
		if lit.Type != edm.TypeInt64 && lit.Type != edm.TypeInt32 {
			return 0, false
		}
		return cmpInt(prop.Int, lit.Int), true
	case edm.TypeDouble:
		switch lit.Type {
		case edm.TypeDouble:
			return cmpFloat(prop.Float, lit.Float), true
		case edm.TypeInt32, edm.TypeInt64:
			return cmpFloatInt(prop.Float, lit.Int), true
		}
	}
	return 0, false
}

func b2i(n int64) int64 {
	if n != 0 {
		return 1
	}
	return 0
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpFloat orders doubles totally: NaN first and equal to itself.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	case a == b:
		return 0
	case a != a && b != b:
		return 0
	case a != a:
		return -1
	}
	return 1
}

// cmpFloatInt compares a double with an integer exactly.
func cmpFloatInt(f float64, i int64) int {
	const two63 = 1 << 63
	switch {
	case math.IsNaN(f) || f < -two63:
		return -1
	case f >= two63:
		return 1
	}
	t := int64(f) // exact: f is in range and truncation drops only the fraction
	if c := cmpInt(t, i); c != 0 {
		return c
	}
	return cmpFloat(f-float64(t), 0)
}
