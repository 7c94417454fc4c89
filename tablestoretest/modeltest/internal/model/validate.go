package model

import (
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// Azure's limits, as the protocol digest states them.
const (
	maxUserProperties = 252
	maxKeyUnits       = 1024     // UTF-16 code units in a PartitionKey or RowKey
	maxValueBytes     = 64 << 10 // a String (as UTF-16) or Binary value
	maxNameLen        = 255
	maxEntityBytes    = 1 << 20
)

// minDateTime is the earliest DateTime Azure stores.
var minDateTime = time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)

// maxDateTime is the first instant after the latest DateTime Azure stores.
var maxDateTime = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)

// checkTableName applies ^[A-Za-z][A-Za-z0-9]{2,62}$ and the reserved
// name "tables".
func checkTableName(name string) error {
	for i, r := range name {
		letter := (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z')
		digit := r >= '0' && r <= '9'
		if !letter && !(digit && i > 0) {
			return fail(edm.CodeInvalidResourceName)
		}
	}
	if len(name) < 3 || len(name) > 63 {
		return fail(edm.CodeOutOfRangeInput)
	}
	if name == "tables" {
		return fail(edm.CodeInvalidInput)
	}
	return nil
}

// utf16Len is the length of s in UTF-16 code units, as Azure measures.
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// checkKey checks one PartitionKey or RowKey value; "" is a valid key.
func checkKey(v string) error {
	if !utf8.ValidString(v) {
		return fail(edm.CodeOutOfRangeInput)
	}
	if utf16Len(v) > maxKeyUnits {
		return fail(edm.CodeKeyValueTooLarge)
	}
	for _, r := range v {
		if r == '/' || r == '\\' || r == '#' || r == '?' || r <= 0x1F || (r >= 0x7F && r <= 0x9F) {
			return fail(edm.CodeOutOfRangeInput)
		}
	}
	return nil
}

// checkPropertyName applies the C#-identifier rule and the length limit.
func checkPropertyName(name string) error {
	if len([]rune(name)) > maxNameLen {
		return fail(edm.CodePropertyNameTooLong)
	}
	if name == "" || !utf8.ValidString(name) {
		return fail(edm.CodePropertyNameInvalid)
	}
	for i, r := range name {
		ok := r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))
		if !ok {
			return fail(edm.CodePropertyNameInvalid)
		}
	}
	return nil
}

// valueSize returns the size Azure's formula gives a value, and whether
// the value has one of the eight allowed Go types.
func valueSize(v any) (int, bool) {
	switch v := v.(type) {
	case string:
		return 4 + 2*utf16Len(v), true
	case []byte:
		return 4 + len(v), true
	case int32:
		return 4, true
	case int64, float64, time.Time:
		return 8, true
	case int, int8, int16, uint, uint8, uint16, uint32, uint64:
		if n, ok := goInt(v); ok && n == int64(int32(n)) {
			return 4, true
		}
		return 8, true
	case bool:
		return 1, true
	case ts.GUID:
		return 16, true
	}
	return 0, false
}

// checkEntity checks keys, property names, value types, value sizes and
// the entity size. A nil value is "no value": it is not checked at all.
func checkEntity(e *ts.Entity) error {
	if e == nil {
		return fail(edm.CodeInvalidInput)
	}
	if err := checkKey(e.PartitionKey); err != nil {
		return err
	}
	if err := checkKey(e.RowKey); err != nil {
		return err
	}
	n := 0
	for _, v := range e.Properties {
		if v != nil {
			n++
		}
	}
	if n > maxUserProperties {
		return fail(edm.CodeTooManyProperties)
	}
	for name, v := range e.Properties {
		if v == nil {
			continue // a nil value is no property at all
		}
		switch name {
		case "PartitionKey", "RowKey", "Timestamp":
			return fail(edm.CodeInvalidInput) // the entity's own fields
		}
		if err := checkPropertyName(name); err != nil {
			return err
		}
		if _, ok := valueSize(v); !ok {
			return fail(edm.CodeInvalidValueType)
		}
		switch v := v.(type) {
		case string:
			if !utf8.ValidString(v) {
				return fail(edm.CodeInvalidInput)
			}
			if 2*utf16Len(v) > maxValueBytes {
				return fail(edm.CodePropertyValueTooLarge)
			}
		case []byte:
			if len(v) > maxValueBytes {
				return fail(edm.CodePropertyValueTooLarge)
			}
		case time.Time:
			if v.Before(minDateTime) || !v.Before(maxDateTime) {
				return fail(edm.CodeOutOfRangeInput)
			}
		case uint, uint64:
			if _, ok := goInt(v); !ok {
				return fail(edm.CodeOutOfRangeInput)
			}
		}
	}
	if entitySize(e, false) > maxEntityBytes {
		return fail(edm.CodeEntityTooLarge)
	}
	return nil
}

