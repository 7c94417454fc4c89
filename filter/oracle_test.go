package filter

import (
	"github.com/tablestore/tablestore/edm"
	"math"
	"math/big"
	"strings"
)

// This file is the test oracle for filter evaluation, written from the
// protocol digest's rules (section 3, "Typed comparison semantics") and
// not from eval.go. It has no comparison switch: a rule table says how a
// (property type, literal type) pair compares, a relation says where the
// property stands against the literal, and a truth table gives each
// operator's answer for each relation.

// pairRule is how a property of one type meets a literal of another.
type pairRule byte

const (
	ruleMismatch pairRule = '.' // types that do not compare
	ruleOrdered  pairRule = 'o' // same type, its natural order
	ruleNumeric  pairRule = 'n' // numbers compared by exact value
)

// ruleGrid is the digest's matrix, one row per property type, one column
// per literal type, in the order of oracleTypes. The only cross-type
// entries are the widenings the digest lists: an Int64 property against
// an Int32 literal, a Double property against an Int32 or Int64 literal.
// An Int32 property against an Int64 or Double literal, and an Int64
// property against a Double literal, are mismatches.
const ruleGrid = `
            Str I32 I64 Dbl Bool DT Guid Bin
String       o   .   .   .   .   .   .   .
Int32        .   o   .   .   .   .   .   .
Int64        .   n   o   .   .   .   .   .
Double       .   n   n   o   .   .   .   .
Boolean      .   .   .   .   o   .   .   .
DateTime     .   .   .   .   .   o   .   .
Guid         .   .   .   .   .   .   o   .
Binary       .   .   .   .   .   .   .   o
`

var oracleTypes = []edm.Type{edm.TypeString, edm.TypeInt32, edm.TypeInt64, edm.TypeDouble, edm.TypeBoolean, edm.TypeDateTime, edm.TypeGuid, edm.TypeBinary}

// oracleRules is ruleGrid read into a map.
var oracleRules = func() map[[2]edm.Type]pairRule {
	rules := map[[2]edm.Type]pairRule{}
	lines := strings.Split(strings.TrimSpace(ruleGrid), "\n")[1:]
	if len(lines) != len(oracleTypes) {
		panic("rule grid has the wrong number of rows")
	}
	for i, line := range lines {
		cells := strings.Fields(line)[1:]
		if len(cells) != len(oracleTypes) {
			panic("rule grid row " + line + " has the wrong number of cells")
		}
		for j, cell := range cells {
			rules[[2]edm.Type{oracleTypes[i], oracleTypes[j]}] = pairRule(cell[0])
		}
	}
	return rules
}()

// relation is where a property value stands against a literal.
type relation int

const (
	relBelow relation = iota
	relEqual
	relAbove
	relIncomparable
)

// truthTable gives each operator's result per relation. The incomparable
// column is the digest's mismatch rule: eq, gt, ge false; ne, lt, le true.
var truthTable = map[Op][4]bool{
	//      below  equal  above  incomparable
	OpEQ: {false, true, false, false},
	OpNE: {true, false, true, true},
	OpGT: {false, false, true, false},
	OpGE: {false, true, true, false},
	OpLT: {true, false, false, true},
	OpLE: {true, true, false, true},
}

// oracleRelation places prop against lit.
func oracleRelation(prop, lit edm.Value) relation {
	switch oracleRules[[2]edm.Type{prop.Type, lit.Type}] {
	case ruleOrdered:
		return sameTypeRelation(prop, lit)
	case ruleNumeric:
		return numericRelation(prop, lit)
	}
	return relIncomparable
}

// sameTypeRelation orders two values of one type: strings, Guids and
// binaries by their bytes as Go strings (ordinal; a prefix first),
// Booleans false before true (any non-zero Int is true), DateTime ticks
// and Int32/Int64 as integers, Doubles numerically.
func sameTypeRelation(a, b edm.Value) relation {
	switch a.Type {
	case edm.TypeString, edm.TypeGuid, edm.TypeBinary:
		x, y := string(a.Bytes), string(b.Bytes)
		return fromLess(x < y, x == y)
	case edm.TypeBoolean:
		x, y := a.Int != 0, b.Int != 0
		return fromLess(!x && y, x == y)
	case edm.TypeDouble:
		return numericRelation(a, b)
	}
	return fromLess(a.Int < b.Int, a.Int == b.Int)
}

// numericRelation compares two numbers by exact rational value. NaN is
// the one value that has none: the documented choice (filter/doc.go) is
// that NaN equals NaN and stands below every other number, as .NET's
// Double.CompareTo orders it.
func numericRelation(a, b edm.Value) relation {
	aNaN := a.Type == edm.TypeDouble && math.IsNaN(a.Float)
	bNaN := b.Type == edm.TypeDouble && math.IsNaN(b.Float)
	if aNaN || bNaN {
		return fromLess(aNaN && !bNaN, aNaN && bNaN)
	}
	aInf, bInf := infSign(a), infSign(b)
	if aInf != 0 || bInf != 0 {
		return fromLess(aInf < bInf, aInf == bInf)
	}
	x, y := exactRat(a), exactRat(b)
	c := x.Cmp(y)
	return fromLess(c < 0, c == 0)
}

func infSign(v edm.Value) int {
	if v.Type == edm.TypeDouble && math.IsInf(v.Float, 0) {
		if v.Float > 0 {
			return 1
		}
		return -1
	}
	return 0
}

func exactRat(v edm.Value) *big.Rat {
	if v.Type == edm.TypeDouble {
		return new(big.Rat).SetFloat64(v.Float) // exact for finite doubles; -0 is 0
	}
	return new(big.Rat).SetInt64(v.Int)
}

func fromLess(less, equal bool) relation {
	switch {
	case equal:
		return relEqual
	case less:
		return relBelow
	}
	return relAbove
}

// oracleCompare is the answer to `prop op lit`.
func oracleCompare(prop edm.Value, op Op, lit edm.Value) bool {
	return truthTable[op][oracleRelation(prop, lit)]
}

// oracleEval evaluates a checked tree by the digest's rules: a missing
// property fails every comparison (ne included), not negates, and/or are
// the logical connectives.
func oracleEval(n Node, p Properties) bool {
	switch n := n.(type) {
	case nil:
		return true
	case *NotNode:
		return !oracleEval(n.X, p)
	case *AndNode:
		return oracleEval(n.X, p) && oracleEval(n.Y, p)
	case *OrNode:
		return oracleEval(n.X, p) || oracleEval(n.Y, p)
	case *CompareNode:
		v, present := p.Lookup(n.Property)
		return present && oracleCompare(v, n.Op, n.Value)
	case *ConstNode:
		return n.Value
	}
	panic("oracleEval: unknown node")
}
