package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/edm"
)

// Bounds of the pruner's period: an eighth of the shortest retention,
// within these.
const (
	pruneMinPeriod = 5 * time.Millisecond
	pruneMaxPeriod = time.Minute
)

// runPruner deletes records older than their feed's retention, and the
// feeds of dropped tables once their retention has passed, until
// stopChanges. Each round is one range deletion per feed with records to
// drop, written with the new floor.
func (db *Engine) runPruner() {
	c := &db.changes
	defer c.pruner.Done()
	timer := time.NewTimer(db.prunePeriod())
	defer timer.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		case <-timer.C:
		}
		db.pruneChanges()
		c.rounds.Add(1)
		timer.Reset(db.prunePeriod())
	}
}

// prunePeriod is how long the pruner sleeps between rounds.
func (db *Engine) prunePeriod() time.Duration {
	p := pruneMaxPeriod
	if m := db.changes.feeds.Load(); m != nil {
		for _, s := range *m {
			p = min(p, s.Retention/8)
		}
	}
	return max(p, pruneMinPeriod)
}

// pruneChanges runs one round. Errors end the round; a storage fault is
// recorded by storageErr, and the next round tries again.
func (db *Engine) pruneChanges() {
	release, err := db.enter(context.Background())
	if err != nil {
		return
	}
	defer release()
	if db.writable() != nil {
		return
	}
	defer db.recoverStop("change feed retention", &err)
	c := &db.changes
	now := edm.TicksFromTime(db.opts.Clock())
	m := c.feeds.Load()
	for id, s := range *m {
		cutoff := now - int64(s.Retention/100)
		if s.Dropped != 0 {
			if s.Dropped < cutoff {
				c.setMu.Lock()
				if cur := c.settingsOf(id); cur == s {
					c.setFeed(id, nil)
					err = db.storageErr("change feed retention", db.deleteFeed(id, pebble.NoSync))
				}
				c.setMu.Unlock()
				if err != nil {
					return
				}
			}
			continue
		}
		// The last record older than the cutoff, in seq order: records
		// are pruned up to the first one that is not.
		end := c.end.Load()
		if end <= s.Floor {
			continue
		}
		lo, hi := changeSpan(id, s.Floor, end)
		it, ierr := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if ierr != nil {
			err = db.storageErr("change feed retention", ierr)
			return
		}
		floor := s.Floor
		for valid := it.First(); valid; valid = it.Next() {
			v := it.Value()
			r, derr := decodeChange(0, v)
			if derr != nil || r.Timestamp >= cutoff {
				break
			}
			floor = binary.BigEndian.Uint64(it.Key()[17:])
		}
		_ = it.Close()
		if floor == s.Floor {
			continue
		}
		c.setMu.Lock()
		cur := c.settingsOf(id)
		if cur == nil || cur.Dropped != 0 || cur.Floor >= floor {
			c.setMu.Unlock()
			continue
		}
		// The floor moves first, so a reader that made its iterator
		// before the deletion sees that its position expired.
		ns := *cur
		ns.Floor = floor
		c.setFeed(id, &ns)
		b := db.pdb.NewBatch()
		v, _ := json.Marshal(&ns)
		_ = b.Set(changeSettingsKey(id), v, nil)
		_ = b.DeleteRange(changeKey(nil, id, 0), changeKey(nil, id, floor+1), nil)
		c.mu.Lock()
		seq := c.seq
		c.mu.Unlock()
		_ = b.Set(changeSeqKey(), binary.BigEndian.AppendUint64(nil, seq), nil)
		cerr := db.commitBatch(b, pebble.NoSync)
		_ = b.Close()
		c.setMu.Unlock()
		if cerr != nil {
			err = db.storageErr("change feed retention", cerr)
			return
		}
	}
}
