package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
	"github.com/tablestore/tablestore/internal/limits"
)

// Commit implements driver.Table: it resolves the table and commits the
// actions on the partition of the first action's PartitionKey (the caller
// guarantees they all share it).
func (t *table) Commit(ctx context.Context, actions []driver.Action) (res driver.CommitResult, err error) {
	return t.CommitWith(ctx, actions, driver.CommitOptions{})
}

// CommitWith implements driver.OptionCommitter: Commit, with each
// action's Timestamp its own under opts.DistinctTimestamps.
func (t *table) CommitWith(ctx context.Context, actions []driver.Action, opts driver.CommitOptions) (res driver.CommitResult, err error) {
	if t.db.opts.NoSync {
		// boundedWrite would run it as it is: called directly, the
		// commit needs no closure.
		if err = ctx.Err(); err == nil {
			res, err = t.commit(ctx, actions, opts)
		}
	} else {
		actions = cloneActions(actions)
		res, err = boundedWrite(t.db, ctx, func(ctx context.Context) (driver.CommitResult, error) {
			return t.commit(ctx, actions, opts)
		})
	}
	if err != nil {
		return driver.CommitResult{}, err
	}
	return res, nil
}

func (t *table) commit(ctx context.Context, actions []driver.Action, opts driver.CommitOptions) (_ driver.CommitResult, err error) {
	release, err := t.db.enterWrite(ctx)
	if err != nil {
		return driver.CommitResult{}, err
	}
	defer release()
	defer func() {
		if r := recover(); r != nil {
			t.db.recovered(r, "commit to table "+t.name, &err) // named only on a panic
		}
	}()
	info, err := t.lockForWrite(ctx)
	if err != nil {
		return driver.CommitResult{}, err
	}
	defer t.db.catMu.RUnlock()
	return t.db.partition(info.id, actions[0].PartitionKey).commit(ctx, actions, opts)
}

// commit locks the partition, checks every action's precondition against
// the stored entity, computes the new values, and commits one Pebble batch
// in which every written entity gets the same new Timestamp, one the clock
// has never issued before and greater than every replaced entity's (with
// opts.DistinctTimestamps, action i gets the i-th of as many consecutive
// ones). Keys
// are the partition's: an action's PartitionKey is not read, so a
// transaction cannot reach another partition. The stored entities the
// actions need are read in key order through one iterator; the first
// failing action in action order is reported.
// REQUIRES: db.catMu held in read mode.
func (p partition) commit(ctx context.Context, actions []driver.Action, opts driver.CommitOptions) (driver.CommitResult, error) {
	db := p.db
	defer p.lock().Unlock()

	ixs := db.tableIndexes(p.tableID)
	ttl, now, err := db.ttlNowFor(p.tableID)
	if err != nil {
		return driver.CommitResult{}, err
	}
	reads, err := p.readStored(actions, len(ixs) > 0 || ttl != nil)
	if err != nil {
		return driver.CommitResult{}, err
	}
	var merged [][]driver.Property // by action, for merges into a stored entity
	// The first failing action, whose error waits for the index checks of
	// the actions before it.
	failed, failErr := len(actions), error(nil)
	var floor int64
	for i := range actions {
		var st storedEntity
		if reads != nil {
			st = ttl.absentIfExpired(reads[i], now)
		}
		props, stamp, err := p.resolveAction(&actions[i], st)
		if err != nil {
			if de, ok := err.(*driver.Error); ok {
				de.Index = i
			}
			failed, failErr = i, err
			break
		}
		if props != nil {
			if merged == nil {
				merged = make([][]driver.Property, len(actions))
			}
			merged[i] = props
		}
		floor = max(floor, stamp)
	}
	// The value each action stores: a merge's result, else its record or
	// properties.
	value := func(i int) ([]byte, []driver.Property) {
		if merged != nil && merged[i] != nil {
			return nil, merged[i]
		}
		return actions[i].Record, actions[i].Properties
	}
	// The index entries of the actions before the first failing one; a
	// uniqueness failure among them comes first.
	var iw *indexWrite
	if len(ixs) > 0 {
		iw, err = p.prepareIndexWrites(ixs, actions[:failed], reads, value, ttl, now)
		defer iw.unlock()
		if err != nil {
			return driver.CommitResult{}, err
		}
	}
	if failErr != nil {
		return driver.CommitResult{}, failErr
	}
	ts := stamps{spaced: opts.DistinctTimestamps}
	run := 1
	if ts.spaced {
		run = len(actions)
	}
	ts.base, err = db.clock.nextRun(edm.TicksFromTime(db.opts.Clock()), floor, run)
	if err != nil {
		return driver.CommitResult{}, err
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
		size += batchRecordOverhead + p.keyLen(actions[i].RowKey)
		if actions[i].Type != driver.ActionDelete {
			size += valueLen(i)
		}
	}
	if iw != nil {
		size += iw.size()
	}
	b := db.pdb.NewBatchWithSize(size)
	defer b.Close()
	for i := range actions {
		rk := actions[i].RowKey
		if actions[i].Type == driver.ActionDelete {
			op := b.DeleteDeferred(p.keyLen(rk))
			p.key(op.Key[:0], rk)
			_ = op.Finish()
			continue
		}
		op := b.SetDeferred(p.keyLen(rk), valueLen(i))
		p.key(op.Key[:0], rk)
		if rec, props := value(i); rec != nil {
			if err := driver.Record(append(op.Value[:0], rec...)).SetTimestamp(ts.of(i)); err != nil {
				return driver.CommitResult{}, fmt.Errorf("tablestore: the record of (%q, %q) to write: %w", p.pk, rk, err)
			}
		} else if _, err := driver.Encode(op.Value[:0], ts.of(i), props); err != nil {
			return driver.CommitResult{}, fmt.Errorf("tablestore: the properties of (%q, %q) to write: %w", p.pk, rk, err)
		}
		_ = op.Finish()
	}
	if iw != nil {
		iw.apply(b)
	}
	if ttl != nil {
		db.writeExpiries(b, ttl, p.tableID, actions, nil, reads, value, ts)
	}
	if err := db.commitChanges(ctx, b, db.changeRecords(p.tableID, driver.CommitSingle, ts, actions, nil, db.replacedExpired(p.tableID, ttl, reads, nil, now), value), db.writeOpts); err != nil {
		return driver.CommitResult{}, db.storageErr(fmt.Sprintf("commit to partition %q of table #%d", p.pk, p.tableID), err)
	}
	return ts.result(actions), nil
}

