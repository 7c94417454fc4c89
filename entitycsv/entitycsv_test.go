package entitycsv

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// every is one value of each EDM type, with the texts that matter.
func every() map[string]any {
	g, _ := edm.ParseGUID("0f8fad5b-d9cb-469f-a165-70867728950e")
	return map[string]any{
		"S":    "a, \"b\"\nc\r\nd",
		"Sp":   " padded ",
		"E":    "",
		"I":    int32(math.MinInt32),
		"L":    int64(math.MaxInt64),
		"D":    0.1,
		"Dinf": math.Inf(-1),
		"B":    true,
		"T":    time.Date(2026, 1, 2, 3, 4, 5, 100, time.UTC),
		"T1":   time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		"G":    g,
		"X":    []byte{0, 255, '"'},
		"X0":   []byte{},
	}
}

func TestRoundTripEveryType(t *testing.T) {
	props := every()
	var cols []Column
	for name, v := range props {
		c, ok := ColumnOf(name, v)
		require.True(t, ok, name)
		cols = append(cols, c)
	}
	cols = append(cols, Column{"N", edm.TypeDouble}) // NaN, checked apart
	h := Columns(cols)
	require.Equal(t, Column{"PartitionKey", edm.TypeString}, h[0])
	require.Equal(t, Column{"RowKey", edm.TypeString}, h[1])
	var out bytes.Buffer
	w, err := NewWriter(&out, h)
	require.NoError(t, err)
	in := []*tablestore.Entity{
		{PartitionKey: "p,1", RowKey: " r ", Properties: props},
		{PartitionKey: "", RowKey: "\"", Properties: map[string]any{"N": math.NaN(), "I": nil}},
	}
	for _, e := range in {
		require.NoError(t, w.Write(e))
	}
	r := NewReader(bytes.NewReader(out.Bytes()))
	got, err := r.Read()
	require.NoError(t, err)
	require.Equal(t, in[0].PartitionKey, got.PartitionKey)
	require.Equal(t, in[0].RowKey, got.RowKey)
	require.Equal(t, props, got.Properties)
	got, err = r.Read()
	require.NoError(t, err)
	require.Equal(t, "", got.PartitionKey)
	require.Equal(t, "\"", got.RowKey)
	require.Len(t, got.Properties, 1)
	require.True(t, math.IsNaN(got.Properties["N"].(float64)))
	_, err = r.Read()
	require.Equal(t, io.EOF, err)
	require.Equal(t, int64(out.Len()), r.Offset())

	// The header names each column and type; keys stay bare.
	header, _, _ := strings.Cut(out.String(), "\n")
	require.True(t, strings.HasPrefix(header, "PartitionKey,RowKey,B:Edm.Boolean,D:Edm.Double,"), header)
	// Empty values are quoted, missing ones empty.
	require.Contains(t, out.String(), `"",`)
}

func TestWriterHeaderOnly(t *testing.T) {
	var out bytes.Buffer
	w, err := NewWriter(&out, Columns(nil))
	require.NoError(t, err)
	require.NoError(t, w.WriteHeader())
	require.NoError(t, w.WriteHeader())
	require.Equal(t, "PartitionKey,RowKey\n", out.String())
}

