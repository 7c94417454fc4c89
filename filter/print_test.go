package filter

import (
	"github.com/tablestore/tablestore/edm"
	"math/rand"
	"testing"
)

// roundTripInputs are filters that parse (some fail Check).
func roundTripInputs() []string {
	srcs := append([]string(nil), validFilters...)
	for _, tc := range invalidFilters {
		if tc.code == edm.CodeNotImplemented || tc.code == "" {
			srcs = append(srcs, tc.src)
		}
	}
	return append(srcs,
		`not (A eq 1) or not not (B and (C or D))`,
		`((A or B) and (C or D)) or (E and F)`,
		`A and (B and C)`,
		`A or (B or C)`,
		`not A eq 1 and B`,
		`X eq 'a''b''''c'`,
		`(((X eq 1)))`,
		`  A   and   B  `,
	)
}

func TestPrintRoundTrip(t *testing.T) {
	for _, src := range roundTripInputs() {
		x, err := Parse(src, nil)
		if err != nil {
			continue
		}
		printed := Print(x)
		y, err := Parse(printed, nil)
		if err != nil {
			t.Errorf("%q printed as %q, which fails: %v", src, printed, err)
			continue
		}
		if !equalExpr(x, y) {
			t.Errorf("%q printed as %q, which parses differently:\n%s\nvs\n%s", src, printed, dumpExpr(x), dumpExpr(y))
		}
		if again := Print(y); again != printed {
			t.Errorf("Print is not stable: %q then %q", printed, again)
		}
	}
}

