package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

var _ driver.BulkCommitter = (*table)(nil)

// CommitBulk implements driver.BulkCommitter: under the locks of every
// partition the actions touch (taken in stripe order), it reads the
// stored entities the actions need, checks each action as commit does,
// and writes the applied ones in one Pebble batch, with one new
// Timestamp greater than every replaced entity's, and one sync.
func (t *table) CommitBulk(ctx context.Context, actions []driver.Action, opts driver.BulkCommitOptions) (res driver.BulkCommitResult, err error) {
	if !t.db.opts.NoSync {
		actions = cloneActions(actions)
	}
	return boundedWrite(t.db, ctx, func(ctx context.Context) (driver.BulkCommitResult, error) {
		return t.commitBulk(ctx, actions, opts)
	})
}

func (t *table) commitBulk(ctx context.Context, actions []driver.Action, opts driver.BulkCommitOptions) (_ driver.BulkCommitResult, err error) {
	release, err := t.db.enterWrite(ctx)
	if err != nil {
		return driver.BulkCommitResult{}, err
	}
	defer release()
	defer t.db.recoverStop("bulk commit to table "+t.name, &err)
	info, err := t.lockForWrite(ctx)
	if err != nil {
		return driver.BulkCommitResult{}, err
	}
	defer t.db.catMu.RUnlock()
	if len(t.db.tableIndexes(info.id)) > 0 {
		return t.db.commitBulkOneByOne(ctx, info.id, actions, opts.StopAtFailure)
	}
	return t.db.commitBulk(ctx, info.id, actions, opts.StopAtFailure)
}

// commitBulkOneByOne is commitBulk for a table with secondary indexes:
// each action is committed alone through the partition's commit path,
// which keeps every index exact and checks unique ones, at the cost of
// one commit (and sync) per entity. Each entity's write is still atomic
// and nothing across entities is, as for commitBulk.
// REQUIRES: db.catMu held in read mode.
func (db *Engine) commitBulkOneByOne(ctx context.Context, tableID uint64, actions []driver.Action, stopAtFailure bool) (driver.BulkCommitResult, error) {
	var res driver.BulkCommitResult
	for i := range actions {
		_, err := db.partition(tableID, actions[i].PartitionKey).commit(ctx, actions[i:i+1], driver.CommitOptions{})
		if err == nil {
			res.Applied++
			continue
		}
		var de *driver.Error
		if !errors.As(err, &de) || de.Code == edm.CodeTableNotFound {
			return res, err
		}
		de.Index = i
		res.Failures = append(res.Failures, de)
		if stopAtFailure {
			break
		}
	}
	return res, nil
}