func TestReaderRecords(t *testing.T) {
	for _, tc := range []struct {
		in     string
		fields [][]string
		quoted [][]bool
		lines  []int
		err    string
	}{
		{in: "a,b\n", fields: [][]string{{"a", "b"}}, quoted: [][]bool{{false, false}}, lines: []int{1}},
		{in: "a,\"\"\r\n,x", fields: [][]string{{"a", ""}, {"", "x"}}, quoted: [][]bool{{false, true}, {false, false}}, lines: []int{1, 2}},
		{in: "\"a\nb\",\"c\"\"d\"\ne\n", fields: [][]string{{"a\nb", "c\"d"}, {"e"}}, quoted: [][]bool{{true, true}, {false}}, lines: []int{1, 3}},
		{in: "\"a\r\n\r\nb\"\r\n", fields: [][]string{{"a\r\n\r\nb"}}, quoted: [][]bool{{true}}, lines: []int{1}},
		{in: "a\rb\n", fields: [][]string{{"a\rb"}}, quoted: [][]bool{{false}}, lines: []int{1}},
		{in: "a\"b\n", err: "a quote inside an unquoted field (field 1)"},
		{in: "\"a\"b\n", err: "text after a closing quote (field 1)"},
		{in: "\"a\n", err: "a quoted field is not closed"},
	} {
		r := NewReader(strings.NewReader(tc.in))
		for i := 0; ; i++ {
			rec, err := r.ReadRecord()
			if err == io.EOF {
				require.Len(t, tc.fields, i, tc.in)
				require.Equal(t, int64(len(tc.in)), r.Offset(), tc.in)
				break
			}
			if tc.err != "" {
				require.ErrorIs(t, err, tablestore.ErrInvalidInput, tc.in)
				require.ErrorContains(t, err, "tablestore: InvalidInput: malformed csv: "+tc.err)
				require.Equal(t, 1, rec.Line)
				break
			}
			require.NoError(t, err, tc.in)
			require.Equal(t, tc.fields[i], rec.Fields, tc.in)
			require.Equal(t, tc.quoted[i], rec.Quoted, tc.in)
			require.Equal(t, tc.lines[i], rec.Line, tc.in)
		}
	}
}

// TestReaderGoesOn: a malformed record is reported with its line, its
// bytes are Raw, and reading goes on at the next record, a stray quote
// swallowing nothing.
func TestReaderGoesOn(t *testing.T) {
	in := "PartitionKey,RowKey\na,b\"c\nd,e\n"
	r := NewReader(strings.NewReader(in))
	_, err := r.ReadHeader()
	require.NoError(t, err)
	_, err = r.Read()
	require.ErrorIs(t, err, tablestore.ErrInvalidInput)
	require.ErrorContains(t, err, "line 2: malformed csv")
	require.Equal(t, "a,b\"c\n", string(r.Raw()))
	require.Equal(t, 2, r.Line())
	e, err := r.Read()
	require.NoError(t, err)
	require.Equal(t, "d", e.PartitionKey)
	require.Equal(t, 3, r.Line())
}

// TestReaderAt: a reader started at an offset and line an earlier reader
// reported reads the same records on the same lines.
func TestReaderAt(t *testing.T) {
	in := "PartitionKey,RowKey,N:Edm.Int32\n\"a\nb\",1,1\nc,2,2\nd,3,\n"
	r := NewReader(strings.NewReader(in))
	h, err := r.ReadHeader()
	require.NoError(t, err)
	_, err = r.Read()
	require.NoError(t, err)
	line, off := r.Line(), r.Offset()
	require.Equal(t, 3, line)
	require.Equal(t, int64(strings.Index(in, "c,2")), off)

	r2 := NewReaderAt(strings.NewReader(in[off:]), line, off)
	r2.SetHeader(h)
	require.Equal(t, h, r2.Header())
	rec, err := r2.ReadRecord()
	require.NoError(t, err)
	require.Equal(t, 4, rec.Line)
	e, err := h.Entity(rec)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"N": int32(2)}, e.Properties)
	e, err = r2.Read()
	require.NoError(t, err)
	require.Equal(t, "d", e.PartitionKey)
	require.Empty(t, e.Properties)
	require.Equal(t, int64(len(in)), r2.Offset())
	require.Equal(t, 5, r2.Line())
}

func TestReaderTooLong(t *testing.T) {
	long := strings.Repeat("x", MaxRecordBytes+10)
	in := "PartitionKey,RowKey\n" + long + "\na,b\n"
	r := NewReader(strings.NewReader(in))
	_, err := r.ReadHeader()
	require.NoError(t, err)
	rec, err := r.ReadRecord()
	require.ErrorIs(t, err, tablestore.ErrRequestBodyTooLarge)
	require.Equal(t, 2, rec.Line)
	require.Equal(t, 2, r.Line())
	require.Equal(t, int64(len(in)-4), r.Offset())
	e, err := r.Read()
	require.NoError(t, err)
	require.Equal(t, "a", e.PartitionKey)
	require.Equal(t, 3, r.Line())
}

