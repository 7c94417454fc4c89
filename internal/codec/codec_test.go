package codec

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/filter"
)

// sampleProps has one property of every type, edge values included, sorted
// by name.
func sampleProps() []Property {
	props := []Property{
		{"Bin", filter.Value{Type: filter.TypeBinary, Bytes: []byte{0, 1, 2, 0xff}}},
		{"BinEmpty", filter.Value{Type: filter.TypeBinary, Bytes: []byte{}}},
		{"Bool", filter.Value{Type: filter.TypeBoolean, Int: 1}},
		{"BoolFalse", filter.Value{Type: filter.TypeBoolean, Int: 0}},
		{"Date", filter.Value{Type: filter.TypeDateTime, Int: 637660800000000001}},
		{"Double", filter.Value{Type: filter.TypeDouble, Float: -1.5e300}},
		{"DoubleNaN", filter.Value{Type: filter.TypeDouble, Float: math.NaN()}},
		{"DoubleNegZero", filter.Value{Type: filter.TypeDouble, Float: math.Copysign(0, -1)}},
		{"Guid", filter.Value{Type: filter.TypeGuid, Bytes: bytes.Repeat([]byte{0xab}, 16)}},
		{"Int32Max", filter.Value{Type: filter.TypeInt32, Int: math.MaxInt32}},
		{"Int32Min", filter.Value{Type: filter.TypeInt32, Int: math.MinInt32}},
		{"Int64Max", filter.Value{Type: filter.TypeInt64, Int: math.MaxInt64}},
		{"Int64Min", filter.Value{Type: filter.TypeInt64, Int: math.MinInt64}},
		{"Str", filter.Value{Type: filter.TypeString, Bytes: []byte("héllo, 世界")}},
		{"StrEmpty", filter.Value{Type: filter.TypeString, Bytes: []byte{}}},
		{"StrLong", filter.Value{Type: filter.TypeString, Bytes: []byte(strings.Repeat("x", 300))}},
		{strings.Repeat("N", 200), filter.Value{Type: filter.TypeInt32, Int: 7}},
	}
	slices.SortFunc(props, func(a, b Property) int { return strings.Compare(a.Name, b.Name) })
	return props
}

// requireSameValue compares values bit for bit (NaN equals NaN, -0 differs
// from +0).
func requireSameValue(t *testing.T, want, got filter.Value, msg string) {
	t.Helper()
	require.Equal(t, want.Type, got.Type, msg)
	require.Equal(t, want.Int, got.Int, msg)
	require.Equal(t, math.Float64bits(want.Float), math.Float64bits(got.Float), msg)
	require.True(t, bytes.Equal(want.Bytes, got.Bytes), "%s: bytes %x != %x", msg, want.Bytes, got.Bytes)
	if want.Type == filter.TypeString || want.Type == filter.TypeBinary || want.Type == filter.TypeGuid {
		require.NotNil(t, got.Bytes, msg)
	}
}

func TestRoundTrip(t *testing.T) {
	props := sampleProps()
	const ts = int64(638000000000000123)
	rec := Record(Encode([]byte("prefix"), ts, props)[len("prefix"):])
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
	rec := Record(Encode(nil, 1, sampleProps()))
	for _, name := range []string{"", "A", "Bim", "Binz", "Str0", "zzz", "bool", "Int32", "Int64Maxx"} {
		_, ok := rec.Lookup(name)
		require.False(t, ok, name)
	}
	empty := Record(Encode(nil, 5, nil))
	require.Len(t, empty, headerLen)
	_, ok := empty.Lookup("A")
	require.False(t, ok)
	props, err := empty.Properties()
	require.NoError(t, err)
	require.Empty(t, props)
}

