package tablestore

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/limits"
)

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
		requireCode(t, err, CodePropertyNameInvalid) // "0bad" sorts first
	}
	delete(props, "0bad")
	for i := 0; i < 50; i++ {
		_, err := encodeProperties(props)
		requireCode(t, err, CodeInvalidValueType) // then "B"
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
	require.Equal(t, filter.TypeBinary, props[0].Value.Type)
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
		{"reserved PartitionKey", map[string]any{"PartitionKey": "x"}, CodeInvalidInput},
		{"reserved RowKey", map[string]any{"RowKey": "x"}, CodeInvalidInput},
		{"reserved Timestamp", map[string]any{"Timestamp": time.Now()}, CodeInvalidInput},
		{"bad name", map[string]any{"1a": "x"}, CodePropertyNameInvalid},
		{"dash name", map[string]any{"a-b": int32(1)}, CodePropertyNameInvalid},
		{"long name", map[string]any{strings.Repeat("a", 256): int32(1)}, CodePropertyNameTooLong},
		{"uint64 over int64", map[string]any{"A": uint64(1 << 63)}, CodeOutOfRangeInput},
		{"uint over int64", map[string]any{"A": ^uint(0)}, CodeOutOfRangeInput},
		{"int pointer", map[string]any{"A": new(int)}, CodeInvalidValueType},
		{"float32", map[string]any{"A": float32(1)}, CodeInvalidValueType},
		{"pointer", map[string]any{"A": new(string)}, CodeInvalidValueType},
		{"map", map[string]any{"A": map[string]any{}}, CodeInvalidValueType},
		{"etag value", map[string]any{"A": ETag("x")}, CodeInvalidValueType},
		{"bad utf8", map[string]any{"A": "\xff"}, CodeInvalidInput},
		{"string too long", map[string]any{"A": strings.Repeat("x", 32769)}, CodePropertyValueTooLarge},
		{"string too long pairs", map[string]any{"A": strings.Repeat("😀", 16385)}, CodePropertyValueTooLarge},
		{"binary too long", map[string]any{"A": make([]byte, 65537)}, CodePropertyValueTooLarge},
		{"before 1601", map[string]any{"A": time.Date(1600, 12, 31, 23, 59, 59, 999999999, time.UTC)}, CodeOutOfRangeInput},
		{"zero time", map[string]any{"A": time.Time{}}, CodeOutOfRangeInput},
		{"after 9999", map[string]any{"A": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, CodeOutOfRangeInput},
		{"zone pushes past 9999", map[string]any{"A": time.Date(9999, 12, 31, 23, 0, 0, 0, time.FixedZone("w", -3600))}, CodeOutOfRangeInput},
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
		requireCode(t, err, CodeOutOfRangeInput)
		require.ErrorContains(t, err, "stored as an Int32 when it fits, else as an Int64")
		_, err = (&Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Big": v}}).MarshalJSON()
		requireCode(t, err, CodeOutOfRangeInput)
	}
	got, err = tbl.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, want, got.Properties, "a refused write changes nothing")
}
