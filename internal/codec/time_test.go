package codec

import (
	"testing"
	"time"
)

func TestAppendETag(t *testing.T) {
	for _, c := range []struct {
		ts   time.Time
		want string
	}{
		{time.Date(2024, 1, 2, 3, 4, 5, 600_000_700, time.UTC), `W/"datetime'2024-01-02T03%3A04%3A05.6000007Z'"`},
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), `W/"datetime'0001-01-01T00%3A00%3A00.0000000Z'"`},
		{time.Date(9999, 12, 31, 23, 59, 59, 999_999_900, time.FixedZone("x", 3600)), `W/"datetime'9999-12-31T22%3A59%3A59.9999999Z'"`},
	} {
		got := string(AppendETag([]byte("prefix"), c.ts))
		if got != "prefix"+c.want {
			t.Errorf("AppendETag(%v) = %s, want prefix%s", c.ts, got, c.want)
		}
		if s := FormatETag(c.ts); s != c.want || len(s) != ETagLen {
			t.Errorf("FormatETag(%v) = %s (%d bytes), want %s (%d)", c.ts, s, len(s), c.want, ETagLen)
		}
	}
}
