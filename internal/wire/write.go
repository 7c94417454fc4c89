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
	"github.com/tablestore/tablestore/internal/arena"
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

// Options shape what AppendEntity and AppendRecord write.
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
	// LinkBase and LinkTable derive full metadata's links from each
	// entity's keys: when LinkTable is set, an empty EditLink is written
	// as EntityPath(LinkTable, PartitionKey, RowKey) and an empty ID as
	// LinkBase followed by that path, without allocating, so one Options
	// serves a whole page.
	LinkBase, LinkTable string
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
	dst, err := appendHead(dst, e.PartitionKey, e.RowKey, e.ETag, e.Timestamp, o)
	if err != nil {
		return dst, err
	}
	annotate := o.Level != None
	var stack [32]string
	names := stack[:0]
	for name, v := range e.Properties {
		if v != nil && (len(o.Select) == 0 || slices.Contains(o.Select, name)) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var guid [16]byte
	for _, name := range names {
		if _, err := entityenc.CheckPropertyName(name); err != nil {
			return dst, err
		}
		v, err := toValue(name, e.Properties[name], &guid)
		if err != nil {
			return dst, err
		}
		if dst, err = appendValue(dst, name, v, annotate); err != nil {
			return dst, err
		}
	}
	for _, name := range o.Select {
		if _, ok := e.Properties[name]; ok || isSystem(name) {
			continue
		}
		dst = appendNull(dst, name)
	}
	return append(dst, '}'), nil
}

