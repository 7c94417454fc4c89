package edm

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// referenceDateTime formats ticks with package time's layouts, the
// formatter appendDateTime replaced.
func referenceDateTime(ticks int64, trim bool) string {
	t := TimeFromTicks(ticks)
	if !trim {
		return t.Format("2006-01-02T15:04:05.0000000Z")
	}
	s := t.Format("2006-01-02T15:04:05.0000000")
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".") + "Z"
}

func checkDateTime(t *testing.T, ticks int64) {
	t.Helper()
	for _, trim := range []bool{false, true} {
		if got, want := string(appendDateTime(nil, ticks, trim)), referenceDateTime(ticks, trim); got != want {
			t.Fatalf("ticks %d trim %v: %s, want %s", ticks, trim, got, want)
		}
	}
}

func TestAppendDateTimeMatchesTimeFormat(t *testing.T) {
	edges := []int64{0, 1, TicksPerSecond - 1, TicksPerSecond, MaxTicks, MaxTicks - 1, UnixEpochTicks, UnixEpochTicks - 1}
	for _, d := range []time.Time{ // around leap days and century years
		time.Date(1600, 2, 29, 23, 59, 59, 999_999_900, time.UTC), time.Date(1700, 2, 28, 0, 0, 0, 0, time.UTC),
		time.Date(1700, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2000, 2, 29, 12, 0, 0, 100, time.UTC),
		time.Date(2000, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2024, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(4, 2, 29, 1, 2, 3, 400, time.UTC), time.Date(400, 12, 31, 0, 0, 0, 0, time.UTC),
	} {
		edges = append(edges, TicksFromTime(d))
	}
	for _, ticks := range edges {
		checkDateTime(t, ticks)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200_000 {
		checkDateTime(t, r.Int64N(MaxTicks+1))
	}
	// Every day of the first four centuries (one whole cycle of the
	// calendar) and of the last, at a random time of day.
	const cycle = 146097
	last := int64(MaxTicks/(86400*TicksPerSecond) + 1 - cycle)
	for day := int64(0); day < cycle; day++ {
		for _, d := range []int64{day, last + day} {
			checkDateTime(t, (d*86400+r.Int64N(86400))*TicksPerSecond+r.Int64N(TicksPerSecond))
		}
	}
}

func FuzzAppendDateTime(f *testing.F) {
	f.Add(int64(0))
	f.Add(int64(MaxTicks))
	f.Fuzz(func(t *testing.T, ticks int64) {
		if ticks < 0 {
			ticks = -(ticks + 1)
		}
		checkDateTime(t, ticks%(MaxTicks+1))
	})
}
