package filter

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"
)

// This file converts literal text to Values and back.

// TicksPerSecond is the number of DateTime ticks (100 ns units) in a second.
const TicksPerSecond = 10_000_000

// unixEpochTicks is 1970-01-01T00:00:00Z in ticks since 0001-01-01.
const unixEpochTicks = 621_355_968_000_000_000

// maxTicks is 9999-12-31T23:59:59.9999999Z, the last representable tick.
const maxTicks = 3_155_378_975_999_999_999

// ParseLiteral converts the raw text of a literal token, as the Scanner
// returns it (quotes, prefix, sign and suffix included), to a Value. The
// Value's Bytes never alias raw. A malformed or out-of-range literal gives
// an *Error with CodeInvalidInput and Pos 0 (relative to raw); a null
// literal is rejected the same way.
func ParseLiteral(kind Token, raw string) (Value, error) {
	v, msg := parseLiteral(kind, raw)
	if msg != "" {
		return Value{}, newError(CodeInvalidInput, raw, 0, msg)
	}
	return v, nil
}

// parseLiteral does the work of ParseLiteral and returns the error message
// instead of an error.
func parseLiteral(kind Token, raw string) (Value, string) {
	switch kind {
	case TokString:
		body, ok := unquote(raw)
		if !ok {
			return Value{}, "malformed string literal"
		}
		return Value{Type: TypeString, Bytes: []byte(body)}, ""
	case TokBoolean:
		switch raw {
		case "true":
			return Value{Type: TypeBoolean, Int: 1}, ""
		case "false":
			return Value{Type: TypeBoolean, Int: 0}, ""
		}
		return Value{}, "malformed Edm.Boolean literal '" + raw + "'"
	case TokInt32:
		n, err := strconv.ParseInt(raw, 10, 32)
		if err != nil {
			return Value{}, "unrecognized 'Edm.Int32' literal '" + raw + "'"
		}
		return Value{Type: TypeInt32, Int: n}, ""
	case TokInt64:
		digits, ok := strings.CutSuffix(raw, "L")
		if !ok {
			digits, ok = strings.CutSuffix(raw, "l")
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if !ok || err != nil {
			return Value{}, "unrecognized 'Edm.Int64' literal '" + raw + "'"
		}
		return Value{Type: TypeInt64, Int: n}, ""
	case TokDouble:
		return parseDouble(raw)
	case TokDateTime:
		body, ok := typedBody(raw, "datetime")
		if !ok {
			return Value{}, "malformed Edm.DateTime literal"
		}
		ticks, msg := ParseDateTime(body)
		if msg != "" {
			return Value{}, "unrecognized 'Edm.DateTime' literal '" + body + "': " + msg
		}
		return Value{Type: TypeDateTime, Int: ticks}, ""
	case TokGuid:
		body, ok := typedBody(raw, "guid")
		if !ok {
			return Value{}, "malformed Edm.Guid literal"
		}
		b, ok := parseGuid(body)
		if !ok {
			return Value{}, "unrecognized 'Edm.Guid' literal '" + body + "': want 8-4-4-4-12 hex digits"
		}
		return Value{Type: TypeGuid, Bytes: b}, ""
	case TokBinary:
		body, ok := typedBody(raw, "X")
		if !ok {
			body, ok = typedBody(raw, "x")
		}
		if !ok {
			body, ok = typedBody(raw, "binary")
		}
		if !ok {
			return Value{}, "malformed Edm.Binary literal"
		}
		if len(body)%2 != 0 {
			return Value{}, "unrecognized 'Edm.Binary' literal '" + body + "': odd number of hex digits"
		}
		b, err := hex.DecodeString(body)
		if err != nil {
			return Value{}, "unrecognized 'Edm.Binary' literal '" + body + "': not hex"
		}
		return Value{Type: TypeBinary, Bytes: b}, ""
	case TokNull:
		return Value{}, "null literals are not allowed"
	}
	return Value{}, "expected literal, found " + kind.String()
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

func parseDouble(raw string) (Value, string) {
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
		return Value{}, "unrecognized 'Edm.Double' literal '" + raw + "'"
	}
	return Value{Type: TypeDouble, Float: f}, ""
}

// parseGuid parses the canonical 8-4-4-4-12 hex form, either case, into 16
// bytes in text order.
func parseGuid(s string) ([]byte, bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return nil, false
	}
	digits := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:36]
	b := make([]byte, 16)
	for i := range b {
		hi, lo := digits[2*i], digits[2*i+1]
		if !isHex(hi) || !isHex(lo) {
			return nil, false
		}
		b[i] = unhex(hi)<<4 | unhex(lo)
	}
	return b, true
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}