// normalize returns a deep copy of v as the store keeps it: times in UTC
// at 100 ns precision, byte slices copied.
func normalize(v any) any {
	switch v := v.(type) {
	case time.Time:
		return v.UTC().Truncate(100 * time.Nanosecond)
	case []byte:
		return append([]byte{}, v...)
	case int, int8, int16, uint, uint8, uint16, uint32, uint64:
		// The integer rule: Int32 when the value fits, else Int64.
		n, _ := goInt(v)
		if n == int64(int32(n)) {
			return int32(n)
		}
		return n
	}
	return v
}

// goInt returns a Go integer of a type the integer rule covers as an
// int64, and false for a uint or uint64 above math.MaxInt64.
func goInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case uint8:
		return int64(v), true
	case uint16:
		return int64(v), true
	case uint32:
		return int64(v), true
	case uint:
		return int64(v), uint64(v) <= math.MaxInt64
	case uint64:
		return int64(v), v <= math.MaxInt64
	}
	return 0, false
}

// stored returns the entity as the model keeps it: keys and non-nil
// properties, normalized, with the given ETag.
func stored(e *ts.Entity, etag ts.ETag) *ts.Entity {
	s := &ts.Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, ETag: etag, Properties: map[string]any{}}
	for name, v := range e.Properties {
		if v != nil {
			s.Properties[name] = normalize(v)
		}
	}
	return s
}

// clone returns a deep copy of a stored entity.
func clone(e *ts.Entity) *ts.Entity {
	c := stored(e, e.ETag)
	c.Timestamp = e.Timestamp
	return c
}

// entitySize is an entity's size by Azure's formula (see checkEntity),
// counting only the keys for a delete.
func entitySize(e *ts.Entity, keysOnly bool) int {
	size := 4 + 2*(utf16Len(e.PartitionKey)+utf16Len(e.RowKey))
	if keysOnly {
		return size
	}
	for name, v := range e.Properties {
		if n, ok := valueSize(v); ok && v != nil {
			size += 8 + 2*utf16Len(name) + n
		}
	}
	return size
}

// dataSize is what a transaction counts of an entity against its 4 MiB
// limit: the UTF-8 bytes of the keys, and, unless keysOnly, of each
// non-nil property's name and String value, and its Binary value's
// bytes. A JSON body holds at least these bytes.
func dataSize(e *ts.Entity, keysOnly bool) int {
	size := len(e.PartitionKey) + len(e.RowKey)
	if keysOnly {
		return size
	}
	for name, v := range e.Properties {
		switch v := v.(type) {
		case nil:
			continue
		case string:
			size += len(v)
		case []byte:
			size += len(v)
		}
		size += len(name)
	}
	return size
}

// wellFormedETag reports whether an If-Match value is "*" or an HTTP
// entity-tag: W/ (or w/) optionally, then "..." holding no '"', space or
// control character. The empty value is not one.
func wellFormedETag(tag ts.ETag) bool {
	if tag == ts.ETagAny {
		return true
	}
	body, ok := strings.CutPrefix(strings.TrimPrefix(string(weakUpper(tag)), "W/"), `"`)
	if !ok {
		return false
	}
	body, ok = strings.CutSuffix(body, `"`)
	return ok && !strings.ContainsFunc(body, func(r rune) bool { return r <= ' ' || r == '"' || r == 0x7f })
}

// weakUpper spells a weak prefix w/ as W/, the form ETags are compared in.
func weakUpper(tag ts.ETag) ts.ETag {
	if strings.HasPrefix(string(tag), "w/") {
		return "W/" + tag[2:]
	}
	return tag
}
