package engine

import (
	"encoding/binary"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/internal/keys"
)

// clockCeilingStep is how far ahead of the newest Timestamp the durable
// ceiling is moved: one second, in ticks.
const clockCeilingStep = 10_000_000

// timestampClock issues entity Timestamps (as ticks, 100 ns units).
//
// Every value it issues is greater than every value issued before by this
// store, in this process or an earlier one, so Timestamps (and ETags)
// strictly increase per entity even if the wall clock stalls or goes
// backwards, and a write need not read the entity it replaces. To carry
// that across restarts it keeps a durable ceiling: every issued value is
// below the ceiling stored in the catalog, and the ceiling is moved (one
// small synced write, at most about once a second) before a value at or
// above it is issued. At Open, issuing resumes above the stored ceiling.
type timestampClock struct {
	mu      sync.Mutex
	last    int64 // greatest value issued
	ceiling int64 // durable: every issued value is below it
	persist func(ceiling int64) error
}

// next returns a fresh Timestamp greater than floor and than any issued
// before; now is the wall clock in ticks.
func (c *timestampClock) next(now, floor int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := max(now, c.last+1, floor+1)
	if t >= c.ceiling {
		ceiling := t + clockCeilingStep
		if err := c.persist(ceiling); err != nil {
			return 0, err
		}
		c.ceiling = ceiling
	}
	c.last = t
	return t, nil
}

func clockKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), 'C')
}

// loadClock reads the durable ceiling at Open.
func (db *Engine) loadClock() error {
	db.clock.persist = func(ceiling int64) error {
		return db.storageErr("write the clock ceiling", db.pdb.Set(clockKey(), binary.BigEndian.AppendUint64(nil, uint64(ceiling)), pebble.Sync))
	}
	v, closer, err := db.pdb.Get(clockKey())
	if err == pebble.ErrNotFound {
		return nil
	}
	if err != nil {
		return db.storageErr("open: read the clock ceiling", err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return corruptRecord(clockKey(), errBadClock)
	}
	db.clock.ceiling = int64(binary.BigEndian.Uint64(v))
	db.clock.last = db.clock.ceiling - 1
	return nil
}
