package filter

import (
	"encoding/binary"
	"github.com/tablestore/tablestore/edm"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// seedFilters returns every filter the unit tests and datadriven files
// use, as fuzzing seeds.
func seedFilters(tb testing.TB) []string {
	seeds := roundTripInputs()
	for _, tc := range invalidFilters {
		seeds = append(seeds, tc.src)
	}
	paths, _ := filepath.Glob("testdata/*")
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if line != "" && !strings.HasPrefix(line, "#") && !strings.Contains(line, "=>") && line != "----" {
				seeds = append(seeds, line)
			}
		}
	}
	return append(seeds, "", " ", "(", ")", "'", "not", "A eq 1 and", strings.Repeat("(", 70)+"A"+strings.Repeat(")", 70),
		"X eq datetime'9999-12-31T23:59:59.9999999-14:00'", "X eq 1e-400", "X eq -0", "X eq 00000000000000000001")
}

// checkPositions verifies that every node of x points at its own text.
func checkPositions(t *testing.T, src string, x Expr) {
	var walk func(x Expr)
	walk = func(x Expr) {
		if x.Pos() < 0 || x.End() > len(src) || x.Pos() > x.End() {
			t.Fatalf("%q: node %T has span %d-%d", src, x, x.Pos(), x.End())
		}
		switch x := x.(type) {
		case *BinaryExpr:
			if !strings.HasPrefix(src[x.OpPos:], x.Op.String()) {
				t.Fatalf("%q: operator position %d", src, x.OpPos)
			}
			walk(x.X)
			walk(x.Y)
		case *UnaryExpr:
			walk(x.X)
		case *ParenExpr:
			if src[x.Lparen] != '(' || src[x.Rparen] != ')' {
				t.Fatalf("%q: parenthesis positions %d, %d", src, x.Lparen, x.Rparen)
			}
			walk(x.X)
		case *ComparisonExpr:
			if !strings.HasPrefix(src[x.OpPos:], x.Op.String()) {
				t.Fatalf("%q: operator position %d", src, x.OpPos)
			}
			walk(x.X)
			walk(x.Y)
		case *Ident:
			if src[x.Pos():x.End()] != x.Name {
				t.Fatalf("%q: ident %q at %d", src, x.Name, x.NamePos)
			}
		case *BasicLit:
			if src[x.Pos():x.End()] != x.Value {
				t.Fatalf("%q: literal %q at %d", src, x.Value, x.ValuePos)
			}
		}
	}
	walk(x)
}

func FuzzParse(f *testing.F) {
	for _, s := range seedFilters(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		x, err := Parse(src, nil)
		if err != nil {
			e, ok := err.(*Error)
			if !ok || (e.Code != edm.CodeInvalidInput && e.Code != edm.CodeNotImplemented) || e.Pos < 0 || e.Pos > len(src) || e.Src != src {
				t.Fatalf("%q: bad error %#v", src, err)
			}
			_ = e.Error()
		} else if x != nil {
			checkPositions(t, src, x)
			printed := Print(x)
			y, err := Parse(printed, &Limits{MaxDepth: DefaultLimits.MaxDepth, MaxComparisons: DefaultLimits.MaxComparisons})
			if err != nil {
				t.Fatalf("%q printed as %q, which fails: %v", src, printed, err)
			}
			if !equalExpr(x, y) {
				t.Fatalf("%q printed as %q, which parses differently", src, printed)
			}
		} else if strings.Trim(src, " \t\r\n") != "" {
			t.Fatalf("%q: nil tree without error", src)
		}
		for _, lim := range []*Limits{{}, {MaxLength: 8, MaxDepth: 1, MaxComparisons: 1}} {
			_, _ = Parse(src, lim)
		}
		flt, err := Compile(src, nil)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%q: Compile error of type %T", src, err)
			}
			return
		}
		text := flt.String()
		g, err := Compile(text, &Limits{})
		if err != nil {
			t.Fatalf("%q formatted as %q, which fails: %v", src, text, err)
		}
		if !equalNode(flt.Root, g.Root) {
			t.Fatalf("%q formatted as %q, which compiles differently", src, text)
		}
	})
}

// entityFromBytes builds an entity from fuzz data: each 11-byte chunk is
// a name index into names, a type (0..8, 0 being invalid) and 9 bytes of
// value.
func entityFromBytes(data []byte, names []string) entity {
	names = append(names, "Other")
	var e entity
	for len(data) >= 11 && len(e) < 20 {
		name := names[int(data[0])%len(names)]
		typ := edm.Type(data[1] % 9)
		raw := data[2:11]
		data = data[11:]
		n := int64(binary.LittleEndian.Uint64(raw))
		v := edm.Value{Type: typ}
		switch typ {
		case edm.TypeString, edm.TypeBinary:
			v.Bytes = append([]byte(nil), raw[:raw[8]%9]...)
		case edm.TypeGuid:
			v.Bytes = append(append([]byte(nil), raw...), raw[:7]...)
		case edm.TypeInt32:
			v.Int = int64(int32(n))
		case edm.TypeInt64:
			v.Int = n
		case edm.TypeDouble:
			if raw[8]%2 == 0 {
				v.Float = math.Float64frombits(uint64(n))
			} else {
				v.Float = float64(int32(n)) / 4
			}
		case edm.TypeBoolean:
			v.Int = n & 1
		case edm.TypeDateTime:
			v.Int = int64(uint64(n) % (edm.MaxTicks + 1))
		}
		e = append(e, prop{name, v})
	}
	return e
}

func FuzzEval(f *testing.F) {
	ent := []byte{
		0, 2, 30, 0, 0, 0, 0, 0, 0, 0, 0, // first name, Int32 30
		1, 1, 'L', 'i', 's', 'b', 'o', 'n', 0, 0, 6, // second name, String "Lisbon"
		2, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0, // third name, Boolean true
		3, 4, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0, // fourth name, Double NaN
	}
	for _, s := range seedFilters(f) {
		f.Add(s, ent)
	}
	f.Fuzz(func(t *testing.T, src string, data []byte) {
		flt, err := Compile(src, nil)
		if err != nil {
			return
		}
		var p Properties = entityFromBytes(data, flt.Names)
		got := flt.Match(p)
		if want := oracleEval(flt.Root, p); got != want {
			t.Fatalf("%q on %v: Match = %t, reference = %t", src, p, got, want)
		}
		if tree := Eval(flt.Root, p); tree != got {
			t.Fatalf("%q on %v: Match = %t, Eval = %t", src, p, got, tree)
		}
		if flt.Root != nil && Eval(&NotNode{X: flt.Root}, p) == got {
			t.Fatalf("%q: not does not negate", src)
		}
	})
}
