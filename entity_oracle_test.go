package tablestore

import (
	"fmt"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/limits"
)

// This file keeps the encoder the write path used before it encoded
// straight into records: validation and conversion to []driver.Property,
// then driver.Encode. The tests use it as the oracle the record encoder
// must match byte for byte and error for error.

// encodeProperties validates user properties and converts them to codec
// form, sorted by name. nil values are dropped (Azure drops JSON null).
// Validation runs in name order, so the error reported is deterministic.
//
// Errors:
//   - PropertyNameInvalid, PropertyNameTooLong: see validatePropertyName.
//   - InvalidInput: a name is PartitionKey, RowKey, Timestamp or ETag (the
//     system properties live in Entity's own fields; Properties never holds
//     them), or a string is not valid UTF-8.
//   - InvalidValueType: a value's Go type is not one of string, int32,
//     int64, float64, bool, time.Time, GUID, []byte.
//   - PropertyValueTooLarge: a string over 64 KiB as UTF-16 (more than
//     32768 code units) or a []byte over 65536 bytes.
//   - OutOfRangeInput: a time.Time outside 1601-01-01 to 9999-12-31 UTC.
//
// time.Time values are converted to UTC and truncated to 100 ns. Bytes of
// Binary values alias the caller's slices until the result is encoded.
func encodeProperties(props map[string]any) ([]driver.Property, error) {
	out, _, err := encodePropertiesSized(props)
	return out, err
}

// encodePropertiesSized is encodeProperties that also returns the
// properties' share of the entity size by Azure's formula (entitySize
// without the keys). It converts in map order, then sorts; only when a
// property is invalid does it redo the checks in name order, so the error
// reported does not depend on map order.
func encodePropertiesSized(props map[string]any) ([]driver.Property, int, error) {
	unsorted := make([]driver.Property, 0, len(props))
	size := 0
	for name, v := range props {
		if v == nil {
			continue
		}
		if entityenc.IsSystemName(name) || entityenc.ValidatePropertyName(name) != nil {
			return nil, 0, firstInvalidProperty(props)
		}
		val, valSize, err := entityenc.EncodeValue(name, v)
		if err != nil {
			return nil, 0, firstInvalidProperty(props)
		}
		size += 8 + 2*limits.UTF16Len(name) + valSize
		unsorted = append(unsorted, driver.Property{Name: name, Value: val})
	}
	return sortProperties(unsorted), size, nil
}

// sortProperties returns a new slice holding props sorted by name.
func sortProperties(props []driver.Property) []driver.Property {
	out := slices.Clone(props)
	slices.SortFunc(out, func(a, b driver.Property) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// firstInvalidProperty returns the error of the first invalid property in
// name order.
func firstInvalidProperty(props map[string]any) error {
	names := make([]string, 0, len(props))
	for name, v := range props {
		if v != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if entityenc.IsSystemName(name) {
			return newError(edm.CodeInvalidInput, "the property name %q is reserved for the entity's own field", name)
		}
		if err := entityenc.ValidatePropertyName(name); err != nil {
			return coded(err)
		}
		if _, _, err := entityenc.EncodeValue(name, props[name]); err != nil {
			return coded(err)
		}
	}
	return newError(edm.CodeInvalidInput, "invalid properties") // unreachable: the caller found one
}

// oracleRecord is the old prepareAction's result for an insert of e,
// encoded as the engine stored it with a zero Timestamp.
func oracleRecord(e *Entity) ([]byte, int, error) {
	var a driver.Action
	keySize, err := prepareKeysInto(&a, ActionInsert, e.PartitionKey, e.RowKey, "", nil)
	if err != nil {
		return nil, 0, err
	}
	props, size, err := encodePropertiesSized(e.Properties)
	if err != nil {
		return nil, 0, err
	}
	size += keySize
	if err := coded(entityenc.CheckLimits(len(props), size)); err != nil {
		return nil, 0, err
	}
	return mustEncode(nil, 0, props), size, nil
}

// requireSameAsOracle checks that prepareAction encodes e to the oracle's
// bytes and size, or fails with the oracle's error, without a name cache
// and with c.
func requireSameAsOracle(t *testing.T, e *Entity, c *entityenc.NameCache) {
	t.Helper()
	want, wantSize, wantErr := oracleRecord(e)
	for _, names := range []*entityenc.NameCache{nil, c} {
		junk := []byte("prefix") // the record is appended after what buf holds
		_, got, gotSize, gotErr := prepareAction(junk, ActionInsert, e, "", names)
		if wantErr != nil || gotErr != nil {
			require.Equal(t, errText(wantErr), errText(gotErr))
			require.Equal(t, fmt.Sprint(errorCode(wantErr)), fmt.Sprint(errorCode(gotErr)))
			require.Equal(t, "prefix", string(got), "a failed encoding leaves the buffer as it was")
			continue
		}
		require.Equal(t, "prefix", string(got[:6]))
		require.Equal(t, want, got[6:])
		require.Equal(t, wantSize, gotSize)
	}
}

func TestRecordEncodingMatchesOracle(t *testing.T) {
	str := func(units int, unit string) string { return strings.Repeat(unit, units) }
	many := func(n int, v any) map[string]any {
		m := make(map[string]any, n)
		for i := range n {
			m[fmt.Sprintf("P%03d", i)] = v
		}
		return m
	}
	zone := time.FixedZone("z", -7*3600)
	cases := map[string]map[string]any{
		"empty":        {},
		"nil map":      nil,
		"nil value":    {"A": nil, "B": int32(1)},
		"string":       {"S": "text", "U": "ünï😀", "E": ""},
		"int32":        {"Min": int32(math.MinInt32), "Max": int32(math.MaxInt32), "Zero": int32(0)},
		"int64":        {"Min": int64(math.MinInt64), "Max": int64(math.MaxInt64)},
		"double":       {"NaN": math.NaN(), "NegZero": math.Copysign(0, -1), "Inf": math.Inf(1), "X": 2.5},
		"boolean":      {"T": true, "F": false},
		"datetime":     {"Min": time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), "Max": time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), "Zoned": time.Date(2020, 1, 1, 0, 0, 0, 123456789, zone)},
		"datetime low": {"D": time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC)},
		"datetime hi":  {"D": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"guid":         {"G": GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, "Zero": GUID{}},
		"binary":       {"B": []byte{0, 1, 255}, "Empty": []byte{}, "Nil": []byte(nil)},
		"binary limit": {"B": make([]byte, 65536)},
		"binary over":  {"B": make([]byte, 65537)},
		"string limit": {"S": str(32768, "a"), "W": str(16384, "😀")},
		"string over":  {"S": str(32769, "a")},
		"pairs over":   {"S": str(16384, "😀") + "a"},
		"bad utf8":     {"S": "a\xffb"},
		"bad type":     {"I": 3, "U": uint(1), "F": float32(1)},
		"system names": {"PartitionKey": "x"},
		"rowkey name":  {"RowKey": "x"},
		"ts name":      {"Timestamp": time.Now()},
		"etag name":    {"ETag": "x"},
		"name limit":   {str(255, "n"): int32(1)},
		"name over":    {str(256, "n"): int32(1)},
		"name unicode": {"é_1": int32(1), "ünï": true},
		"bad names":    {"1a": int32(1), "a-b": int32(2), "": int32(3)},
		"several bad":  {"B": 1, "A": int32(1), "C9": make([]byte, 70000), "Z": uint(3)},
		"prefix ties":  {"Abcdefgh": int32(1), "Abcdefghi": int32(2), "Abcdefg": int32(3), "Abcdefgh_": int32(4), "A": int32(5), "B": int32(6)},
		"252 props":    many(252, int32(1)),
		"253 props":    many(253, int32(1)),
		"33 props":     many(33, "v"),
		"too large":    many(17, make([]byte, 65536)),
		"limit first":  {"A": make([]byte, 65536), "B": make([]byte, 65536), "Bad": uint(1)},
	}
	big := many(15, make([]byte, 65536))
	big["S"] = str(1<<20/2-15*(8+2*4+4+65536)/2-60, "s")
	cases["near entity limit"] = big
	var c entityenc.NameCache // shared, as by the entities of a transaction
	for name, props := range cases {
		t.Run(name, func(t *testing.T) {
			for range 3 { // map order varies; the cache hits after the first
				requireSameAsOracle(t, &Entity{PartitionKey: "pk", RowKey: "rk", Properties: props}, &c)
			}
		})
	}
	requireSameAsOracle(t, &Entity{PartitionKey: "", RowKey: "rk", Properties: map[string]any{"A": true}}, &c)
	requireSameAsOracle(t, &Entity{PartitionKey: "pk", RowKey: str(1024, "r"), Properties: many(17, make([]byte, 61000))}, &c)
}

