package filter

import (
	"github.com/tablestore/tablestore/edm"
	"math"
	"math/rand"
	"testing"
)

func sampleValues() []edm.Value {
	str := func(s string) edm.Value { return edm.Value{Type: edm.TypeString, Bytes: []byte(s)} }
	bin := func(b ...byte) edm.Value { return edm.Value{Type: edm.TypeBinary, Bytes: b} }
	guid := func(first, last byte) edm.Value {
		b := make([]byte, 16)
		b[0], b[15] = first, last
		return edm.Value{Type: edm.TypeGuid, Bytes: b}
	}
	vals := []edm.Value{
		str(""), str("a"), str("ab"), str("B"), str("é"), str("3"),
		bin(), bin(0), bin(0, 1), bin(1), bin(0xff),
		guid(0, 0), guid(0, 1), guid(0xa4, 0), guid(0xff, 0xff),
		{Type: edm.TypeBoolean, Int: 0}, {Type: edm.TypeBoolean, Int: 1},
		{Type: edm.TypeDateTime, Int: 0}, {Type: edm.TypeDateTime, Int: 1}, {Type: edm.TypeDateTime, Int: edm.MaxTicks},
	}
	for _, n := range []int64{math.MinInt32, -3, -1, 0, 1, 3, math.MaxInt32} {
		vals = append(vals, edm.Value{Type: edm.TypeInt32, Int: n})
	}
	for _, n := range []int64{math.MinInt64, math.MinInt64 + 1, math.MinInt32 - 1, -3, 0, 3, 1 << 53, 1<<53 + 1, math.MaxInt64} {
		vals = append(vals, edm.Value{Type: edm.TypeInt64, Int: n})
	}
	for _, f := range []float64{math.Inf(-1), -math.MaxFloat64, -9.223372036854775808e18, -3.5, -3, -1e-300,
		math.Copysign(0, -1), 0, 0.5, 3, 3.5, 1 << 53, 1<<53 + 2, 9.223372036854775808e18, math.MaxFloat64, math.Inf(1), math.NaN()} {
		vals = append(vals, edm.Value{Type: edm.TypeDouble, Float: f})
	}
	return vals
}

// TestCompareRules checks Compare against the reference for every pair of
// sample values and every operator, and checks the invariants that hold
// whatever the types: exactly one of lt, eq, gt; ge = gt or eq; le = lt or
// eq; ne = not eq.
func TestCompareRules(t *testing.T) {
	vals := sampleValues()
	ops := []Op{OpEQ, OpNE, OpGT, OpGE, OpLT, OpLE}
	mismatches, matches := 0, 0
	for _, prop := range vals {
		for _, lit := range vals {
			var got [OpLE + 1]bool
			for _, op := range ops {
				got[op] = Compare(prop, op, lit)
			}
			var want [OpLE + 1]bool
			for _, op := range ops {
				want[op] = oracleCompare(prop, op, lit)
			}
			if oracleRelation(prop, lit) == relIncomparable {
				mismatches++
			} else {
				matches++
			}
			if got != want {
				t.Errorf("%s %s vs %s %s: got %v, want %v", prop.Type, formatValueForTest(prop), lit.Type, formatValueForTest(lit), got[1:], want[1:])
			}
			n := 0
			for _, op := range []Op{OpLT, OpEQ, OpGT} {
				if got[op] {
					n++
				}
			}
			if n != 1 || got[OpGE] != (got[OpGT] || got[OpEQ]) || got[OpLE] != (got[OpLT] || got[OpEQ]) || got[OpNE] == got[OpEQ] {
				t.Errorf("%v vs %v: inconsistent results %v", prop, lit, got[1:])
			}
			for _, op := range ops {
				if Compare(prop, op, lit) == Compare(prop, op.Negate(), lit) {
					t.Errorf("%v %s %v agrees with its negation", prop, op, lit)
				}
			}
		}
	}
	if mismatches == 0 || matches == 0 {
		t.Fatalf("samples do not cover both outcomes: %d comparable, %d mismatched", matches, mismatches)
	}
}

// TestCompareBooleanNormalises checks that any non-zero Int is true.
func TestCompareBooleanNormalises(t *testing.T) {
	odd := edm.Value{Type: edm.TypeBoolean, Int: 7}
	if !Compare(odd, OpEQ, edm.Value{Type: edm.TypeBoolean, Int: 1}) {
		t.Error("Boolean with Int 7 must equal true")
	}
}

func TestCompareInvalidType(t *testing.T) {
	zero := edm.Value{}
	lit := edm.Value{Type: edm.TypeInt32, Int: 1}
	if Compare(zero, OpEQ, lit) || !Compare(zero, OpNE, lit) || Compare(zero, OpGT, lit) || !Compare(zero, OpLE, lit) {
		t.Error("a property of invalid type must behave as a type mismatch")
	}
	if Compare(edm.Value{Type: edm.TypeInt32, Int: 1}, 0, lit) || Compare(edm.Value{Type: edm.TypeInt32, Int: 1}, 99, lit) {
		t.Error("an invalid operator must not match")
	}
}

