package entityenc

import (
	"cmp"
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/arena"
	"github.com/tablestore/tablestore/internal/limits"
)

// maxSortedOnStack is how many properties AppendProperties sorts
// without heap scratch space, and how many names a NameCache holds.
const maxSortedOnStack = 32

// AppendProperties validates user properties and appends their encoding
// (driver.Record's layout, sorted by name) to dst. nil values are dropped
// (Azure drops JSON null). It returns the extended buffer, the number of
// properties encoded and their share of the entity size by Azure's
// formula (limits.EntitySize without the keys). Validation runs in name
// order, so the error reported is the first invalid property's by name,
// whatever the map order; on error dst's contents past its length are
// undefined. c, if not nil, carries checked names from one entity to the
// next (see NameCache).
//
// Errors:
//   - PropertyNameInvalid, PropertyNameTooLong: see ValidatePropertyName.
//   - InvalidInput: a name is PartitionKey, RowKey or Timestamp (the
//     system properties live in an entity's own fields; a property map
//     never holds them), or a string is not valid UTF-8.
//   - the errors of EncodeValue for a value.
func AppendProperties(dst []byte, props map[string]any, c *NameCache) ([]byte, int, int, error) {
	start := len(dst)
	if out, size, ok := c.appendCached(dst, props); ok {
		return out, c.n, size, nil
	}
	dst = dst[:start]
	var nameStack [maxSortedOnStack]string
	var valStack [maxSortedOnStack]any
	names, vals := nameStack[:0], valStack[:0]
	if len(props) > maxSortedOnStack {
		names, vals = make([]string, 0, len(props)), make([]any, 0, len(props))
	}
	for name, v := range props {
		if v != nil {
			names = append(names, name)
			vals = append(vals, v)
		}
	}
	var idxStack [maxSortedOnStack]int32
	idx := sortedOrder(names, idxStack[:0]) // idx[k] is the index in names and vals of the k-th name in order
	c.fill(names, idx)
	size := 0
	for k, i := range idx {
		name := names[i]
		units, err := CheckPropertyName(name)
		if err != nil {
			return dst, 0, 0, err
		}
		c.setUnits(k, units)
		var valSize int
		if dst, valSize, err = appendValue(dst, name, vals[i]); err != nil {
			return dst, 0, 0, err
		}
		size += limits.NameSize(units) + valSize
	}
	return dst, len(names), size, nil
}

// NameCache remembers the property names of a transaction's previous
// entity, sorted, with the UTF-16 length of each once it has passed the
// name checks. An entity whose map holds exactly those names then needs
// neither iterating its map, nor sorting, nor name checks: its values are
// looked up by name. A nil *NameCache caches nothing; the zero NameCache
// is empty.
type NameCache struct {
	n      int
	names  [maxSortedOnStack]string
	length [maxSortedOnStack]int32 // UTF-16 units once checked, else -1
}

// appendCached appends the encoding of props, as AppendProperties does,
// when props holds exactly the cached names, all checked, each with a
// value other than nil: their values are looked up and encoded in name
// order, with no iteration, sorting or name checks. It reports false when
// props does not match or a value is invalid (AppendProperties then
// starts over and reports the error); dst's extension is then undefined.
// Names are compared by content, through the map, so a match is exact.
func (c *NameCache) appendCached(dst []byte, props map[string]any) ([]byte, int, bool) {
	if c == nil || c.n == 0 || len(props) != c.n {
		return dst, 0, false
	}
	size := 0
	for k, name := range c.names[:c.n] {
		units := int(c.length[k])
		v, ok := props[name]
		if units < 0 || !ok || v == nil {
			return dst, 0, false
		}
		var n int
		var err error
		if dst, n, err = appendValue(dst, name, v); err != nil {
			return dst, 0, false
		}
		size += limits.NameSize(units) + n
	}
	return dst, size, true
}

// fill caches names in the sorted order idx, none checked yet.
func (c *NameCache) fill(names []string, idx []int32) {
	if c == nil {
		return
	}
	if len(names) > maxSortedOnStack {
		*c = NameCache{}
		return
	}
	c.n = len(names)
	for k, i := range idx {
		c.names[k], c.length[k] = names[i], -1
	}
}

// setUnits records that the k-th cached name passed the name checks.
func (c *NameCache) setUnits(k, units int) {
	if c != nil && k < c.n {
		c.length[k] = int32(units)
	}
}

// sortedOrder appends to idx the indexes of names in increasing name
// order and returns it.
func sortedOrder(names []string, idx []int32) []int32 {
	var keyStack [maxSortedOnStack]NameKey
	keys := keyStack[:0]
	if len(names) > maxSortedOnStack {
		keys = make([]NameKey, 0, len(names))
	}
	for i, name := range names {
		keys = append(keys, NameKey{Prefix: NamePrefix(name), Index: int32(i)})
	}
	return SortByName(idx, keys, func(a, b int32) int { return strings.Compare(names[a], names[b]) })
}

// A NameKey is one item of a sort by name (SortByName): the item's index
// and its name's NamePrefix.
type NameKey struct {
	Prefix uint64
	Index  int32
}