// appendHead validates o.Select and appends the opening of an entity's
// object: full metadata's members, odata.etag, the keys and the Timestamp
// (left out when zero).
func appendHead(dst []byte, pk, rk, etag string, ts time.Time, o *Options) ([]byte, error) {
	var err error
	if len(o.Select) > 0 {
		if err := entityenc.ValidateSelect(o.Select); err != nil {
			return dst, err
		}
	}
	dst = append(dst, '{')
	if o.Level == Full {
		dst = appendKey(dst, "odata.type")
		dst = AppendString(dst, o.Type)
		dst = append(dst, ',')
		dst = appendKey(dst, "odata.id")
		if o.ID == "" && o.LinkTable != "" {
			dst = appendLink(dst, o.LinkBase, o.LinkTable, pk, rk)
		} else {
			dst = AppendString(dst, o.ID)
		}
		dst = append(dst, ',')
		dst = appendKey(dst, "odata.editLink")
		if o.EditLink == "" && o.LinkTable != "" {
			dst = appendLink(dst, "", o.LinkTable, pk, rk)
		} else {
			dst = AppendString(dst, o.EditLink)
		}
		dst = append(dst, ',')
		if !ts.IsZero() {
			dst = append(dst, `"Timestamp@odata.type":"Edm.DateTime",`...)
		}
	}
	if etag != "" && o.Level != None {
		dst = appendKey(dst, etagKey)
		if dst, err = appendValidString(dst, etagKey, etag); err != nil {
			return dst, err
		}
		dst = append(dst, ',')
	}
	dst = appendKey(dst, entityenc.NamePartitionKey)
	if dst, err = appendValidString(dst, entityenc.NamePartitionKey, pk); err != nil {
		return dst, err
	}
	dst = append(dst, ',')
	dst = appendKey(dst, entityenc.NameRowKey)
	if dst, err = appendValidString(dst, entityenc.NameRowKey, rk); err != nil {
		return dst, err
	}
	if !ts.IsZero() {
		dst = append(dst, ',')
		dst = appendKey(dst, entityenc.NameTimestamp)
		if dst, err = appendTime(dst, entityenc.NameTimestamp, ts); err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// appendLink appends base followed by the entity's path in table as one
// JSON string.
func appendLink(dst []byte, base, table, pk, rk string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, base)
	dst = appendEscaped(dst, table)
	dst = appendKeysPath(dst, pk, rk) // needs no escaping
	return append(dst, '"')
}

// appendNull appends ,"name":null, for a selected property the entity
// lacks.
func appendNull(dst []byte, name string) []byte {
	dst = append(dst, ',')
	dst = appendKey(dst, name)
	return append(dst, "null"...)
}

// toValue converts a property value of a Go type entityenc encodes to its
// EDM form, as AppendEntity writes it: unlike EncodeValue it puts no
// limit on lengths and takes any time in years 1 to 9999. A String's
// Bytes alias v and are only read; a Guid's are *guid, which it fills.
func toValue(name string, v any, guid *[16]byte) (edm.Value, error) {
	switch x := v.(type) {
	case string:
		return edm.Value{Type: edm.TypeString, Bytes: arena.StringBytes(x)}, nil
	case int32:
		return edm.Value{Type: edm.TypeInt32, Int: int64(x)}, nil
	case int64:
		return edm.Value{Type: edm.TypeInt64, Int: x}, nil
	case float64:
		return edm.Value{Type: edm.TypeDouble, Float: x}, nil
	case bool:
		var n int64
		if x {
			n = 1
		}
		return edm.Value{Type: edm.TypeBoolean, Int: n}, nil
	case time.Time:
		if err := checkYear(name, x); err != nil {
			return edm.Value{}, err
		}
		return edm.Value{Type: edm.TypeDateTime, Int: edm.TicksFromTime(x)}, nil
	case edm.GUID:
		*guid = x
		return edm.Value{Type: edm.TypeGuid, Bytes: guid[:]}, nil
	case []byte:
		return edm.Value{Type: edm.TypeBinary, Bytes: x}, nil
	}
	if n, isInt, inRange := entityenc.GoInt(v); isInt && inRange {
		return edm.Value{Type: entityenc.IntType(n), Int: n}, nil
	}
	_, _, err := entityenc.EncodeValue(name, v)
	return edm.Value{}, err
}

// appendValue appends ,"name@odata.type":"Edm.X" when annotate is set
// and the JSON value cannot show v's type, then ,"name":value. It holds
// the formatting of every EDM type: AppendEntity and AppendRecord both
// write values through it. A Guid's Bytes must be 16 long.
func appendValue(b []byte, name string, v edm.Value, annotate bool) ([]byte, error) {
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
	switch v.Type {
	case edm.TypeString:
		member(0)
		return appendValidString(b, name, arena.String(v.Bytes))
	case edm.TypeInt32:
		member(0)
		return strconv.AppendInt(b, v.Int, 10), nil
	case edm.TypeInt64:
		member(edm.TypeInt64)
		b = append(b, '"')
		b = strconv.AppendInt(b, v.Int, 10)
		return append(b, '"'), nil
	case edm.TypeDouble:
		x := v.Float
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
	case edm.TypeBoolean:
		member(0)
		return strconv.AppendBool(b, v.Int != 0), nil
	case edm.TypeDateTime:
		member(edm.TypeDateTime)
		if v.Int < 0 || v.Int > edm.MaxTicks {
			return b, checkYear(name, edm.TimeFromTicks(v.Int))
		}
		b = append(b, '"')
		b = edm.AppendTicksJSON(b, v.Int)
		return append(b, '"'), nil
	case edm.TypeGuid:
		member(edm.TypeGuid)
		return appendGUID(b, v.Bytes), nil
	case edm.TypeBinary:
		member(edm.TypeBinary)
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, v.Bytes)
		return append(b, '"'), nil
	}
	return b, entityenc.Errorf(edm.CodeInvalidValueType, "property %q has invalid type %d", name, v.Type)
}

// appendGUID appends a Guid's 16 bytes in the canonical form,
// "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", quoted.
func appendGUID(b []byte, g []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i, c := range g[:16] {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			b = append(b, '-')
		}
		b = append(b, hex[c>>4], hex[c&0xf])
	}
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
	if err := checkYear(name, t); err != nil {
		return b, err
	}
	b = append(b, '"')
	b = edm.AppendDateTimeJSON(b, t)
	return append(b, '"'), nil
}

// checkYear refuses a time outside years 1 to 9999 UTC, which Azure's
// DateTime text cannot show; name is used in the error.
func checkYear(name string, t time.Time) error {
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return entityenc.Errorf(edm.CodeOutOfRangeInput, "%s holds the time %s, outside years 1 to 9999", name, t.Format(time.RFC3339Nano))
	}
	return nil
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
