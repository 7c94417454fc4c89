package engine

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/internal/keys"
)

// Bounds of how far ahead of the Timestamps it issues the clock keeps its
// durable ceiling (see timestampClock), in ticks.
const (
	// clockMinLead is the least lead: 50 ms. A move of the ceiling is
	// an fsync of its own (see clockfile.go), beside the commits' own
	// syncs: at most one every 25 ms while writes go on.
	clockMinLead = 500_000
	// clockMaxLead is the most: 1 s, reached only when a synced write
	// of the ceiling takes 250 ms or more.
	clockMaxLead = 10_000_000
	// clockLatencyFactor: the lead is this many times the time the last
	// synced write of the ceiling took, within the bounds above.
	clockLatencyFactor = 4
)

// timestampClock issues entity Timestamps (as ticks, 100 ns units).
//
// Every value it issues is greater than every value issued before by
// this store, in this process or an earlier one, so Timestamps (and
// ETags) strictly increase per entity even if the wall clock stalls or
// goes backwards, and a write need not read the entity it replaces.
//
// A value is issued only below a durable ceiling, kept in a file of its
// own (see clockfile.go) and written with a synced write. That is what
// makes a crash safe: a value can be seen before its commit is durable
// (Pebble shows a batch to readers before its sync ends, and NoSync
// commits return before it), so after a crash a value may have been
// handed out, as an ETag, for a write that the crash then lost. Were the
// clock to resume from the last durable write's Timestamp, it could
// issue that value again to another version of the same entity (a write
// soon after a restart, with the wall clock stepped back), and a stale
// If-Match holding the lost write's ETag would match an entity it never
// saw. Resuming from the ceiling, above every value ever issued, rules
// that out.
//
// The ceiling is kept only a little ahead: it is moved to the value being
// issued plus the lead, which is four times the time the last synced
// write of the ceiling took, at least 50 ms and at most 1 s. When a
// value is issued less than half the lead below the ceiling, a background
// write moves the ceiling on, so writers go on issuing values below the
// old one meanwhile and wait only if they reach it (or write it
// themselves, when no move is in flight). While writes go on, that is one
// synced write of a few bytes per half lead, off the writers' path.
//
// Bounds, with the wall clock driving the values:
//   - after Close, the ceiling is lowered to one past the last value
//     issued, so the next Open resumes from the exact last value: a
//     store opened and closed any number of times keeps its Timestamps
//     on the wall clock;
//   - after a crash (or a Close that could not write), the next Open
//     resumes from the ceiling, at most one lead (50 ms on a disk that
//     syncs in 12.5 ms or less) past the last value issued, so from the
//     wall clock itself whenever the restart takes longer than that.
type timestampClock struct {
	mu sync.Mutex
	// moved is signalled (on mu) when a move of the ceiling ends.
	moved sync.Cond
	last  int64 // greatest value issued
	// ceiling is durable: every issued value is below it.
	ceiling int64
	// lead is how far past the value being issued a move puts the
	// ceiling.
	lead   int64
	moving bool // a move of the ceiling is in flight
	// persist writes a new ceiling, synced; spawn runs a background
	// move on a goroutine that Close waits for.
	persist func(ceiling int64) error
	spawn   func(func())
}

// init readies c to issue values from the stored ceiling on (0 for a
// new store).
func (c *timestampClock) init(ceiling int64, persist func(int64) error, spawn func(func())) {
	c.moved.L = &c.mu
	c.ceiling, c.last = ceiling, ceiling-1
	c.lead = clockMinLead
	c.persist, c.spawn = persist, spawn
}

// next returns a fresh Timestamp greater than floor and than any issued
// before; now is the wall clock in ticks.
func (c *timestampClock) next(now, floor int64) (int64, error) {
	return c.nextRun(now, floor, 1)
}

// nextRun issues n >= 1 consecutive fresh Timestamps and returns the
// first, which is greater than floor and than any issued before.
func (c *timestampClock) nextRun(now, floor int64, n int) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	span := int64(n - 1)
	last, err := c.issueLocked(func() (int64, bool) { return max(now, c.last+1, floor+1) + span, true })
	return last - span, err
}

