package wire

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// Decode reads an entity from Azure's JSON form, inferring types as Azure
// does:
//   - without an annotation: a string is Edm.String, true/false
//     Edm.Boolean, an integer literal Edm.Int32 if it fits and Edm.Double
//     otherwise, except that an integer a double cannot hold exactly (such
//     as 2^53+1, which aztables writes bare for a Go int64) is Edm.Int64
//     where Azure would round it; a number with a fraction or exponent
//     Edm.Double;
//   - "Name@odata.type" selects any of the eight types; Int32, Double and
//     Boolean then also accept strings, and the text forms are those of
//     entityenc.ParseText.
//
// null values are dropped. Keys "odata.*" and other "@"-annotations are
// ignored, except that odata.etag fills ETag and a parseable Timestamp
// fills Timestamp.
//
// Errors: InvalidInput for malformed JSON (invalid UTF-8 in any string,
// lone surrogate escapes included), a non-object, a nested object or
// array value, a key annotated other than Edm.String, an unknown Edm
// type, a value that does not match its annotation, or an annotation
// without its property; PropertiesNeedValue for a missing PartitionKey or
// RowKey; DuplicatePropertiesSpecified for a repeated property or
// annotation; PropertyNameInvalid and PropertyNameTooLong for bad names;
// OutOfRangeInput for a DateTime outside years 1 to 9999.
func Decode(data []byte) (Entity, error) {
	obj, err := scanObject(data)
	if err != nil {
		return Entity{}, err
	}
	out := Entity{ETag: obj.etag}
	if out.PartitionKey, err = obj.key(entityenc.NamePartitionKey); err != nil {
		return Entity{}, err
	}
	if out.RowKey, err = obj.key(entityenc.NameRowKey); err != nil {
		return Entity{}, err
	}
	if v, ok := obj.values[entityenc.NameTimestamp]; ok && v.kind == kindString {
		if t, err := entityenc.ParseDateTime(v.text); err == nil {
			out.Timestamp = t
		}
	}
	var stack [32]string
	annotated := stack[:0]
	for name := range obj.types {
		annotated = append(annotated, name)
	}
	slices.Sort(annotated)
	for _, name := range annotated {
		if _, ok := obj.values[name]; !ok {
			return Entity{}, noProperty(name)
		}
	}
	names := make([]string, 0, len(obj.values))
	for name := range obj.values {
		if !isSystem(name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	out.Properties = make(map[string]any, len(names))
	for _, name := range names {
		v := obj.values[name]
		if v.kind == kindNull {
			continue // null: no value
		}
		if err := entityenc.ValidatePropertyName(name); err != nil {
			return Entity{}, err
		}
		x, err := convert(name, v, obj.types[name])
		if err != nil {
			return Entity{}, err
		}
		out.Properties[name] = x
	}
	return out, nil
}

// The kinds of JSON scalar a member holds.
const (
	kindNull = iota
	kindString
	kindNumber
	kindBool
)

// scalar is one member's value: a string's text, a number's literal, or a
// boolean.
type scalar struct {
	kind uint8
	b    bool
	text string
}

// object is an entity body's top-level members, sorted out: property
// values, "@odata.type" annotations by property name, and odata.etag.
type object struct {
	values map[string]scalar
	types  map[string]string
	etag   string
}

// key extracts PartitionKey or RowKey: a JSON string, annotated (if at
// all) as Edm.String.
func (o *object) key(which string) (string, error) {
	v, ok := o.values[which]
	t, annotated := o.types[which]
	if err := keyError(which, ok, v.kind, t, annotated); err != nil {
		return "", err
	}
	return v.text, nil
}

// keyError is the error for PartitionKey or RowKey (which) when it is
// absent (found false) or null, annotated other than Edm.String, or not a JSON
// string (kind), and nil when it is acceptable.
func keyError(which string, found bool, kind uint8, annotation string, annotated bool) error {
	if !found {
		return entityenc.Errorf(edm.CodePropertiesNeedValue, "the entity has no %s", which)
	}
	if kind == kindNull {
		// A null key is no key: Azure allows "" but not null.
		return entityenc.Errorf(edm.CodePropertiesNeedValue, "the entity's %s is null", which)
	}
	if annotated && annotation != "Edm.String" {
		return entityenc.Errorf(edm.CodeInvalidInput, "%s must be an Edm.String, not %s", which, entityenc.QuoteShort(annotation))
	}
	if kind != kindString {
		return entityenc.Errorf(edm.CodeInvalidInput, "%s must be a JSON string", which)
	}
	return nil
}

// noProperty is the error for the annotation of name without a property
// name.
func noProperty(name string) error {
	return entityenc.Errorf(edm.CodeInvalidInput, "the type annotation %s has no property %s",
		entityenc.QuoteShort(name+typeSuffix), entityenc.QuoteShort(name))
}

// convert types one property value given its annotation (annotation, or
// "" for none).
func convert(name string, v scalar, annotation string) (any, error) {
	if annotation == "" {
		switch v.kind {
		case kindString:
			return v.text, nil
		case kindBool:
			return v.b, nil
		}
		return inferNumber(name, v.text)
	}
	t, ok := edm.ParseType(annotation)
	if !ok {
		return nil, entityenc.Errorf(edm.CodeInvalidInput, "property %q: unknown type annotation %s", name, entityenc.QuoteShort(annotation))
	}
	switch {
	case v.kind == kindString && t != edm.TypeString:
		return entityenc.ParseText(name, t, v.text)
	case v.kind == kindString, v.kind == kindBool && t == edm.TypeBoolean:
		return scalarValue(v), nil
	case v.kind == kindNumber && (t == edm.TypeInt32 || t == edm.TypeInt64):
		return entityenc.ParseText(name, t, v.text)
	case v.kind == kindNumber && t == edm.TypeDouble:
		return parseDouble(name, v.text)
	}
	return nil, entityenc.BadValue(name, t)
}

// scalarValue is a string's or a boolean's Go value.
func scalarValue(v scalar) any {
	if v.kind == kindBool {
		return v.b
	}
	return v.text
}

// inferNumber types a bare JSON number as Azure does (see Decode).
func inferNumber(name, s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		if n, err := strconv.ParseInt(s, 10, 32); err == nil {
			return int32(n), nil
		}
		// Azure infers Double, which would round this integer: keep it
		// exact as an Int64.
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			if _, exact := entityenc.ExactFloat(n); !exact {
				return n, nil
			}
		}
	}
	return parseDouble(name, s)
}