func TestOpMethods(t *testing.T) {
	for op := OpEQ; op <= OpLE; op++ {
		if op.Flip().Flip() != op || op.Negate().Negate() != op {
			t.Errorf("%s: Flip or Negate is not an involution", op)
		}
		tok := TokEQ + Token(op-OpEQ)
		if tok.Op() != op || tok.String() != op.String() {
			t.Errorf("%s: token %s does not match", op, tok)
		}
	}
	if Op(0).String() != "op(0)" || TokAnd.Op() != 0 {
		t.Error("invalid operators must be recognisable")
	}
	// Flip keeps the meaning when the operands swap sides.
	a, b := edm.Value{Type: edm.TypeInt32, Int: 1}, edm.Value{Type: edm.TypeInt32, Int: 2}
	for op := OpEQ; op <= OpLE; op++ {
		if Compare(a, op, b) != Compare(b, op.Flip(), a) {
			t.Errorf("%s: 1 %s 2 differs from 2 %s 1", op, op, op.Flip())
		}
	}
}

func TestNewFilterNames(t *testing.T) {
	root := &OrNode{X: &CompareNode{Property: "Z", Op: OpEQ, Value: edm.Value{Type: edm.TypeInt32, Int: 1}},
		Y: &NotNode{X: &CompareNode{Property: "A", Op: OpLT, Value: edm.Value{Type: edm.TypeInt32, Int: 2}}}}
	f := NewFilter(root)
	if len(f.Names) != 2 || f.Names[0] != "A" || f.Names[1] != "Z" {
		t.Errorf("Names = %v, want [A Z]", f.Names)
	}
	if !f.Match(entity{{"Z", edm.Value{Type: edm.TypeInt32, Int: 1}}}) || f.Match(entity{{"A", edm.Value{Type: edm.TypeInt32, Int: 1}}}) {
		t.Error("NewFilter's program evaluates wrongly")
	}
}

func TestNames(t *testing.T) {
	f, err := Compile("B eq 1 and (A or not (B lt 2)) or 3 gt C", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Names; len(got) != 3 || got[0] != "A" || got[1] != "B" || got[2] != "C" {
		t.Errorf("Names = %v, want [A B C]", got)
	}
}

// TestMatchAgreesWithEval checks the compiled program of Match against
// the tree walk of Eval and the reference evaluator on random filters and
// entities, and that a hand-built Filter is evaluated too.
func TestMatchAgreesWithEval(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	vals := sampleValues()
	checked := 0
	for i := 0; i < 3000; i++ {
		f, err := Compile(Print(randomExpr(r, 5)), &Limits{})
		if err != nil {
			continue
		}
		checked++
		hand := &Filter{Root: f.Root}
		rebuilt := NewFilter(f.Root)
		if len(rebuilt.Names) != len(f.Names) || rebuilt.prog == nil {
			t.Fatalf("NewFilter(%s) differs from Compile: names %v vs %v", f, rebuilt.Names, f.Names)
		}
		for j := 0; j < 5; j++ {
			var e entity
			for _, name := range f.Names {
				if r.Intn(4) != 0 {
					e = append(e, prop{name, vals[r.Intn(len(vals))]})
				}
			}
			var p Properties = e
			got, tree, ref, byHand := f.Match(p), Eval(f.Root, p), oracleEval(f.Root, p), hand.Match(p)
			if got != tree || got != ref || got != byHand || got != rebuilt.Match(p) {
				t.Fatalf("%s on %v: Match %t, Eval %t, reference %t, hand-built %t", f, e, got, tree, ref, byHand)
			}
		}
	}
	if checked < 500 {
		t.Fatalf("only %d random filters compiled", checked)
	}
}

// benchEntity is a 10-property entity, as a decoded row would be.
var benchEntity = entity{
	{"PartitionKey", edm.Value{Type: edm.TypeString, Bytes: []byte("customers")}},
	{"RowKey", edm.Value{Type: edm.TypeString, Bytes: []byte("000123")}},
	{"Timestamp", edm.Value{Type: edm.TypeDateTime, Int: 638_000_000_000_000_000}},
	{"Name", edm.Value{Type: edm.TypeString, Bytes: []byte("Ana")}},
	{"Email", edm.Value{Type: edm.TypeString, Bytes: []byte("ana@example.com")}},
	{"Age", edm.Value{Type: edm.TypeInt32, Int: 34}},
	{"Score", edm.Value{Type: edm.TypeDouble, Float: 81.5}},
	{"Visits", edm.Value{Type: edm.TypeInt64, Int: 1200}},
	{"City", edm.Value{Type: edm.TypeString, Bytes: []byte("Lisbon")}},
	{"Active", edm.Value{Type: edm.TypeBoolean, Int: 1}},
}

func TestBenchFilterMatches(t *testing.T) {
	f, err := Compile("Age ge 30 and City eq 'Lisbon' and Active", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Match(benchEntity) {
		t.Fatal("the benchmark filter must match the benchmark entity")
	}
	var p Properties = benchEntity // boxed once, as a caller would hold it
	if allocs := testing.AllocsPerRun(100, func() { sink = f.Match(p) }); allocs != 0 {
		t.Errorf("Match allocates %v times per run", allocs)
	}
}

var sink bool

func BenchmarkEval(b *testing.B) {
	f, err := Compile("Age ge 30 and City eq 'Lisbon' and Active", nil)
	if err != nil {
		b.Fatal(err)
	}
	var p Properties = benchEntity
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sink = f.Match(p)
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Compile("Age ge 30 and City eq 'Lisbon' and Active", nil); err != nil {
			b.Fatal(err)
		}
	}
}