// ParseDateTime parses the content of a datetime'…' literal and returns
// ticks (100 ns units since 0001-01-01T00:00:00Z). The accepted form is
//
//	YYYY-MM-DDThh:mm[:ss[.f{1,7}]][Z|±hh:mm]
//
// A value without a zone is UTC; an offset is subtracted to give UTC. The
// result must lie in 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.9999999Z.
// On failure it returns a lowercase reason.
func ParseDateTime(s string) (ticks int64, msg string) {
	num := func(i, n int) int {
		if i+n > len(s) {
			return -1
		}
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if !isDigit(c) {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	sep := func(i int, c byte) bool { return i < len(s) && s[i] == c }
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	if year < 0 || month < 0 || day < 0 || !sep(4, '-') || !sep(7, '-') || !sep(10, 'T') {
		return 0, "want YYYY-MM-DDThh:mm:ss"
	}
	hour, minute := num(11, 2), num(14, 2)
	if hour < 0 || minute < 0 || !sep(13, ':') {
		return 0, "want YYYY-MM-DDThh:mm:ss"
	}
	i := 16
	second, frac := 0, int64(0)
	if sep(i, ':') {
		second = num(i+1, 2)
		if second < 0 {
			return 0, "malformed seconds"
		}
		i += 3
		if sep(i, '.') {
			i++
			n := 0
			for i < len(s) && isDigit(s[i]) {
				if n == 7 {
					return 0, "more than 7 fraction digits"
				}
				frac = frac*10 + int64(s[i]-'0')
				n++
				i++
			}
			if n == 0 {
				return 0, "missing fraction digits"
			}
			for ; n < 7; n++ {
				frac *= 10
			}
		}
	}
	offset := 0 // minutes east of UTC
	switch {
	case i == len(s):
	case s[i] == 'Z' && i+1 == len(s):
	case (s[i] == '+' || s[i] == '-') && i+6 == len(s) && s[i+3] == ':':
		oh, om := num(i+1, 2), num(i+4, 2)
		if oh < 0 || om < 0 || oh > 14 || om > 59 {
			return 0, "malformed zone offset"
		}
		offset = oh*60 + om
		if s[i] == '-' {
			offset = -offset
		}
	default:
		return 0, "unexpected text after the time"
	}
	if year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || second > 59 {
		return 0, "date or time out of range"
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC)
	secs := t.Unix() - int64(offset)*60
	ticks = secs*TicksPerSecond + unixEpochTicks + frac
	if secs < -unixEpochTicks/TicksPerSecond || ticks < 0 || ticks > maxTicks {
		return 0, "date out of range"
	}
	return ticks, ""
}

func daysIn(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// FormatDateTime formats ticks as Azure writes DateTime values:
// YYYY-MM-DDThh:mm:ss[.fffffff]Z with trailing fraction zeros trimmed.
// Ticks outside the DateTime range are clamped to it.
func FormatDateTime(ticks int64) string {
	ticks = min(max(ticks, 0), maxTicks)
	secs := ticks / TicksPerSecond
	frac := ticks % TicksPerSecond
	t := time.Unix(secs-unixEpochTicks/TicksPerSecond, 0).UTC()
	s := t.Format("2006-01-02T15:04:05")
	if frac != 0 {
		f := strconv.FormatInt(frac+TicksPerSecond, 10)[1:] // 7 digits
		s += "." + strings.TrimRight(f, "0")
	}
	return s + "Z"
}

// FormatLiteral returns the canonical filter literal for v, which parses
// back to an equal Value: 'text' (quotes doubled), 5, 5L, 2.5, true, datetime'…Z',
// guid'…' (lowercase), X'0a0b' (lowercase hex). Doubles that have no
// literal form (NaN, ±Inf) are written as NaN, INF and -INF, which do not
// parse.
func FormatLiteral(v Value) string {
	switch v.Type {
	case TypeString:
		return "'" + strings.ReplaceAll(string(v.Bytes), "'", "''") + "'"
	case TypeInt32:
		return strconv.FormatInt(v.Int, 10)
	case TypeInt64:
		return strconv.FormatInt(v.Int, 10) + "L"
	case TypeDouble:
		return formatDouble(v.Float)
	case TypeBoolean:
		if v.Int != 0 {
			return "true"
		}
		return "false"
	case TypeDateTime:
		return "datetime'" + FormatDateTime(v.Int) + "'"
	case TypeGuid:
		return "guid'" + formatGuid(v.Bytes) + "'"
	case TypeBinary:
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
