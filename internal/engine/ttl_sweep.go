package engine

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// Bounds of the sweeper's rate, in entities per second (see
// Options.SweepRate), and how long it waits, when it has found nothing
// to remove, before it looks again.
const (
	DefaultSweepRate = 10_000
	MaxSweepRate     = 1_000_000
	sweepIdle        = time.Second
)

// sweepRate returns the configured rate within its bounds.
func (db *Engine) sweepRate() int {
	r := db.opts.SweepRate
	if r <= 0 {
		return DefaultSweepRate
	}
	return min(r, MaxSweepRate)
}

// startExpirySweeper starts the background sweeper, which Close stops (see
// stopExpirySweeper) and waits for. It removes expired entities physically,
// in batches of at most a tenth of a second's worth of the rate (and at
// most 1000), pausing after each batch for what is left of the batch's
// share of a second, so that it removes no more than the rate per second; it finds them through the expiry index, never by
// scanning a table. Each batch is one atomic Pebble batch, so a crash
// keeps or loses it whole; since expiry is judged by the store's clock,
// which never goes backwards, a batch lost in a crash is simply swept
// again after the restart.
func (db *Engine) startExpirySweeper() {
	db.ttl.started.Store(true)
	db.bg.Add(1)
	go func() {
		defer db.bg.Done()
		rate := db.sweepRate()
		limit := min(max(rate/10, 1), 1000)
		for {
			select {
			case <-db.ttl.stop: // stop wins over a wake pending with it
				return
			default:
			}
			release, ok := db.enterSweep()
			if !ok {
				return
			}
			start := time.Now()
			n, err := db.sweepOnce(limit)
			release()
			wait := sweepIdle
			if err == nil && n >= limit {
				// The batch's own time counts toward its share of a
				// second.
				wait = max(time.Duration(n)*time.Second/time.Duration(rate)-time.Since(start), 0)
			}
			if db.closed.Load() || db.stopped.Load() {
				return
			}
			t := time.NewTimer(wait)
			select {
			case <-db.ttl.stop:
				t.Stop()
				return
			case <-db.ttl.wake:
			case <-t.C:
			}
			t.Stop()
		}
	}()
}

// stopExpirySweeper makes the sweeper end after its batch in flight.
func (db *Engine) stopExpirySweeper() {
	if db.ttl.stop != nil {
		db.ttl.stopOnce.Do(func() { close(db.ttl.stop) })
	}
}

// wakeExpirySweeper makes the sweeper look at once.
func (db *Engine) wakeExpirySweeper() {
	select {
	case db.ttl.wake <- struct{}{}:
	default:
	}
}

// SweepExpired removes up to limit expired entities at once, as the
// sweeper does, and returns how many expiry entries it processed; for
// tests and tools that want removal now.
func (db *Engine) SweepExpired(limit int) (int, error) {
	release, err := db.enter(context.Background())
	if err != nil {
		return 0, err
	}
	defer release()
	return db.sweepOnce(max(limit, 1))
}

// enterSweep admits a batch of the background sweeper, like enter, but
// never blocks on closeMu: Close holds it in write mode while it waits
// for the sweeper to end. It reports false once the store is closing.
func (db *Engine) enterSweep() (release func(), ok bool) {
	for {
		if db.closed.Load() || db.stopped.Load() {
			return nil, false
		}
		if db.closeMu.TryRLock() {
			if db.closed.Load() || db.stopped.Load() {
				db.closeMu.RUnlock()
				return nil, false
			}
			return db.release, true
		}
		time.Sleep(time.Millisecond)
	}
}

// Swept returns how many entities the sweeper (and SweepExpired) removed
// since Open.
func (db *Engine) Swept() int64 { return db.ttl.swept.Load() }

// expiryEntry is one entry of an expiry index the sweeper read.
type expiryEntry struct {
	key    []byte
	pk, rk string
}

