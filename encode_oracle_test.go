package tablestore

import (
	"slices"
	"strings"

	"github.com/tablestore/tablestore/internal/codec"
)

// This file keeps the encoder the write path used before it encoded
// straight into records: validation and conversion to []codec.Property,
// then codec.Encode. The tests use it as the oracle the record encoder
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
func encodeProperties(props map[string]any) ([]codec.Property, error) {
	out, _, err := encodePropertiesSized(props)
	return out, err
}

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
