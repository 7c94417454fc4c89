package codec

import "time"

// DateTime values and record Timestamps are ticks: 100 ns units since
// 0001-01-01T00:00:00Z.
const (
	ticksPerSecond = 10_000_000
	nsPerTick      = 100
	// unixToTicksSeconds is the number of seconds from 0001-01-01 to the
	// Unix epoch (1970-01-01), both UTC.
	unixToTicksSeconds = 62_135_596_800
)

// TicksFromTime converts t to ticks, truncating to 100 ns. It is exact,
// without overflow, for every t in years 0001 to 9999 (any zone); outside
// that range the result is meaningless.
func TicksFromTime(t time.Time) int64 {
	return (t.Unix()+unixToTicksSeconds)*ticksPerSecond + int64(t.Nanosecond()/nsPerTick)
}

// TimeFromTicks converts ticks to a time.Time in UTC.
func TimeFromTicks(ticks int64) time.Time {
	sec, rem := ticks/ticksPerSecond, ticks%ticksPerSecond
	return time.Unix(sec-unixToTicksSeconds, rem*nsPerTick).UTC()
}

// FormatETag returns the ETag of an entity written at ts, in Azure's form
// W/"datetime'2006-01-02T15%3A04%3A05.0000000Z'". It is formatted by hand
// because every read of an entity computes it.
func FormatETag(ts time.Time) string {
	ts = ts.UTC()
	year, month, day := ts.Date()
	hour, min, sec := ts.Clock()
	var b [51]byte
	n := copy(b[:], `W/"datetime'`)
	put := func(v, width int) {
		for i := width - 1; i >= 0; i-- {
			b[n+i] = byte('0' + v%10)
			v /= 10
		}
		n += width
	}
	lit := func(s string) { n += copy(b[n:], s) }
	put(year, 4)
	lit("-")
	put(int(month), 2)
	lit("-")
	put(day, 2)
	lit("T")
	put(hour, 2)
	lit("%3A")
	put(min, 2)
	lit("%3A")
	put(sec, 2)
	lit(".")
	put(ts.Nanosecond()/100, 7)
	lit(`Z'"`)
	return string(b[:n])
}
