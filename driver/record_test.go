package driver

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// mustEncode is Encode, failing tb on an error, as a Record.
func mustEncode(tb testing.TB, dst []byte, timestamp int64, props []Property) Record {
	tb.Helper()
	out, err := Encode(dst, timestamp, props)
	require.NoError(tb, err)
	return out
}

// sampleProps has one property of every type, edge values included, sorted
// by name.
func sampleProps() []Property {
	props := []Property{
		{"Bin", edm.Value{Type: edm.TypeBinary, Bytes: []byte{0, 1, 2, 0xff}}},
		{"BinEmpty", edm.Value{Type: edm.TypeBinary, Bytes: []byte{}}},
		{"Bool", edm.Value{Type: edm.TypeBoolean, Int: 1}},
		{"BoolFalse", edm.Value{Type: edm.TypeBoolean, Int: 0}},
		{"Date", edm.Value{Type: edm.TypeDateTime, Int: 637660800000000001}},
		{"Double", edm.Value{Type: edm.TypeDouble, Float: -1.5e300}},
		{"DoubleNaN", edm.Value{Type: edm.TypeDouble, Float: math.NaN()}},
		{"DoubleNegZero", edm.Value{Type: edm.TypeDouble, Float: math.Copysign(0, -1)}},
		{"Guid", edm.Value{Type: edm.TypeGuid, Bytes: bytes.Repeat([]byte{0xab}, 16)}},
		{"Int32Max", edm.Value{Type: edm.TypeInt32, Int: math.MaxInt32}},
		{"Int32Min", edm.Value{Type: edm.TypeInt32, Int: math.MinInt32}},
		{"Int64Max", edm.Value{Type: edm.TypeInt64, Int: math.MaxInt64}},
		{"Int64Min", edm.Value{Type: edm.TypeInt64, Int: math.MinInt64}},
		{"Str", edm.Value{Type: edm.TypeString, Bytes: []byte("héllo, 世界")}},
		{"StrEmpty", edm.Value{Type: edm.TypeString, Bytes: []byte{}}},
		{"StrLong", edm.Value{Type: edm.TypeString, Bytes: []byte(strings.Repeat("x", 300))}},
		{strings.Repeat("N", 200), edm.Value{Type: edm.TypeInt32, Int: 7}},
	}
	slices.SortFunc(props, func(a, b Property) int { return strings.Compare(a.Name, b.Name) })
	return props
}

// requireSameValue compares values bit for bit (NaN equals NaN, -0 differs
// from +0).
func requireSameValue(t *testing.T, want, got edm.Value, msg string) {
	t.Helper()
	require.Equal(t, want.Type, got.Type, msg)
	require.Equal(t, want.Int, got.Int, msg)
	require.Equal(t, math.Float64bits(want.Float), math.Float64bits(got.Float), msg)
	require.True(t, bytes.Equal(want.Bytes, got.Bytes), "%s: bytes %x != %x", msg, want.Bytes, got.Bytes)
	if want.Type == edm.TypeString || want.Type == edm.TypeBinary || want.Type == edm.TypeGuid {
		require.NotNil(t, got.Bytes, msg)
	}
}

func TestRoundTrip(t *testing.T) {
	props := sampleProps()
	const ts = int64(638000000000000123)
	rec := mustEncode(t, []byte("prefix"), ts, props)[len("prefix"):]
	require.Equal(t, EncodedLen(props), len(rec))
	require.NoError(t, rec.Check())

	got, err := rec.Timestamp()
	require.NoError(t, err)
	require.Equal(t, ts, got)

	all, err := rec.Properties()
	require.NoError(t, err)
	require.Len(t, all, len(props))
	for i, p := range props {
		require.Equal(t, p.Name, all[i].Name)
		requireSameValue(t, p.Value, all[i].Value, p.Name)

		v, ok := rec.Lookup(p.Name)
		require.True(t, ok, p.Name)
		requireSameValue(t, p.Value, v, "lookup "+p.Name)
	}

	// Properties copies: overwriting the record leaves the result intact.
	for i := range rec {
		rec[i] = 0
	}
	i := slices.IndexFunc(all, func(p Property) bool { return p.Name == "Str" })
	require.Equal(t, "héllo, 世界", string(all[i].Value.Bytes))
}

func TestLookupAbsent(t *testing.T) {
	rec := mustEncode(t, nil, 1, sampleProps())
	for _, name := range []string{"", "A", "Bim", "Binz", "Str0", "zzz", "bool", "Int32", "Int64Maxx"} {
		_, ok := rec.Lookup(name)
		require.False(t, ok, name)
	}
	empty := mustEncode(t, nil, 5, nil)
	require.Len(t, empty, headerLen)
	_, ok := empty.Lookup("A")
	require.False(t, ok)
	props, err := empty.Properties()
	require.NoError(t, err)
	require.Empty(t, props)
}

