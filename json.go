package tablestore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// JSON wire format: Azure Table Storage's "minimal metadata" entity form,
// as the Azure SDKs (aztables, @azure/data-tables) send and read it.

const (
	jsonETagKey    = "odata.etag"
	jsonTypeSuffix = "@odata.type"
	// jsonTimeLayout writes DateTime values: UTC, 7 fraction digits.
	jsonTimeLayout = "2006-01-02T15:04:05.0000000Z"
)

// MarshalJSON encodes e in Azure's minimal-metadata JSON form:
// "odata.etag" (if ETag is set), PartitionKey, RowKey, Timestamp (if set,
// in UTC with 7 fraction digits) and the properties in name order. A
// property carries a "Name@odata.type" annotation only when its type
// cannot be inferred from the JSON value: Edm.Int64 (written as a decimal
// string), Edm.DateTime, Edm.Guid, Edm.Binary (base64), and Edm.Double for
// NaN, Infinity and -Infinity (written as those strings). Other doubles
// always have a '.' or an exponent (2 is written 2.0), so they read back as
// Double; Int32 values are bare integers. nil values are left out.
//
// Errors: InvalidValueType for a value of an unsupported Go type,
// PropertyNameInvalid and PropertyNameTooLong for bad names, InvalidInput
// for a system name in Properties or a string that is not valid UTF-8,
// OutOfRangeInput for a time outside years 1 to 9999.
//
// The receiver is a value, so an Entity, a *Entity and a struct or slice
// holding either all encode this way with json.Marshal (which writes a nil
// *Entity as null).
func (e Entity) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 128+64*len(e.Properties))
	b = append(b, '{')
	if e.ETag != "" {
		b = appendJSONKey(b, jsonETagKey)
		var err error
		if b, err = appendJSONString(b, jsonETagKey, string(e.ETag)); err != nil {
			return nil, err
		}
		b = append(b, ',')
	}
	var err error
	b = appendJSONKey(b, namePartitionKey)
	if b, err = appendJSONString(b, namePartitionKey, e.PartitionKey); err != nil {
		return nil, err
	}
	b = append(b, ',')
	b = appendJSONKey(b, nameRowKey)
	if b, err = appendJSONString(b, nameRowKey, e.RowKey); err != nil {
		return nil, err
	}
	if !e.Timestamp.IsZero() {
		b = append(b, ',')
		b = appendJSONKey(b, nameTimestamp)
		if b, err = appendJSONTime(b, nameTimestamp, e.Timestamp); err != nil {
			return nil, err
		}
	}
	names := make([]string, 0, len(e.Properties))
	for name, v := range e.Properties {
		if v != nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if isSystemName(name) {
			return nil, newError(CodeInvalidInput, "the property name %q is reserved for the entity's own field", name)
		}
		if err := validatePropertyName(name); err != nil {
			return nil, err
		}
		if b, err = appendJSONProperty(b, name, e.Properties[name]); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// appendJSONProperty appends ,"name@odata.type":"Edm.X" when needed, then
// ,"name":value.
func appendJSONProperty(b []byte, name string, v any) ([]byte, error) {
	annotate := func(edm string) {
		b = append(b, ',')
		b = appendJSONKey(b, name+jsonTypeSuffix)
		b = append(b, '"')
		b = append(b, edm...)
		b = append(b, '"')
	}
	switch x := v.(type) {
	case string:
		b = append(b, ',')
		b = appendJSONKey(b, name)
		return appendJSONString(b, name, x)
	case int32:
		b = append(b, ',')
		b = appendJSONKey(b, name)
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		annotate("Edm.Int64")
		b = append(b, ',')
		b = appendJSONKey(b, name)
		b = append(b, '"')
		b = strconv.AppendInt(b, x, 10)
		return append(b, '"'), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			annotate("Edm.Double")
			b = append(b, ',')
			b = appendJSONKey(b, name)
			switch {
			case math.IsNaN(x):
				return append(b, `"NaN"`...), nil
			case x > 0:
				return append(b, `"Infinity"`...), nil
			default:
				return append(b, `"-Infinity"`...), nil
			}
		}
		b = append(b, ',')
		b = appendJSONKey(b, name)
		return appendJSONDouble(b, x), nil
	case bool:
		b = append(b, ',')
		b = appendJSONKey(b, name)
		return strconv.AppendBool(b, x), nil
	case time.Time:
		annotate("Edm.DateTime")
		b = append(b, ',')
		b = appendJSONKey(b, name)
		return appendJSONTime(b, name, x)
	case GUID:
		annotate("Edm.Guid")
		b = append(b, ',')
		b = appendJSONKey(b, name)
		b = append(b, '"')
		b = append(b, x.String()...)
		return append(b, '"'), nil
	case []byte:
		annotate("Edm.Binary")
		b = append(b, ',')
		b = appendJSONKey(b, name)
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, x)
		return append(b, '"'), nil
	}
	return nil, newError(CodeInvalidValueType,
		"property %q has Go type %T; use string, int32, int64, float64, bool, time.Time, GUID or []byte", name, v)
}

