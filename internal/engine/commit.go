package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/codec"
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
// transaction cannot reach another partition.
// REQUIRES: db.catMu held in read mode.
func (p partition) commit(actions []driver.Action) (driver.CommitResult, error) {
	db := p.db
	unlock := p.lock()
	defer unlock()

	b := db.pdb.NewBatch()
	defer b.Close()
	keyBufs := make([][]byte, len(actions))
	newProps := make([][]codec.Property, len(actions))
	var floor int64
	for i := range actions {
		a := &actions[i]
		key := p.key(nil, a.RowKey)
		keyBufs[i] = key
		props, stamp, err := p.resolveAction(a, key)
		if err != nil {
			if de, ok := err.(*driver.Error); ok {
				de.Index = i
			}
			return driver.CommitResult{}, err
		}
		newProps[i] = props
		floor = max(floor, stamp)
	}
	ts, err := db.clock.next(codec.TicksFromTime(db.opts.Clock()), floor)
	if err != nil {
		return driver.CommitResult{}, err
	}
	var enc []byte
	for i, a := range actions {
		if a.Type == driver.ActionDelete {
			_ = b.Delete(keyBufs[i], nil)
			continue
		}
		enc = codec.Encode(enc[:0], ts, newProps[i])
		_ = b.Set(keyBufs[i], enc, nil)
	}
	if err := b.Commit(db.writeOpts); err != nil {
		return driver.CommitResult{}, db.storageErr(fmt.Sprintf("commit to partition %q of table #%d", p.pk, p.tableID), err)
	}
	when := codec.TimeFromTicks(ts)
	return driver.CommitResult{Timestamp: when, ETag: codec.FormatETag(when)}, nil
}

// resolveAction checks a's precondition against the stored entity at key
// and returns the properties to store (nil for a delete) and the stored
// entity's Timestamp in ticks (0 if absent).
// REQUIRES: the partition lock is held.
func (p partition) resolveAction(a *driver.Action, key []byte) ([]codec.Property, int64, error) {
	if a.Type == driver.ActionUpsertReplace {
		// Needs nothing of the stored entity: the clock alone keeps its
		// Timestamp increasing.
		return a.Properties, 0, nil
	}
	val, closer, err := p.db.pdb.Get(key)
	found := true
	switch {
	case err == pebble.ErrNotFound:
		found = false
	case err != nil:
		return nil, 0, p.db.storageErr(fmt.Sprintf("read of (%q, %q) in table #%d for a commit", p.pk, a.RowKey, p.tableID), err)
	default:
		defer closer.Close()
	}
	var stamp int64
	rec := codec.Record(val)
	if found {
		if stamp, err = rec.Timestamp(); err != nil {
			return nil, 0, corruptRecord(key, err)
		}
	}
	switch a.Type {
	case driver.ActionInsert:
		if found {
			return nil, 0, errorf("EntityAlreadyExists", "entity (%q, %q) already exists", p.pk, a.RowKey)
		}
		return a.Properties, 0, nil
	case driver.ActionUpsertMerge:
		if !found {
			return a.Properties, 0, nil
		}
	case driver.ActionUpdateMerge, driver.ActionUpdateReplace, driver.ActionDelete:
		if !found {
			return nil, 0, errorf("ResourceNotFound", "entity (%q, %q) does not exist", p.pk, a.RowKey)
		}
		if a.IfMatch != "*" && a.IfMatch != codec.FormatETag(codec.TimeFromTicks(stamp)) {
			return nil, 0, errorf("UpdateConditionNotSatisfied", "etag %s does not match entity (%q, %q)", a.IfMatch, p.pk, a.RowKey)
		}
		if a.Type == driver.ActionDelete {
			return nil, stamp, nil
		}
		if a.Type == driver.ActionUpdateReplace {
			return a.Properties, stamp, nil
		}
	}
	// Merge into the stored entity; the result must still fit Azure's
	// limits.
	old, err := rec.Properties()
	if err != nil {
		return nil, 0, corruptRecord(key, err)
	}
	merged := mergeProperties(old, a.Properties)
	if code, msg := limits.Check(len(merged), limits.EntitySize(p.pk, a.RowKey, merged)); code != "" {
		return nil, 0, errorf(code, "%s", msg)
	}
	return merged, stamp, nil
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