// SortByName sorts keys in increasing name order and appends their Index
// values, in that order, to order, which it returns. Keys compare by
// prefix, and where two prefixes are equal, by tie(a, b), the whole
// comparison of items a and b (Index values), as strings.Compare returns
// it. Up to maxSortedOnStack keys it sorts by insertion: the names of one
// entity rarely share their first eight bytes, so tie is seldom called,
// where a general sort calls a comparison function at every step.
func SortByName(order []int32, keys []NameKey, tie func(a, b int32) int) []int32 {
	if len(keys) > maxSortedOnStack {
		slices.SortFunc(keys, func(x, y NameKey) int {
			if x.Prefix != y.Prefix {
				return cmp.Compare(x.Prefix, y.Prefix)
			}
			return tie(x.Index, y.Index)
		})
	} else {
		insertionSortByName(keys, tie)
	}
	for _, k := range keys {
		order = append(order, k.Index)
	}
	return order
}

// insertionSortByName is SortByName's sort of a few keys.
func insertionSortByName(keys []NameKey, tie func(a, b int32) int) {
	for i := 1; i < len(keys); i++ {
		v := keys[i]
		j := i
		for ; j > 0; j-- {
			p := keys[j-1]
			if v.Prefix > p.Prefix || v.Prefix == p.Prefix && tie(v.Index, p.Index) >= 0 {
				break
			}
			keys[j] = p
		}
		keys[j] = v
	}
}

// NamePrefix packs a name's first eight bytes big-endian, zero-padded, so
// that comparing two prefixes orders names as comparing the names does,
// up to ties.
func NamePrefix[S ~string | ~[]byte](name S) uint64 {
	var b [8]byte
	copy(b[:], name)
	return binary.BigEndian.Uint64(b[:])
}

// appendValue appends the encoding of property name holding v
// (driver.Record's layout of EncodeValue's result) and returns the value's
// size by Azure's formula. Errors are EncodeValue's; on error dst is
// returned as it was.
func appendValue(dst []byte, name string, v any) ([]byte, int, error) {
	switch x := v.(type) {
	case string:
		if units, ok := StringUnits(x); ok {
			return driver.AppendBytesPayload(driver.AppendName(dst, name, edm.TypeString), x), 4 + 2*units, nil
		}
	case int32:
		return driver.AppendIntPayload(driver.AppendName(dst, name, edm.TypeInt32), edm.TypeInt32, int64(x)), 4, nil
	case int64:
		return driver.AppendIntPayload(driver.AppendName(dst, name, edm.TypeInt64), edm.TypeInt64, x), 8, nil
	case float64:
		return driver.AppendDoublePayload(driver.AppendName(dst, name, edm.TypeDouble), x), 8, nil
	case bool:
		return AppendBoolPayload(driver.AppendName(dst, name, edm.TypeBoolean), x), 1, nil
	case time.Time:
		if edm.InAzureRange(x) {
			return driver.AppendIntPayload(driver.AppendName(dst, name, edm.TypeDateTime), edm.TypeDateTime, edm.TicksFromTime(x)), 8, nil
		}
	case edm.GUID:
		return append(driver.AppendName(dst, name, edm.TypeGuid), x[:]...), 16, nil
	case []byte:
		if out, n, ok := AppendBinaryPayload(driver.AppendName(dst, name, edm.TypeBinary), x); ok {
			return out, n, nil
		}
	default:
		if n, isInt, inRange := GoInt(v); isInt && inRange {
			t := IntType(n)
			return driver.AppendIntPayload(driver.AppendName(dst, name, t), t, n), intSize(t), nil
		}
	}
	// Every value EncodeValue accepts is accepted above (the oracle
	// tests compare the two); what is left is rejected, in its words.
	_, _, err := EncodeValue(name, v)
	return dst, 0, err
}

// GoInt reads a Go integer of a type the integer rule covers: int, int8,
// int16, uint, uint8, uint16, uint32 and uint64 (int32 and int64 are
// Int32 and Int64 whatever their value). isInt is false for any other
// type; inRange is false for a uint or uint64 above math.MaxInt64, which
// no EDM integer holds.
func GoInt(v any) (n int64, isInt, inRange bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true, true
	case int8:
		return int64(x), true, true
	case int16:
		return int64(x), true, true
	case uint8:
		return int64(x), true, true
	case uint16:
		return int64(x), true, true
	case uint32:
		return int64(x), true, true
	case uint:
		return int64(x), true, uint64(x) <= math.MaxInt64
	case uint64:
		return int64(x), true, x <= math.MaxInt64
	}
	return 0, false, false
}

// IntType is the integer rule: a Go integer of a type GoInt reads is an
// Edm.Int32 when its value fits one, else an Edm.Int64, as Azure infers
// the type of a bare JSON integer.
func IntType(n int64) edm.Type {
	if n >= math.MinInt32 && n <= math.MaxInt32 {
		return edm.TypeInt32
	}
	return edm.TypeInt64
}