func TestRecordEnd(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"a,b\nc", 4},
		{"a,b", -1},
		{`"x` + "\n" + `y",z` + "\n", 8},
		{`"x""` + "\n" + `",z` + "\n", 9}, // "" inside quotes, then a line break inside
		{`"x"`, -1},                       // a closing quote or the start of "": wait
		{`ab"c` + "\n" + "d\n", 5},        // a stray quote opens nothing
		{`a,"b` + "\r\n", -1},
		{"\r\n", 2},
	} {
		require.Equal(t, c.want, RecordEnd([]byte(c.in)), "%q", c.in)
	}
	rec, err := ParseRecord([]byte(`"",,"x""y"` + "\r\n"))
	require.NoError(t, err)
	require.Equal(t, Record{Fields: []string{"", "", `x"y`}, Quoted: []bool{true, false, true}}, rec)
	rec, err = ParseRecord(nil)
	require.NoError(t, err)
	require.Equal(t, Record{Fields: []string{""}, Quoted: []bool{false}}, rec)
}

func TestParseHeader(t *testing.T) {
	h, err := ParseHeader([]string{"\ufeffPartitionKey", " RowKey ", "A:Edm.Int32", "A", "B : Edm.Guid"})
	require.NoError(t, err)
	require.Equal(t, Header{{"PartitionKey", edm.TypeString}, {"RowKey", edm.TypeString},
		{"A", edm.TypeInt32}, {"A", edm.TypeString}, {"B", edm.TypeGuid}}, h)
	h, err = ParseHeader([]string{"PartitionKey:Edm.String", "RowKey"})
	require.NoError(t, err)
	require.Len(t, h, 2)
	for _, c := range []struct {
		fields []string
		err    string
	}{
		{[]string{"PartitionKey", "RowKey", "A:Edm.Int32", "A:Edm.Int32"}, `header column 4 ("A:Edm.Int32"): repeated`},
		{[]string{"PartitionKey:Edm.Int32", "RowKey"}, "header column 1: PartitionKey must be Edm.String"},
		{[]string{"PartitionKey", "RowKey", ""}, "header column 3: empty name"},
		{[]string{"PartitionKey", "RowKey", ":Edm.Int32"}, "header column 3: empty name"},
		{[]string{"PartitionKey", "RowKey", "A:Edm.Integer"}, `unknown type "Edm.Integer"; want one of Edm.String,`},
		{[]string{"PartitionKey", "RowKey", "A:edm.int32"}, `unknown type "edm.int32"`},
		{[]string{"PartitionKey", "Name"}, "header: PartitionKey and RowKey columns are required"},
		{nil, "PartitionKey and RowKey"},
		{make([]string, MaxColumns+1), "more than 4096"},
	} {
		_, err := ParseHeader(c.fields)
		require.ErrorIs(t, err, tablestore.ErrInvalidInput, "%q", c.fields)
		require.ErrorContains(t, err, c.err, "%q", c.fields)
	}
}

