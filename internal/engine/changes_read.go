package engine

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// ReadChanges implements driver.ChangeFeeder. It reads through one
// iterator, a consistent snapshot, bounded by the readable end as of
// its start; the floor is checked after the iterator is made, so a
// pruning that removed records the read wanted is always noticed (the
// pruner moves the floor before it deletes).
func (t *table) ReadChanges(ctx context.Context, req driver.ChangesRequest, emit func(driver.ChangeRecord) error) (_ driver.ChangesResult, err error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return driver.ChangesResult{}, err
	}
	defer release()
	op := "read of the change feed of table " + t.name
	defer t.db.recoverStop(op, &err)
	c := &t.db.changes
	end := c.end.Load()
	id, s, err := t.feedToRead(req.Table)
	if err != nil {
		return driver.ChangesResult{}, err
	}
	res := driver.ChangesResult{Table: id, Last: req.After, End: end}
	if req.After > end {
		return res, fmt.Errorf("%w: position %d of table %q is ahead of the feed's end %d", driver.ErrCursorStale, req.After, t.name, end)
	}
	if req.After == end {
		if s.Dropped != 0 {
			return res, fmt.Errorf("%w: table %q was deleted", driver.ErrCursorStale, t.name)
		}
		return res, nil
	}
	lo, hi := changeSpan(id, req.After, end)
	it, err := t.db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return res, t.db.storageErr(op, err)
	}
	defer it.Close()
	// The settings as of the iterator: were records the read wants
	// pruned, the floor says so.
	if s2 := c.settingsOf(id); s2 == nil || req.After < s2.Floor {
		oldest := uint64(0)
		if s2 != nil {
			oldest = s2.Floor
		}
		return res, fmt.Errorf("%w: position %d of table %q is before the oldest change kept (%d)", driver.ErrCursorExpired, req.After, t.name, oldest)
	}
	n := 0
	fromTime := req.FromTime
	for valid := it.First(); valid; valid = it.Next() {
		if n%256 == 255 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		k := it.Key()
		if len(k) != changeKeyLen {
			return res, corruptRecord(k, fmt.Errorf("change key of %d bytes", len(k)))
		}
		seq := binary.BigEndian.Uint64(k[17:])
		v, err := it.ValueAndErr()
		if err != nil {
			return res, t.db.storageErr(op, err)
		}
		r, err := decodeChange(seq, v)
		if err != nil {
			return res, corruptRecord(k, err)
		}
		res.Last = seq
		if fromTime != 0 {
			if r.Timestamp < fromTime && r.Op != driver.ChangeDropTable {
				continue
			}
			fromTime = 0
		}
		if req.PartitionKey != "" && r.PartitionKey != req.PartitionKey && r.Op != driver.ChangeDropTable {
			continue
		}
		if r.Record != nil {
			r.Record = append(driver.Record(nil), r.Record...)
		}
		if err := emit(r); err != nil {
			return res, err
		}
		if r.Op == driver.ChangeDropTable {
			res.Dropped = true
			return res, nil
		}
		if n++; n >= req.Limit {
			res.More = seq < end
			return res, nil
		}
	}
	if err := it.Error(); err != nil {
		return res, t.db.storageErr(op, err)
	}
	res.Last = end
	return res, nil
}

// settingsOf returns table id's settings, dropped or not.
func (c *changeFeeds) settingsOf(id uint64) *feedSettings {
	if m := c.feeds.Load(); m != nil {
		return (*m)[id]
	}
	return nil
}

// feedToRead resolves the feed a read names: the table the name resolves
// to, or the table want (when not 0), which may be a dropped one whose
// feed is still kept.
func (t *table) feedToRead(want uint64) (uint64, *feedSettings, error) {
	info, err := t.resolve()
	c := &t.db.changes
	if want != 0 {
		// A deleted table's feed stays readable, up to its final
		// record, while no table has the name, and while the deletion
		// that marked it dropped has yet to remove the name.
		if s := c.settingsOf(want); (err != nil || info.id == want) && s != nil && s.Dropped != 0 {
			return want, s, nil
		}
		if err != nil || info.id != want {
			return 0, nil, fmt.Errorf("%w: the cursor names a table that no longer exists under the name %q (deleted or re-created)", driver.ErrCursorStale, t.name)
		}
	}
	if err != nil {
		return 0, nil, err
	}
	s := c.feed(info.id)
	if s == nil {
		return 0, nil, errorf(edm.CodeResourceNotFound, "table %q has no change feed", t.name)
	}
	return info.id, s, nil
}

// WaitChanges implements driver.ChangeFeeder: it waits on the broadcast
// that commits send when they move the readable end.
func (t *table) WaitChanges(ctx context.Context, after uint64) error {
	c := &t.db.changes
	for {
		if err := t.db.checkContext(ctx); err != nil {
			return err
		}
		ch := c.waitChan()
		if c.end.Load() > after {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-c.stop:
			return driver.ErrClosed
		}
	}
}
