package wire

import (
	"bytes"
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// Level is a JSON metadata level, as Azure's clients ask for one.
type Level uint8

// The metadata levels.
const (
	// Minimal writes odata.etag and a "Name@odata.type" annotation for
	// each property whose type a JSON value cannot show: Edm.Int64,
	// Edm.DateTime, Edm.Guid, Edm.Binary, and Edm.Double for NaN and the
	// infinities.
	Minimal Level = iota
	// None writes the keys, the Timestamp and the property values only:
	// no odata.etag and no annotation.
	None
	// Full writes what Minimal writes after odata.type, odata.id,
	// odata.editLink and, when the Timestamp is set, its annotation.
	Full
)

// Options shape what AppendEntity writes.
type Options struct {
	Level Level
	// Select, when not empty, is the $select the entity answers: only the
	// properties it names are written (the keys, Timestamp and ETag
	// always), and each one the entity lacks as null, as Azure answers a
	// projection.
	Select []string
	// Type, ID and EditLink are full metadata's odata.type, odata.id and
	// odata.editLink, written as given; other levels ignore them.
	Type, ID, EditLink string
}

// AppendEntity appends e to dst as a JSON object at o's metadata level:
// odata.etag (if ETag is set, and the level is not None), PartitionKey,
// RowKey, Timestamp (if set, in UTC with 7 fraction digits) and the
// properties in name order. Int64 values are written as decimal strings,
// DateTime values as Timestamp is, Guid values in the canonical form,
// Binary values as base64, NaN and the infinities as "NaN", "Infinity"
// and "-Infinity"; other doubles always have a '.' or an exponent (2 is
// written 2.0), so they read back as Double; Int32 values are bare
// integers; Go integers follow the integer rule (entityenc.IntType). nil
// values are left out. On error dst's contents past its length are
// undefined.
//
// Errors: InvalidValueType (or OutOfRangeInput) for a value EncodeValue
// refuses by its type, PropertyNameInvalid and PropertyNameTooLong for bad
// names, InvalidInput for a system name in Properties, a string that is
// not valid UTF-8 or a bad Select, OutOfRangeInput for a time outside
// years 1 to 9999.
func AppendEntity(dst []byte, e *Entity, o *Options) ([]byte, error) {
	var err error
	if len(o.Select) > 0 {
		if err := entityenc.ValidateSelect(o.Select); err != nil {
			return dst, err
		}
	}
	annotate := o.Level != None
	dst = append(dst, '{')
	if o.Level == Full {
		dst = appendKey(dst, "odata.type")
		dst = AppendString(dst, o.Type)
		dst = append(dst, ',')
		dst = appendKey(dst, "odata.id")
		dst = AppendString(dst, o.ID)
		dst = append(dst, ',')
		dst = appendKey(dst, "odata.editLink")
		dst = AppendString(dst, o.EditLink)
		dst = append(dst, ',')
		if !e.Timestamp.IsZero() {
			dst = append(dst, `"Timestamp@odata.type":"Edm.DateTime",`...)
		}
	}
	if e.ETag != "" && annotate {
		dst = appendKey(dst, etagKey)
		if dst, err = appendValidString(dst, etagKey, e.ETag); err != nil {
			return dst, err
		}
		dst = append(dst, ',')
	}
	dst = appendKey(dst, entityenc.NamePartitionKey)
	if dst, err = appendValidString(dst, entityenc.NamePartitionKey, e.PartitionKey); err != nil {
		return dst, err
	}
	dst = append(dst, ',')
	dst = appendKey(dst, entityenc.NameRowKey)
	if dst, err = appendValidString(dst, entityenc.NameRowKey, e.RowKey); err != nil {
		return dst, err
	}
	if !e.Timestamp.IsZero() {
		dst = append(dst, ',')
		dst = appendKey(dst, entityenc.NameTimestamp)
		if dst, err = appendTime(dst, entityenc.NameTimestamp, e.Timestamp); err != nil {
			return dst, err
		}
	}
	var stack [32]string
	names := stack[:0]
	for name, v := range e.Properties {
		if v != nil && (len(o.Select) == 0 || slices.Contains(o.Select, name)) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if _, err := entityenc.CheckPropertyName(name); err != nil {
			return dst, err
		}
		if dst, err = appendProperty(dst, name, e.Properties[name], annotate); err != nil {
			return dst, err
		}
	}
	for _, name := range o.Select {
		if _, ok := e.Properties[name]; ok || isSystem(name) {
			continue
		}
		dst = append(dst, ',')
		dst = appendKey(dst, name)
		dst = append(dst, "null"...)
	}
	return append(dst, '}'), nil
}

// appendProperty appends ,"name@odata.type":"Edm.X" when annotate is set
// and the type needs it, then ,"name":value.
func appendProperty(b []byte, name string, v any, annotate bool) ([]byte, error) {
	member := func(t edm.Type) {
		if annotate && t != 0 {
			b = append(b, ',', '"')
			b = append(b, name...)
			b = append(b, typeSuffix...)
			b = append(b, '"', ':', '"')
			b = append(b, t.String()...)
			b = append(b, '"')
		}
		b = append(b, ',')
		b = appendKey(b, name)
	}
	switch x := v.(type) {
	case string:
		member(0)
		return appendValidString(b, name, x)
	case int32:
		member(0)
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		member(edm.TypeInt64)
		return appendInt64(b, x), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			member(edm.TypeDouble)
			switch {
			case math.IsNaN(x):
				return append(b, `"NaN"`...), nil
			case x > 0:
				return append(b, `"Infinity"`...), nil
			default:
				return append(b, `"-Infinity"`...), nil
			}
		}
		member(0)
		return appendDouble(b, x), nil
	case bool:
		member(0)
		return strconv.AppendBool(b, x), nil
	case time.Time:
		member(edm.TypeDateTime)
		return appendTime(b, name, x)
	case edm.GUID:
		member(edm.TypeGuid)
		b = append(b, '"')
		b = append(b, x.String()...)
		return append(b, '"'), nil
	case []byte:
		member(edm.TypeBinary)
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, x)
		return append(b, '"'), nil
	}
	if n, isInt, inRange := entityenc.GoInt(v); isInt && inRange {
		if entityenc.IntType(n) == edm.TypeInt32 {
			member(0)
			return strconv.AppendInt(b, n, 10), nil
		}
		member(edm.TypeInt64)
		return appendInt64(b, n), nil
	}
	_, _, err := entityenc.EncodeValue(name, v)
	return b, err
}