func TestBadCells(t *testing.T) {
	for _, c := range []struct {
		typ  edm.Type
		text string
		code tablestore.Code
		msg  string
	}{
		{edm.TypeInt32, "2147483648", edm.CodeInvalidInput, "an Edm.Int32 value must be an integer from -2147483648 to 2147483647"},
		{edm.TypeInt32, "1.0", edm.CodeInvalidInput, "Edm.Int32"},
		{edm.TypeInt64, "9223372036854775808", edm.CodeInvalidInput, "Edm.Int64"},
		{edm.TypeInt64, " 1", edm.CodeInvalidInput, "Edm.Int64"},
		{edm.TypeDouble, "1e999", edm.CodeInvalidInput, "Edm.Double"},
		{edm.TypeDouble, "nan", edm.CodeInvalidInput, "Edm.Double"},
		{edm.TypeDouble, ".5", edm.CodeInvalidInput, "Edm.Double"},
		{edm.TypeBoolean, "1", edm.CodeInvalidInput, "Edm.Boolean value must be true or false"},
		{edm.TypeDateTime, "2026-13-01T00:00:00Z", edm.CodeInvalidInput, "malformed datetime"},
		{edm.TypeDateTime, "10000-01-01T00:00:00Z", edm.CodeInvalidInput, "malformed datetime"},
		{edm.TypeDateTime, "0001-01-01T00:00:00+01:00", edm.CodeOutOfRangeInput, "outside years 1 to 9999"},
		{edm.TypeGuid, "0f8fad5b-d9cb-469f-a165-70867728950", edm.CodeInvalidInput, "Edm.Guid"},
		{edm.TypeBinary, "AA", edm.CodeInvalidInput, "base64"},
		{edm.TypeString, "\xff", edm.CodeInvalidInput, "not valid UTF-8"},
		{0, "x", edm.CodeInvalidInput, "unknown type"},
	} {
		_, err := ParseValue(c.typ, c.text)
		require.Equal(t, c.code, tablestore.ErrorCode(err), "%s %q: %v", c.typ, c.text, err)
		require.ErrorContains(t, err, c.msg, "%s %q", c.typ, c.text)
	}
	// In a record, the error names the property.
	h, err := ParseHeader([]string{"PartitionKey", "RowKey", "Age:Edm.Int32"})
	require.NoError(t, err)
	_, err = h.Entity(Record{Fields: []string{"a", "b", "old"}, Quoted: []bool{false, false, false}})
	require.ErrorIs(t, err, tablestore.ErrInvalidInput)
	require.ErrorContains(t, err, `tablestore: InvalidInput: property "Age": an Edm.Int32 value`)
	// Good values of each type parse as written.
	for typ, text := range map[edm.Type]string{edm.TypeInt32: "-7", edm.TypeInt64: "-9223372036854775808",
		edm.TypeDouble: "-1.5e-300", edm.TypeBoolean: "TRUE", edm.TypeDateTime: "2026-01-02t03:04:05.12345678z",
		edm.TypeGuid: "0F8FAD5B-D9CB-469F-A165-70867728950E", edm.TypeBinary: "AAE="} {
		v, err := ParseValue(typ, text)
		require.NoError(t, err, "%s %q", typ, text)
		require.Equal(t, typ, TypeOf(v))
	}
	v, _ := ParseValue(edm.TypeDateTime, "2026-01-02T03:04:05.12345678+01:00")
	require.Equal(t, time.Date(2026, 1, 2, 2, 4, 5, 123456700, time.UTC), v)
}

func TestEntityErrors(t *testing.T) {
	h, err := ParseHeader([]string{"PartitionKey", "RowKey", "A:Edm.Int32", "A:Edm.Int64", "Timestamp:Edm.DateTime"})
	require.NoError(t, err)
	row := func(f ...string) Record {
		r := Record{Fields: f, Quoted: make([]bool, len(f))}
		return r
	}
	_, err = h.Entity(row("a", "b"))
	require.ErrorIs(t, err, tablestore.ErrInvalidInput)
	require.ErrorContains(t, err, "the row has 2 fields, the header 5")
	_, err = h.Entity(row("", "b", "", "", ""))
	require.ErrorIs(t, err, tablestore.ErrPropertiesNeedValue)
	require.ErrorContains(t, err, "no PartitionKey")
	_, err = h.Entity(row("a", "", "", "", ""))
	require.ErrorIs(t, err, tablestore.ErrPropertiesNeedValue)
	require.ErrorContains(t, err, "no RowKey")
	// Quoted, the empty cells are the empty keys, which Azure allows.
	quoted := row("", "", "", "", "")
	quoted.Quoted[0], quoted.Quoted[1] = true, true
	both, err := h.Entity(quoted)
	require.NoError(t, err)
	require.Equal(t, [2]string{"", ""}, [2]string{both.PartitionKey, both.RowKey})
	_, err = h.Entity(row("a", "b", "1", "2", ""))
	require.ErrorIs(t, err, tablestore.ErrDuplicatePropertiesSpecified)
	require.ErrorContains(t, err, `the property "A" has values in two columns`)
	_, err = h.Entity(row("a", "b\xff", "", "", ""))
	require.ErrorIs(t, err, tablestore.ErrInvalidInput)
	// A quoted empty key is the empty string; the Timestamp is the
	// entity's own and not a property.
	e, err := h.Entity(Record{Fields: []string{"", "b", "", "2", "2026-01-02T00:00:00Z"}, Quoted: []bool{true, false, false, false, false}})
	require.NoError(t, err)
	require.Equal(t, &tablestore.Entity{PartitionKey: "", RowKey: "b", Timestamp: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC),
		Properties: map[string]any{"A": int64(2)}}, e)
}