func TestSelect(t *testing.T) {
	rec := Record(Encode(nil, 1, sampleProps()))
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

func TestView(t *testing.T) {
	v := View{PartitionKey: []byte("pk"), RowKey: []byte("rk"), Record: Encode(nil, 42, sampleProps())}
	var p filter.Properties = &v
	got, ok := p.Lookup("PartitionKey")
	require.True(t, ok)
	require.Equal(t, filter.TypeString, got.Type)
	require.Equal(t, "pk", string(got.Bytes))
	got, ok = p.Lookup("RowKey")
	require.True(t, ok)
	require.Equal(t, "rk", string(got.Bytes))
	got, ok = p.Lookup("Timestamp")
	require.True(t, ok)
	require.Equal(t, filter.Value{Type: filter.TypeDateTime, Int: 42}, got)
	got, ok = p.Lookup("Int32Min")
	require.True(t, ok)
	require.Equal(t, int64(math.MinInt32), got.Int)
	_, ok = p.Lookup("Nope")
	require.False(t, ok)

	bad := View{PartitionKey: []byte("pk"), Record: Record{2}}
	_, ok = bad.Lookup("Timestamp")
	require.False(t, ok)
	_, ok = bad.Lookup("X")
	require.False(t, ok)
}

func TestCorrupt(t *testing.T) {
	good := Encode(nil, 1, []Property{
		{"A", filter.Value{Type: filter.TypeString, Bytes: []byte("x")}},
		{"B", filter.Value{Type: filter.TypeBoolean, Int: 1}},
	})
	tests := []struct {
		name string
		rec  []byte
		want string
	}{
		{"empty", nil, "codec: truncated record"},
		{"short header", good[:5], "codec: truncated record"},
		{"bad version", append([]byte{9}, good[1:]...), "codec: unknown record version 9"},
		{"truncated name", good[:headerLen+1], "codec: truncated record"},
		{"missing type", good[:headerLen+2], "codec: truncated record"},
		{"truncated string", good[:headerLen+4], "codec: truncated record"},
		{"truncated bool", good[:len(good)-1], "codec: truncated record"},
		{"bad type", replaceAt(good, headerLen+2, 0), `codec: property "A" has invalid type byte 0`},
		{"bad type 9", replaceAt(good, headerLen+2, 9), `codec: property "A" has invalid type byte 9`},
		{"bad bool", replaceAt(good, len(good)-1, 2), `codec: property "B" has an invalid Edm.Boolean payload`},
		{"out of order", replaceAt(good, headerLen+6, 'A'), "codec: property names out of order or repeated"},
		{"huge length", append(append([]byte(nil), good[:headerLen]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01), "codec: truncated record"},
		{"bad utf8 string", replaceAt(good, headerLen+4, 0xff), `codec: property "A" holds a string that is not valid UTF-8`},
		{"bad utf8 name", replaceAt(good, headerLen+1, 0xfe), `codec: property name "\xfe" is not valid UTF-8`},
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

func TestEncodePanicsOnProgrammingErrors(t *testing.T) {
	require.Panics(t, func() { Encode(nil, 0, []Property{{"A", filter.Value{}}}) })
	require.Panics(t, func() { Encode(nil, 0, []Property{{"A", filter.Value{Type: filter.TypeGuid, Bytes: []byte{1}}}}) })
}

func benchProps() []Property {
	props := make([]Property, 10)
	for i := range props {
		name := fmt.Sprintf("Property%02d", i)
		switch i % 4 {
		case 0:
			props[i] = Property{name, filter.Value{Type: filter.TypeString, Bytes: []byte("a moderately long string value")}}
		case 1:
			props[i] = Property{name, filter.Value{Type: filter.TypeInt64, Int: int64(i) << 40}}
		case 2:
			props[i] = Property{name, filter.Value{Type: filter.TypeDouble, Float: float64(i) / 3}}
		case 3:
			props[i] = Property{name, filter.Value{Type: filter.TypeDateTime, Int: 638000000000000000}}
		}
	}
	return props
}

func BenchmarkLookup3rdOf10(b *testing.B) {
	rec := Record(Encode(nil, 1, benchProps()))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := rec.Lookup("Property02"); !ok {
			b.Fatal("not found")
		}
	}
}

func BenchmarkViewLookup3rdOf10(b *testing.B) {
	v := &View{PartitionKey: []byte("pk"), RowKey: []byte("rk"), Record: Encode(nil, 1, benchProps())}
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
		buf = Encode(buf[:0], 1, props)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkProperties10(b *testing.B) {
	rec := Record(Encode(nil, 1, benchProps()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rec.Properties(); err != nil {
			b.Fatal(err)
		}
	}
}
