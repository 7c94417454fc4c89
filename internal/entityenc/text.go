package entityenc

import (
	"encoding/base64"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore/edm"
)

// The text forms of EDM values: how Azure's JSON writes the values a bare
// JSON number or boolean cannot carry, and how it reads strings annotated
// with a type. The JSON decoder (package wire) reads annotated strings
// here; the struct mapping reads here the strings a no-metadata body
// leaves in a property map, for fields whose type says what they hold.

// textRule says what text a value of each type must be, for messages.
var textRule = [...]string{
	edm.TypeString:   "an Edm.String value must be a JSON string",
	edm.TypeInt32:    "an Edm.Int32 value must be an integer from -2147483648 to 2147483647",
	edm.TypeInt64:    "an Edm.Int64 value must be a decimal string of a 64-bit integer",
	edm.TypeDouble:   "an Edm.Double value must be a number, \"NaN\", \"Infinity\" or \"-Infinity\"",
	edm.TypeBoolean:  "an Edm.Boolean value must be true or false",
	edm.TypeDateTime: "an Edm.DateTime value must be a string",
	edm.TypeGuid:     "an Edm.Guid value must be a string xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",
	edm.TypeBinary:   "an Edm.Binary value must be a base64 string",
}

// BadValue is the error for a value of property name that is not of the
// form type t requires: InvalidInput, naming the rule.
func BadValue(name string, t edm.Type) error {
	return Errorf(edm.CodeInvalidInput, "property %q: %s", name, textRule[t])
}

// ParseText is ParseValueText for a value of property name: its errors
// name the property.
func ParseText(name string, t edm.Type, s string) (any, error) {
	v, err := ParseValueText(t, s)
	if err != nil {
		return nil, Prefix(err, "property %q", name)
	}
	return v, nil
}

// ParseValueText reads s, the text of a value annotated with type t, as
// Azure reads it: String is s itself; Boolean "true" or
// "false" in any case; Int32 and Int64 a decimal integer in their range;
// Double "NaN", "Infinity", "-Infinity" or a number in JSON's grammar;
// DateTime ISO 8601 text (ParseDateTime); Guid the canonical form in
// either case; Binary standard base64. The result has the Go type of t's
// values (string, bool, int32, int64, float64, time.Time, edm.GUID,
// []byte).
//
// Errors: InvalidInput naming the rule of t's text, or ParseDateTime's.
func ParseValueText(t edm.Type, s string) (any, error) {
	switch t {
	case edm.TypeString:
		return s, nil
	case edm.TypeBoolean:
		switch {
		case strings.EqualFold(s, "true"):
			return true, nil
		case strings.EqualFold(s, "false"):
			return false, nil
		}
	case edm.TypeInt32:
		if n, err := strconv.ParseInt(s, 10, 32); err == nil {
			return int32(n), nil
		}
	case edm.TypeInt64:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
	case edm.TypeDouble:
		switch s {
		case "NaN":
			return math.NaN(), nil
		case "Infinity":
			return math.Inf(1), nil
		case "-Infinity":
			return math.Inf(-1), nil
		}
		if isNumber(s) {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return f, nil
			}
		}
	case edm.TypeDateTime:
		return ParseDateTime(s)
	case edm.TypeGuid:
		if g, ok := edm.ParseGUID(s); ok {
			return g, nil
		}
	case edm.TypeBinary:
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return b, nil
		}
	}
	if int(t) >= len(textRule) || textRule[t] == "" {
		return nil, Errorf(edm.CodeInvalidInput, "unknown type %s", t)
	}
	return nil, Errorf(edm.CodeInvalidInput, "%s", textRule[t])
}

// ParseDateTime parses DateTime text as Azure's JSON writes it
// (edm.JSONSyntax) into a time.Time in UTC. Errors: InvalidInput for bad
// syntax or fields, OutOfRangeInput for a UTC year outside 1 to 9999.
func ParseDateTime(s string) (time.Time, error) {
	ticks, err := edm.ParseDateTime(s, edm.JSONSyntax)
	if err != nil {
		if err.(*edm.DateTimeError).Code == edm.CodeOutOfRangeInput {
			return time.Time{}, Errorf(edm.CodeOutOfRangeInput, "datetime %s is outside years 1 to 9999", QuoteShort(s))
		}
		return time.Time{}, Errorf(edm.CodeInvalidInput, "malformed datetime %s", QuoteShort(s))
	}
	return edm.TimeFromTicks(ticks), nil
}

// NumberEnd returns the end of the number in JSON's grammar that starts
// at s[i], and whether one does:
//
//	-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
//
// It is the one number grammar of this module: the JSON decoder reads
// numbers with it, and Double text must follow it.
func NumberEnd[S string | []byte](s S, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i)
	default:
		return i, false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return j, false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return j, false
		}
		i = j
	}
	return i, true
}

// isNumber reports whether s is one number in JSON's grammar.
func isNumber(s string) bool {
	end, ok := NumberEnd(s, 0)
	return ok && end == len(s)
}

// twoTo63 is 2^63, the first float64 above the int64 range.
const twoTo63 = float64(1 << 63)

// ExactInt returns an Int32, an Int64, an integral in-range Double, or a
// Go integer the integer rule accepts (GoInt), as int64; ok is false for
// anything else.
func ExactInt(val any) (int64, bool) {
	switch x := val.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x != math.Trunc(x) || x < -twoTo63 || x >= twoTo63 {
			return 0, false // fraction, infinity, NaN or out of range
		}
		return int64(x), true
	}
	n, isInt, inRange := GoInt(val)
	return n, isInt && inRange
}

// ExactFloat returns a Double, or an integer ExactInt reads that float64
// holds exactly, as float64.
func ExactFloat(val any) (float64, bool) {
	if x, ok := val.(float64); ok {
		return x, true
	}
	n, ok := ExactInt(val)
	if !ok {
		return 0, false
	}
	f := float64(n)
	if f >= twoTo63 || int64(f) != n {
		return 0, false
	}
	return f, true
}

// edmTypes are the EDM types of the Go types a property map holds for
// each, the types reads return.
var edmTypes = map[reflect.Type]edm.Type{
	reflect.TypeFor[string]():    edm.TypeString,
	reflect.TypeFor[int32]():     edm.TypeInt32,
	reflect.TypeFor[int64]():     edm.TypeInt64,
	reflect.TypeFor[float64]():   edm.TypeDouble,
	reflect.TypeFor[bool]():      edm.TypeBoolean,
	reflect.TypeFor[time.Time](): edm.TypeDateTime,
	reflect.TypeFor[edm.GUID]():  edm.TypeGuid,
	reflect.TypeFor[[]byte]():    edm.TypeBinary,
}

// TypeName names the EDM type of a property value for messages (a Go
// integer by the integer rule), or its Go type when it has none.
func TypeName(val any) string {
	if t, ok := edmTypes[reflect.TypeOf(val)]; ok {
		return t.String()
	}
	if n, isInt, inRange := GoInt(val); isInt && inRange {
		return IntType(n).String()
	}
	return reflect.TypeOf(val).String()
}
