package tablestore

import (
	"time"

	"github.com/tablestore/tablestore/internal/codec"
)

// Edm.DateTime: Go's time.Time in the store's ticks, Azure's range, and
// the ISO 8601 text of Azure's JSON.

// minDateTimeYear and maxDateTimeYear bound the DateTime values Azure
// accepts: 1601-01-01T00:00:00Z to 9999-12-31T23:59:59.9999999Z.
const (
	minDateTimeYear = 1601
	maxDateTimeYear = 9999
	nsPerTick       = 100 // DateTime precision
)

// minDateTimeUnix and endDateTimeUnix are Azure's DateTime range in Unix
// seconds, half-open: [1601-01-01, 10000-01-01) UTC.
var (
	minDateTimeUnix = time.Date(minDateTimeYear, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	endDateTimeUnix = time.Date(maxDateTimeYear+1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

// inDateTimeRange reports whether t lies in Azure's DateTime range; it
// equals testing t.UTC().Year() against the bounds, without computing a
// date.
func inDateTimeRange(t time.Time) bool {
	s := t.Unix()
	return s >= minDateTimeUnix && s < endDateTimeUnix
}

// ticksFromTime converts t to DateTime ticks (see codec.TicksFromTime).
func ticksFromTime(t time.Time) int64 { return codec.TicksFromTime(t) }

// timeFromTicks converts DateTime ticks to a time.Time in UTC.
func timeFromTicks(ticks int64) time.Time { return codec.TimeFromTicks(ticks) }

// parseJSONTime parses an ISO 8601 date and time:
// YYYY-MM-DDThh:mm[:ss[.fraction]][Z|±hh:mm]. The fraction may have up to
// 9 digits and is truncated to 100 ns; no zone means UTC. The result is in
// UTC. Errors: InvalidInput for bad syntax or fields, OutOfRangeInput for a
// UTC year outside 1 to 9999.
func parseJSONTime(s string) (time.Time, error) {
	p := timeParser{s: s, ok: true}
	year := p.digits(4)
	month := p.sep('-').digits(2)
	day := p.sep('-').digits(2)
	if p.ok && p.i < len(s) && (s[p.i] == 'T' || s[p.i] == 't') {
		p.i++
	} else {
		p.ok = false
	}
	hour := p.digits(2)
	minute := p.sep(':').digits(2)
	sec, nsec := 0, 0
	if p.ok && p.peek(':') {
		sec = p.sep(':').digits(2)
		if p.ok && p.peek('.') {
			p.i++
			n := 0
			for p.i < len(s) && s[p.i] >= '0' && s[p.i] <= '9' && n < 9 {
				nsec = nsec*10 + int(s[p.i]-'0')
				p.i++
				n++
			}
			if n == 0 {
				p.ok = false
			}
			for ; n < 9; n++ {
				nsec *= 10
			}
			nsec -= nsec % nsPerTick
		}
	}
	offset := 0
	switch {
	case !p.ok:
	case p.peek('Z') || p.peek('z'):
		p.i++
	case p.peek('+') || p.peek('-'):
		sign := 1
		if s[p.i] == '-' {
			sign = -1
		}
		p.i++
		oh := p.digits(2)
		om := p.sep(':').digits(2)
		if oh > 23 || om > 59 {
			p.ok = false
		}
		offset = sign * (oh*3600 + om*60)
	}
	if !p.ok || p.i != len(s) || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || sec > 59 ||
		day > daysIn(time.Month(month), year) {
		return time.Time{}, newError(CodeInvalidInput, "malformed datetime %s", quoteShort(s))
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC).Add(-time.Duration(offset) * time.Second)
	if y := t.Year(); y < 1 || y > 9999 {
		return time.Time{}, newError(CodeOutOfRangeInput, "datetime %s is outside years 1 to 9999", quoteShort(s))
	}
	return t, nil
}

func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// timeParser reads fixed-width fields; ok turns false at the first
// mismatch and stays false.
type timeParser struct {
	s  string
	i  int
	ok bool
}

func (p *timeParser) digits(n int) int {
	v := 0
	for k := 0; k < n; k++ {
		if !p.ok || p.i >= len(p.s) || p.s[p.i] < '0' || p.s[p.i] > '9' {
			p.ok = false
			return 0
		}
		v = v*10 + int(p.s[p.i]-'0')
		p.i++
	}
	return v
}

func (p *timeParser) sep(c byte) *timeParser {
	if p.ok && p.i < len(p.s) && p.s[p.i] == c {
		p.i++
	} else {
		p.ok = false
	}
	return p
}

func (p *timeParser) peek(c byte) bool { return p.i < len(p.s) && p.s[p.i] == c }
