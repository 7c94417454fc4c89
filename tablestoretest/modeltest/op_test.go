package modeltest

import (
	"math"
	"strings"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
)

// generationConfigs cover every switch that changes what is generated.
var generationConfigs = []Config{
	{Name: "plain", Seed: 1, Ops: 3000},
	{Name: "reopens", Seed: -42, Ops: 3000, Reopens: 3},
	{Name: "big", Seed: 1 << 40, Ops: 3000, BigValue: true},
	{Name: "remote", Seed: 7, Ops: 3000, Reopens: 1, Quirks: Quirks{TableNameCase: true, NegativeZero: true, PropertyFilters: true, TimestampFilters: true, NoKeyspaceOps: true}},
}

func printOps(ops []Op) string {
	var b strings.Builder
	for _, op := range ops {
		b.WriteString(op.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// TestGenerateDeterministic generates each configuration twice and
// demands the same text byte for byte; a generation that read a map in
// iteration order, a clock or a store would differ between the two (Go
// randomizes map order per map). Another seed must give another workload.
func TestGenerateDeterministic(t *testing.T) {
	for _, cfg := range generationConfigs {
		t.Run(cfg.Name, func(t *testing.T) {
			first := Generate(cfg)
			if want := cfg.Ops + 2 + cfg.Reopens; len(first) != want {
				t.Fatalf("%d operations, want %d (setup, Ops, Reopens)", len(first), want)
			}
			a, b := printOps(first), printOps(Generate(cfg))
			if a != b {
				t.Fatalf("seed %d generated two workloads; first difference at line %d", cfg.Seed, firstDiffLine(a, b))
			}
			other := cfg
			other.Seed++
			if printOps(Generate(other)) == a {
				t.Fatalf("seeds %d and %d generated the same workload", cfg.Seed, other.Seed)
			}
		})
	}
}

func firstDiffLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

// TestPrintParsePrint prints every generated operation, parses the line
// and prints the result: the same line, for every kind, value type and
// field the generator makes.
func TestPrintParsePrint(t *testing.T) {
	seen := map[kind]bool{}
	for _, cfg := range generationConfigs {
		for _, op := range Generate(cfg) {
			line := op.String()
			if strings.ContainsAny(line, "\n\r") {
				t.Fatalf("line holds a newline: %q", line)
			}
			parsed, err := ParseOp(line)
			if err != nil {
				t.Fatalf("%s\n%v", line, err)
			}
			if again := parsed.String(); again != line {
				t.Fatalf("print, parse, print differs:\n%s\n%s", line, again)
			}
			seen[op.kind] = true
		}
	}
	for _, k := range kinds {
		if !seen[k] {
			t.Errorf("no %s operation generated", k)
		}
	}
}

// TestValuesRoundTrip checks each value form, including those the
// generator makes rarely, parses back to the same Go type and value.
func TestValuesRoundTrip(t *testing.T) {
	values := []any{
		nil, true, false, "", "O'Neil", "bad\xc3", "tab\there", "日本語",
		strings.Repeat("s", 40_000), strings.Repeat("é", 40),
		int32(math.MinInt32), int64(math.MaxInt64),
		0.5, 1e300, -1e-300, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.FixedZone("", -8*3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC).In(time.FixedZone("", 11*3600)),
		ts.GUID{0x12, 0x34, 0xff},
		[]byte{}, []byte{0, 1, 0xff}, make([]byte, 70_000), []byte(strings.Repeat("\x01", 40)),
		complex(1, 0), new(int32), []int{7}, float32(1), struct{}{}, []string{"a"}, map[string]int{},
	}
	for _, v := range values {
		e := &ts.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"V": v}}
		line := Op{kind: kindInsert, table: "t", entity: e}.String()
		op, err := ParseOp(line)
		if err != nil {
			t.Fatalf("%T %v: %v", v, v, err)
		}
		got := op.entity.Properties["V"]
		if !sameInvalid(got, v) && !sameValue(got, v) {
			t.Errorf("%T %.40v: parsed as %T %.40v (%s)", v, v, got, got, line[:min(len(line), 80)])
		}
		if tv, ok := v.(time.Time); ok {
			_, want := tv.Zone()
			if _, off := got.(time.Time).Zone(); off != want {
				t.Errorf("%v: parsed with zone offset %d", tv, off)
			}
		}
		if again := op.String(); again != line {
			t.Errorf("%T: reprinted differently", v)
		}
	}
}

// sameInvalid compares the values of types the store rejects, which
// sameValue (made for stored values) does not know.
func sameInvalid(got, want any) bool {
	return formatValue(got) == formatValue(want) && strings.HasPrefix(formatValue(want), "invalid(")
}

// TestParseErrors checks malformed lines fail with the library's prefix
// and the place of the fault, and never parse to a partial operation.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{``, "offset 0: want a word"},
		{`fly table="t"`, `unknown operation "fly"`},
		{`insert table="t"`, "no entity"},
		{`get pk="p"`, "no table"},
		{`get table="t" colour=red`, `unknown field "colour"`},
		{`get table="t" table="u"`, `field "table" repeated`},
		{`get table="t`, "unterminated string"},
		{`get table=t`, "want a quoted string"},
		{`update table="t" mode=sideways`, `bad mode "sideways"`},
		{`delete table="t" if-match=maybe`, `bad if-match "maybe"`},
		{`insert table="t" entity=("p","r"){"A":int32(99999999999)}`, "bad int32(99999999999)"},
		{`insert table="t" entity=("p","r"){"A":money(5)}`, `unknown value type "money"`},
		{`insert table="t" entity=("p","r"){"A":int32(1) "A":int32(2)}`, `property "A" repeated`},
		{`insert table="t" entity=("p","r"){"A":invalid(chan)}`, "bad invalid(chan)"},
		{`tx table="t" actions=[{type=teleport}]`, `bad action type "teleport"`},
		{`tx table="t" actions=[{if-match=*}]`, "action without a type"},
		{`tx table="t" actions=[{type=insert}]`, "an action has no entity"},
		{`query-writes table="t" writes=[{type=insert entity=("p","r"){}}]`, "delete or an upsert-replace"},
		{`list-tables top=ten`, `bad integer "ten"`},
	} {
		op, err := ParseOp(tc.line)
		if err == nil {
			t.Errorf("%q parsed as %s", tc.line, op)
			continue
		}
		if !strings.HasPrefix(err.Error(), "tablestore: modeltest: offset ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %q, want %q", tc.line, err, tc.want)
		}
		if op.kind != "" {
			t.Errorf("%q: a failed parse returned %s", tc.line, op)
		}
	}
}

