package tablestore

import "sync"

// timestampClock issues entity Timestamps (as ticks, 100 ns units). Every
// value it issues is greater than every value issued before it by this
// DB, and greater than the floor the caller passes (the stored Timestamp
// of the entities being rewritten), so Timestamps strictly increase per
// entity even if the wall clock stalls, goes backwards, or was ahead in an
// earlier process.
type timestampClock struct {
	mu   sync.Mutex
	last int64
}

// next returns a fresh timestamp greater than floor and than any issued
// before; now is the wall clock in ticks.
func (c *timestampClock) next(now, floor int64) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := now
	if t <= c.last {
		t = c.last + 1
	}
	if t <= floor {
		t = floor + 1
	}
	c.last = t
	return t
}