// commitBulk is CommitBulk on table tableID.
// REQUIRES: db.catMu held in read mode.
func (db *Engine) commitBulk(ctx context.Context, tableID uint64, actions []driver.Action, stopAtFailure bool) (driver.BulkCommitResult, error) {
	var res driver.BulkCommitResult
	if len(actions) == 0 {
		return res, nil
	}
	defer db.locks.lockMany(tableID, func(yield func(string) bool) {
		for i := range actions {
			if !yield(actions[i].PartitionKey) {
				return
			}
		}
	})()

	keyBytes := 0
	for i := range actions {
		keyBytes += entityKeyLen(&actions[i])
	}
	keySlab := make([]byte, 0, keyBytes)
	keyOf := make([][]byte, len(actions))
	for i := range actions {
		start := len(keySlab)
		keySlab = keys.Entity(keySlab, tableID, actions[i].PartitionKey, actions[i].RowKey)
		keyOf[i] = keySlab[start:len(keySlab):len(keySlab)]
	}
	ttl, now, err := db.ttlNowFor(tableID)
	if err != nil {
		return driver.BulkCommitResult{}, err
	}
	reads, err := db.readBulk(tableID, actions, keyOf, ttl != nil)
	if err != nil {
		return driver.BulkCommitResult{}, err
	}
	applied := make([]bool, len(actions))
	var merged [][]driver.Property // by action, for merges into a stored entity
	var floor int64
	for i := range actions {
		a := &actions[i]
		var st storedEntity
		if reads != nil {
			st = ttl.absentIfExpired(reads[i], now)
		}
		props, stamp, err := db.partition(tableID, a.PartitionKey).resolveAction(a, st)
		if err != nil {
			var de *driver.Error
			if !errors.As(err, &de) {
				return driver.BulkCommitResult{}, err // storage or damage: nothing applied
			}
			de.Index = i
			res.Failures = append(res.Failures, de)
			if stopAtFailure {
				break
			}
			continue
		}
		if props != nil {
			if merged == nil {
				merged = make([][]driver.Property, len(actions))
			}
			merged[i] = props
		}
		applied[i] = true
		res.Applied++
		floor = max(floor, stamp)
	}
	if res.Applied == 0 {
		return res, nil
	}
	ts, err := db.clock.next(edm.TicksFromTime(db.opts.Clock()), floor)
	if err != nil {
		return driver.BulkCommitResult{}, err
	}
	value := func(i int) ([]byte, []driver.Property) {
		if merged != nil && merged[i] != nil {
			return nil, merged[i]
		}
		return actions[i].Record, actions[i].Properties
	}
	valueLen := func(i int) int {
		rec, props := value(i)
		if rec != nil {
			return len(rec)
		}
		return driver.EncodedLen(props)
	}
	size := batchHeaderLen
	for i := range actions {
		if applied[i] {
			size += batchRecordOverhead + len(keyOf[i]) + valueLen(i)
		}
	}
	// The batch holds the entities in key order: the memtable inserts a
	// sorted batch faster (each insert starts near the previous one).
	order := make([]int32, 0, res.Applied)
	for i := range actions {
		if applied[i] {
			order = append(order, int32(i))
		}
	}
	byKey := func(a, b int32) int { return bytes.Compare(keyOf[a], keyOf[b]) }
	if !slices.IsSortedFunc(order, byKey) {
		slices.SortFunc(order, byKey)
	}
	b := db.pdb.NewBatchWithSize(size)
	defer b.Close()
	for _, i32 := range order {
		i := int(i32)
		op := b.SetDeferred(len(keyOf[i]), valueLen(i))
		copy(op.Key, keyOf[i])
		a := &actions[i]
		if rec, props := value(i); rec != nil {
			if err := driver.Record(append(op.Value[:0], rec...)).SetTimestamp(ts); err != nil {
				return driver.BulkCommitResult{}, fmt.Errorf("tablestore: the record of (%q, %q) to write: %w", a.PartitionKey, a.RowKey, err)
			}
		} else if _, err := driver.Encode(op.Value[:0], ts, props); err != nil {
			return driver.BulkCommitResult{}, fmt.Errorf("tablestore: the properties of (%q, %q) to write: %w", a.PartitionKey, a.RowKey, err)
		}
		_ = op.Finish()
	}
	if ttl != nil {
		db.writeExpiries(b, ttl, tableID, actions, applied, reads, value, stamps{base: ts})
	}
	if err := db.commitChanges(ctx, b, db.changeRecords(tableID, driver.CommitBulk, stamps{base: ts}, actions, applied, db.replacedExpired(tableID, ttl, reads, applied, now), value), db.writeOpts); err != nil {
		return driver.BulkCommitResult{}, db.storageErr(fmt.Sprintf("bulk commit of %d entities to table #%d", res.Applied, tableID), err)
	}
	return res, nil
}

// entityKeyLen returns the length of a's stored key (see keys.Entity).
func entityKeyLen(a *driver.Action) int { return 8 + len(a.PartitionKey) + 1 + len(a.RowKey) }

// readBulk reads the stored entities of the actions that need one (all
// but upserts that replace, unless all: every action, for a TTL table) in key order, through one iterator over the
// table with prefix seeks (bloom filters rule out most files for an
// absent entity, and each file is opened once per call, not once per
// key). It returns nil when no action needs a read. Values are copied
// into one slab. An error here is the iterator's creation's; read errors
// are reported per action.
// REQUIRES: the partitions' locks are held.
func (db *Engine) readBulk(tableID uint64, actions []driver.Action, keyOf [][]byte, all bool) ([]storedEntity, error) {
	var idx []int32
	for i := range actions {
		if all || actions[i].Type != driver.ActionUpsertReplace {
			idx = append(idx, int32(i))
		}
	}
	if len(idx) == 0 {
		return nil, nil
	}
	byKey := func(a, b int32) int { return bytes.Compare(keyOf[a], keyOf[b]) }
	if !slices.IsSortedFunc(idx, byKey) {
		slices.SortFunc(idx, byKey)
	}
	lo, hi := keys.TableSpan(tableID)
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, db.storageErr(fmt.Sprintf("read table #%d for a bulk commit", tableID), err)
	}
	defer it.Close()
	reads := make([]storedEntity, len(actions))
	var slab []byte
	for _, i := range idx {
		st := &reads[i]
		st.key = keyOf[i]
		if !it.SeekPrefixGE(st.key) || !bytes.Equal(it.Key(), st.key) {
			st.err = it.Error()
			continue
		}
		val, err := it.ValueAndErr()
		if err != nil {
			st.err = err
			continue
		}
		start := len(slab)
		slab = append(slab, val...)
		st.found, st.val = true, slab[start:len(slab):len(slab)]
	}
	return reads, nil
}
