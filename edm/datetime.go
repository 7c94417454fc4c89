package edm

import (
	"strconv"
	"time"
)

// Edm.DateTime values are ticks: 100 ns units since 0001-01-01T00:00:00Z,
// UTC. Azure stores them from 1601-01-01 on; ticks cover years 1 to 9999.
const (
	// TicksPerSecond is the number of ticks in a second.
	TicksPerSecond = 10_000_000
	// NanosecondsPerTick is a tick's length in nanoseconds.
	NanosecondsPerTick = 100
	// MaxTicks is 9999-12-31T23:59:59.9999999Z, the last tick.
	MaxTicks = 3_155_378_975_999_999_999
	// UnixEpochTicks is 1970-01-01T00:00:00Z in ticks.
	UnixEpochTicks = 621_355_968_000_000_000
	// MinAzureTicks is 1601-01-01T00:00:00Z, the earliest DateTime Azure
	// stores.
	MinAzureTicks = 504_911_232_000_000_000
)

// TicksFromTime converts t to ticks, truncating to 100 ns. It is exact,
// without overflow, for every t in years 1 to 9999 (any zone); outside
// that range the result is meaningless.
func TicksFromTime(t time.Time) int64 {
	return (t.Unix()+UnixEpochTicks/TicksPerSecond)*TicksPerSecond + int64(t.Nanosecond()/NanosecondsPerTick)
}

// TimeFromTicks converts ticks to a time.Time in UTC.
func TimeFromTicks(ticks int64) time.Time {
	sec, rem := ticks/TicksPerSecond, ticks%TicksPerSecond
	return time.Unix(sec-UnixEpochTicks/TicksPerSecond, rem*NanosecondsPerTick).UTC()
}

// InAzureRange reports whether t lies in the DateTime range Azure stores,
// [1601-01-01, 10000-01-01) UTC, without computing a date.
func InAzureRange(t time.Time) bool {
	s := t.Unix()
	return s >= MinAzureTicks/TicksPerSecond-UnixEpochTicks/TicksPerSecond &&
		s <= MaxTicks/TicksPerSecond-UnixEpochTicks/TicksPerSecond
}

// DateTimeSyntax selects the dialect of DateTime text ParseDateTime reads.
// Both read YYYY-MM-DDThh:mm[:ss[.fraction]][Z|±hh:mm]; text without a
// zone is UTC, and an offset is subtracted to give UTC.
type DateTimeSyntax uint8

const (
	// JSONSyntax is the text of Azure's JSON wire format and of every
	// DateTime a user writes as text: 't' and 'z' may be lowercase, the
	// fraction has up to 9 digits and is truncated to 100 ns, an offset
	// is at most ±23:59, and a UTC year outside 1 to 9999 (after the
	// offset) is OutOfRangeInput.
	JSONSyntax DateTimeSyntax = iota
	// LiteralSyntax is the body of a $filter datetime'…' literal, as
	// Azure reads it: uppercase 'T' and 'Z', at most 7 fraction digits,
	// an offset of at most ±14:00, a year from 1, and every failure
	// InvalidInput with a specific reason.
	LiteralSyntax
)

// DateTimeError reports DateTime text that does not parse.
type DateTimeError struct {
	Code   Code   // CodeInvalidInput, or CodeOutOfRangeInput (JSONSyntax only)
	Text   string // the text
	Reason string // lowercase, for LiteralSyntax; "" for JSONSyntax
}

func (e *DateTimeError) Error() string {
	if e.Code == CodeOutOfRangeInput {
		return "edm: datetime " + strconv.Quote(e.Text) + " is outside years 1 to 9999"
	}
	if e.Reason == "" {
		return "edm: malformed datetime " + strconv.Quote(e.Text)
	}
	return "edm: malformed datetime " + strconv.Quote(e.Text) + ": " + e.Reason
}

// ParseDateTime parses DateTime text in the given syntax and returns its
// ticks. The error is always a *DateTimeError.
func ParseDateTime(s string, syntax DateTimeSyntax) (int64, error) {
	ticks, code, reason := parseDateTime(s, syntax)
	if code != "" {
		if syntax == JSONSyntax {
			reason = ""
		}
		return 0, &DateTimeError{Code: code, Text: s, Reason: reason}
	}
	return ticks, nil
}

// ParseTime is ParseDateTime in JSONSyntax, as a time.Time in UTC.
func ParseTime(s string) (time.Time, error) {
	ticks, err := ParseDateTime(s, JSONSyntax)
	if err != nil {
		return time.Time{}, err
	}
	return TimeFromTicks(ticks), nil
}

