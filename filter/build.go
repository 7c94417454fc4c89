package filter

import (
	"github.com/tablestore/tablestore/edm"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Build returns a filter text made from format with each placeholder
// replaced by the literal of the matching argument, so user input goes
// into a filter only as a literal:
//
//	f, err := filter.Build("PartitionKey eq %s and Age ge %s", pk, int32(30))
//	// PartitionKey eq 'O''Brien' and Age ge 30
//
// Placeholders are %s and %v (the same meaning: the argument's literal);
// %% stands for a percent sign. The literal of each argument is the one
// Literal returns; its Go type decides the EDM type, never its text.
//
// Injection is impossible by construction: after substitution Build scans
// the result and requires every substituted span to be exactly one
// literal token. A placeholder inside a quoted literal ('%s'), or glued to
// the text around it (Age ge 1%s, %sand), is refused, so a value can
// neither end a string early nor merge with a neighbouring token. The
// format itself is trusted text: write it as a constant.
//
// The result need not be a whole filter (a fragment such as "RowKey ge %s"
// can be joined to others with and/or), but it must scan. Errors (*Error,
// CodeInvalidInput, Src the format): an unknown verb, too few or too many
// arguments, an argument Literal refuses, a placeholder not replaced by
// exactly one token, a result that does not scan.
func Build(format string, args ...any) (string, error) {
	var b strings.Builder
	b.Grow(len(format) + 16*len(args))
	type span struct{ start, end, arg, pos int }
	var spans []span
	next := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(format) {
			return "", newError(edm.CodeInvalidInput, format, i, "a lone % ends the format; write %% for a percent sign")
		}
		switch verb := format[i+1]; verb {
		case '%':
			b.WriteByte('%')
		case 's', 'v':
			if next >= len(args) {
				return "", newError(edm.CodeInvalidInput, format, i, "placeholder "+strconv.Itoa(next+1)+" has no argument")
			}
			lit, err := Literal(args[next])
			if err != nil {
				e := err.(*Error)
				return "", newError(edm.CodeInvalidInput, format, i, "argument "+strconv.Itoa(next+1)+": "+e.Msg)
			}
			spans = append(spans, span{start: b.Len(), end: b.Len() + len(lit), arg: next, pos: i})
			b.WriteString(lit)
			next++
		default:
			return "", newError(edm.CodeInvalidInput, format, i, "unknown verb %"+string(rune(verb))+"; placeholders are %s and %v")
		}
		i++
	}
	if next != len(args) {
		return "", newError(edm.CodeInvalidInput, format, len(format),
			strconv.Itoa(len(args))+" arguments for "+strconv.Itoa(next)+" placeholders")
	}
	out := b.String()
	var s Scanner
	s.Init(out)
	k := 0 // next span to verify
	for {
		pos, tok, lit := s.Scan()
		if tok == TokIllegal {
			e := s.Err()
			return "", newError(edm.CodeInvalidInput, out, e.Pos, "the built filter does not scan: "+e.Msg)
		}
		if tok == TokEOF {
			break
		}
		end := pos + len(lit)
		for k < len(spans) && spans[k].end <= pos {
			// The span ended before this token began without being
			// matched by one: it was merged into the previous token.
			return "", placeholderError(format, spans[k].pos, spans[k].arg)
		}
		if k < len(spans) && spans[k].start < end {
			if spans[k].start != pos || spans[k].end != end || !tok.IsLiteral() {
				return "", placeholderError(format, spans[k].pos, spans[k].arg)
			}
			k++
		}
	}
	if k != len(spans) {
		return "", placeholderError(format, spans[k].pos, spans[k].arg)
	}
	return out, nil
}

func placeholderError(format string, pos, arg int) *Error {
	return newError(edm.CodeInvalidInput, format, pos, "the literal of argument "+strconv.Itoa(arg+1)+
		" would not stand alone as one token: a placeholder must not sit inside quotes or touch a word or number")
}

// Literal returns the filter literal of a Go value, chosen by its type
// (named types count by their kind):
//
//	string kinds         'text', each ' doubled     Edm.String
//	int32 kinds          5                          Edm.Int32
//	int64 kinds          5L                         Edm.Int64
//	float64 kinds        2.5, 2.0, 1e+300          Edm.Double
//	bool kinds           true, false                Edm.Boolean
//	time.Time            datetime'...Z' in UTC      Edm.DateTime (100 ns)
//	[16]byte kinds       guid'xxxxxxxx-...'         Edm.Guid (tablestore.GUID)
//	[]byte kinds         X'0a0b'                    Edm.Binary
//
// Every literal it returns parses back (ParseLiteral) to the same value,
// except that a time keeps 100 ns precision. Errors (*Error,
// CodeInvalidInput): any other type (int, uint, float32, pointers, nil:
// say int32 or int64, so the comparison's type is explicit), a string that
// is not valid UTF-8, a NaN or infinite double (Azure's filters have no
// literal for them), a time outside years 1 to 9999 UTC.
func Literal(v any) (string, error) {
	val, err := valueOf(v)
	if err != nil {
		return "", err
	}
	return FormatLiteral(val), nil
}

// valueOf is the EDM value of v by Literal's rules, with Literal's
// errors.
func valueOf(v any) (edm.Value, error) {
	fail := func(msg string) (edm.Value, error) { return edm.Value{}, newError(edm.CodeInvalidInput, "", 0, msg) }
	if t, ok := v.(time.Time); ok {
		t = t.UTC()
		if y := t.Year(); y < 1 || y > 9999 {
			return fail("the time " + t.Format(time.RFC3339Nano) + " is outside years 1 to 9999")
		}
		ticks := edm.TicksFromTime(t)
		return edm.Value{Type: edm.TypeDateTime, Int: ticks}, nil
	}
	if v == nil {
		return fail("nil has no literal (Azure filters have no null)")
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		s := rv.String()
		if !utf8.ValidString(s) {
			return fail("the string is not valid UTF-8")
		}
		return edm.Value{Type: edm.TypeString, Bytes: []byte(s)}, nil
	case reflect.Int32:
		return edm.Value{Type: edm.TypeInt32, Int: rv.Int()}, nil
	case reflect.Int64:
		return edm.Value{Type: edm.TypeInt64, Int: rv.Int()}, nil
	case reflect.Float64:
		f := rv.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fail("the double " + strconv.FormatFloat(f, 'g', -1, 64) + " has no filter literal")
		}
		return edm.Value{Type: edm.TypeDouble, Float: f}, nil
	case reflect.Bool:
		b := int64(0)
		if rv.Bool() {
			b = 1
		}
		return edm.Value{Type: edm.TypeBoolean, Int: b}, nil
	case reflect.Array:
		if rv.Len() == 16 && rv.Type().Elem().Kind() == reflect.Uint8 {
			g := make([]byte, 16)
			reflect.Copy(reflect.ValueOf(g), rv)
			return edm.Value{Type: edm.TypeGuid, Bytes: g}, nil
		}
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return edm.Value{Type: edm.TypeBinary, Bytes: rv.Bytes()}, nil
		}
	}
	hint := ""
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		hint = "; convert it to int32 (Edm.Int32) or int64 (Edm.Int64)"
	case reflect.Float32:
		hint = "; convert it to float64"
	}
	return fail("a value of type " + rv.Type().String() + " has no filter literal" + hint)
}
