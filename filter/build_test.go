package filter

import (
	"github.com/tablestore/tablestore/edm"
	"math"
	"strings"
	"testing"
	"time"
)

type testGUID [16]byte

type name string

func TestBuild(t *testing.T) {
	g := testGUID{0xc9, 0xda, 0x64, 0x55, 0x21, 0x3d, 0x42, 0xc9, 0x9a, 0x79, 0x3e, 0x91, 0x49, 0xa5, 0x78, 0x33}
	when := time.Date(2026, 1, 2, 4, 4, 5, 123456789, time.FixedZone("x", 3600))
	tests := []struct {
		format string
		args   []any
		want   string
	}{
		{"PartitionKey eq %s and Age ge %s", []any{"O'Brien", int32(5)}, "PartitionKey eq 'O''Brien' and Age ge 5"},
		{"N eq %v", []any{int64(5)}, "N eq 5L"},
		{"N eq %v", []any{int64(math.MinInt64)}, "N eq -9223372036854775808L"},
		{"N eq %v", []any{int32(-7)}, "N eq -7"},
		{"D eq %v", []any{2.0}, "D eq 2.0"},
		{"D eq %v", []any{-1e300}, "D eq -1e+300"},
		{"D eq %v", []any{math.Copysign(0, -1)}, "D eq -0.0"},
		{"B eq %v or not %v", []any{true, false}, "B eq true or not false"},
		{"T lt %s", []any{when}, "T lt datetime'2026-01-02T03:04:05.1234567Z'"},
		{"G eq %s", []any{g}, "G eq guid'c9da6455-213d-42c9-9a79-3e9149a57833'"},
		{"X eq %s", []any{[]byte{0, 0xab}}, "X eq X'00ab'"},
		{"X eq %s", []any{[]byte(nil)}, "X eq X''"},
		{"S eq %s", []any{name("a b")}, "S eq 'a b'"},
		{"S eq %s", []any{"' or true or '"}, "S eq ''' or true or '''"},
		{"(S eq %s)", []any{"x"}, "(S eq 'x')"},
		{"S eq 'lit%%'", nil, "S eq 'lit%'"},
		{"RowKey ge %s", []any{""}, "RowKey ge ''"},
	}
	for _, tc := range tests {
		got, err := Build(tc.format, tc.args...)
		if err != nil {
			t.Errorf("Build(%q, %v): %v", tc.format, tc.args, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Build(%q, %v) = %q, want %q", tc.format, tc.args, got, tc.want)
		}
	}
	// An injection attempt stays one string literal.
	f, err := Compile(mustBuild(t, "PartitionKey eq %s", "x' or PartitionKey ne 'x"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := f.Root.(*CompareNode)
	if !ok || string(c.Value.Bytes) != "x' or PartitionKey ne 'x" {
		t.Fatalf("injection changed the filter: %s", f)
	}
}

func mustBuild(t *testing.T, format string, args ...any) string {
	t.Helper()
	s, err := Build(format, args...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBuildErrors(t *testing.T) {
	p := new(int32)
	tests := []struct {
		format string
		args   []any
		msg    string
	}{
		{"A eq %s", []any{5}, "type int has no filter literal; convert it to int32"},
		{"A eq %s", []any{uint8(5)}, "type uint8"},
		{"A eq %s", []any{float32(1)}, "convert it to float64"},
		{"A eq %s", []any{p}, "type *int32"},
		{"A eq %s", []any{nil}, "nil has no literal"},
		{"A eq %s", []any{math.NaN()}, "has no filter literal"},
		{"A eq %s", []any{math.Inf(-1)}, "has no filter literal"},
		{"A eq %s", []any{"\xff"}, "not valid UTF-8"},
		{"A eq %s", []any{time.Time{}.Add(-time.Hour)}, "outside years 1 to 9999"},
		{"A eq %s", []any{[15]byte{}}, "type [15]uint8"},
		{"A eq %s", []any{struct{}{}}, "has no filter literal"},
		{"A eq %d", []any{int32(1)}, "unknown verb %d"},
		{"A eq %", nil, "lone %"},
		{"A eq %s", nil, "placeholder 1 has no argument"},
		{"A eq %s", []any{int32(1), int32(2)}, "2 arguments for 1 placeholders"},
		{"A eq '%s'", []any{"x"}, "would not stand alone"},
		{"A eq 'a%s'", []any{"x"}, "would not stand alone"},
		{"A eq 1%s", []any{int32(2)}, "would not stand alone"},
		{"A eq %sL", []any{int32(2)}, "would not stand alone"},
		{"A eq %s%s", []any{int32(2), int32(3)}, "would not stand alone"},
		{"A eq %sand B", []any{true}, "would not stand alone"},
		{"Name%s eq 1", []any{"x"}, "does not scan"}, // Name'x' is an unknown literal prefix
		{"A eq datetime%s", []any{"2020-01-01T00:00:00Z"}, "would not stand alone"},
		{"A eq X%s", []any{"00"}, "would not stand alone"},
		{"A eq \"%s\"", []any{"x"}, "does not scan"},
		{"A eq '%s", []any{"x"}, "would not stand alone"},
	}
	for _, tc := range tests {
		got, err := Build(tc.format, tc.args...)
		if err == nil {
			t.Errorf("Build(%q, %v) = %q, want an error", tc.format, tc.args, got)
			continue
		}
		e, ok := err.(*Error)
		if !ok || e.Code != edm.CodeInvalidInput || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("Build(%q, %v): error %v, want InvalidInput containing %q", tc.format, tc.args, err, tc.msg)
		}
	}
}

// FuzzBuild checks that every value Literal accepts becomes one literal
// token that parses back to the same typed value, and that Build keeps a
// string argument a single string literal whatever it holds.
func FuzzBuild(f *testing.F) {
	f.Add("O'Brien", int32(5), int64(-1), 2.5, true, []byte{1, 2}, int64(0))
	f.Add("' or true or '", int32(math.MinInt32), int64(math.MaxInt64), math.Copysign(0, -1), false, []byte(nil), int64(253402300799))
	f.Add("''", int32(0), int64(1<<53+1), 1e-320, true, []byte{0xff}, int64(-62135596800))
	f.Fuzz(func(t *testing.T, s string, i32 int32, i64 int64, d float64, b bool, bin []byte, unix int64) {
		var guid testGUID
		copy(guid[:], bin)
		when := time.Unix(unix, int64(uint64(i64)%1e9)).In(time.FixedZone("z", int(i32%50000)))
		want := map[any]edm.Value{
			s:    {Type: edm.TypeString, Bytes: []byte(s)},
			i32:  {Type: edm.TypeInt32, Int: int64(i32)},
			i64:  {Type: edm.TypeInt64, Int: i64},
			d:    {Type: edm.TypeDouble, Float: d},
			b:    {Type: edm.TypeBoolean, Int: map[bool]int64{true: 1}[b]},
			guid: {Type: edm.TypeGuid, Bytes: guid[:]},
		}
		args := []any{s, i32, i64, d, b, guid, bin, when}
		for _, arg := range args {
			lit, err := Literal(arg)
			if err != nil {
				if s, ok := arg.(string); ok && utf8Valid(s) {
					t.Fatalf("Literal(%q): %v", s, err)
				}
				continue // invalid UTF-8, NaN, infinities, years out of range
			}
			text, err := Build("P eq %s", arg)
			if err != nil {
				t.Fatalf("Build with %#v: %v", arg, err)
			}
			flt, err := Compile(text, &Limits{})
			if err != nil {
				t.Fatalf("%q does not compile: %v", text, err)
			}
			c, ok := flt.Root.(*CompareNode)
			if !ok || c.Property != "P" || c.Op != OpEQ {
				t.Fatalf("%q compiled to %s", text, flt)
			}
			v := c.Value
			if FormatLiteral(v) != lit {
				t.Fatalf("%#v: literal %q reads back as %q", arg, lit, FormatLiteral(v))
			}
			switch x := arg.(type) {
			case []byte:
				if v.Type != edm.TypeBinary || string(v.Bytes) != string(x) {
					t.Fatalf("%x read back as %v", x, v)
				}
			case time.Time:
				year1 := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
				ticks := (x.Unix()-year1)*edm.TicksPerSecond + int64(x.Nanosecond()/100)
				if v.Type != edm.TypeDateTime || v.Int != ticks {
					t.Fatalf("%v read back as %v, want %d ticks", x, v, ticks)
				}
			default:
				w := want[arg]
				if v.Type != w.Type || v.Int != w.Int || string(v.Bytes) != string(w.Bytes) ||
					(w.Type == edm.TypeDouble && math.Float64bits(v.Float) != math.Float64bits(w.Float) && v.Float != 0) {
					t.Fatalf("%#v read back as %v, want %v", arg, v, w)
				}
			}
		}
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\x00x") == s }
