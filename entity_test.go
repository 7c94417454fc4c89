package tablestore

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/tablestore/tablestore/driver"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/limits"
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
	rec := driver.Record(mustEncode(nil, edm.TicksFromTime(ts), props))
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
	require.Equal(t, edm.TypeInt32, v.Type)
	v, ok = rec.Lookup("I64")
	require.True(t, ok)
	require.Equal(t, edm.TypeInt64, v.Type)
}

func TestDecodeEntitySelect(t *testing.T) {
	props, err := encodeProperties(map[string]any{"A": "a", "B": int32(2), "C": true})
	require.NoError(t, err)
	rec := driver.Record(mustEncode(nil, 5, props))

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
	good := mustEncode(nil, 5, props)
	for _, rec := range [][]byte{nil, good[:4], good[:len(good)-1], append([]byte{0x7f}, good[1:]...)} {
		_, err := decodeEntity("pk", "rk", rec, nil)
		require.ErrorIs(t, err, ErrCorrupt)
		require.ErrorContains(t, err, `corrupt data during decode of entity ("pk", "rk"): tablestore: `)
		require.Equal(t, edm.CodeInternalError, ErrorCode(err))
	}
}

// encodeRecord encodes props with a fixed timestamp, as the engine stores
// them.
func encodeRecord(t *testing.T, props []driver.Property) driver.Record {
	t.Helper()
	rec := driver.Record(mustEncode(nil, edm.TicksFromTime(time.Date(2023, 5, 6, 7, 8, 9, 0, time.UTC)), props))
	require.NoError(t, rec.Check())
	return rec
}

func benchRecord(b *testing.B) driver.Record {
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
	return driver.Record(mustEncode(nil, 1, props))
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
	f.Add(mustEncode(nil, 5, props))
	f.Add(mustEncode(nil, -5, nil))
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

// TestEncodePropertiesSortsAndSizes checks the fast encoding path against
// the plain definitions: names sorted, and the size equal to entitySize.
func TestEncodePropertiesSortsAndSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	prefixes := []string{"", "A", "Abcdefgh", "Abcdefg", "abcdefghij", "Z_", "é", "Ab"}
	values := []any{"text", "ünï😀", int32(-3), int64(1 << 40), 2.5, true, time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC), GUID{1, 2}, []byte{1, 2, 3}}
	for round := 0; round < 300; round++ {
		n := rng.IntN(70)
		props := map[string]any{}
		for len(props) < n {
			name := prefixes[rng.IntN(len(prefixes))] + fmt.Sprintf("x%d", rng.IntN(500))
			props[name] = values[rng.IntN(len(values))]
		}
		props["Nil"] = nil
		got, size, err := encodePropertiesSized(props)
		require.NoError(t, err)
		require.Len(t, got, n)
		names := make([]string, len(got))
		for i, p := range got {
			names[i] = p.Name
		}
		require.True(t, slices.IsSorted(names), "names not sorted: %q", names)
		require.Equal(t, limits.EntitySize("", "", got)-4, size)
	}
}

// TestEncodePropertiesErrorIsDeterministic checks that with several bad
// properties the first in name order is reported, whatever the map order.
func TestEncodePropertiesErrorIsDeterministic(t *testing.T) {
	props := map[string]any{"B": float32(1), "A": int32(1), "C9": make([]byte, 70000), "0bad": int32(1), "Z": complex(1, 0)}
	for i := 0; i < 50; i++ {
		_, err := encodeProperties(props)
		requireCode(t, err, edm.CodePropertyNameInvalid) // "0bad" sorts first
	}
	delete(props, "0bad")
	for i := 0; i < 50; i++ {
		_, err := encodeProperties(props)
		requireCode(t, err, edm.CodeInvalidValueType) // then "B"
	}
}

func TestEncodePropertiesConversions(t *testing.T) {
	loc := time.FixedZone("east", 5*3600)
	props, err := encodeProperties(map[string]any{
		"Zoned": time.Date(2020, 1, 1, 5, 0, 0, 199, loc), // 2020-01-01T00:00:00.000000199Z
		"Nil":   nil,
		"NilB":  []byte(nil),
	})
	require.NoError(t, err)
	require.Len(t, props, 2, "nil values are dropped")
	require.Equal(t, "NilB", props[0].Name)
	require.Equal(t, edm.TypeBinary, props[0].Value.Type)
	require.Equal(t, "Zoned", props[1].Name)
	want := edm.TicksFromTime(time.Date(2020, 1, 1, 0, 0, 0, 100, time.UTC))
	require.Equal(t, want, props[1].Value.Int, "converted to UTC and truncated to 100 ns")

	empty, err := encodeProperties(nil)
	require.NoError(t, err)
	require.Empty(t, empty)
}

