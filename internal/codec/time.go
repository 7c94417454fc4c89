package codec

import (
	"strings"
	"time"

	"github.com/tablestore/tablestore/edm"
)

const (
	ticksPerSecond     = edm.TicksPerSecond
	unixToTicksSeconds = edm.UnixEpochTicks / edm.TicksPerSecond
)

// FormatETag returns the ETag of an entity written at ts, in Azure's form
// W/"datetime'2006-01-02T15%3A04%3A05.0000000Z'". It is formatted by hand
// because every read of an entity computes it.
func FormatETag(ts time.Time) string {
	var b [ETagLen]byte
	return string(AppendETag(b[:0], ts))
}

// ETagLen is the length of every ETag FormatETag returns.
const ETagLen = 46

// FormatETagTicks is FormatETag(edm.TimeFromTicks(ticks)).
func FormatETagTicks(ticks int64) string {
	var b [ETagLen]byte
	return string(AppendETagTicks(b[:0], ticks))
}

// AppendETag appends FormatETag(ts) to dst.
func AppendETag(dst []byte, ts time.Time) []byte {
	return AppendETagTicks(dst, edm.TicksFromTime(ts))
}

// maxTicks is the last tick of 9999-12-31.
const maxTicks = (unixToTicksSeconds+253402300799)*ticksPerSecond + ticksPerSecond - 1

// AppendETagTicks appends the ETag of an entity written at ticks to dst:
// AppendETag(dst, edm.TimeFromTicks(ticks)) without the calendar work of
// package time. Ticks outside years 0001 to 9999 are formatted as their
// time.Time is.
func AppendETagTicks(dst []byte, ticks int64) []byte {
	if ticks < 0 || ticks > maxTicks {
		ts := edm.TimeFromTicks(ticks)
		return append(append(append(dst, `W/"datetime'`...),
			strings.ReplaceAll(ts.Format("2006-01-02T15:04:05.0000000"), ":", "%3A")...), `Z'"`...)
	}
	sec, frac := ticks/ticksPerSecond, int(ticks%ticksPerSecond)
	days, clock := int(sec/86400), int(sec%86400)
	year, month, day := civilDate(days)
	n := len(dst)
	dst = append(dst, `W/"datetime'0000-00-00T00%3A00%3A00.0000000Z'"`...)
	b := dst[n+12 : n+ETagLen]
	put2(b[0:], year/100)
	put2(b[2:], year%100)
	put2(b[5:], month)
	put2(b[8:], day)
	put2(b[11:], clock/3600)
	put2(b[16:], clock/60%60)
	put2(b[21:], clock%60)
	b[24] = byte('0' + frac/1_000_000)
	frac %= 1_000_000
	put2(b[25:], frac/10_000)
	put2(b[27:], frac/100%100)
	put2(b[29:], frac%100)
	return dst
}

// digitPairs holds "00" to "99".
const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" + "60616263646566676869" +
	"70717273747576777879" + "80818283848586878889" + "90919293949596979899"

// put2 writes v, 0 to 99, as two digits at b.
func put2(b []byte, v int) {
	b[0], b[1] = digitPairs[2*v], digitPairs[2*v+1]
}

// civilDate returns the proleptic Gregorian date days after 0001-01-01.
// It counts from 0000-03-01, so that a leap day ends its year, in eras
// of 400 years (146,097 days).
func civilDate(days int) (year, month, day int) {
	z := days + 306 // days since 0000-03-01
	era := z / 146097
	doe := z - era*146097                                  // day of the era
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of the era
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of the year from March 1
	mp := (5*doy + 2) / 153                                // month from March, 0 to 11
	day = doy - (153*mp+2)/5 + 1
	month = mp + 3
	if month > 12 {
		month -= 12
	}
	year = era*400 + yoe
	if month <= 2 {
		year++
	}
	return year, month, day
}