func TestSelect(t *testing.T) {
	rec := mustEncode(t, nil, 1, sampleProps())
	got, err := rec.Select([]string{"Str", "Missing", "Bool", "Str", "BinEmpty"})
	require.NoError(t, err)
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	require.Equal(t, []string{"BinEmpty", "Bool", "Str"}, names)
	require.Equal(t, int64(1), got[1].Value.Int)
	require.NotNil(t, got[0].Value.Bytes)
	require.Empty(t, got[0].Value.Bytes)

	none, err := rec.Select(nil)
	require.NoError(t, err)
	require.Empty(t, none)
}

func TestRowView(t *testing.T) {
	v := RowView{PartitionKey: []byte("pk"), RowKey: []byte("rk"), Record: mustEncode(t, nil, 42, sampleProps())}
	var p filter.Properties = &v
	got, ok := p.Lookup("PartitionKey")
	require.True(t, ok)
	require.Equal(t, edm.TypeString, got.Type)
	require.Equal(t, "pk", string(got.Bytes))
	got, ok = p.Lookup("RowKey")
	require.True(t, ok)
	require.Equal(t, "rk", string(got.Bytes))
	got, ok = p.Lookup("Timestamp")
	require.True(t, ok)
	require.Equal(t, edm.Value{Type: edm.TypeDateTime, Int: 42}, got)
	got, ok = p.Lookup("Int32Min")
	require.True(t, ok)
	require.Equal(t, int64(math.MinInt32), got.Int)
	_, ok = p.Lookup("Nope")
	require.False(t, ok)

	bad := RowView{PartitionKey: []byte("pk"), Record: Record{2}}
	_, ok = bad.Lookup("Timestamp")
	require.False(t, ok)
	_, ok = bad.Lookup("X")
	require.False(t, ok)
}

func TestCorrupt(t *testing.T) {
	good := mustEncode(t, nil, 1, []Property{
		{"A", edm.Value{Type: edm.TypeString, Bytes: []byte("x")}},
		{"B", edm.Value{Type: edm.TypeBoolean, Int: 1}},
	})
	tests := []struct {
		name string
		rec  []byte
		want string
	}{
		{"empty", nil, "tablestore: truncated record"},
		{"short header", good[:5], "tablestore: truncated record"},
		{"bad version", append([]byte{9}, good[1:]...), "tablestore: unknown record version 9"},
		{"truncated name", good[:headerLen+1], "tablestore: truncated record"},
		{"missing type", good[:headerLen+2], "tablestore: truncated record"},
		{"truncated string", good[:headerLen+4], "tablestore: truncated record"},
		{"truncated bool", good[:len(good)-1], "tablestore: truncated record"},
		{"bad type", replaceAt(good, headerLen+2, 0), `tablestore: record property "A" has invalid type byte 0`},
		{"bad type 9", replaceAt(good, headerLen+2, 9), `tablestore: record property "A" has invalid type byte 9`},
		{"bad bool", replaceAt(good, len(good)-1, 2), `tablestore: record property "B" has an invalid Edm.Boolean payload`},
		{"out of order", replaceAt(good, headerLen+6, 'A'), "tablestore: record property names out of order or repeated"},
		{"huge length", append(append([]byte(nil), good[:headerLen]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "tablestore: truncated record"},
		{"bad utf8 string", replaceAt(good, headerLen+4, 0xff), `tablestore: record property "A" holds a string that is not valid UTF-8`},
		{"bad utf8 name", replaceAt(good, headerLen+1, 0xfe), `tablestore: record property name "\xfe" is not valid UTF-8`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec := Record(tc.rec)
			require.EqualError(t, rec.Check(), tc.want)
			if !strings.Contains(tc.want, "UTF-8") {
				_, err := rec.Properties()
				require.EqualError(t, err, tc.want)
				_, err = rec.Select([]string{"A", "B"})
				require.EqualError(t, err, tc.want)
			}
			// Lookup never panics and finds nothing past the damage.
			for _, n := range []string{"A", "B", "C"} {
				rec.Lookup(n)
			}
		})
	}
}

func replaceAt(b []byte, i int, c byte) []byte {
	out := append([]byte(nil), b...)
	out[i] = c
	return out
}

func benchProps() []Property {
	props := make([]Property, 10)
	for i := range props {
		name := fmt.Sprintf("Property%02d", i)
		switch i % 4 {
		case 0:
			props[i] = Property{name, edm.Value{Type: edm.TypeString, Bytes: []byte("a moderately long string value")}}
		case 1:
			props[i] = Property{name, edm.Value{Type: edm.TypeInt64, Int: int64(i) << 40}}
		case 2:
			props[i] = Property{name, edm.Value{Type: edm.TypeDouble, Float: float64(i) / 3}}
		case 3:
			props[i] = Property{name, edm.Value{Type: edm.TypeDateTime, Int: 638000000000000000}}
		}
	}
	return props
}

func BenchmarkLookup3rdOf10(b *testing.B) {
	rec := mustEncode(b, nil, 1, benchProps())
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := rec.Lookup("Property02"); !ok {
			b.Fatal("not found")
		}
	}
}