func intSize(t edm.Type) int {
	if t == edm.TypeInt32 {
		return 4
	}
	return 8
}

// StringUnits returns s's length in UTF-16 code units and whether a
// property may hold s (valid UTF-8, at most 64 KiB as UTF-16).
func StringUnits(s string) (int, bool) {
	n, valid := limits.UTF16LenValid(s)
	return n, valid && 2*n <= limits.MaxValueBytes
}

// AppendBinaryPayload checks a Binary value as EncodeValue does and, when
// it is accepted, appends its payload and returns its size by Azure's
// formula.
func AppendBinaryPayload(dst, b []byte) ([]byte, int, bool) {
	if len(b) > limits.MaxValueBytes {
		return dst, 0, false
	}
	return driver.AppendBytesPayload(dst, b), 4 + len(b), true
}

// AppendBoolPayload appends a Boolean's payload (its size is 1).
func AppendBoolPayload(dst []byte, b bool) []byte {
	x := int64(0)
	if b {
		x = 1
	}
	return driver.AppendIntPayload(dst, edm.TypeBoolean, x)
}

// EncodeValue converts one property value to its EDM form and returns
// the value's size by Azure's formula: String 4 + 2 per UTF-16 code unit,
// Binary 4 + length, DateTime 8, Guid 16, Double 8, Int32 4, Int64 8,
// Boolean 1; name is used in messages. A String's Bytes alias the string
// and must not be written; a Binary's are the caller's slice. time.Time
// values are converted to UTC and truncated to 100 ns; Go integers follow
// the integer rule (IntType).
//
// Errors:
//   - InvalidInput: a string that is not valid UTF-8.
//   - InvalidValueType: a value whose Go type is not one of string,
//     int32, int64, the integer types of GoInt, float64, bool, time.Time,
//     edm.GUID and []byte.
//   - PropertyValueTooLarge: a string over 64 KiB as UTF-16 (more than
//     32768 code units) or a []byte over 65536 bytes.
//   - OutOfRangeInput: a time.Time outside 1601-01-01 to 9999-12-31 UTC,
//     or a uint or uint64 above math.MaxInt64.
func EncodeValue(name string, v any) (edm.Value, int, error) {
	switch x := v.(type) {
	case string:
		n, valid := limits.UTF16LenValid(x)
		if !valid {
			return edm.Value{}, 0, Errorf(edm.CodeInvalidInput, "property %q holds a string that is not valid UTF-8", name)
		}
		if 2*n > limits.MaxValueBytes {
			return edm.Value{}, 0, Errorf(edm.CodePropertyValueTooLarge,
				"property %q holds a string of %d UTF-16 code units; the limit is 64 KiB as UTF-16 (%d code units)",
				name, n, limits.MaxValueBytes/2)
		}
		return edm.Value{Type: edm.TypeString, Bytes: arena.StringBytes(x)}, 4 + 2*n, nil
	case int32:
		return edm.Value{Type: edm.TypeInt32, Int: int64(x)}, 4, nil
	case int64:
		return edm.Value{Type: edm.TypeInt64, Int: x}, 8, nil
	case float64:
		return edm.Value{Type: edm.TypeDouble, Float: x}, 8, nil
	case bool:
		b := int64(0)
		if x {
			b = 1
		}
		return edm.Value{Type: edm.TypeBoolean, Int: b}, 1, nil
	case time.Time:
		t := x.UTC()
		if !edm.InAzureRange(t) {
			return edm.Value{}, 0, Errorf(edm.CodeOutOfRangeInput,
				"property %q holds the time %s; DateTime values must lie between 1601-01-01 and 9999-12-31 UTC",
				name, t.Format(time.RFC3339Nano))
		}
		return edm.Value{Type: edm.TypeDateTime, Int: edm.TicksFromTime(t)}, 8, nil
	case edm.GUID:
		b := make([]byte, len(x))
		copy(b, x[:])
		return edm.Value{Type: edm.TypeGuid, Bytes: b}, 16, nil
	case []byte:
		if len(x) > limits.MaxValueBytes {
			return edm.Value{}, 0, Errorf(edm.CodePropertyValueTooLarge,
				"property %q holds %d bytes of binary; the limit is %d", name, len(x), limits.MaxValueBytes)
		}
		if x == nil {
			x = []byte{}
		}
		return edm.Value{Type: edm.TypeBinary, Bytes: x}, 4 + len(x), nil
	}
	if n, isInt, inRange := GoInt(v); isInt {
		if !inRange {
			return edm.Value{}, 0, Errorf(edm.CodeOutOfRangeInput,
				"property %q holds the %T %v, above the Int64 range: a Go integer is stored as an Int32 when it fits, else as an Int64",
				name, v, v)
		}
		t := IntType(n)
		return edm.Value{Type: t, Int: n}, intSize(t), nil
	}
	return edm.Value{}, 0, Errorf(edm.CodeInvalidValueType,
		"property %q has Go type %T; use string, a Go integer (int32 is Int32, int64 is Int64, the others Int32 when they fit, else Int64), float64, bool, time.Time, GUID or []byte",
		name, v)
}