// FuzzRecordEncodingMatchesOracle builds property maps, valid and
// invalid, from the fuzzer's input and checks the record encoder against
// the oracle.
func FuzzRecordEncodingMatchesOracle(f *testing.F) {
	f.Add(uint64(1), uint8(10), "Name", "value", []byte{1, 2}, int64(5), 1.5)
	f.Add(uint64(2), uint8(40), "é", "a\xff", []byte(nil), int64(-1), math.NaN())
	f.Add(uint64(3), uint8(3), "PartitionKey", "", make([]byte, 70000), int64(1<<62), 0.0)
	f.Fuzz(func(t *testing.T, seed uint64, n uint8, name, s string, blob []byte, x int64, d float64) {
		rng := rand.New(rand.NewPCG(seed, uint64(n)))
		names := []string{name, name + "_x", "A", "Ab", "Abcdefgh", "Abcdefghij", "z9", "_", "9bad", "Timestamp", "ETag", "a.b"}
		values := []any{s, blob, x, int32(x), d, x&1 == 0, time.Unix(0, x), time.Unix(x, 0), GUID{byte(x)}, nil, uint8(x), strings.Repeat(s, int(n)), float32(d)}
		props := map[string]any{}
		for range int(n) % 70 {
			nm := names[rng.IntN(len(names))]
			if rng.IntN(3) == 0 {
				nm += fmt.Sprintf("%d", rng.IntN(100))
			}
			props[nm] = values[rng.IntN(len(values))]
		}
		// With one cache: a miss, a hit on the same names, then the same
		// names, as copies, holding other values.
		var c entityenc.NameCache
		requireSameAsOracle(t, &Entity{PartitionKey: "pk", RowKey: "rk", Properties: props}, &c)
		requireSameAsOracle(t, &Entity{PartitionKey: "pk", RowKey: "rk", Properties: props}, &c)
		other := make(map[string]any, len(props))
		for nm := range props {
			other[strings.Clone(nm)] = values[rng.IntN(len(values))]
		}
		requireSameAsOracle(t, &Entity{PartitionKey: "pk", RowKey: "rk", Properties: other}, &c)
	})
}

// checkEntityLimits checks a complete entity as the write path does: the
// limits of its property count and its size by Azure's formula.
func checkEntityLimits(pk, rk string, props []driver.Property) error {
	return coded(entityenc.CheckLimits(len(props), limits.EntitySize(pk, rk, props)))
}

// encodeValue converts one property value as a write does.
func encodeValue(name string, v any) (edm.Value, error) {
	val, _, err := entityenc.EncodeValue(name, v)
	return val, coded(err)
}
