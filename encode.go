package tablestore

import (
	"slices"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
)

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
func encodeProperties(props map[string]any) ([]codec.Property, error) {
	out, _, err := encodePropertiesSized(props)
	return out, err
}

// maxSortedOnStack is how many properties encodePropertiesSized handles
// without heap scratch space.
const maxSortedOnStack = 32

// encodePropertiesSized is encodeProperties that also returns the
// properties' share of the entity size by Azure's formula (entitySize
// without the keys). It converts in map order, then sorts; only when a
// property is invalid does it redo the checks in name order, so the error
// reported does not depend on map order.
func encodePropertiesSized(props map[string]any) ([]codec.Property, int, error) {
	var stack [maxSortedOnStack]codec.Property
	unsorted := stack[:0]
	if len(props) > maxSortedOnStack {
		unsorted = make([]codec.Property, 0, len(props))
	}
	size := 0
	for name, v := range props {
		if v == nil {
			continue
		}
		if isSystemName(name) || validatePropertyName(name) != nil {
			return nil, 0, firstInvalidProperty(props)
		}
		val, valSize, err := encodeValueSized(name, v)
		if err != nil {
			return nil, 0, firstInvalidProperty(props)
		}
		size += 8 + 2*utf16Len(name) + valSize
		unsorted = append(unsorted, codec.Property{Name: name, Value: val})
	}
	return sortProperties(unsorted), size, nil
}

// sortProperties returns a new slice holding props sorted by name. For a
// few properties it insertion-sorts small indexes keyed by the names'
// first eight bytes, so it rarely compares whole strings and never moves
// the large Property values until the final copy.
func sortProperties(props []codec.Property) []codec.Property {
	out := make([]codec.Property, len(props))
	if len(props) > maxSortedOnStack {
		copy(out, props)
		slices.SortFunc(out, func(a, b codec.Property) int { return strings.Compare(a.Name, b.Name) })
		return out
	}
	var idx [maxSortedOnStack]uint8
	var key [maxSortedOnStack]uint64
	for i := range props {
		idx[i] = uint8(i)
		key[i] = namePrefix(props[i].Name)
	}
	less := func(a, b uint8) bool {
		if key[a] != key[b] {
			return key[a] < key[b]
		}
		return props[a].Name < props[b].Name
	}
	for i := 1; i < len(props); i++ {
		for j := i; j > 0 && less(idx[j], idx[j-1]); j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	for i := range out {
		out[i] = props[idx[i]]
	}
	return out
}

// namePrefix packs a name's first eight bytes big-endian, zero-padded, so
// that comparing two prefixes orders names as comparing the names does,
// up to ties.
func namePrefix(name string) uint64 {
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(name) {
			k |= uint64(name[i])
		}
	}
	return k
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
		if isSystemName(name) {
			return newError(CodeInvalidInput, "the property name %q is reserved for the entity's own field", name)
		}
		if err := validatePropertyName(name); err != nil {
			return err
		}
		if _, _, err := encodeValueSized(name, props[name]); err != nil {
			return err
		}
	}
	return newError(CodeInvalidInput, "invalid properties") // unreachable: the caller found one
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

// encodeValueSized is encodeValue that also returns the value's size by
// Azure's formula: String 4 + 2 per UTF-16 code unit, Binary 4 + length,
// DateTime 8, Guid 16, Double 8, Int32 4, Int64 8, Boolean 1.
func encodeValueSized(name string, v any) (filter.Value, int, error) {
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return filter.Value{}, 0, newError(CodeInvalidInput, "property %q holds a string that is not valid UTF-8", name)
		}
		n := utf16Len(x)
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
		if y := t.Year(); y < minDateTimeYear || y > maxDateTimeYear {
			return filter.Value{}, 0, newError(CodeOutOfRangeInput,
				"property %q holds the time %s; DateTime values must lie between 1601-01-01 and 9999-12-31 UTC",
				name, t.Format(time.RFC3339Nano))
		}
		return filter.Value{Type: filter.TypeDateTime, Int: ticksFromTime(t)}, 8, nil
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
