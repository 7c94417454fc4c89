package driver

import (
	"strings"
	"time"

	"github.com/tablestore/tablestore/edm"
)

// ETagLen is the length of every ETag FormatETag returns.
const ETagLen = 46

// FormatETag returns the ETag of an entity whose Timestamp is ts, in
// Azure's form W/"datetime'2006-01-02T15%3A04%3A05.0000000Z'": the ETag a
// driver reports with every entity and commit.
func FormatETag(ts time.Time) string {
	var b [ETagLen]byte
	return string(AppendETagTicks(b[:0], edm.TicksFromTime(ts)))
}

// FormatETagTicks is FormatETag(edm.TimeFromTicks(ticks)).
func FormatETagTicks(ticks int64) string {
	var b [ETagLen]byte
	return string(AppendETagTicks(b[:0], ticks))
}

// AppendETagTicks appends FormatETagTicks(ticks) to dst. It formats by hand,
// without the calendar work of package time, because every read of an
// entity computes an ETag. Ticks outside years 0001 to 9999 are formatted
// as their time.Time is.
func AppendETagTicks(dst []byte, ticks int64) []byte {
	if ticks < 0 || ticks > edm.MaxTicks {
		ts := edm.TimeFromTicks(ticks)
		return append(append(append(dst, `W/"datetime'`...),
			strings.ReplaceAll(ts.Format("2006-01-02T15:04:05.0000000"), ":", "%3A")...), `Z'"`...)
	}
	var text [28]byte // YYYY-MM-DDThh:mm:ss.fffffffZ, the DateTime's JSON text
	t := edm.AppendTicksJSON(text[:0], ticks)
	dst = append(dst, `W/"datetime'`...)
	dst = append(append(dst, t[:13]...), "%3A"...)
	dst = append(append(dst, t[14:16]...), "%3A"...)
	return append(append(dst, t[17:]...), `'"`...)
}
