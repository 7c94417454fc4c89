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
	var b [ETagLen]byte
	return string(AppendETag(b[:0], ts))
}

// ETagLen is the length of every ETag FormatETag returns.
const ETagLen = 46

// AppendETag appends FormatETag(ts) to dst.
func AppendETag(dst []byte, ts time.Time) []byte {
	ts = ts.UTC()
	year, month, day := ts.Date()
	hour, min, sec := ts.Clock()
	put := func(v, width int) {
		n := len(dst)
		for range width {
			dst = append(dst, 0)
		}
		for i := width - 1; i >= 0; i-- {
			dst[n+i] = byte('0' + v%10)
			v /= 10
		}
	}
	dst = append(dst, `W/"datetime'`...)
	put(year, 4)
	dst = append(dst, '-')
	put(int(month), 2)
	dst = append(dst, '-')
	put(day, 2)
	dst = append(dst, 'T')
	put(hour, 2)
	dst = append(dst, "%3A"...)
	put(min, 2)
	dst = append(dst, "%3A"...)
	put(sec, 2)
	dst = append(dst, '.')
	put(ts.Nanosecond()/100, 7)
	return append(dst, `Z'"`...)
}
