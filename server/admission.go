package server

import (
	"context"
	"runtime/debug"
	"sync"
	"time"
)

// Admission. A request passes these stages in order, and holds nothing
// before it needs it:
//
//  1. Headers: size, route, authentication and every permission the URL
//     and headers decide (a write's permission, a SAS's table and key
//     range). A refusal here never waits for, or reads, the body.
//  2. Upload, for a request with a body: one of MaxConcurrentUploads
//     upload slots and the body's bytes from the memory budget, then the
//     body itself at MinBodyRate or faster. The upload slot is released
//     as soon as the body is in.
//  3. Work: one of MaxConcurrentRequests work slots, and the memory the
//     operation needs beyond its body (bodyWorkFactor times the body; a
//     query's page, counted as it is built). The response is kept in
//     memory and sent once the work slot is released, at MinBodyRate
//     after BodyGracePeriod, so a client slow to read holds memory (until
//     its connection is cut) but no slot.
//
// A stage that finds no slot or no memory waits up to QueueWait (the work
// stage of a request whose body has arrived, bodyWorkWait times as long),
// then the request is answered 503 ServerBusy with Retry-After. Request bodies
// together hold at most bodyShare of the budget, so clients sending
// bodies, however slowly, always leave memory for reads.

// bodyWorkFactor is the memory an operation uses while it runs, beyond
// its body, per byte of body: the entities decoded from it, their
// encoding for the store (with the copies its growth leaves) and the
// store's write batch. A 4 MiB $batch was measured to allocate 40 MB,
// about 20 MiB of it live at once.
const bodyWorkFactor = 4

// bodyWorkWait multiplies QueueWait for the work stage of a request
// whose body has arrived.
const bodyWorkWait = 10

// readReserve is what an operation without a body reserves before it
// runs; a query or a get reserves more as its response grows
// (request.needMemory).
const readReserve = 64 << 10

// bodyShare is the fraction of the budget request bodies may hold, in
// quarters.
const bodyShare = 3

// Memory release after a burst: once the budget in use falls to
// trimIdleFraction of the budget or less, having reached at least
// trimFraction of it, and stays there for trimDelay, freed memory is
// returned to the operating system.
const (
	trimFraction     = 8 // 1/8 of the budget
	trimIdleFraction = 32
	trimDelay        = time.Second
)

// budget is a memory budget in bytes. Reservations are granted whole or
// not at all, so two requests never each hold part of what both need,
// and whenever they fit: a large reservation waiting does not hold back
// smaller ones (it is answered ServerBusy if its wait ends first). It is
// safe for concurrent use.
type budget struct {
	mu       sync.Mutex
	size     int64
	bodySize int64 // the most body reservations may hold together
	used     int64
	bodyUsed int64
	waiters  []*waiter
	// high is the most used since memory was last returned to the
	// operating system; keep disables returning it.
	high      int64
	keep      bool
	trimTimer *time.Timer
	trims     int // how many times memory was returned, for tests
}

// waiter is a reservation waiting for memory; ready is closed once it is
// granted.
type waiter struct {
	n     int64
	body  bool
	ready chan struct{}
}

// grantShare is the part of MemoryBudget reservations may take, in
// fifths: the rest is room for the garbage the requests leave before the
// collector takes it, so that the process, not only what it holds live,
// stays within the budget.
const grantShare = 4

// newBudget returns the budget for Options.MemoryBudget total.
func newBudget(total int64, keep bool) *budget {
	size := total / 5 * grantShare
	return &budget{size: size, bodySize: size / 4 * bodyShare, keep: keep}
}

// clamp bounds a reservation by what the budget could ever grant, so a
// request larger than the budget runs alone instead of never.
func (b *budget) clamp(n int64, body bool) int64 {
	if body && n > b.bodySize {
		return b.bodySize
	}
	if n > b.size {
		return b.size
	}
	return n
}

// fits reports whether n more bytes fit now. REQUIRES: b.mu held.
func (b *budget) fits(n int64, body bool) bool {
	return b.used+n <= b.size && (!body || b.bodyUsed+n <= b.bodySize)
}

// take records a grant. REQUIRES: b.mu held.
func (b *budget) take(n int64, body bool) {
	b.used += n
	if body {
		b.bodyUsed += n
	}
	if b.used > b.high {
		b.high = b.used
	}
}

// acquire reserves n bytes (a body's when body is set), waiting up to
// wait for them, and returns the amount reserved (n, clamped), which the
// caller must release. It returns false, holding nothing, when the wait
// ends first or ctx is done.
func (b *budget) acquire(ctx context.Context, n int64, body bool, wait time.Duration) (int64, bool) {
	if n <= 0 {
		return 0, true
	}
	n = b.clamp(n, body)
	b.mu.Lock()
	if b.fits(n, body) {
		b.take(n, body)
		b.mu.Unlock()
		return n, true
	}
	w := &waiter{n: n, body: body, ready: make(chan struct{})}
	b.waiters = append(b.waiters, w)
	b.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-w.ready:
		return n, true
	case <-t.C:
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	select {
	case <-w.ready: // granted while the wait ended
		return n, true
	default:
	}
	for i, x := range b.waiters {
		if x == w {
			b.waiters = append(b.waiters[:i], b.waiters[i+1:]...)
			break
		}
	}
	b.grant() // a waiter behind this one may fit now
	return 0, false
}

// tryAcquire reserves n bytes only if they are free now.
func (b *budget) tryAcquire(n int64) bool {
	if n <= 0 {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.fits(n, false) {
		return false
	}
	b.take(n, false)
	return true
}

// release returns n bytes reserved by acquire or tryAcquire.
func (b *budget) release(n int64, body bool) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if body {
		b.bodyUsed -= n
	}
	b.grant()
	b.scheduleTrim()
}

// grant hands memory to the waiters it fits, oldest first; a waiter that
// does not fit does not hold back smaller ones behind it. REQUIRES: b.mu
// held.
func (b *budget) grant() {
	kept := b.waiters[:0]
	for _, w := range b.waiters {
		if b.fits(w.n, w.body) {
			b.take(w.n, w.body)
			close(w.ready)
			continue
		}
		kept = append(kept, w)
	}
	clear(b.waiters[len(kept):])
	b.waiters = kept
}

// scheduleTrim arranges for freed memory to go back to the operating
// system when a burst has ended. REQUIRES: b.mu held.
func (b *budget) scheduleTrim() {
	if b.keep || b.trimTimer != nil || b.high < b.size/trimFraction || b.used > b.size/trimIdleFraction {
		return
	}
	b.trimTimer = time.AfterFunc(trimDelay, b.trim)
}

// trim returns freed memory to the operating system if the budget is
// still nearly idle; otherwise the next release tries again.
func (b *budget) trim() {
	b.mu.Lock()
	b.trimTimer = nil
	idle := b.used <= b.size/trimIdleFraction
	if idle {
		b.high = b.used
		b.trims++
	}
	b.mu.Unlock()
	if idle {
		debug.FreeOSMemory()
	}
}

// inUse returns the bytes reserved now and by bodies.
func (b *budget) inUse() (used, bodies int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.bodyUsed
}

// slots is a counting semaphore whose waits are bounded.
type slots chan struct{}

// acquire takes a slot, waiting up to wait; false when none came free in
// time or ctx is done.
func (s slots) acquire(ctx context.Context, wait time.Duration) bool {
	select {
	case s <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case s <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (s slots) release() { <-s }