func TestEncoderErrors(t *testing.T) {
	for _, h := range []Header{
		{{"PartitionKey", edm.TypeString}},
		{{"PartitionKey", edm.TypeString}, {"RowKey", edm.TypeString}, {"a:b", edm.TypeString}},
		{{"PartitionKey", edm.TypeString}, {"RowKey", edm.TypeString}, {" a", edm.TypeString}},
		{{"PartitionKey", edm.TypeString}, {"RowKey", edm.TypeString}, {"a", 0}},
		{{"PartitionKey", edm.TypeString}, {"RowKey", edm.TypeString}, {"a", edm.TypeInt32}, {"a", edm.TypeInt32}},
		{{"PartitionKey", edm.TypeInt32}, {"RowKey", edm.TypeString}},
	} {
		_, err := NewEncoder(h)
		require.ErrorIs(t, err, tablestore.ErrInvalidInput, "%v", h)
	}
	enc, err := NewEncoder(Columns([]Column{{"A", edm.TypeInt32}, {"A", edm.TypeInt32}, {"RowKey", edm.TypeString}}))
	require.NoError(t, err)
	require.Equal(t, "PartitionKey,RowKey,A:Edm.Int32\n", string(enc.AppendHeader(nil)))
	for _, c := range []struct {
		props map[string]any
		code  tablestore.Code
		msg   string
	}{
		{map[string]any{"A": int64(1)}, edm.CodeInvalidInput, `entity ("p", "r"): property A has no column A:Edm.Int64`},
		{map[string]any{"B": "x"}, edm.CodeInvalidInput, "has no column B:Edm.String"},
		{map[string]any{"A": uint8(1)}, edm.CodeInvalidValueType, "uint8"},
		{map[string]any{"T": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, edm.CodeOutOfRangeInput, "outside years 1 to 9999"},
		{map[string]any{"S": "\xff"}, edm.CodeInvalidInput, "UTF-8"},
	} {
		b, err := enc.AppendEntity([]byte("kept"), &tablestore.Entity{PartitionKey: "p", RowKey: "r", Properties: c.props})
		require.Equal(t, c.code, tablestore.ErrorCode(err), "%v: %v", c.props, err)
		require.ErrorContains(t, err, c.msg)
		require.Equal(t, "kept", string(b))
	}
	b, err := enc.AppendEntity(nil, &tablestore.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(3), "Z": nil}})
	require.NoError(t, err)
	require.Equal(t, "p,r,3\n", string(b))
}

