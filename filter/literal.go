package filter

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore/edm"
)

// This file converts literal text to Values and back.

// ParseLiteral converts the raw text of a literal token, as the Scanner
// returns it (quotes, prefix, sign and suffix included), to a Value. The
// Value's Bytes never alias raw. A malformed or out-of-range literal gives
// an *Error with CodeInvalidInput and Pos 0 (relative to raw); a null
// literal is rejected the same way.
func ParseLiteral(kind Token, raw string) (edm.Value, error) {
	v, msg := parseLiteral(kind, raw)
	if msg != "" {
		return edm.Value{}, newError(edm.CodeInvalidInput, raw, 0, msg)
	}
	return v, nil
}

// parseLiteral does the work of ParseLiteral and returns the error message
// instead of an error.
func parseLiteral(kind Token, raw string) (edm.Value, string) {
	switch kind {
	case TokString:
		body, ok := unquote(raw)
		if !ok {
			return edm.Value{}, "malformed string literal"
		}
		return edm.Value{Type: edm.TypeString, Bytes: []byte(body)}, ""
	case TokBoolean:
		switch raw {
		case "true":
			return edm.Value{Type: edm.TypeBoolean, Int: 1}, ""
		case "false":
			return edm.Value{Type: edm.TypeBoolean, Int: 0}, ""
		}
		return edm.Value{}, "malformed Edm.Boolean literal '" + raw + "'"
	case TokInt32:
		n, err := strconv.ParseInt(raw, 10, 32)
		if err != nil {
			return edm.Value{}, "unrecognized 'Edm.Int32' literal '" + raw + "'"
		}
		return edm.Value{Type: edm.TypeInt32, Int: n}, ""
	case TokInt64:
		digits, ok := strings.CutSuffix(raw, "L")
		if !ok {
			digits, ok = strings.CutSuffix(raw, "l")
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if !ok || err != nil {
			return edm.Value{}, "unrecognized 'Edm.Int64' literal '" + raw + "'"
		}
		return edm.Value{Type: edm.TypeInt64, Int: n}, ""
	case TokDouble:
		return parseDouble(raw)
	case TokDateTime:
		body, ok := typedBody(raw, "datetime")
		if !ok {
			return edm.Value{}, "malformed Edm.DateTime literal"
		}
		ticks, msg := parseDateTime(body)
		if msg != "" {
			return edm.Value{}, "unrecognized 'Edm.DateTime' literal '" + body + "': " + msg
		}
		return edm.Value{Type: edm.TypeDateTime, Int: ticks}, ""
	case TokGuid:
		body, ok := typedBody(raw, "guid")
		if !ok {
			return edm.Value{}, "malformed Edm.Guid literal"
		}
		b, ok := parseGuid(body)
		if !ok {
			return edm.Value{}, "unrecognized 'Edm.Guid' literal '" + body + "': want 8-4-4-4-12 hex digits"
		}
		return edm.Value{Type: edm.TypeGuid, Bytes: b}, ""
	case TokBinary:
		body, ok := typedBody(raw, "X")
		if !ok {
			body, ok = typedBody(raw, "x")
		}
		if !ok {
			body, ok = typedBody(raw, "binary")
		}
		if !ok {
			return edm.Value{}, "malformed Edm.Binary literal"
		}
		if len(body)%2 != 0 {
			return edm.Value{}, "unrecognized 'Edm.Binary' literal '" + body + "': odd number of hex digits"
		}
		b, err := hex.DecodeString(body)
		if err != nil {
			return edm.Value{}, "unrecognized 'Edm.Binary' literal '" + body + "': not hex"
		}
		return edm.Value{Type: edm.TypeBinary, Bytes: b}, ""
	case TokNull:
		return edm.Value{}, "null literals are not allowed"
	}
	return edm.Value{}, "expected literal, found " + kind.String()
}

// unquote returns the content of a quoted literal, with each doubled
// quote turned into one.
func unquote(raw string) (string, bool) {
	if len(raw) < 2 || raw[0] != '\'' || raw[len(raw)-1] != '\'' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	if !strings.Contains(body, "'") {
		return body, true
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] == '\'' {
			if i+1 >= len(body) || body[i+1] != '\'' {
				return "", false
			}
			i++
		}
		b.WriteByte(body[i])
	}
	return b.String(), true
}