func TestPrintExamples(t *testing.T) {
	tests := []struct{ src, want string }{
		{"  A   and   B  ", "A and B"},
		{"(A eq 1)and(B eq 2)", "(A eq 1) and (B eq 2)"},
		{"not(A)", "not (A)"},
		{"A eq'x'", "A eq 'x'"},
		{"A eq-1", "A eq -1"},
		{"30 lt Age", "30 lt Age"},
		{"X eq X'0A'", "X eq X'0A'"},
	}
	for _, tc := range tests {
		x, err := Parse(tc.src, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := Print(x); got != tc.want {
			t.Errorf("Print(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
	if Print(nil) != "" {
		t.Error("Print(nil) must be empty")
	}
}

// stripParens removes every ParenExpr.
func stripParens(x Expr) Expr {
	switch x := x.(type) {
	case *ParenExpr:
		return stripParens(x.X)
	case *BinaryExpr:
		return &BinaryExpr{X: stripParens(x.X), Op: x.Op, Y: stripParens(x.Y)}
	case *UnaryExpr:
		return &UnaryExpr{Op: x.Op, X: stripParens(x.X)}
	case *ComparisonExpr:
		return &ComparisonExpr{X: stripParens(x.X), Op: x.Op, Y: stripParens(x.Y)}
	}
	return x
}

// randomExpr builds a random syntax tree without positions, with or
// without the parentheses its shape needs.
func randomExpr(r *rand.Rand, depth int) Expr {
	names := []string{"A", "B", "Age", "Name", "_x", "Größe"}
	lits := []*BasicLit{
		{Kind: TokInt32, Value: "5"}, {Kind: TokInt32, Value: "-5"}, {Kind: TokInt64, Value: "5L"},
		{Kind: TokDouble, Value: "1.5e3"}, {Kind: TokDouble, Value: "2D"}, {Kind: TokString, Value: "'it''s'"},
		{Kind: TokBoolean, Value: "true"}, {Kind: TokDateTime, Value: "datetime'2020-01-01T00:00:00Z'"},
		{Kind: TokGuid, Value: "guid'a455c695-df98-5678-aaaa-81d3367e5a34'"}, {Kind: TokBinary, Value: "X'0a'"},
	}
	operand := func() Expr {
		if r.Intn(2) == 0 {
			return &Ident{Name: names[r.Intn(len(names))]}
		}
		l := *lits[r.Intn(len(lits))]
		return &l
	}
	if depth <= 0 || r.Intn(4) == 0 {
		if r.Intn(4) == 0 {
			return &Ident{Name: names[r.Intn(len(names))]}
		}
		return &ComparisonExpr{X: operand(), Op: OpEQ + Op(r.Intn(6)), Y: operand()}
	}
	switch r.Intn(4) {
	case 0:
		return &UnaryExpr{Op: TokNot, X: randomExpr(r, depth-1)}
	case 1:
		return &ParenExpr{X: randomExpr(r, depth-1)}
	case 2:
		return &BinaryExpr{X: randomExpr(r, depth-1), Op: TokAnd, Y: randomExpr(r, depth-1)}
	}
	return &BinaryExpr{X: randomExpr(r, depth-1), Op: TokOr, Y: randomExpr(r, depth-1)}
}

// TestPrintHandBuilt checks that Print keeps the meaning of any tree, even
// one lacking parentheses its shape needs: the reparsed tree equals the
// original once parentheses are removed.
func TestPrintHandBuilt(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		x := randomExpr(r, 6)
		printed := Print(x)
		y, err := Parse(printed, &Limits{})
		if err != nil {
			t.Fatalf("tree %d printed as %q, which fails: %v\n%s", i, printed, err, dumpExpr(x))
		}
		if !equalExpr(stripParens(x), stripParens(y)) {
			t.Fatalf("tree %d printed as %q, which means something else:\n%s\nvs\n%s", i, printed, dumpExpr(x), dumpExpr(y))
		}
	}
	// Precedence examples.
	a, b, c := &Ident{Name: "A"}, &Ident{Name: "B"}, &Ident{Name: "C"}
	tests := []struct {
		x    Expr
		want string
	}{
		{&BinaryExpr{X: &BinaryExpr{X: a, Op: TokOr, Y: b}, Op: TokAnd, Y: c}, "(A or B) and C"},
		{&BinaryExpr{X: a, Op: TokAnd, Y: &BinaryExpr{X: b, Op: TokAnd, Y: c}}, "A and (B and C)"},
		{&BinaryExpr{X: &BinaryExpr{X: a, Op: TokAnd, Y: b}, Op: TokAnd, Y: c}, "A and B and C"},
		{&BinaryExpr{X: a, Op: TokOr, Y: &BinaryExpr{X: b, Op: TokAnd, Y: c}}, "A or B and C"},
		{&UnaryExpr{Op: TokNot, X: &BinaryExpr{X: a, Op: TokOr, Y: b}}, "not (A or B)"},
		{&UnaryExpr{Op: TokNot, X: &ComparisonExpr{X: a, Op: OpEQ, Y: &BasicLit{Kind: TokInt32, Value: "1"}}}, "not A eq 1"},
	}
	for _, tc := range tests {
		if got := Print(tc.x); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// TestFormatRoundTrip checks that the canonical text of a checked tree
// compiles back to the same tree.
func TestFormatRoundTrip(t *testing.T) {
	srcs := roundTripInputs()
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 2000; i++ {
		srcs = append(srcs, Print(randomExpr(r, 6)))
	}
	checked := 0
	for _, src := range srcs {
		f, err := Compile(src, &Limits{})
		if err != nil {
			continue
		}
		checked++
		text := Format(f.Root)
		g, err := Compile(text, &Limits{})
		if err != nil {
			t.Fatalf("%q formatted as %q, which fails: %v", src, text, err)
		}
		if !equalNode(f.Root, g.Root) {
			t.Fatalf("%q formatted as %q, which compiles differently", src, text)
		}
		if f.String() != text || g.String() != text {
			t.Fatalf("String and Format disagree for %q", src)
		}
	}
	if checked < 500 {
		t.Fatalf("only %d inputs compiled", checked)
	}
}

func TestFormatExamples(t *testing.T) {
	tests := []struct{ src, want string }{
		{"Age ge 30 and (City eq 'Lisbon' or Active)", "Age ge 30 and (City eq 'Lisbon' or Active eq true)"},
		{"not not A", "not (not (A eq true))"},
		{"1.5 ge X", "X le 1.5"},
		{"X eq 100000000000000000000.0", "X eq 1e+20"},
		{"X eq 0.000001", "X eq 1e-06"},
		{"X eq -0.0", "X eq -0.0"},
	}
	for _, tc := range tests {
		f, err := Compile(tc.src, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.String(); got != tc.want {
			t.Errorf("Format(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
	n := &OrNode{X: &CompareNode{Property: "A", Op: OpLT, Value: edm.Value{Type: edm.TypeInt32, Int: 1}},
		Y: &AndNode{X: &CompareNode{Property: "B", Op: OpNE, Value: edm.Value{Type: edm.TypeInt64, Int: 2}},
			Y: &NotNode{X: &CompareNode{Property: "C", Op: OpGE, Value: edm.Value{Type: edm.TypeString, Bytes: []byte("x")}}}}}
	if got, want := n.String(), "A lt 1 or B ne 2L and not (C ge 'x')"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if Format(nil) != "" {
		t.Error("Format(nil) must be empty")
	}
}
