package tablestore

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
)

// edgeProperties holds every Go type with its edge values.
func edgeProperties() map[string]any {
	return map[string]any{
		"Str":         "héllo 世界 😀",
		"StrEmpty":    "",
		"StrMax":      strings.Repeat("x", 32768),
		"StrMaxPairs": strings.Repeat("😀", 16384),
		"I32":         int32(-7),
		"I32Max":      int32(math.MaxInt32),
		"I32Min":      int32(math.MinInt32),
		"I64":         int64(7),
		"I64Max":      int64(math.MaxInt64),
		"I64Min":      int64(math.MinInt64),
		"D":           3.25,
		"DNegZero":    math.Copysign(0, -1),
		"DNaN":        math.NaN(),
		"DInf":        math.Inf(1),
		"DNegInf":     math.Inf(-1),
		"DMax":        math.MaxFloat64,
		"DTiny":       math.SmallestNonzeroFloat64,
		"BTrue":       true,
		"BFalse":      false,
		"T":           time.Date(2021, 8, 31, 15, 41, 38, 302781600, time.UTC),
		"TMin":        time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
		"TMax":        time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC),
		"G":           GUID{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8},
		"GZero":       GUID{},
		"Bin":         []byte{0, 1, 0xfe, 0xff},
		"BinEmpty":    []byte{},
		"BinMax":      bytes.Repeat([]byte{7}, 65536),
	}
}

// requireSameProperties compares decoded properties with the originals:
// same keys, same Go types, same values bit for bit.
func requireSameProperties(t *testing.T, want, got map[string]any) {
	t.Helper()
	require.Len(t, got, len(want))
	for name, w := range want {
		g, ok := got[name]
		require.True(t, ok, "missing %s", name)
		require.IsType(t, w, g, name)
		switch w := w.(type) {
		case float64:
			require.Equal(t, math.Float64bits(w), math.Float64bits(g.(float64)), name)
		case time.Time:
			require.True(t, w.Equal(g.(time.Time)), "%s: %v != %v", name, w, g)
			require.Equal(t, time.UTC, g.(time.Time).Location(), name)
		case []byte:
			require.NotNil(t, g, name)
			require.True(t, bytes.Equal(w, g.([]byte)), name)
		default:
			require.Equal(t, w, g, name)
		}
	}
}

func TestPropertiesRoundTrip(t *testing.T) {
	in := edgeProperties()
	props, err := encodeProperties(in)
	require.NoError(t, err)
	for i := 1; i < len(props); i++ {
		require.Less(t, props[i-1].Name, props[i].Name)
	}
	require.NoError(t, checkEntityLimits("pk", "rk", props))

	ts := time.Date(2024, 2, 29, 12, 0, 0, 123456700, time.UTC)
	rec := codec.Record(codec.Encode(nil, edm.TicksFromTime(ts), props))
	require.NoError(t, rec.Check())

	e, err := decodeEntity("pk", "rk", rec, nil)
	require.NoError(t, err)
	require.Equal(t, "pk", e.PartitionKey)
	require.Equal(t, "rk", e.RowKey)
	require.True(t, ts.Equal(e.Timestamp))
	require.Equal(t, ETag(`W/"datetime'2024-02-29T12%3A00%3A00.1234567Z'"`), e.ETag)
	requireSameProperties(t, in, e.Properties)

	// Int32 and Int64 stay distinct types in the record itself.
	v, ok := rec.Lookup("I32")
	require.True(t, ok)
	require.Equal(t, filter.TypeInt32, v.Type)
	v, ok = rec.Lookup("I64")
	require.True(t, ok)
	require.Equal(t, filter.TypeInt64, v.Type)
}

func TestDecodeEntitySelect(t *testing.T) {
	props, err := encodeProperties(map[string]any{"A": "a", "B": int32(2), "C": true})
	require.NoError(t, err)
	rec := codec.Record(codec.Encode(nil, 5, props))

	e, err := decodeEntity("pk", "rk", rec, []string{"C", "Missing", "A", "PartitionKey"})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"A": "a", "C": true}, e.Properties)
	require.Equal(t, "pk", e.PartitionKey)
	require.False(t, e.Timestamp.IsZero())
	require.NotEmpty(t, e.ETag)

	e, err = decodeEntity("pk", "rk", rec, []string{})
	require.NoError(t, err)
	require.NotNil(t, e.Properties)
	require.Empty(t, e.Properties)
}

func TestDecodeEntityCorrupt(t *testing.T) {
	props, err := encodeProperties(map[string]any{"A": "abc"})
	require.NoError(t, err)
	good := codec.Encode(nil, 5, props)
	for _, rec := range [][]byte{nil, good[:4], good[:len(good)-1], append([]byte{0x7f}, good[1:]...)} {
		_, err := decodeEntity("pk", "rk", rec, nil)
		require.ErrorIs(t, err, ErrCorrupt)
		require.ErrorContains(t, err, `corrupt data during decode of entity ("pk", "rk"): tablestore: `)
		require.Equal(t, CodeInternalError, ErrorCode(err))
	}
}

// encodeRecord encodes props with a fixed timestamp, as the engine stores
// them.
func encodeRecord(t *testing.T, props []codec.Property) codec.Record {
	t.Helper()
	rec := codec.Record(codec.Encode(nil, edm.TicksFromTime(time.Date(2023, 5, 6, 7, 8, 9, 0, time.UTC)), props))
	require.NoError(t, rec.Check())
	return rec
}

func benchRecord(b *testing.B) codec.Record {
	m := map[string]any{}
	for i := range 10 {
		name := "Property" + string(rune('A'+i))
		switch i % 4 {
		case 0:
			m[name] = "a moderately long string value"
		case 1:
			m[name] = int64(i) << 40
		case 2:
			m[name] = float64(i) / 3
		case 3:
			m[name] = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
		}
	}
	props, err := encodeProperties(m)
	if err != nil {
		b.Fatal(err)
	}
	return codec.Record(codec.Encode(nil, 1, props))
}

func BenchmarkDecodeEntity10(b *testing.B) {
	rec := benchRecord(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeEntity("pk", "rk", rec, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeEntitySelect2of10(b *testing.B) {
	rec := benchRecord(b)
	sel := []string{"PropertyC", "PropertyH"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeEntity("pk", "rk", rec, sel); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzDecodeEntity decodes arbitrary bytes as a stored record: never a
// panic, and a record that decodes gives the same properties with or
// without a projection.
func FuzzDecodeEntity(f *testing.F) {
	props, err := encodeProperties(map[string]any{
		"A": "x", "B": int32(-1), "C": int64(2), "D": 0.5, "E": true,
		"F": time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC), "G": GUID{1}, "H": []byte{1},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(codec.Encode(nil, 5, props))
	f.Add(codec.Encode(nil, -5, nil))
	f.Fuzz(func(t *testing.T, data []byte) {
		all, err := decodeEntity("pk", "rk", data, nil)
		if err != nil {
			if _, err := decodeEntity("pk", "rk", data, []string{"Str"}); err == nil {
				t.Fatal("a projection hides corruption the full decode reports")
			}
			return
		}
		names := make([]string, 0, len(all.Properties))
		for name := range all.Properties {
			names = append(names, name)
		}
		some, err := decodeEntity("pk", "rk", data, names[:len(names)/2])
		if err != nil {
			t.Fatal(err)
		}
		require.Len(t, some.Properties, len(names)/2)
		for name, v := range some.Properties {
			requireSameProperties(t, map[string]any{name: all.Properties[name]}, map[string]any{name: v})
		}
	})
}