// typedBody returns the content of prefix'…'. Guid, DateTime and Binary
// content never needs a quote, so a doubled quote is malformed.
func typedBody(raw, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(raw, prefix)
	if !ok {
		return "", false
	}
	body, ok := unquote(rest)
	if !ok || strings.Contains(body, "'") {
		return "", false
	}
	return body, true
}

func parseDouble(raw string) (edm.Value, string) {
	digits := raw
	if n := len(digits); n > 0 && (digits[n-1] == 'D' || digits[n-1] == 'd') {
		digits = digits[:n-1]
	}
	ok := digits != ""
	for i := 0; i < len(digits) && ok; i++ {
		c := digits[i]
		ok = isDigit(c) || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
	}
	f, err := strconv.ParseFloat(digits, 64)
	if !ok || err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return edm.Value{}, "unrecognized 'Edm.Double' literal '" + raw + "'"
	}
	return edm.Value{Type: edm.TypeDouble, Float: f}, ""
}

// parseGuid parses the canonical 8-4-4-4-12 hex form, either case, into 16
// bytes in text order.
func parseGuid(s string) ([]byte, bool) {
	g, ok := edm.ParseGUID(s)
	if !ok {
		return nil, false
	}
	return g[:], true
}

// parseDateTime parses the content of a datetime'…' literal and returns
// ticks (100 ns units since 0001-01-01T00:00:00Z). The accepted form is
//
//	YYYY-MM-DDThh:mm[:ss[.f{1,7}]][Z|±hh:mm]
//
// A value without a zone is UTC; an offset is subtracted to give UTC. The
// result must lie in 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.9999999Z.
// On failure it returns a lowercase reason. It is edm.ParseDateTime in
// edm.LiteralSyntax.
func parseDateTime(s string) (ticks int64, msg string) {
	ticks, err := edm.ParseDateTime(s, edm.LiteralSyntax)
	if err != nil {
		return 0, err.(*edm.DateTimeError).Reason
	}
	return ticks, ""
}

// FormatLiteral returns the canonical filter literal for v, which parses
// back to an equal Value: 'text' (quotes doubled), 5, 5L, 2.5, true, datetime'…Z',
// guid'…' (lowercase), X'0a0b' (lowercase hex). Doubles that have no
// literal form (NaN, ±Inf) are written as NaN, INF and -INF, which do not
// parse.
func FormatLiteral(v edm.Value) string {
	switch v.Type {
	case edm.TypeString:
		return "'" + strings.ReplaceAll(string(v.Bytes), "'", "''") + "'"
	case edm.TypeInt32:
		return strconv.FormatInt(v.Int, 10)
	case edm.TypeInt64:
		return strconv.FormatInt(v.Int, 10) + "L"
	case edm.TypeDouble:
		return formatDouble(v.Float)
	case edm.TypeBoolean:
		if v.Int != 0 {
			return "true"
		}
		return "false"
	case edm.TypeDateTime:
		return "datetime'" + edm.FormatDateTime(v.Int) + "'"
	case edm.TypeGuid:
		return "guid'" + formatGuid(v.Bytes) + "'"
	case edm.TypeBinary:
		return "X'" + hex.EncodeToString(v.Bytes) + "'"
	}
	return "invalid"
}

func formatDouble(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// formatGuid writes 16 bytes as 8-4-4-4-12 lowercase hex; other lengths
// are written as plain hex.
func formatGuid(b []byte) string {
	h := hex.EncodeToString(b)
	if len(b) != 16 {
		return h
	}
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