func BenchmarkRowViewLookup3rdOf10(b *testing.B) {
	v := &RowView{PartitionKey: []byte("pk"), RowKey: []byte("rk"), Record: mustEncode(b, nil, 1, benchProps())}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := v.Lookup("Property02"); !ok {
			b.Fatal("not found")
		}
	}
}

func BenchmarkEncode10(b *testing.B) {
	props := benchProps()
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = Encode(buf[:0], 1, props)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkProperties10(b *testing.B) {
	rec := mustEncode(b, nil, 1, benchProps())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rec.Properties(); err != nil {
			b.Fatal(err)
		}
	}
}

func TestEncodeRefusesInvalidProperties(t *testing.T) {
	str := func(s string) edm.Value { return edm.Value{Type: edm.TypeString, Bytes: []byte(s)} }
	tests := []struct {
		name  string
		props []Property
		want  string
	}{
		{"invalid type", []Property{{"A", edm.Value{}}}, `tablestore: record property "A" has invalid type 0`},
		{"type 9", []Property{{"A", edm.Value{Type: 9}}}, `tablestore: record property "A" has invalid type 9`},
		{"short guid", []Property{{"G", edm.Value{Type: edm.TypeGuid, Bytes: []byte{1}}}},
			`tablestore: record property "G" of type Edm.Guid holds 1 bytes, not 16`},
		{"boolean 2", []Property{{"B", edm.Value{Type: edm.TypeBoolean, Int: 2}}},
			`tablestore: record property "B" of type Edm.Boolean holds 2, not 0 or 1`},
		{"int32 overflow", []Property{{"I", edm.Value{Type: edm.TypeInt32, Int: math.MaxInt32 + 1}}},
			`tablestore: record property "I" of type Edm.Int32 holds 2147483648, out of range`},
		{"string not utf-8", []Property{{"S", str("\xff")}},
			`tablestore: record property "S" of type Edm.String holds a string that is not valid UTF-8`},
		{"name not utf-8", []Property{{"\xfe", str("x")}}, `tablestore: record property name "\xfe" is not valid UTF-8`},
		{"unsorted", []Property{{"B", str("x")}, {"A", str("y")}}, "tablestore: record properties must be sorted by name, each name once"},
		{"repeated", []Property{{"A", str("x")}, {"A", str("y")}}, "tablestore: record properties must be sorted by name, each name once"},
		{"second bad", []Property{{"A", str("x")}, {"B", edm.Value{Type: edm.TypeBoolean, Int: -1}}},
			`tablestore: record property "B" of type Edm.Boolean holds -1, not 0 or 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			out, err := Encode(dst, 7, tc.props)
			require.EqualError(t, err, tc.want)
			require.Equal(t, "keep", string(out), "Encode must cut dst back to its length")
		})
	}
	// The extremes that are valid encode.
	_, err := Encode(nil, math.MinInt64, []Property{
		{"", str("")},
		{"B", edm.Value{Type: edm.TypeBoolean, Int: 0}},
		{"I", edm.Value{Type: edm.TypeInt32, Int: math.MinInt32}},
	})
	require.NoError(t, err)
}

func TestSetTimestamp(t *testing.T) {
	rec := mustEncode(t, nil, 1, sampleProps())
	before := append(Record(nil), rec...)
	require.NoError(t, rec.SetTimestamp(-42))
	got, err := rec.Timestamp()
	require.NoError(t, err)
	require.Equal(t, int64(-42), got)
	require.Equal(t, before[headerLen:], rec[headerLen:], "the properties are untouched")
	require.NoError(t, rec.Check())

	short := Record{RecordVersion, 1, 2}
	require.EqualError(t, short.SetTimestamp(5), "tablestore: truncated record")
	require.Equal(t, Record{RecordVersion, 1, 2}, short)
	other := append(Record{2}, rec[1:]...)
	require.EqualError(t, other.SetTimestamp(5), "tablestore: unknown record version 2")
	require.Equal(t, rec[1:], other[1:])
}

// TestAppendersMatchEncode builds the sample record property by property
// with the Append functions and compares it with Encode's.
func TestAppendersMatchEncode(t *testing.T) {
	props := sampleProps()
	want := mustEncode(t, nil, 99, props)
	got := AppendHeader(nil, 99)
	for _, p := range props {
		got = AppendName(got, p.Name, p.Value.Type)
		switch v := p.Value; v.Type {
		case edm.TypeString:
			got = AppendBytesPayload(got, string(v.Bytes))
		case edm.TypeBinary:
			got = AppendBytesPayload(got, v.Bytes)
		case edm.TypeDouble:
			got = AppendDoublePayload(got, v.Float)
		case edm.TypeGuid:
			got = append(got, v.Bytes...)
		default:
			got = AppendIntPayload(got, v.Type, v.Int)
		}
	}
	require.Equal(t, []byte(want), got)
	require.Len(t, got, EncodedLen(props))
}