// stamps are the Timestamps of a commit's actions, in ticks: base for
// every action, or base+i for action i when spaced.
type stamps struct {
	base   int64
	spaced bool
}

// of is action i's Timestamp.
func (s stamps) of(i int) int64 {
	if s.spaced {
		return s.base + int64(i)
	}
	return s.base
}

// result is the CommitResult of a commit of actions at s: when spaced,
// with each written entity's Timestamp and ETag, the first written one's
// as the result's own.
func (s stamps) result(actions []driver.Action) driver.CommitResult {
	if !s.spaced {
		when := edm.TimeFromTicks(s.base)
		return driver.CommitResult{Timestamp: when, ETag: driver.FormatETag(when)}
	}
	res := driver.CommitResult{Timestamps: make([]time.Time, len(actions)), ETags: make([]string, len(actions))}
	for i := range actions {
		if actions[i].Type == driver.ActionDelete {
			continue
		}
		when := edm.TimeFromTicks(s.of(i))
		res.Timestamps[i], res.ETags[i] = when, driver.FormatETag(when)
		if res.ETag == "" {
			res.Timestamp, res.ETag = when, res.ETags[i]
		}
	}
	return res
}

// Sizes of a Pebble batch's encoding, to allocate a batch once: its
// header, and at most the kind byte and two length varints a record adds
// to its key and value.
const (
	batchHeaderLen      = 12
	batchRecordOverhead = 1 + 2*binary.MaxVarintLen32
)

// storedEntity is what a commit read of one entity: its key, whether
// it exists, and a copy of its record.
type storedEntity struct {
	key   []byte
	found bool
	val   []byte
	err   error // the read's storage error
}

