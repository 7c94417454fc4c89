package edm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTicks(t *testing.T) {
	tests := []struct {
		t     time.Time
		ticks int64
	}{
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), 0},
		{time.Date(1, 1, 1, 0, 0, 0, 100, time.UTC), 1},
		{time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), 504911232000000000},
		{time.Unix(0, 0), 621355968000000000},
		{time.Date(9999, 12, 31, 23, 59, 59, 999999900, time.UTC), 3155378975999999999},
	}
	for _, tc := range tests {
		require.Equal(t, tc.ticks, TicksFromTime(tc.t), "%v", tc.t)
		got := TimeFromTicks(tc.ticks)
		require.True(t, tc.t.Equal(got), "%v != %v", tc.t, got)
		require.Equal(t, time.UTC, got.Location())
	}
	// Truncation, not rounding; zones do not matter.
	require.Equal(t, int64(1), TicksFromTime(time.Date(1, 1, 1, 0, 0, 0, 199, time.UTC)))
	at := time.Date(2000, 6, 1, 12, 0, 0, 0, time.UTC)
	require.Equal(t, TicksFromTime(at), TicksFromTime(at.In(time.FixedZone("x", -7*3600))))
	// Negative ticks still convert (before year 1), without panicking.
	require.True(t, TimeFromTicks(-1).Equal(time.Date(0, 12, 31, 23, 59, 59, 999999900, time.UTC)))
}

// TestInDateTimeRangeMatchesYear checks the range test against its
// definition by years, at both bounds, in zones on either side of UTC.
func TestInDateTimeRangeMatchesYear(t *testing.T) {
	old := func(x time.Time) bool { y := x.UTC().Year(); return y >= 1601 && y <= 9999 }
	zones := []*time.Location{time.UTC, time.FixedZone("e", 14*3600), time.FixedZone("w", -12*3600)}
	for _, base := range []time.Time{time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Unix(0, 0)} {
		for _, d := range []time.Duration{-time.Hour, -time.Second, -1, 0, 1, time.Second, time.Hour} {
			for _, z := range zones {
				x := base.Add(d).In(z)
				if old(x) != InAzureRange(x) {
					t.Fatalf("%v: old %v new %v", x, old(x), InAzureRange(x))
				}
			}
		}
	}
}