// FuzzReader holds the reader to its contract on any input: no panic,
// only coded errors about the input, offsets that grow to the input's
// length, records on increasing lines, and every entity it accepts
// written back and read again unchanged.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"PartitionKey,RowKey\na,b\n",
		"PartitionKey,RowKey,N:Edm.Int32,D:Edm.Double,T:Edm.DateTime\r\n\"a\nb\",\"\",1,NaN,2026-01-02T03:04:05Z\r\n",
		"PartitionKey,RowKey,X:Edm.Binary,G:Edm.Guid,B:Edm.Boolean\na,b,AAE=,0f8fad5b-d9cb-469f-a165-70867728950e,TRUE\n",
		"PartitionKey,RowKey,S\na,b,\"x\"\"y\"\na\"b,c\n\"open\n",
		"\ufeffPartitionKey , RowKey,L:Edm.Int64\n,,\n",
		"PartitionKey,RowKey,Timestamp,A,A@type,B@type,B\np,1,2024-05-01T10:00:00.123Z,7,Edm.Int64,Edm.Guid,x\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := NewReader(strings.NewReader(in))
		var off int64
		last := 0
		for {
			rec, err := r.ReadRecord()
			if err == io.EOF {
				break
			}
			if err != nil && tablestore.ErrorCode(err) == "" {
				t.Fatalf("an error with no code: %v", err)
			}
			if r.Offset() <= off || rec.Line <= last || r.Line() < rec.Line {
				t.Fatalf("no progress: offset %d after %d, line %d after %d", r.Offset(), off, rec.Line, last)
			}
			off, last = r.Offset(), rec.Line
			if err != nil {
				continue
			}
			if len(rec.Fields) != len(rec.Quoted) {
				t.Fatalf("%d fields, %d quoted flags", len(rec.Fields), len(rec.Quoted))
			}
			if r.Header() == nil {
				if h, err := ParseHeader(rec.Fields); err == nil {
					r.SetHeader(h)
				}
				continue
			}
			e, err := r.Header().Entity(rec)
			if err != nil {
				if tablestore.ErrorCode(err) == "" {
					t.Fatalf("an error with no code: %v", err)
				}
				continue
			}
			roundTrip(t, r.Header(), e)
		}
		if r.Offset() != int64(len(in)) {
			t.Fatalf("read %d of %d bytes", r.Offset(), len(in))
		}
	})
}

// roundTrip writes e under h, reads it back and compares.
func roundTrip(t *testing.T, h Header, e *tablestore.Entity) {
	var out bytes.Buffer
	w, err := NewWriter(&out, h)
	if err != nil {
		// Only a header whose names would change when written (a first
		// name that is spaces behind a byte order mark) is refused.
		if !errors.Is(err, tablestore.ErrInvalidInput) {
			t.Fatalf("NewWriter: %v", err)
		}
		return
	}
	if err := w.Write(e); err != nil {
		t.Fatalf("writing back %+v: %v", e, err)
	}
	back, err := NewReader(&out).Read()
	if err != nil {
		t.Fatalf("reading back %q: %v", out.String(), err)
	}
	if back.PartitionKey != e.PartitionKey || back.RowKey != e.RowKey || len(back.Properties) != len(e.Properties) {
		t.Fatalf("%+v read back as %+v", e, back)
	}
	for name, v := range e.Properties {
		want, _ := FormatValue(v)
		got, _ := FormatValue(back.Properties[name])
		if TypeOf(v) != TypeOf(back.Properties[name]) || want != got {
			t.Fatalf("property %s: %v read back as %v", name, v, back.Properties[name])
		}
	}
}