// readStored reads the stored entities of every action that needs one
// (all but upserts that replace, unless all: every action, for a table
// with indexes, whose old entries the commit removes), in key order: one point read for a
// single action, else one iterator over the partition. It returns nil
// when no action needs a read. Keys and values are copied into slabs. An
// error here is the iterator's creation's; read errors are reported per
// action.
// REQUIRES: the partition lock is held.
func (p partition) readStored(actions []driver.Action, all bool) ([]storedEntity, error) {
	n, keyBytes := 0, 0
	for i := range actions {
		if all || actions[i].Type != driver.ActionUpsertReplace {
			n++
			keyBytes += p.keyLen(actions[i].RowKey)
		}
	}
	if n == 0 {
		return nil, nil
	}
	reads := make([]storedEntity, len(actions))
	idx := make([]int32, 0, n)
	keySlab := make([]byte, 0, keyBytes)
	for i := range actions {
		if all || actions[i].Type != driver.ActionUpsertReplace {
			idx = append(idx, int32(i))
			start := len(keySlab)
			keySlab = p.key(keySlab, actions[i].RowKey)
			reads[i].key = keySlab[start:len(keySlab):len(keySlab)]
		}
	}
	if n == 1 {
		st := &reads[idx[0]]
		val, closer, err := p.db.pdb.Get(st.key)
		switch {
		case err == pebble.ErrNotFound:
		case err != nil:
			st.err = err
		default:
			st.found, st.val = true, bytes.Clone(val)
			_ = closer.Close()
		}
		return reads, nil
	}
	byKey := func(a, b int32) int { return bytes.Compare(reads[a].key, reads[b].key) }
	if !slices.IsSortedFunc(idx, byKey) {
		slices.SortFunc(idx, byKey)
	}
	lo, hi := keys.PartitionSpan(p.tableID, p.pk)
	it, err := p.db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, p.db.storageErr(fmt.Sprintf("read partition %q of table #%d for a commit", p.pk, p.tableID), err)
	}
	defer it.Close()
	var slab []byte
	for _, i := range idx {
		st := &reads[i]
		if !it.SeekGE(st.key) || !bytes.Equal(it.Key(), st.key) {
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

// resolveAction checks a's precondition against its stored entity st
// (read by readStored; zero for an upsert that replaces) and returns, for
// a merge into a stored entity, the merged properties to store (nil
// otherwise: the action's own value, or nothing for a delete), and the
// stored entity's Timestamp in ticks (0 if absent).
// REQUIRES: the partition lock is held.
func (p partition) resolveAction(a *driver.Action, st storedEntity) ([]driver.Property, int64, error) {
	if a.Type == driver.ActionUpsertReplace {
		// Needs nothing of the stored entity: the clock alone keeps its
		// Timestamp increasing.
		return nil, 0, nil
	}
	if st.err != nil {
		return nil, 0, p.db.storageErr(fmt.Sprintf("read of (%q, %q) in table #%d for a commit", p.pk, a.RowKey, p.tableID), st.err)
	}
	found := st.found
	var stamp int64
	rec := driver.Record(st.val)
	if found {
		var err error
		if stamp, err = rec.Timestamp(); err != nil {
			return nil, 0, corruptRecord(st.key, err)
		}
	}
	switch a.Type {
	case driver.ActionInsert:
		if found {
			return nil, 0, errorf(edm.CodeEntityAlreadyExists, "entity (%q, %q) already exists", p.pk, a.RowKey)
		}
		return nil, 0, nil
	case driver.ActionUpsertMerge:
		if !found {
			return nil, 0, nil
		}
	case driver.ActionUpdateMerge, driver.ActionUpdateReplace, driver.ActionDelete:
		if !found {
			return nil, 0, errorf(edm.CodeResourceNotFound, "entity (%q, %q) does not exist", p.pk, a.RowKey)
		}
		if a.IfMatch != "*" && a.IfMatch != driver.FormatETagTicks(stamp) {
			return nil, 0, errorf(edm.CodeUpdateConditionNotSatisfied, "etag %s does not match entity (%q, %q)", a.IfMatch, p.pk, a.RowKey)
		}
		if a.Type != driver.ActionUpdateMerge {
			return nil, stamp, nil // a delete, or a replace
		}
	}
	// Merge into the stored entity; the result must still fit Azure's
	// limits.
	old, err := rec.Properties()
	if err != nil {
		return nil, 0, corruptRecord(st.key, err)
	}
	upd := a.Properties
	if a.Record != nil {
		if upd, err = driver.Record(a.Record).Properties(); err != nil {
			return nil, 0, fmt.Errorf("engine: the record of (%q, %q) to merge does not decode: %w", p.pk, a.RowKey, err)
		}
	}
	merged := mergeProperties(old, upd)
	if code, msg := limits.Check(len(merged), limits.EntitySize(p.pk, a.RowKey, merged)); code != "" {
		return nil, 0, errorf(code, "%s", msg)
	}
	return merged, stamp, nil
}

// mergeProperties returns old with every property of upd added or, when
// old has the name, replaced. Both inputs must be sorted by name with
// unique names; so is the result. The result is a new, non-nil slice;
// values are shared with the inputs.
func mergeProperties(old, upd []driver.Property) []driver.Property {
	out := make([]driver.Property, 0, len(old)+len(upd))
	i, j := 0, 0
	for i < len(old) && j < len(upd) {
		switch c := strings.Compare(old[i].Name, upd[j].Name); {
		case c < 0:
			out = append(out, old[i])
			i++
		case c > 0:
			out = append(out, upd[j])
			j++
		default:
			out = append(out, upd[j])
			i++
			j++
		}
	}
	out = append(out, old[i:]...)
	return append(out, upd[j:]...)
}