// sweepOnce processes up to limit expiry entries at or before now, over
// the tables with settings, and returns how many it processed.
// REQUIRES: admitted (enter or enterSweep).
func (db *Engine) sweepOnce(limit int) (n int, err error) {
	if err := db.writable(); err != nil {
		return 0, err
	}
	defer db.recoverStop("sweep of expired entities", &err)
	m := db.ttl.tables.Load()
	if m == nil || len(*m) == 0 {
		return 0, nil
	}
	now, err := db.expiryNow()
	if err != nil {
		return 0, err
	}
	db.catMu.RLock()
	defer db.catMu.RUnlock()
	for id := range *db.ttl.tables.Load() {
		if n >= limit {
			break
		}
		s := db.ttlFor(id)
		if s == nil || db.ttlGate(id) != nil {
			continue // a SetTTL is at work on the table
		}
		k, err := db.sweepExpiredTable(id, s, now, limit-n)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// sweepExpiredTable processes up to limit expiry entries of table id.
// REQUIRES: db.catMu held in read mode.
func (db *Engine) sweepExpiredTable(id uint64, s *ttlSettings, now int64, limit int) (int, error) {
	lo, _, _ := expirySpan(id)
	hi := expiryKey(nil, id, now+1, "", "")
	hi = hi[:len(hi)-1] // entries expiring at or before now
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, db.storageErr(fmt.Sprintf("read the expiry index of table #%d", id), err)
	}
	byPK := map[string][]expiryEntry{}
	n := 0
	for it.First(); it.Valid() && n < limit; it.Next() {
		k := append([]byte(nil), it.Key()...)
		_, pk, rk, err := splitExpiryKey(k)
		if err != nil {
			_ = it.Close()
			return 0, corruptRecord(k, err)
		}
		byPK[string(pk)] = append(byPK[string(pk)], expiryEntry{key: k, pk: string(pk), rk: string(rk)})
		n++
	}
	if err := it.Close(); err != nil {
		return 0, db.storageErr(fmt.Sprintf("read the expiry index of table #%d", id), err)
	}
	pks := make([]string, 0, len(byPK))
	for pk := range byPK {
		pks = append(pks, pk)
	}
	sort.Strings(pks)
	for _, pk := range pks {
		if err := db.partition(id, pk).sweep(s, byPK[pk], now); err != nil {
			return n, err
		}
	}
	return n, nil
}

// sweep removes, in one batch, the partition's entities named by entries
// that have expired at now, with their index and expiry entries and,
// when the table's feed is on, their expiry records, and drops the
// entries that no longer match a stored entity's expiry.
// REQUIRES: db.catMu held in read mode.
func (p partition) sweep(s *ttlSettings, entries []expiryEntry, now int64) error {
	db := p.db
	defer p.lock().Unlock()
	seen := map[string]bool{}
	var actions []driver.Action
	for _, e := range entries {
		if !seen[e.rk] {
			seen[e.rk] = true
			actions = append(actions, driver.Action{Type: driver.ActionDelete, PartitionKey: p.pk, RowKey: e.rk, IfMatch: "*"})
		}
	}
	reads, err := p.readStored(actions, true)
	if err != nil {
		return err
	}
	var dels []driver.Action
	var delReads []storedEntity
	for i := range actions {
		if reads[i].err != nil {
			return db.storageErr(fmt.Sprintf("read of (%q, %q) in table #%d for a sweep", p.pk, actions[i].RowKey, p.tableID), reads[i].err)
		}
		if reads[i].found && s.expired(reads[i].val, now) {
			dels = append(dels, actions[i])
			delReads = append(delReads, reads[i])
		}
	}
	// With the table's feed on, the removal is recorded in its batch: one
	// expiry record per entity, at a Timestamp of its own, after every
	// expiry (the clock is past now).
	var cb *changeBatch
	if len(dels) > 0 && db.changes.feed(p.tableID) != nil {
		ts, err := db.clock.next(edm.TicksFromTime(db.opts.Clock()), now)
		if err != nil {
			return err
		}
		cb = db.expiryRecords(p.tableID, s, ts, dels, delReads)
	}
	b := db.pdb.NewBatch()
	defer b.Close()
	for _, e := range entries {
		_ = b.Delete(e.key, nil)
	}
	if len(dels) > 0 {
		none := func(int) ([]byte, []driver.Property) { return nil, nil }
		if ixs := db.tableIndexes(p.tableID); len(ixs) > 0 {
			iw, err := p.prepareIndexWrites(ixs, dels, delReads, none, nil, 0)
			defer iw.unlock()
			if err != nil {
				return err
			}
			iw.apply(b)
		}
		db.writeExpiries(b, s, p.tableID, dels, nil, delReads, none, stamps{})
		for i := range dels {
			_ = b.Delete(delReads[i].key, nil)
		}
	}
	if err := db.commitChanges(context.Background(), b, cb, db.writeOpts); err != nil {
		return db.storageErr(fmt.Sprintf("sweep of partition %q of table #%d", p.pk, p.tableID), err)
	}
	db.ttl.swept.Add(int64(len(dels)))
	return nil
}

var _ driver.ExpiryStats = (*table)(nil)

// Expired implements driver.ExpiryStats by counting the table's expiry
// entries at or before now: it reads only the entries awaiting the
// sweeper (and stale ones a range deletion left, which it also counts).
func (t *table) Expired(ctx context.Context) (_ int64, err error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	defer t.db.recoverStop("count the expired entities of table "+t.name, &err)
	info, err := t.resolve()
	if err != nil {
		return 0, err
	}
	if t.db.ttlFor(info.id) == nil {
		return 0, nil
	}
	now, err := t.db.expiryNow()
	if err != nil {
		return 0, err
	}
	lo, _, _ := expirySpan(info.id)
	hi := expiryKey(nil, info.id, now+1, "", "")
	hi = hi[:len(hi)-1]
	it, err := t.db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, t.db.storageErr("count expired entities", err)
	}
	var n int64
	for it.First(); it.Valid(); it.Next() {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				_ = it.Close()
				return 0, err
			}
		}
	}
	return n, t.db.storageErr("count expired entities", it.Close())
}
