package driver

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore/edm"
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
		got := string(AppendETagTicks([]byte("prefix"), edm.TicksFromTime(c.ts)))
		if got != "prefix"+c.want {
			t.Errorf("AppendETagTicks(%v) = %s, want prefix%s", c.ts, got, c.want)
		}
		if s := FormatETag(c.ts); s != c.want || len(s) != ETagLen {
			t.Errorf("FormatETag(%v) = %s (%d bytes), want %s (%d)", c.ts, s, len(s), c.want, ETagLen)
		}
	}
}

// TestAppendETagTicksMatchesTime checks the hand calendar against package
// time's formatting at the range's ends, around every leap day of four
// centuries, and at random instants in years 0001 to 9999.
func TestAppendETagTicksMatchesTime(t *testing.T) {
	oracle := func(ticks int64) string {
		ts := edm.TimeFromTicks(ticks)
		return `W/"datetime'` + strings.ReplaceAll(ts.Format("2006-01-02T15:04:05.0000000"), ":", "%3A") + `Z'"`
	}
	check := func(ticks int64) {
		t.Helper()
		got, want := string(AppendETagTicks(nil, ticks)), oracle(ticks)
		if got != want {
			t.Fatalf("AppendETagTicks(%d) = %s, want %s", ticks, got, want)
		}
	}
	check(0)
	check(edm.MaxTicks)
	check(edm.MaxTicks + 1)
	check(-1)
	for year := 1600; year <= 2400; year += 4 {
		for _, d := range []time.Time{
			time.Date(year, 2, 28, 23, 59, 59, 999_999_900, time.UTC),
			time.Date(year, 2, 29, 12, 0, 0, 0, time.UTC),
			time.Date(year, 3, 1, 0, 0, 0, 100, time.UTC),
			time.Date(year, 12, 31, 23, 59, 59, 0, time.UTC),
		} {
			check(edm.TicksFromTime(d))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		check(rng.Int64N(edm.MaxTicks + 1))
	}
}

func BenchmarkAppendETag(b *testing.B) {
	ts := time.Date(2024, 1, 2, 3, 4, 5, 600_000_700, time.UTC)
	var buf [ETagLen]byte
	for b.Loop() {
		AppendETagTicks(buf[:0], edm.TicksFromTime(ts))
	}
}