// appendInt64 appends an Int64 value: a decimal string.
func appendInt64(b []byte, x int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, x, 10)
	return append(b, '"')
}

// appendDouble appends a finite double so that it reads back as a
// Double: with a '.' or an exponent, in the shortest exact form.
func appendDouble(b []byte, f float64) []byte {
	start := len(b)
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if !bytes.ContainsAny(b[start:], ".e") {
		b = append(b, ".0"...)
	}
	return b
}

// appendTime appends a DateTime value as Azure's JSON writes it; name is
// used in the error for a time outside years 1 to 9999.
func appendTime(b []byte, name string, t time.Time) ([]byte, error) {
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return b, entityenc.Errorf(edm.CodeOutOfRangeInput, "%s holds the time %s, outside years 1 to 9999", name, t.Format(time.RFC3339Nano))
	}
	b = append(b, '"')
	b = edm.AppendDateTimeJSON(b, t)
	return append(b, '"'), nil
}

// appendKey appends "key": for keys known to need no escaping (valid
// property names and this package's constants).
func appendKey(b []byte, key string) []byte {
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// appendValidString appends s as a JSON string after checking that it is
// valid UTF-8; name is used in the error.
func appendValidString(b []byte, name, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return b, entityenc.Errorf(edm.CodeInvalidInput, "%s holds a string that is not valid UTF-8", name)
	}
	return AppendString(b, s), nil
}
