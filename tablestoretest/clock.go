package tablestoretest

import (
	"sync/atomic"
	"time"
)

// Clock is a test's clock: the wall clock shifted by an offset that Set
// and Advance change. A Server's or DB's store takes its Timestamps and
// TTL expiry from it; a Server also its Date header, the validity
// windows of shared access signatures (st, se, stored access policies)
// and bearer tokens' exp and nbf. Moving it forward past an entity's
// expiry hides the entity from every read at once; moving it backwards
// is allowed, but Timestamps still strictly increase (the store never
// issues one below the last) and expired entities stay expired. The
// SharedKey check of a request's x-ms-date against clock skew uses the
// wall clock, as clients sign with theirs.
//
// A Clock is safe for concurrent use. The zero value reads the wall
// clock.
type Clock struct {
	offset atomic.Int64 // nanoseconds added to the wall clock
}

// Now returns the clock's current time.
func (c *Clock) Now() time.Time {
	return time.Now().Add(time.Duration(c.offset.Load()))
}

// Set moves the clock so that Now returns t at this moment; it goes on
// ticking from there at the wall clock's rate.
func (c *Clock) Set(t time.Time) {
	c.offset.Store(int64(time.Until(t)))
}

// Advance moves the clock forward by d (backwards for a negative d).
func (c *Clock) Advance(d time.Duration) {
	c.offset.Add(int64(d))
}

// Reset makes the clock read the wall clock again.
func (c *Clock) Reset() { c.offset.Store(0) }