func TestEncodePropertiesErrors(t *testing.T) {
	tests := []struct {
		name  string
		props map[string]any
		code  Code
	}{
		{"reserved PartitionKey", map[string]any{"PartitionKey": "x"}, edm.CodeInvalidInput},
		{"reserved RowKey", map[string]any{"RowKey": "x"}, edm.CodeInvalidInput},
		{"reserved Timestamp", map[string]any{"Timestamp": time.Now()}, edm.CodeInvalidInput},
		{"bad name", map[string]any{"1a": "x"}, edm.CodePropertyNameInvalid},
		{"dash name", map[string]any{"a-b": int32(1)}, edm.CodePropertyNameInvalid},
		{"long name", map[string]any{strings.Repeat("a", 256): int32(1)}, edm.CodePropertyNameTooLong},
		{"uint64 over int64", map[string]any{"A": uint64(1 << 63)}, edm.CodeOutOfRangeInput},
		{"uint over int64", map[string]any{"A": ^uint(0)}, edm.CodeOutOfRangeInput},
		{"int pointer", map[string]any{"A": new(int)}, edm.CodeInvalidValueType},
		{"float32", map[string]any{"A": float32(1)}, edm.CodeInvalidValueType},
		{"pointer", map[string]any{"A": new(string)}, edm.CodeInvalidValueType},
		{"map", map[string]any{"A": map[string]any{}}, edm.CodeInvalidValueType},
		{"etag value", map[string]any{"A": ETag("x")}, edm.CodeInvalidValueType},
		{"bad utf8", map[string]any{"A": "\xff"}, edm.CodeInvalidInput},
		{"string too long", map[string]any{"A": strings.Repeat("x", 32769)}, edm.CodePropertyValueTooLarge},
		{"string too long pairs", map[string]any{"A": strings.Repeat("😀", 16385)}, edm.CodePropertyValueTooLarge},
		{"binary too long", map[string]any{"A": make([]byte, 65537)}, edm.CodePropertyValueTooLarge},
		{"before 1601", map[string]any{"A": time.Date(1600, 12, 31, 23, 59, 59, 999999999, time.UTC)}, edm.CodeOutOfRangeInput},
		{"zero time", map[string]any{"A": time.Time{}}, edm.CodeOutOfRangeInput},
		{"after 9999", map[string]any{"A": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, edm.CodeOutOfRangeInput},
		{"zone pushes past 9999", map[string]any{"A": time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("w", -3600))}, edm.CodeOutOfRangeInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := encodeProperties(tc.props)
			require.Error(t, err)
			require.Equal(t, tc.code, ErrorCode(err), err.Error())
		})
	}

	// With several bad properties, the first by name is reported, every time.
	bad := map[string]any{"Z": float32(1), "B": uint64(1 << 63), "M": complex(2, 0)}
	for range 10 {
		_, err := encodeProperties(bad)
		require.ErrorContains(t, err, `property "B"`)
	}
}