// TestSpreadsheetSafe checks that SpreadsheetSafe quotes every cell a
// spreadsheet would run as a formula, leaves numbers and other cells as
// they are, and that the default output keeps such cells exactly.
func TestSpreadsheetSafe(t *testing.T) {
	bin := []byte{0xfb, 0xff} // base64 "+/8="
	e := &tablestore.Entity{PartitionKey: "=1+1", RowKey: "@SUM(A1)", Properties: map[string]any{
		"F":   `=HYPERLINK("http://x.example","y")`,
		"P":   "+cmd|' /C calc'!A0",
		"M":   "-2+3",
		"Tab": "\t=1",
		"CR":  "\r=1",
		"Ok":  "plain = text",
		"I":   int32(-5),
		"L":   int64(-7),
		"D":   -1.5e-7,
		"Inf": math.Inf(-1),
		"Bin": bin,
	}}
	var cols []Column
	for name, v := range e.Properties {
		c, _ := ColumnOf(name, v)
		cols = append(cols, c)
	}
	h := Columns(cols)

	// The default: every value reads back as itself.
	var exact bytes.Buffer
	w, err := NewWriter(&exact, h)
	require.NoError(t, err)
	require.NoError(t, w.Write(e))
	got, err := NewReader(bytes.NewReader(exact.Bytes())).Read()
	require.NoError(t, err)
	require.Equal(t, e.PartitionKey, got.PartitionKey)
	require.Equal(t, e.RowKey, got.RowKey)
	require.Equal(t, e.Properties, got.Properties)

	// Spreadsheet-safe: formulas become text.
	var safe bytes.Buffer
	w, err = NewWriter(&safe, h, SpreadsheetSafe())
	require.NoError(t, err)
	require.NoError(t, w.Write(e))
	rd := NewReader(bytes.NewReader(safe.Bytes()))
	_, err = rd.ReadHeader()
	require.NoError(t, err)
	rec, err := rd.ReadRecord()
	require.NoError(t, err)
	cell := map[string]string{}
	for i, f := range rec.Fields {
		cell[h[i].Name] = f
	}
	require.Equal(t, map[string]string{"PartitionKey": "'=1+1", "RowKey": "'@SUM(A1)",
		"F": `'=HYPERLINK("http://x.example","y")`, "P": "'+cmd|' /C calc'!A0", "M": "'-2+3", "Tab": "'\t=1", "CR": "'\r=1",
		"Ok": "plain = text", "I": "-5", "L": "-7", "D": "-1.5e-07", "Inf": "-Infinity", "Bin": "'+/8="}, cell)
	// Every cell of every record, unquoted, starts with none of = + - @
	// tab CR unless it is a number's.
	rd = NewReader(bytes.NewReader(safe.Bytes()))
	for {
		rec, err := rd.ReadRecord()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		for i, f := range rec.Fields {
			if f == "" || rec.Line > 1 && (h[i].Type == edm.TypeInt32 || h[i].Type == edm.TypeInt64 || h[i].Type == edm.TypeDouble) {
				continue
			}
			require.NotContains(t, "=+-@\t\r", string(f[0]), "column %s: %q", h[i], f)
		}
	}
}

// TestStorageExplorerExport reads Storage Explorer's CSV export: each
// property's type row by row in its NAME@type column, the Timestamp
// column kept as the entity's Timestamp, empty cells absent.
func TestStorageExplorerExport(t *testing.T) {
	in := "PartitionKey,RowKey,Timestamp,Age,Age@type,Name,Name@type,Born,Born@type,Big,Big@type\r\n" +
		"p,1,2024-05-01T10:00:00.123Z,42,Edm.Int32,Ada,Edm.String,1815-12-10T00:00:00.000Z,Edm.DateTime,9007199254740993,Edm.Int64\r\n" +
		"p,2,2024-05-01T10:00:00.123Z,4.5,Edm.Double,,,,,,\r\n" +
		"p,3,2024-05-01T10:00:00.123Z,old,,true,Edm.Boolean,,,,\r\n"
	r := NewReader(strings.NewReader(in))
	var got []*tablestore.Entity
	for {
		e, err := r.Read()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, e)
	}
	require.Len(t, got, 3)
	require.Equal(t, map[string]any{"Age": int32(42), "Name": "Ada", "Born": time.Date(1815, 12, 10, 0, 0, 0, 0, time.UTC), "Big": int64(9007199254740993)}, got[0].Properties)
	require.Equal(t, time.Date(2024, 5, 1, 10, 0, 0, 123e6, time.UTC), got[0].Timestamp)
	require.Equal(t, map[string]any{"Age": 4.5}, got[1].Properties)
	require.Equal(t, map[string]any{"Age": "old", "Name": true}, got[2].Properties)

	_, err := ParseHeader([]string{"PartitionKey", "RowKey", "Age@type"})
	require.ErrorContains(t, err, `no column "Age"`)
	_, err = NewReader(strings.NewReader("PartitionKey,RowKey,Age,Age@type\np,1,7,Edm.Int9\n")).Read()
	require.ErrorContains(t, err, `unknown type "Edm.Int9" in Age@type`)
	require.True(t, errors.Is(err, tablestore.ErrInvalidInput))
}