// issueLocked makes the value want names the last issued and returns it,
// or returns it as is when want says not to issue it (want is asked
// again after every wait, as c.last may have moved). A value at or past
// the durable ceiling waits for the ceiling to move past it; one within
// half a lead of the ceiling starts a move in the background, so writers
// rarely wait.
// REQUIRES: c.mu held; it is released while the ceiling is written.
func (c *timestampClock) issueLocked(want func() (t int64, issue bool)) (int64, error) {
	for {
		t, issue := want()
		if !issue {
			return t, nil
		}
		if t < c.ceiling {
			c.last = t
			if c.ceiling-t < c.lead/2 && !c.moving {
				// Move the ceiling before writers reach it.
				c.moving = true
				ceiling := t + c.lead
				c.spawn(func() { _ = c.move(ceiling) })
			}
			return t, nil
		}
		if c.moving {
			c.moved.Wait()
			continue
		}
		c.moving = true
		ceiling := t + c.lead
		c.mu.Unlock()
		err := c.move(ceiling)
		c.mu.Lock()
		if err != nil {
			return 0, err
		}
	}
}

// move writes ceiling, greater than the durable one, and makes it the
// clock's; a failed write leaves the ceiling where it was.
// REQUIRES: c.mu not held; c.moving set by the caller.
func (c *timestampClock) move(ceiling int64) error {
	start := time.Now()
	err := c.persist(ceiling)
	took := int64(time.Since(start) / 100)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.moving = false
	if err == nil {
		c.ceiling = max(c.ceiling, ceiling)
		c.lead = min(max(clockLatencyFactor*took, clockMinLead), clockMaxLead)
	}
	c.moved.Broadcast()
	return err
}

// settle waits for a move of the ceiling in flight to end, so its write
// is in the store.
func (c *timestampClock) settle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waitMoved()
}

// waitMoved waits until no move is in flight.
// REQUIRES: c.mu held.
func (c *timestampClock) waitMoved() {
	for c.moving {
		c.moved.Wait()
	}
}

// closing waits for a move in flight and returns the ceiling to store at
// a clean Close, one past the last value issued, and whether it is below
// the stored one.
// REQUIRES: no value is issued any more.
func (c *timestampClock) closing() (int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waitMoved()
	return c.last + 1, c.last+1 < c.ceiling
}

func clockKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), 'C')
}

// loadClock reads the durable ceiling at Open from the CLOCK file (see
// clockfile.go). A store made before the file kept its ceiling under
// clockKey: the ceiling is then the greater of the two. Open writes
// nothing: the file is opened, or created, by the first move (so a
// directory that Open then refuses is left as it was), and the old key
// is deleted once the file holds a ceiling above it.
func (db *Engine) loadClock() error {
	var legacy int64
	v, closer, err := db.pdb.Get(clockKey())
	switch {
	case err == pebble.ErrNotFound:
	case err != nil:
		return db.storageErr("open: read the clock ceiling", err)
	default:
		defer closer.Close()
		if len(v) != 8 {
			return corruptRecord(clockKey(), errBadClock)
		}
		legacy, db.clockLegacy = int64(binary.BigEndian.Uint64(v)), true
	}
	if db.clockFile, err = readClockFile(db.fs, db.dir); err != nil {
		return err
	}
	db.clock.init(max(db.clockFile.last.ceiling, legacy), db.writeClock, db.background)
	return nil
}

// writeClock stores ceiling as the clock's, synced. It runs on a
// commit's goroutine or on a background one (see background), one call
// at a time (the clock moves its ceiling once at a time).
func (db *Engine) writeClock(ceiling int64) (err error) {
	if db.stopped.Load() {
		return db.Health()
	}
	if db.opts.readOnly {
		return errReadOnly
	}
	defer db.recoverStop("write the clock ceiling", &err)
	if err := db.clockFile.write(ceiling); err != nil {
		return db.storageErr("write the clock ceiling", err)
	}
	if db.clockLegacy {
		if err := db.pdb.Delete(clockKey(), pebble.Sync); err != nil {
			return db.storageErr("delete the old clock ceiling", err)
		}
		db.clockLegacy = false
	}
	return nil
}

// durableCeiling returns the clock's durable ceiling: every Timestamp
// issued so far is below it.
func (c *timestampClock) durableCeiling() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ceiling
}

// closeClock lowers the durable ceiling to one past the last value
// issued, so the next Open resumes from it. A failure leaves the higher
// ceiling, which is safe.
// REQUIRES: closeMu held in write mode (no commit in flight) and
// background work ended.
func (db *Engine) closeClock() error {
	if db.opts.readOnly || db.writable() != nil {
		return nil
	}
	if ceiling, ok := db.clock.closing(); ok {
		return db.writeClock(ceiling)
	}
	return nil
}

// background runs f on a new goroutine that Close waits for before it
// closes Pebble.
// REQUIRES: called by an operation admitted by enter (so Close is not
// yet waiting for background work).
func (db *Engine) background(f func()) {
	db.bg.Add(1)
	go func() {
		defer db.bg.Done()
		f()
	}()
}