// TestIntegerRule checks Go integers in a property map: int32 and int64
// keep their types; the other integer types are Int32 when the value
// fits, else Int64, as Azure infers a bare JSON integer; a uint or uint64
// above the Int64 range is refused naming the rule. Writes, the stored
// type, reads, JSON and filters all agree.
func TestIntegerRule(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "Ints")
	require.NoError(t, err)
	props := map[string]any{
		"Int": 5, "IntBig": 1 << 40, "IntNeg": -(1 << 31), "IntBelow": -(1<<31 + 1),
		"I8": int8(-8), "I16": int16(300), "U8": uint8(255), "U16": uint16(65535),
		"U32": uint32(1 << 31), "U32Small": uint32(7), "Uint": uint(9), "U64": uint64(1<<63 - 1),
		"Fixed32": int32(5), "Fixed64": int64(5),
	}
	want := map[string]any{
		"Int": int32(5), "IntBig": int64(1 << 40), "IntNeg": int32(-(1 << 31)), "IntBelow": int64(-(1<<31 + 1)),
		"I8": int32(-8), "I16": int32(300), "U8": int32(255), "U16": int32(65535),
		"U32": int64(1 << 31), "U32Small": int32(7), "Uint": int32(9), "U64": int64(1<<63 - 1),
		"Fixed32": int32(5), "Fixed64": int64(5),
	}
	e := &Entity{PartitionKey: "p", RowKey: "r", Properties: props}
	require.NoError(t, tbl.Insert(ctx, e))
	got, err := tbl.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, want, got.Properties)

	// The stored bytes are those of the int32 and int64 values.
	direct, err := encodeProperties(props)
	require.NoError(t, err)
	typed, err := encodeProperties(want)
	require.NoError(t, err)
	require.Equal(t, typed, direct)

	// Filters see the EDM types: Int32 5 is not Int64 5.
	page, err := tbl.QueryPage(ctx, Query{Filter: "Int eq 5 and IntBig eq 1099511627776L and Fixed64 eq 5L"})
	require.NoError(t, err)
	require.Len(t, page.Entities, 1)

	// JSON writes them as their EDM types and reads them back so.
	b, err := json.Marshal(e)
	require.NoError(t, err)
	require.Contains(t, string(b), `"Int":5,`)
	require.Contains(t, string(b), `"IntBig@odata.type":"Edm.Int64","IntBig":"1099511627776"`)
	var back Entity
	require.NoError(t, json.Unmarshal(b, &back))
	require.Equal(t, want, back.Properties)

	// Struct fields of any integer type read them.
	var row struct {
		PartitionKey, RowKey string
		Int                  int
		U8                   uint8
		IntBig               int64
	}
	require.NoError(t, UnmarshalEntity(e, &row))
	require.Equal(t, 5, row.Int)
	require.Equal(t, uint8(255), row.U8)
	require.Equal(t, int64(1<<40), row.IntBig)

	for _, v := range []any{uint64(1 << 63), ^uint(0), ^uint64(0)} {
		err := tbl.Upsert(ctx, &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Big": v}}, Merge)
		requireCode(t, err, edm.CodeOutOfRangeInput)
		require.ErrorContains(t, err, "stored as an Int32 when it fits, else as an Int64")
		_, err = (&Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Big": v}}).MarshalJSON()
		requireCode(t, err, edm.CodeOutOfRangeInput)
	}
	got, err = tbl.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, want, got.Properties, "a refused write changes nothing")
}

// TestETagProperty checks that a user property named ETag is data: it is
// stored, read, filtered and encoded beside the entity's own ETag.
func TestETagProperty(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "etags")
	require.NoError(t, err)

	e := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"ETag": "v1", "N": int32(1)}}
	require.NoError(t, tbl.Insert(ctx, e))
	got, err := tbl.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, "v1", got.Properties["ETag"])
	require.Equal(t, e.ETag, got.ETag)
	require.NotEqual(t, ETag("v1"), got.ETag)

	page, err := tbl.QueryPage(ctx, Query{Filter: "ETag eq 'v1'", Select: []string{"ETag"}})
	require.NoError(t, err)
	require.Len(t, page.Entities, 1)
	require.Equal(t, map[string]any{"ETag": "v1"}, page.Entities[0].Properties)

	// The wire form keeps the two apart: odata.etag and "ETag".
	out, err := json.Marshal(got)
	require.NoError(t, err)
	var back Entity
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, got.ETag, back.ETag)
	require.Equal(t, "v1", back.Properties["ETag"])

	// Azure's JSON with a property ETag (an Int64 here) decodes and inserts.
	const wire = `{"odata.etag":"W/\"datetime'2021-08-31T15%3A41%3A38.3027816Z'\"","PartitionKey":"p","RowKey":"azure",` +
		`"ETag@odata.type":"Edm.Int64","ETag":"42"}`
	var fromAzure Entity
	require.NoError(t, json.Unmarshal([]byte(wire), &fromAzure))
	require.Equal(t, int64(42), fromAzure.Properties["ETag"])
	require.Equal(t, ETag(`W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'"`), fromAzure.ETag)
	require.NoError(t, tbl.Insert(ctx, &fromAzure))

	// Structs: a field of type ETag holds the entity's ETag, a field named
	// ETag of another type holds the property.
	type row struct {
		PartitionKey string
		RowKey       string
		Version      ETag
		ETag         string
	}
	var r row
	require.NoError(t, UnmarshalEntity(got, &r))
	require.Equal(t, got.ETag, r.Version)
	require.Equal(t, "v1", r.ETag)
	me, err := MarshalEntity(row{PartitionKey: "p", RowKey: "s", Version: "ignored", ETag: "data"})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"ETag": "data"}, me.Properties)
	require.Equal(t, ETag("ignored"), me.ETag)
}

// mustEncode is driver.Encode for properties a test made valid; it panics
// on an error.
func mustEncode(dst []byte, timestamp int64, props []driver.Property) []byte {
	out, err := driver.Encode(dst, timestamp, props)
	if err != nil {
		panic(err)
	}
	return out
}
