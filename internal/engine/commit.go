package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/codec"
	"github.com/tablestore/tablestore/internal/keys"
	"github.com/tablestore/tablestore/internal/limits"
)

// Commit implements driver.Table: it resolves the table and commits the
// actions on the partition of the first action's PartitionKey (the caller
// guarantees they all share it).
func (t *table) Commit(ctx context.Context, actions []driver.Action) (_ driver.CommitResult, err error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return driver.CommitResult{}, err
	}
	defer release()
	if err := t.db.writable(); err != nil {
		return driver.CommitResult{}, err
	}
	defer t.db.recoverStop("commit to table "+t.name, &err)
	t.db.catMu.RLock()
	defer t.db.catMu.RUnlock()
	info, err := t.resolveLocked()
	if err != nil {
		return driver.CommitResult{}, err
	}
	return t.db.partition(info.id, actions[0].PartitionKey).commit(actions)
}

// commit locks the partition, checks every action's precondition against
// the stored entity, computes the new values, and commits one Pebble batch
// in which every written entity gets the same new Timestamp, one the clock
// has never issued before and greater than every replaced entity's. Keys
// are the partition's: an action's PartitionKey is not read, so a
// transaction cannot reach another partition. The stored entities the
// actions need are read in key order through one iterator; the first
// failing action in action order is reported.
// REQUIRES: db.catMu held in read mode.
func (p partition) commit(actions []driver.Action) (driver.CommitResult, error) {
	db := p.db
	unlock := p.lock()
	defer unlock()

	ks := p.entityKeys(actions)
	reads, err := p.readStored(actions, ks)
	if err != nil {
		return driver.CommitResult{}, err
	}
	vals := make([]newValue, len(actions))
	var floor int64
	for i := range actions {
		v, stamp, err := p.resolveAction(&actions[i], ks[i], reads[i])
		if err != nil {
			if de, ok := err.(*driver.Error); ok {
				de.Index = i
			}
			return driver.CommitResult{}, err
		}
		vals[i] = v
		floor = max(floor, stamp)
	}
	ts, err := db.clock.next(codec.TicksFromTime(db.opts.Clock()), floor)
	if err != nil {
		return driver.CommitResult{}, err
	}
	size := batchHeaderLen
	for i := range actions {
		size += batchRecordOverhead + len(ks[i]) + vals[i].len()
	}
	b := db.pdb.NewBatchWithSize(size)
	defer b.Close()
	for i := range actions {
		if actions[i].Type == driver.ActionDelete {
			_ = b.Delete(ks[i], nil)
			continue
		}
		op := b.SetDeferred(len(ks[i]), vals[i].len())
		copy(op.Key, ks[i])
		vals[i].encode(op.Value[:0], ts)
		_ = op.Finish()
	}
	if err := b.Commit(db.writeOpts); err != nil {
		return driver.CommitResult{}, db.storageErr(fmt.Sprintf("commit to partition %q of table #%d", p.pk, p.tableID), err)
	}
	when := codec.TimeFromTicks(ts)
	return driver.CommitResult{Timestamp: when, ETag: codec.FormatETag(when)}, nil
}

// Sizes of a Pebble batch's encoding, to allocate a batch once: its
// header, and at most the kind byte and two length varints a record adds
// to its key and value.
const (
	batchHeaderLen      = 12
	batchRecordOverhead = 1 + 2*binary.MaxVarintLen32
)

// entityKeys returns the stored key of each action's entity, all in one
// slab.
func (p partition) entityKeys(actions []driver.Action) [][]byte {
	n := 0
	for i := range actions {
		n += 8 + len(p.pk) + 1 + len(actions[i].RowKey) // see keys.Entity
	}
	slab := make([]byte, 0, n)
	out := make([][]byte, len(actions))
	for i := range actions {
		start := len(slab)
		slab = p.key(slab, actions[i].RowKey)
		out[i] = slab[start:len(slab):len(slab)]
	}
	return out
}

// storedEntity is what a commit read of one entity: found reports it
// exists, and val holds a copy of its record.
type storedEntity struct {
	found bool
	val   []byte
	err   error // the read's storage error
}

