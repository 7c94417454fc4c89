package tablestore

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
		require.Equal(t, tc.ticks, ticksFromTime(tc.t), "%v", tc.t)
		got := timeFromTicks(tc.ticks)
		require.True(t, tc.t.Equal(got), "%v != %v", tc.t, got)
		require.Equal(t, time.UTC, got.Location())
	}
	// Truncation, not rounding; zones do not matter.
	require.Equal(t, int64(1), ticksFromTime(time.Date(1, 1, 1, 0, 0, 0, 199, time.UTC)))
	at := time.Date(2000, 6, 1, 12, 0, 0, 0, time.UTC)
	require.Equal(t, ticksFromTime(at), ticksFromTime(at.In(time.FixedZone("x", -7*3600))))
	// Negative ticks still convert (before year 1), without panicking.
	require.True(t, timeFromTicks(-1).Equal(time.Date(0, 12, 31, 23, 59, 59, 999999900, time.UTC)))
}