// appendJSONDouble appends a finite double so that it reads back as a
// Double: with a '.' or an exponent, in the shortest exact form.
func appendJSONDouble(b []byte, f float64) []byte {
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

func appendJSONTime(b []byte, name string, t time.Time) ([]byte, error) {
	t = t.UTC()
	if y := t.Year(); y < 1 || y > 9999 {
		return nil, newError(CodeOutOfRangeInput, "%s holds the time %s, outside years 1 to 9999", name, t.Format(time.RFC3339Nano))
	}
	b = append(b, '"')
	b = t.AppendFormat(b, jsonTimeLayout)
	return append(b, '"'), nil
}

// appendJSONKey appends "key": for keys known to need no escaping (valid
// property names and our own constants).
func appendJSONKey(b []byte, key string) []byte {
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// appendJSONString appends s as a JSON string; name is used in the error
// for invalid UTF-8.
func appendJSONString(b []byte, name, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, newError(CodeInvalidInput, "%s holds a string that is not valid UTF-8", name)
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}

// UnmarshalJSON decodes an entity from Azure's JSON form, inferring types
// as Azure does:
//   - without an annotation: a string is Edm.String, true/false
//     Edm.Boolean, an integer literal Edm.Int32 if it fits and Edm.Double
//     otherwise, except that an integer a double cannot hold exactly (such
//     as 2^53+1, which aztables writes bare for a Go int64) is Edm.Int64
//     where Azure would round it; a number with a fraction or exponent
//     Edm.Double;
//   - "Name@odata.type" selects any of the eight types; Int32, Double and
//     Boolean then also accept strings ("12345", "3.14", "NaN",
//     "Infinity", "-Infinity", "False"), Int64 takes a decimal string (or
//     a bare integer), DateTime an ISO 8601 string (7 fraction digits at
//     most are kept; no zone means UTC), Guid the canonical form, Binary
//     base64.
//
// null values are dropped. Keys "odata.*" and other "@"-annotations are
// ignored, except that odata.etag fills ETag and a parseable Timestamp
// fills Timestamp, so fetched entities round-trip (writes ignore both). On
// error e is unchanged. As encoding/json expects, the literal null leaves e
// unchanged and is no error (a write of that entity then fails with
// PropertiesNeedValue).
//
// Errors (all *Error): InvalidInput for malformed JSON, a non-object, a
// nested object or array value, a key that is not a JSON string or is
// annotated other than Edm.String, an unknown Edm type, a value that does
// not match its annotation (bad Int64, guid, base64, datetime, ...), or an
// annotation without its property; PropertiesNeedValue for a missing
// PartitionKey or RowKey; DuplicatePropertiesSpecified for a repeated
// property or annotation; PropertyNameInvalid and PropertyNameTooLong for
// bad names; OutOfRangeInput for a DateTime outside years 1 to 9999.
func (e *Entity) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	values, types, etag, err := scanJSONEntity(data)
	if err != nil {
		return err
	}
	out := Entity{ETag: etag}
	if out.PartitionKey, err = jsonKey(values, types, namePartitionKey); err != nil {
		return err
	}
	if out.RowKey, err = jsonKey(values, types, nameRowKey); err != nil {
		return err
	}
	if s, ok := values[nameTimestamp].(string); ok {
		if t, err := parseJSONTime(s); err == nil {
			out.Timestamp = t
		}
	}
	annotated := make([]string, 0, len(types))
	for name := range types {
		annotated = append(annotated, name)
	}
	slices.Sort(annotated)
	for _, name := range annotated {
		if _, ok := values[name]; !ok {
			return newError(CodeInvalidInput, "the type annotation %s has no property %s",
				quoteShort(name+jsonTypeSuffix), quoteShort(name))
		}
	}
	names := make([]string, 0, len(values))
	for name := range values {
		switch name {
		case namePartitionKey, nameRowKey, nameTimestamp:
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	out.Properties = make(map[string]any, len(names))
	for _, name := range names {
		raw := values[name]
		if raw == nil {
			continue // null: no value
		}
		if isSystemName(name) {
			return newError(CodeInvalidInput, "the property name %q is reserved for the entity's own field", name)
		}
		if err := validatePropertyName(name); err != nil {
			return err
		}
		v, err := jsonValue(name, raw, types[name])
		if err != nil {
			return err
		}
		out.Properties[name] = v
	}
	*e = out
	return nil
}

// scanJSONEntity reads the top-level object token by token, so repeated
// keys are seen. values holds each property's token (string, json.Number,
// bool or nil), types each "@odata.type" annotation.
func scanJSONEntity(data []byte) (values map[string]any, types map[string]string, etag ETag, err error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, "", malformedJSON(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, "", newError(CodeInvalidInput, "an entity must be a JSON object")
	}
	values = make(map[string]any)
	types = make(map[string]string)
	seenOData := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, "", malformedJSON(err)
		}
		key := tok.(string) // object keys are always strings
		val, err := dec.Token()
		if err != nil {
			return nil, nil, "", malformedJSON(err)
		}
		if _, ok := val.(json.Delim); ok {
			return nil, nil, "", newError(CodeInvalidInput, "the value of %s is an object or array; entity values are scalars", quoteShort(key))
		}
		switch {
		case strings.HasSuffix(key, jsonTypeSuffix):
			name := strings.TrimSuffix(key, jsonTypeSuffix)
			if _, dup := types[name]; dup {
				return nil, nil, "", newError(CodeDuplicatePropertiesSpecified, "the annotation %s appears twice", quoteShort(key))
			}
			s, ok := val.(string)
			if !ok {
				return nil, nil, "", newError(CodeInvalidInput, "the annotation %s must be a string", quoteShort(key))
			}
			types[name] = s
		case strings.HasPrefix(key, "odata.") || strings.Contains(key, "@"):
			if seenOData[key] {
				return nil, nil, "", newError(CodeDuplicatePropertiesSpecified, "the key %s appears twice", quoteShort(key))
			}
			seenOData[key] = true
			if s, ok := val.(string); ok && key == jsonETagKey {
				etag = ETag(s)
			}
		default:
			if _, dup := values[key]; dup {
				return nil, nil, "", newError(CodeDuplicatePropertiesSpecified, "the property %s appears twice", quoteShort(key))
			}
			values[key] = val
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, nil, "", malformedJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, "", newError(CodeInvalidInput, "malformed JSON: data after the entity object")
	}
	return values, types, etag, nil
}

func malformedJSON(err error) error {
	if errors.Is(err, io.EOF) {
		return newError(CodeInvalidInput, "malformed JSON: unexpected end of input")
	}
	return newError(CodeInvalidInput, "malformed JSON: %v", err)
}

// jsonKey extracts PartitionKey or RowKey: a JSON string, annotated (if at
// all) as Edm.String.
func jsonKey(values map[string]any, types map[string]string, which string) (string, error) {
	raw, ok := values[which]
	if !ok {
		return "", newError(CodePropertiesNeedValue, "the entity has no %s", which)
	}
	if t, ok := types[which]; ok && t != "Edm.String" {
		return "", newError(CodeInvalidInput, "%s must be an Edm.String, not %s", which, quoteShort(t))
	}
	s, ok := raw.(string)
	if !ok {
		return "", newError(CodeInvalidInput, "%s must be a JSON string", which)
	}
	return s, nil
}

// jsonValue converts one property token given its annotation (edm, or ""
// for none).
func jsonValue(name string, raw any, edm string) (any, error) {
	bad := func(what string) error {
		return newError(CodeInvalidInput, "property %q: %s", name, what)
	}
	str, isStr := raw.(string)
	num, isNum := raw.(json.Number)
	switch edm {
	case "":
		switch x := raw.(type) {
		case string, bool:
			return x, nil
		case json.Number:
			s := string(x)
			if !strings.ContainsAny(s, ".eE") {
				if n, err := strconv.ParseInt(s, 10, 32); err == nil {
					return int32(n), nil
				}
				// Azure infers Double, which would round this integer:
				// keep it exact as an Int64.
				if n, err := strconv.ParseInt(s, 10, 64); err == nil {
					if _, exact := exactFloat(n); !exact {
						return n, nil
					}
				}
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, bad("the number " + quoteShort(s) + " is out of the range of Edm.Double")
			}
			return f, nil
		}
	case "Edm.String":
		if isStr {
			return str, nil
		}
		return nil, bad("an Edm.String value must be a JSON string")
	case "Edm.Boolean":
		if b, ok := raw.(bool); ok {
			return b, nil
		}
		if isStr {
			switch {
			case strings.EqualFold(str, "true"):
				return true, nil
			case strings.EqualFold(str, "false"):
				return false, nil
			}
		}
		return nil, bad("an Edm.Boolean value must be true or false")
	case "Edm.Int32":
		s := str
		if isNum {
			s = string(num)
		}
		if isStr || isNum {
			if n, err := strconv.ParseInt(s, 10, 32); err == nil {
				return int32(n), nil
			}
		}
		return nil, bad("an Edm.Int32 value must be an integer from -2147483648 to 2147483647")
	case "Edm.Int64":
		s := str
		if isNum {
			s = string(num)
		}
		if isStr || isNum {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return n, nil
			}
		}
		return nil, bad("an Edm.Int64 value must be a decimal string of a 64-bit integer")
	case "Edm.Double":
		if isNum {
			if f, err := strconv.ParseFloat(string(num), 64); err == nil {
				return f, nil
			}
			return nil, bad("the number " + quoteShort(string(num)) + " is out of the range of Edm.Double")
		}
		if isStr {
			switch str {
			case "NaN":
				return math.NaN(), nil
			case "Infinity":
				return math.Inf(1), nil
			case "-Infinity":
				return math.Inf(-1), nil
			}
			if isJSONNumber(str) {
				if f, err := strconv.ParseFloat(str, 64); err == nil {
					return f, nil
				}
			}
		}
		return nil, bad("an Edm.Double value must be a number, \"NaN\", \"Infinity\" or \"-Infinity\"")
	case "Edm.DateTime":
		if isStr {
			t, err := parseJSONTime(str)
			if err != nil {
				return nil, newError(err.(*Error).Code, "property %q: %s", name, err.(*Error).Message)
			}
			return t, nil
		}
		return nil, bad("an Edm.DateTime value must be a string")
	case "Edm.Guid":
		if isStr {
			if g, err := ParseGUID(str); err == nil {
				return g, nil
			}
		}
		return nil, bad("an Edm.Guid value must be a string xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx")
	case "Edm.Binary":
		if isStr {
			if b, err := base64.StdEncoding.DecodeString(str); err == nil {
				return b, nil
			}
		}
		return nil, bad("an Edm.Binary value must be a base64 string")
	default:
		return nil, bad("unknown type annotation " + quoteShort(edm))
	}
	return nil, bad("unsupported JSON value")
}

// isJSONNumber reports whether s follows JSON's number grammar.
func isJSONNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