// readStored reads the stored entities of every action that needs one
// (all but upserts that replace), in key order: one point read for a
// single action, else one iterator over the partition. The values are
// copied into one slab. An error here is the iterator's creation's; read
// errors are reported per action.
// REQUIRES: the partition lock is held.
func (p partition) readStored(actions []driver.Action, ks [][]byte) ([]storedEntity, error) {
	reads := make([]storedEntity, len(actions))
	var idx []int32
	for i := range actions {
		if actions[i].Type != driver.ActionUpsertReplace {
			if idx == nil {
				idx = make([]int32, 0, len(actions)-i)
			}
			idx = append(idx, int32(i))
		}
	}
	if len(idx) == 0 {
		return reads, nil
	}
	if len(idx) == 1 {
		i := idx[0]
		val, closer, err := p.db.pdb.Get(ks[i])
		switch {
		case err == pebble.ErrNotFound:
		case err != nil:
			reads[i].err = err
		default:
			reads[i] = storedEntity{found: true, val: bytes.Clone(val)}
			_ = closer.Close()
		}
		return reads, nil
	}
	if !slices.IsSortedFunc(idx, func(a, b int32) int { return bytes.Compare(ks[a], ks[b]) }) {
		slices.SortFunc(idx, func(a, b int32) int { return bytes.Compare(ks[a], ks[b]) })
	}
	lo, hi := keys.PartitionSpan(p.tableID, p.pk)
	it, err := p.db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, p.db.storageErr(fmt.Sprintf("read partition %q of table #%d for a commit", p.pk, p.tableID), err)
	}
	defer it.Close()
	var slab []byte
	for _, i := range idx {
		if !it.SeekGE(ks[i]) || !bytes.Equal(it.Key(), ks[i]) {
			reads[i].err = it.Error()
			continue
		}
		val, err := it.ValueAndErr()
		if err != nil {
			reads[i].err = err
			continue
		}
		start := len(slab)
		slab = append(slab, val...)
		reads[i] = storedEntity{found: true, val: slab[start:len(slab):len(slab)]}
	}
	return reads, nil
}

// newValue is the value an action stores: rec, a record whose Timestamp
// is still to be set, or props to encode; neither for a delete.
type newValue struct {
	rec   []byte
	props []codec.Property
}

// len returns the length of the stored record.
func (v newValue) len() int {
	if v.rec != nil {
		return len(v.rec)
	}
	return codec.EncodedLen(v.props)
}

// encode writes the stored record with Timestamp ts into dst, which has
// room for v.len() bytes.
func (v newValue) encode(dst []byte, ts int64) {
	if v.rec != nil {
		codec.SetTimestamp(append(dst, v.rec...), ts)
		return
	}
	codec.Encode(dst, ts, v.props)
}

// resolveAction checks a's precondition against the stored entity at key
// (read by readStored) and returns the value to store (none for a delete)
// and the stored entity's Timestamp in ticks (0 if absent).
// REQUIRES: the partition lock is held.
func (p partition) resolveAction(a *driver.Action, key []byte, st storedEntity) (newValue, int64, error) {
	given := newValue{rec: a.Record, props: a.Properties}
	if a.Type == driver.ActionUpsertReplace {
		// Needs nothing of the stored entity: the clock alone keeps its
		// Timestamp increasing.
		return given, 0, nil
	}
	if st.err != nil {
		return newValue{}, 0, p.db.storageErr(fmt.Sprintf("read of (%q, %q) in table #%d for a commit", p.pk, a.RowKey, p.tableID), st.err)
	}
	found := st.found
	var stamp int64
	rec := codec.Record(st.val)
	if found {
		var err error
		if stamp, err = rec.Timestamp(); err != nil {
			return newValue{}, 0, corruptRecord(key, err)
		}
	}
	switch a.Type {
	case driver.ActionInsert:
		if found {
			return newValue{}, 0, errorf("EntityAlreadyExists", "entity (%q, %q) already exists", p.pk, a.RowKey)
		}
		return given, 0, nil
	case driver.ActionUpsertMerge:
		if !found {
			return given, 0, nil
		}
	case driver.ActionUpdateMerge, driver.ActionUpdateReplace, driver.ActionDelete:
		if !found {
			return newValue{}, 0, errorf("ResourceNotFound", "entity (%q, %q) does not exist", p.pk, a.RowKey)
		}
		if a.IfMatch != "*" && a.IfMatch != codec.FormatETag(codec.TimeFromTicks(stamp)) {
			return newValue{}, 0, errorf("UpdateConditionNotSatisfied", "etag %s does not match entity (%q, %q)", a.IfMatch, p.pk, a.RowKey)
		}
		if a.Type == driver.ActionDelete {
			return newValue{}, stamp, nil
		}
		if a.Type == driver.ActionUpdateReplace {
			return given, stamp, nil
		}
	}
	// Merge into the stored entity; the result must still fit Azure's
	// limits.
	old, err := rec.Properties()
	if err != nil {
		return newValue{}, 0, corruptRecord(key, err)
	}
	upd := a.Properties
	if a.Record != nil {
		if upd, err = codec.Record(a.Record).Properties(); err != nil {
			return newValue{}, 0, fmt.Errorf("engine: the record of (%q, %q) to merge does not decode: %w", p.pk, a.RowKey, err)
		}
	}
	merged := mergeProperties(old, upd)
	if code, msg := limits.Check(len(merged), limits.EntitySize(p.pk, a.RowKey, merged)); code != "" {
		return newValue{}, 0, errorf(code, "%s", msg)
	}
	return newValue{props: merged}, stamp, nil
}

// mergeProperties returns old with every property of upd added or, when
// old has the name, replaced. Both inputs must be sorted by name with
// unique names; so is the result. The result is a new slice; values are
// shared with the inputs.
func mergeProperties(old, upd []codec.Property) []codec.Property {
	out := make([]codec.Property, 0, len(old)+len(upd))
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