func parseDateTime(s string, syntax DateTimeSyntax) (ticks int64, code Code, reason string) {
	json := syntax == JSONSyntax
	num := func(i, n int) int {
		if i+n > len(s) {
			return -1
		}
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	at := func(i int, c byte) bool { return i < len(s) && s[i] == c }
	letter := func(i int, upper byte) bool { return at(i, upper) || json && at(i, upper+'a'-'A') }
	const syntaxReason = "want YYYY-MM-DDThh:mm:ss"
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	if year < 0 || month < 0 || day < 0 || !at(4, '-') || !at(7, '-') || !letter(10, 'T') {
		return 0, CodeInvalidInput, syntaxReason
	}
	hour, minute := num(11, 2), num(14, 2)
	if hour < 0 || minute < 0 || !at(13, ':') {
		return 0, CodeInvalidInput, syntaxReason
	}
	i := 16
	second, frac := 0, int64(0)
	if at(i, ':') {
		second = num(i+1, 2)
		if second < 0 {
			return 0, CodeInvalidInput, "malformed seconds"
		}
		i += 3
		if at(i, '.') {
			i++
			digits := 7
			if json {
				digits = 9
			}
			n := 0
			for i < len(s) && s[i] >= '0' && s[i] <= '9' {
				if n == digits {
					return 0, CodeInvalidInput, "more than " + strconv.Itoa(digits) + " fraction digits"
				}
				if n < 7 {
					frac = frac*10 + int64(s[i]-'0')
				}
				n++
				i++
			}
			if n == 0 {
				return 0, CodeInvalidInput, "missing fraction digits"
			}
			for ; n < 7; n++ {
				frac *= 10
			}
		}
	}
	maxOffsetHours := 14
	if json {
		maxOffsetHours = 23
	}
	offset := 0 // minutes east of UTC
	switch {
	case i == len(s):
	case letter(i, 'Z') && i+1 == len(s):
	case (s[i] == '+' || s[i] == '-') && i+6 == len(s) && s[i+3] == ':':
		oh, om := num(i+1, 2), num(i+4, 2)
		if oh < 0 || om < 0 || oh > maxOffsetHours || om > 59 {
			return 0, CodeInvalidInput, "malformed zone offset"
		}
		offset = oh*60 + om
		if s[i] == '-' {
			offset = -offset
		}
	default:
		return 0, CodeInvalidInput, "unexpected text after the time"
	}
	if year < 1 && !json || month < 1 || month > 12 || day < 1 || day > daysIn(year, month) ||
		hour > 23 || minute > 59 || second > 59 {
		return 0, CodeInvalidInput, "date or time out of range"
	}
	secs := daysFromCivil(year, month, day)*86400 + int64(hour*3600+minute*60+second) - int64(offset)*60
	ticks = secs*TicksPerSecond + frac
	if secs < 0 || ticks > MaxTicks {
		if json {
			return 0, CodeOutOfRangeInput, "date out of range"
		}
		return 0, CodeInvalidInput, "date out of range"
	}
	return ticks, "", ""
}

// daysFromCivil returns the days from 0001-01-01 to the given proleptic
// Gregorian date (negative before it).
func daysFromCivil(year, month, day int) int64 {
	y := int64(year)
	if month <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	m := int64(month)
	if m > 2 {
		m -= 3
	} else {
		m += 9
	}
	doy := (153*m+2)/5 + int64(day) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 306 // 0000-03-01 is day -306
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

// FormatDateTime formats ticks as Azure writes DateTime values in
// filters: YYYY-MM-DDThh:mm:ss[.fffffff]Z with trailing fraction zeros
// trimmed. Ticks outside years 1 to 9999 are clamped to them.
func FormatDateTime(ticks int64) string {
	return string(appendDateTime(nil, min(max(ticks, 0), MaxTicks), true))
}

// AppendDateTimeJSON appends t, in UTC, as Azure's JSON writes DateTime
// values: YYYY-MM-DDThh:mm:ss.fffffffZ with all seven fraction digits.
// The caller guarantees t lies in years 1 to 9999.
func AppendDateTimeJSON(dst []byte, t time.Time) []byte {
	return appendDateTime(dst, TicksFromTime(t), false)
}

// AppendTicksJSON appends ticks as AppendDateTimeJSON appends the time
// they name. The caller guarantees 0 <= ticks <= MaxTicks.
func AppendTicksJSON(dst []byte, ticks int64) []byte {
	return appendDateTime(dst, ticks, false)
}

// FormatDateTimeJSON is AppendDateTimeJSON as a string.
func FormatDateTimeJSON(t time.Time) string {
	return string(AppendDateTimeJSON(nil, t))
}

func appendDateTime(dst []byte, ticks int64, trim bool) []byte {
	secs, frac := ticks/TicksPerSecond, ticks%TicksPerSecond
	days, clock := secs/86400, secs%86400
	y, m, d := civilDate(days)
	var b [28]byte // YYYY-MM-DDThh:mm:ss.fffffffZ
	put2(b[0:], y/100)
	put2(b[2:], y%100)
	b[4], b[7], b[10], b[13], b[16], b[19] = '-', '-', 'T', ':', ':', '.'
	put2(b[5:], m)
	put2(b[8:], d)
	put2(b[11:], clock/3600)
	put2(b[14:], clock/60%60)
	put2(b[17:], clock%60)
	b[20] = byte('0' + frac/1_000_000)
	put2(b[21:], frac/10_000%100)
	put2(b[23:], frac/100%100)
	put2(b[25:], frac%100)
	n := 27 // the fraction's end
	if trim {
		for n > 20 && b[n-1] == '0' {
			n--
		}
		if n == 20 {
			n = 19 // no fraction: no '.'
		}
	}
	b[n] = 'Z'
	return append(dst, b[:n+1]...)
}

// put2 writes v (0 to 99) as two decimal digits at b[0:2].
func put2(b []byte, v int64) {
	const pairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
		"4041424344454647484950515253545556575859606162636465666768697071727374757677787980818283848586878889" +
		"90919293949596979899"
	b[0], b[1] = pairs[2*v], pairs[2*v+1]
}

// civilDate returns the proleptic Gregorian year, month and day of the
// day days after 0001-01-01 (days >= 0), with the era arithmetic of
// 400-year cycles counted from March 1, year 0.
func civilDate(days int64) (year, month, day int64) {
	z := days + 306 // days since 0000-03-01
	era := z / 146097
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365], from March 1
	mp := (5*doy + 2) / 153                                // [0, 11], March is 0
	day = doy - (153*mp+2)/5 + 1
	month = mp + 3
	if month > 12 {
		month -= 12
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}