// parseDouble reads a JSON number as a Double.
func parseDouble(name, s string) (any, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, entityenc.Errorf(edm.CodeInvalidInput, "property %q: the number %s is out of the range of Edm.Double", name, entityenc.QuoteShort(s))
	}
	return f, nil
}

// scanObject reads the top-level object member by member, so repeated
// keys are seen, and refuses a nested value as soon as it starts.
func scanObject(data []byte) (*object, error) {
	o := &object{values: make(map[string]scalar, 16), types: make(map[string]string, 4)}
	var seenOData map[string]bool
	s := scanner{data: data}
	err := s.object(func(k []byte, t token) error {
		key := string(k)
		val := scalar{kind: t.kind, b: t.b, text: string(t.text)}
		switch class, name := classify(key); class {
		case classAnnotation:
			if _, dup := o.types[name]; dup {
				return duplicate(class, key)
			}
			if val.kind != kindString {
				return notString(key)
			}
			o.types[name] = val.text
		case classOther:
			if seenOData[key] {
				return duplicate(class, key)
			}
			if seenOData == nil {
				seenOData = make(map[string]bool)
			}
			seenOData[key] = true
			if val.kind == kindString && key == etagKey {
				o.etag = val.text
			}
		default:
			if _, dup := o.values[key]; dup {
				return duplicate(class, key)
			}
			o.values[key] = val
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return o, nil
}

// The classes of top-level keys: a property, a "Name@odata.type"
// annotation, and any other key with "@" or starting "odata.", which is
// ignored but for odata.etag.
const (
	classProperty = iota
	classAnnotation
	classOther
)

// classify returns key's class and the name it concerns: an annotation's
// property name, or key itself.
func classify[S string | []byte](key S) (uint8, S) {
	if n := len(key) - len(typeSuffix); n >= 0 && string(key[n:]) == typeSuffix {
		return classAnnotation, key[:n]
	}
	if len(key) >= len("odata.") && string(key[:len("odata.")]) == "odata." {
		return classOther, key
	}
	for i := 0; i < len(key); i++ {
		if key[i] == '@' {
			return classOther, key
		}
	}
	return classProperty, key
}

// duplicate is the error for the second occurrence of key, of class.
func duplicate(class uint8, key string) error {
	what := "property"
	switch class {
	case classAnnotation:
		what = "annotation"
	case classOther:
		what = "key"
	}
	return entityenc.Errorf(edm.CodeDuplicatePropertiesSpecified, "the %s %s appears twice", what, entityenc.QuoteShort(key))
}

// notString is the error for the annotation key whose value is not a
// string.
func notString(key string) error {
	return entityenc.Errorf(edm.CodeInvalidInput, "the annotation %s must be a string", entityenc.QuoteShort(key))
}

// token is a scalar value as the scanner reads it: its kind, a boolean's
// value, and a string's value or a number's literal in text, which
// aliases the scanner's data or buf.
type token struct {
	kind uint8
	b    bool
	text []byte
}

// object reads the top-level object member by member and calls member
// with each key and value in document order, so repeated keys are seen;
// it refuses a nested value as soon as it starts. It stops at the first
// error, member's included, and returns it. The key and value given to
// member alias data or s.buf and stay valid until s is used again with
// other data.
func (s *scanner) object(member func(key []byte, v token) error) error {
	data := s.data
	s.space()
	if s.i >= len(data) {
		return s.syntax("looking for beginning of value")
	}
	switch c := data[s.i]; {
	case c == '{':
	case c == '[' || c == '"' || c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f' || c == 'n':
		return entityenc.Errorf(edm.CodeInvalidInput, "an entity must be a JSON object")
	default:
		return s.syntax("looking for beginning of value")
	}
	s.i++
	s.space()
	if s.i < len(data) && data[s.i] == '}' {
		s.i++
		return s.end()
	}
	for {
		if s.i >= len(data) || data[s.i] != '"' {
			return s.syntax("looking for beginning of object key string")
		}
		key, err := s.text()
		if err != nil {
			return err
		}
		s.space()
		if s.i >= len(data) || data[s.i] != ':' {
			return s.syntax("after object key")
		}
		s.i++
		s.space()
		val, err := s.value(key)
		if err != nil {
			return err
		}
		if err := member(key, val); err != nil {
			return err
		}
		s.space()
		if s.i >= len(data) {
			return s.syntax("")
		}
		switch data[s.i] {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			return s.end()
		default:
			return s.syntax("after object key:value pair")
		}
	}
}

// scanner reads JSON text from data at i. buf holds the unescaped
// values of the strings read that have escapes, one after the other; it
// is given the capacity of data before the first is appended, which
// holds them all (a value is never longer than its JSON text), so it is
// never reallocated and the texts returned stay valid.
type scanner struct {
	data []byte
	i    int
	buf  []byte
}

// space skips JSON whitespace.
func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// end checks that nothing but whitespace follows the object.
func (s *scanner) end() error {
	s.space()
	if s.i < len(s.data) {
		return entityenc.Errorf(edm.CodeInvalidInput, "malformed JSON: data after the entity object")
	}
	return nil
}

// syntax is the error for the byte at i, which does not fit where it
// stands (context, in encoding/json's words), or for the end of input.
func (s *scanner) syntax(context string) error {
	if s.i >= len(s.data) {
		return entityenc.Errorf(edm.CodeInvalidInput, "malformed JSON: unexpected end of input")
	}
	msg := "malformed JSON: invalid character " + quoteChar(s.data[s.i])
	if context != "" {
		msg += " " + context
	}
	return &entityenc.Error{Code: edm.CodeInvalidInput, Message: msg}
}

// quoteChar quotes a byte for a message, as encoding/json does.
func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	q := strconv.Quote(string(rune(c)))
	return "'" + q[1:len(q)-1] + "'"
}

// value reads the scalar value of member key at i.
func (s *scanner) value(key []byte) (token, error) {
	if s.i >= len(s.data) {
		return token{}, s.syntax("")
	}
	switch c := s.data[s.i]; c {
	case '"':
		text, err := s.text()
		return token{kind: kindString, text: text}, err
	case '{', '[':
		return token{}, entityenc.Errorf(edm.CodeInvalidInput, "the value of %s is an object or array; entity values are scalars", entityenc.QuoteShort(string(key)))
	case 't':
		return token{kind: kindBool, b: true}, s.literal("true")
	case 'f':
		return token{kind: kindBool}, s.literal("false")
	case 'n':
		return token{}, s.literal("null")
	default:
		if c != '-' && (c < '0' || c > '9') {
			return token{}, s.syntax("looking for beginning of value")
		}
		end, ok := entityenc.NumberEnd(s.data, s.i)
		if !ok {
			s.i = end
			return token{}, s.syntax("in numeric literal")
		}
		v := token{kind: kindNumber, text: s.data[s.i:end]}
		s.i = end
		return v, nil
	}
}

// literal reads the literal lit at i.
func (s *scanner) literal(lit string) error {
	for k := 1; k < len(lit); k++ {
		s.i++
		if s.i >= len(s.data) || s.data[s.i] != lit[k] {
			return s.syntax(fmt.Sprintf("in literal %s (expecting %s)", lit, quoteChar(lit[k])))
		}
	}
	s.i++
	return nil
}

// plainASCII marks the bytes a JSON string holds as they are and text
// steps over without a closer look: ASCII, not a control character, '"'
// or '\\'.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// text reads the JSON string at i, which starts with '"', and returns its
// value: a sub-slice of data when the string has no escape, else the tail
// of s.buf, where its unescaped value is appended. It refuses raw control
// characters, unknown escapes, invalid UTF-8 and \u escapes of lone
// UTF-16 surrogates.
func (s *scanner) text() ([]byte, error) {
	data := s.data
	start := s.i + 1
	i := start
	from := -1 // where the value starts in s.buf, once an escape is met
	for {
		for i < len(data) && plainASCII[data[i]] {
			i++
		}
		if i >= len(data) {
			s.i = i
			return nil, s.syntax("")
		}
		c := data[i]
		switch {
		case c == '"':
			s.i = i + 1
			if from < 0 {
				return data[start:i], nil
			}
			s.buf = append(s.buf, data[start:i]...)
			return s.buf[from:], nil
		case c == '\\':
			if from < 0 {
				if len(s.buf) == 0 && cap(s.buf) < len(data) {
					s.buf = make([]byte, 0, len(data))
				}
				from = len(s.buf)
			}
			s.buf = append(s.buf, data[start:i]...)
			var err error
			if s.buf, i, err = s.escape(s.buf, i); err != nil {
				return nil, err
			}
			start = i
		case c < 0x20:
			s.i = i
			return nil, s.syntax("in string literal")
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, entityenc.Errorf(edm.CodeInvalidInput, "malformed JSON: the string at offset %d is not valid UTF-8", s.i)
			}
			i += size
		}
	}
}

// escape decodes the escape sequence at data[i] (a '\\') onto buf and
// returns the index after it.
func (s *scanner) escape(buf []byte, i int) ([]byte, int, error) {
	data := s.data
	i++
	if i >= len(data) {
		s.i = i
		return buf, i, s.syntax("")
	}
	switch c := data[i]; c {
	case '"', '\\', '/':
		return append(buf, c), i + 1, nil
	case 'b':
		return append(buf, '\b'), i + 1, nil
	case 'f':
		return append(buf, '\f'), i + 1, nil
	case 'n':
		return append(buf, '\n'), i + 1, nil
	case 'r':
		return append(buf, '\r'), i + 1, nil
	case 't':
		return append(buf, '\t'), i + 1, nil
	case 'u':
		r, next, err := s.hex4(i + 1)
		if err != nil {
			return buf, next, err
		}
		if utf16.IsSurrogate(r) {
			// A high surrogate must be followed by the escape of a low
			// one; anything else is a lone surrogate.
			if r < 0xdc00 && next+1 < len(data) && data[next] == '\\' && data[next+1] == 'u' {
				if r2, after, err := s.hex4(next + 2); err != nil {
					return buf, after, err
				} else if pair := utf16.DecodeRune(r, r2); pair != utf8.RuneError {
					return utf8.AppendRune(buf, pair), after, nil
				}
			}
			return buf, next, entityenc.Errorf(edm.CodeInvalidInput,
				"malformed JSON: the escape \\u%04x at offset %d is a lone UTF-16 surrogate", r, i-1)
		}
		return utf8.AppendRune(buf, r), next, nil
	default:
		s.i = i
		return buf, i, s.syntax("in string escape code")
	}
}

// hex4 reads the four hexadecimal digits of a \u escape at i.
func (s *scanner) hex4(i int) (rune, int, error) {
	var r rune
	for k := 0; k < 4; k++ {
		if i+k >= len(s.data) {
			s.i = i + k
			return 0, s.i, s.syntax("")
		}
		c := s.data[i+k]
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			s.i = i + k
			return 0, s.i, s.syntax(`in \u hexadecimal character escape`)
		}
		r = r<<4 | rune(d)
	}
	return r, i + 4, nil
}
