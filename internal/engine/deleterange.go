package engine

import (
	"context"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/keys"
)

// span returns the stored keys [start, end) of the RowKeys [from, to);
// "" leaves a side unbounded within the partition.
func (p partition) span(from, to string) (start, end []byte) {
	start, end = keys.PartitionSpan(p.tableID, p.pk)
	if from != "" {
		start = p.key(nil, from)
	}
	if to != "" {
		end = p.key(nil, to)
	}
	return start, end
}

// deleteRange deletes the entities with RowKey in [from, to) with one
// Pebble range deletion, committed under the partition's lock (so it
// falls wholly before or after any transaction on the partition) and
// synced unless NoSync. Its cost does not depend on how many entities the
// range holds; the table's indexes add at most one range deletion or one
// record each (see index_sweep.go).
// REQUIRES: db.catMu held in read mode.
func (p partition) deleteRange(ctx context.Context, from, to string) error {
	defer p.lock().Unlock()
	start, end := p.span(from, to)
	b := p.db.pdb.NewBatch()
	defer b.Close()
	_ = b.DeleteRange(start, end, nil)
	sweep := p.indexRangeDelete(b, from, to)
	cb, err := p.db.singleChange(p.tableID, driver.ChangeDeleteRange, driver.CommitRangeDelete, p.pk, from, to)
	if err != nil {
		return err
	}
	if err := p.db.commitChanges(ctx, b, cb, p.db.writeOpts); err != nil {
		return err
	}
	if sweep {
		p.db.wakeSweeper(p.tableID)
	}
	return nil
}

var _ driver.RangeDeleter = (*table)(nil)

// DeleteRange implements driver.RangeDeleter: one atomic range deletion.
func (t *table) DeleteRange(ctx context.Context, pk, fromRowKey, toRowKey string) (res driver.DeleteRangeResult, err error) {
	return boundedWrite(t.db, ctx, func(ctx context.Context) (driver.DeleteRangeResult, error) {
		return t.deleteRange(ctx, pk, fromRowKey, toRowKey)
	})
}

func (t *table) deleteRange(ctx context.Context, pk, fromRowKey, toRowKey string) (_ driver.DeleteRangeResult, err error) {
	release, err := t.db.enterWrite(ctx)
	if err != nil {
		return driver.DeleteRangeResult{}, err
	}
	defer release()
	op := "range deletion in table " + t.name
	defer t.db.recoverStop(op, &err)
	t.db.catMu.RLock()
	defer t.db.catMu.RUnlock()
	info, err := t.resolveLocked()
	if err != nil {
		return driver.DeleteRangeResult{}, err
	}
	if err := t.db.partition(info.id, pk).deleteRange(ctx, fromRowKey, toRowKey); err != nil {
		return driver.DeleteRangeResult{}, t.db.storageErr(op, err)
	}
	return driver.DeleteRangeResult{Atomic: true, Deleted: -1}, nil
}