// TestLogRoundTrip writes a generated log and reads it back, with
// comments, blank lines and CRLF line ends as a hand-edited file may
// have; a log without its seed line or with a bad operation is refused
// with the line named.
func TestLogRoundTrip(t *testing.T) {
	l := &Log{Seed: -5, Ops: Generate(Config{Seed: 3, Ops: 200, Reopens: 1})}
	var b strings.Builder
	if _, err := l.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	text := "# a comment\n\n" + strings.ReplaceAll(b.String(), "\n", "\r\n")
	got, err := ReadLog(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if got.Seed != l.Seed || printOps(got.Ops) != printOps(l.Ops) {
		t.Fatalf("log changed: seed %d, %d ops", got.Seed, len(got.Ops))
	}

	if _, err := ReadLog(strings.NewReader("reopen\n")); err == nil || !strings.Contains(err.Error(), `line 1: want "seed N"`) {
		t.Errorf("log without a seed: %v", err)
	}
	if _, err := ReadLog(strings.NewReader("# only comments\n")); err == nil || !strings.Contains(err.Error(), "no seed line") {
		t.Errorf("empty log: %v", err)
	}
	_, err = ReadLog(strings.NewReader("seed 1\nreopen\nget\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "tablestore: modeltest: line 3: ") {
		t.Errorf("bad operation: %v", err)
	}
}
