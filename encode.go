package tablestore

import (
	"encoding/binary"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
	"github.com/tablestore/tablestore/internal/limits"
)

// maxSortedOnStack is how many properties appendProperties sorts
// without heap scratch space.
const maxSortedOnStack = 32

// appendProperties validates user properties and appends their encoding
// (driver.Record's layout, sorted by name) to dst. nil values are dropped
// (Azure drops JSON null). It returns the extended buffer, the number of
// properties encoded and their share of the entity size by Azure's
// formula (entitySize without the keys). Validation runs in name order,
// so the error reported is the first invalid property's by name, whatever
// the map order; on error dst's contents past its length are undefined.
//
// Errors:
//   - PropertyNameInvalid, PropertyNameTooLong: see validatePropertyName.
//   - InvalidInput: a name is PartitionKey, RowKey or Timestamp (the
//     system properties live in Entity's own fields; Properties never
//     holds them), or a string is not valid UTF-8.
//   - InvalidValueType: a value's Go type is not one of string, int32,
//     int64, float64, bool, time.Time, GUID, []byte.
//   - PropertyValueTooLarge: a string over 64 KiB as UTF-16 (more than
//     32768 code units) or a []byte over 65536 bytes.
//   - OutOfRangeInput: a time.Time outside 1601-01-01 to 9999-12-31 UTC.
//
// time.Time values are converted to UTC and truncated to 100 ns.
func appendProperties(dst []byte, props map[string]any, c *nameCache) ([]byte, int, int, error) {
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
		if isSystemName(name) {
			return dst, 0, 0, newError(CodeInvalidInput, "the property name %q is reserved for the entity's own field", name)
		}
		units, err := propertyNameUnits(name)
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

// nameCache remembers the property names of a transaction's previous
// entity, sorted, with the UTF-16 length of each once it has passed the
// name checks. An entity whose map holds exactly those names then needs
// neither iterating its map, nor sorting, nor name checks: its values are
// looked up by name. A nil *nameCache caches nothing.
type nameCache struct {
	n      int
	names  [maxSortedOnStack]string
	length [maxSortedOnStack]int32 // UTF-16 units once checked, else -1
}

// appendCached appends the encoding of props, as appendProperties does,
// when props holds exactly the cached names, all checked, each with a
// value other than nil: their values are looked up and encoded in name
// order, with no iteration, sorting or name checks. It reports false when
// props does not match or a value is invalid (appendProperties then
// starts over and reports the error); dst's extension is then undefined.
// Names are compared by content, through the map, so a match is exact.
func (c *nameCache) appendCached(dst []byte, props map[string]any) ([]byte, int, bool) {
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
func (c *nameCache) fill(names []string, idx []int32) {
	if c == nil {
		return
	}
	if len(names) > maxSortedOnStack {
		*c = nameCache{}
		return
	}
	c.n = len(names)
	for k, i := range idx {
		c.names[k], c.length[k] = names[i], -1
	}
}

// setUnits records that the k-th cached name passed the name checks.
func (c *nameCache) setUnits(k, units int) {
	if c != nil && k < c.n {
		c.length[k] = int32(units)
	}
}

// propertyNameUnits validates a property name (see validatePropertyName)
// and returns its length in UTF-16 code units, checking a short ASCII
// identifier, the common case, in one pass.
func propertyNameUnits(name string) (int, error) {
	if name != "" && len(name) <= maxNameUTF16 && asciiIdentifier(name) {
		return len(name), nil
	}
	if err := validatePropertyName(name); err != nil {
		return 0, err
	}
	return utf16Len(name), nil
}

// sortedOrder appends to idx the indexes of names in increasing name
// order and returns it. Up to maxSortedOnStack names it insertion-sorts
// keyed by the names' first eight bytes, so it rarely compares whole
// strings.
func sortedOrder(names []string, idx []int32) []int32 {
	for i := range names {
		idx = append(idx, int32(i))
	}
	if len(names) > maxSortedOnStack {
		slices.SortFunc(idx, func(a, b int32) int { return strings.Compare(names[a], names[b]) })
		return idx
	}
	var key [maxSortedOnStack]uint64 // key[k] is the prefix of names[idx[k]]
	for i := range names {
		key[i] = namePrefix(names[i])
	}
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0; j-- {
			a, b := key[j], key[j-1]
			if a > b || a == b && names[idx[j]] >= names[idx[j-1]] {
				break
			}
			key[j], key[j-1] = b, a
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	return idx
}

// namePrefix packs a name's first eight bytes big-endian, zero-padded, so
// that comparing two prefixes orders names as comparing the names does,
// up to ties.
func namePrefix(name string) uint64 {
	var b [8]byte
	copy(b[:], name)
	return binary.BigEndian.Uint64(b[:])
}

// readOnlyBytes returns the bytes of s without copying them. The result
// aliases s and must never be written: the engine only reads it, to encode
// the entity.
func readOnlyBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// encodeValue converts one property value; name is used in messages.
func encodeValue(name string, v any) (filter.Value, error) {
	val, _, err := encodeValueSized(name, v)
	return val, err
}

// appendValue appends the encoding of property name holding v
// (driver.Record's layout of encodeValue's result) and returns the value's
// size by Azure's formula. Errors are encodeValueSized's; on error dst is
// returned as it was.
func appendValue(dst []byte, name string, v any) ([]byte, int, error) {
	switch x := v.(type) {
	case string:
		if units, ok := stringUnits(x); ok {
			return codec.AppendBytesPayload(codec.AppendName(dst, name, filter.TypeString), x), 4 + 2*units, nil
		}
	case int32:
		return codec.AppendIntPayload(codec.AppendName(dst, name, filter.TypeInt32), filter.TypeInt32, int64(x)), 4, nil
	case int64:
		return codec.AppendIntPayload(codec.AppendName(dst, name, filter.TypeInt64), filter.TypeInt64, x), 8, nil
	case float64:
		return codec.AppendDoublePayload(codec.AppendName(dst, name, filter.TypeDouble), x), 8, nil
	case bool:
		return appendBoolPayload(codec.AppendName(dst, name, filter.TypeBoolean), x), 1, nil
	case time.Time:
		if edm.InAzureRange(x) {
			return codec.AppendIntPayload(codec.AppendName(dst, name, filter.TypeDateTime), filter.TypeDateTime, edm.TicksFromTime(x)), 8, nil
		}
	case GUID:
		return append(codec.AppendName(dst, name, filter.TypeGuid), x[:]...), 16, nil
	case []byte:
		if out, n, ok := appendBinaryPayload(codec.AppendName(dst, name, filter.TypeBinary), x); ok {
			return out, n, nil
		}
	}
	// Every value encodeValueSized accepts is accepted above (the oracle
	// tests compare the two); what is left is rejected, in its words.
	_, _, err := encodeValueSized(name, v)
	return dst, 0, err
}

// stringUnits returns s's length in UTF-16 code units and whether a
// property may hold s (valid UTF-8, at most 64 KiB as UTF-16).
func stringUnits(s string) (int, bool) {
	n, valid := limits.UTF16LenValid(s)
	return n, valid && 2*n <= maxValueBytes
}

// appendBinaryPayload checks a Binary value as encodeValueSized does and,
// when it is accepted, appends its payload and returns its size by
// Azure's formula.
func appendBinaryPayload(dst, b []byte) ([]byte, int, bool) {
	if len(b) > maxValueBytes {
		return dst, 0, false
	}
	return codec.AppendBytesPayload(dst, b), 4 + len(b), true
}

// appendBoolPayload appends a Boolean's payload (its size is 1).
func appendBoolPayload(dst []byte, b bool) []byte {
	x := int64(0)
	if b {
		x = 1
	}
	return codec.AppendIntPayload(dst, filter.TypeBoolean, x)
}

// encodeValueSized is encodeValue that also returns the value's size by
// Azure's formula: String 4 + 2 per UTF-16 code unit, Binary 4 + length,
// DateTime 8, Guid 16, Double 8, Int32 4, Int64 8, Boolean 1.
func encodeValueSized(name string, v any) (filter.Value, int, error) {
	switch x := v.(type) {
	case string:
		n, valid := limits.UTF16LenValid(x)
		if !valid {
			return filter.Value{}, 0, newError(CodeInvalidInput, "property %q holds a string that is not valid UTF-8", name)
		}
		if 2*n > maxValueBytes {
			return filter.Value{}, 0, newError(CodePropertyValueTooLarge,
				"property %q holds a string of %d UTF-16 code units; the limit is 64 KiB as UTF-16 (%d code units)",
				name, n, maxValueBytes/2)
		}
		return filter.Value{Type: filter.TypeString, Bytes: readOnlyBytes(x)}, 4 + 2*n, nil
	case int32:
		return filter.Value{Type: filter.TypeInt32, Int: int64(x)}, 4, nil
	case int64:
		return filter.Value{Type: filter.TypeInt64, Int: x}, 8, nil
	case float64:
		return filter.Value{Type: filter.TypeDouble, Float: x}, 8, nil
	case bool:
		b := int64(0)
		if x {
			b = 1
		}
		return filter.Value{Type: filter.TypeBoolean, Int: b}, 1, nil
	case time.Time:
		t := x.UTC()
		if !edm.InAzureRange(t) {
			return filter.Value{}, 0, newError(CodeOutOfRangeInput,
				"property %q holds the time %s; DateTime values must lie between 1601-01-01 and 9999-12-31 UTC",
				name, t.Format(time.RFC3339Nano))
		}
		return filter.Value{Type: filter.TypeDateTime, Int: edm.TicksFromTime(t)}, 8, nil
	case GUID:
		b := make([]byte, len(x))
		copy(b, x[:])
		return filter.Value{Type: filter.TypeGuid, Bytes: b}, 16, nil
	case []byte:
		if len(x) > maxValueBytes {
			return filter.Value{}, 0, newError(CodePropertyValueTooLarge,
				"property %q holds %d bytes of binary; the limit is %d", name, len(x), maxValueBytes)
		}
		if x == nil {
			x = []byte{}
		}
		return filter.Value{Type: filter.TypeBinary, Bytes: x}, 4 + len(x), nil
	}
	return filter.Value{}, 0, newError(CodeInvalidValueType,
		"property %q has Go type %T; use string, int32, int64, float64, bool, time.Time, GUID or []byte", name, v)
}
