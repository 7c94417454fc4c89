package tablestore

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/internal/codec"
	"github.com/tablestore/tablestore/internal/keys"
)

// writeOp is one validated write, ready to run under its partition's lock.
// Single-entity writes are one-op transactions: both go through commitOps.
type writeOp struct {
	typ     ActionType
	pk, rk  string
	props   []codec.Property // validated and sorted; nil for deletes
	size    int              // by Azure's formula (entitySize)
	ifMatch ETag
	entity  *Entity // receives Timestamp and ETag on success; nil for deletes
}

// prepareOp validates one action without reading anything: keys, the
// If-Match rules of its type, and every property. Errors carry Azure's
// codes (see validateKey and encodeProperties).
func prepareOp(typ ActionType, e *Entity, ifMatch ETag) (writeOp, error) {
	if e == nil {
		return writeOp{}, newError(CodeInvalidInput, "entity is nil")
	}
	op := writeOp{typ: typ, pk: e.PartitionKey, rk: e.RowKey, ifMatch: ifMatch}
	switch typ {
	case ActionInsert, ActionUpsertMerge, ActionUpsertReplace:
		if ifMatch != "" {
			return op, newError(CodeInvalidInput, "%s takes no if-match", typ)
		}
	case ActionUpdateMerge, ActionUpdateReplace, ActionDelete:
		if ifMatch == "" {
			return op, newError(CodeInvalidInput, "%s requires an if-match etag (use ETagAny to match any)", typ)
		}
		if err := checkIfMatch(ifMatch); err != nil {
			return op, err
		}
	default:
		return op, newError(CodeInvalidInput, "unknown action type %d", uint8(typ))
	}
	if err := validateKey("PartitionKey", op.pk); err != nil {
		return op, err
	}
	if err := validateKey("RowKey", op.rk); err != nil {
		return op, err
	}
	if typ == ActionDelete {
		op.size = entitySize(op.pk, op.rk, nil)
		return op, nil
	}
	props, size, err := encodePropertiesSized(e.Properties)
	if err != nil {
		return op, err
	}
	size += entitySize(op.pk, op.rk, nil)
	if err := checkLimits(len(props), size); err != nil {
		return op, err
	}
	op.props, op.entity, op.size = props, e, size
	return op, nil
}

// commitOps applies ops to the table atomically: all or nothing. All ops
// must share one PartitionKey and touch distinct RowKeys (the caller
// checks). It locks the partition, checks every op's precondition against
// the stored entity, computes the new values, and commits one Pebble batch
// in which every written entity gets the same new Timestamp. On failure it
// returns the index of the failing op and its error; nothing was written.
func (t *Table) commitOps(ctx context.Context, ops []writeOp) (int, error) {
	db := t.db
	release, err := db.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	db.catMu.RLock()
	defer db.catMu.RUnlock()
	info, err := t.resolveLocked()
	if err != nil {
		return 0, err
	}
	unlock := db.locks.lock(info.id, ops[0].pk)
	defer unlock()

	b := db.pdb.NewBatch()
	defer b.Close()
	keyBufs := make([][]byte, len(ops))
	newProps := make([][]codec.Property, len(ops))
	var floor int64
	for i := range ops {
		op := &ops[i]
		key := keys.Entity(nil, info.id, op.pk, op.rk)
		keyBufs[i] = key
		props, stamp, err := t.resolveOp(op, key)
		if err != nil {
			return i, err
		}
		newProps[i] = props
		floor = max(floor, stamp)
	}
	ts, err := db.clock.next(ticksFromTime(db.opts.Clock()), floor)
	if err != nil {
		return 0, err
	}
	var enc []byte
	for i, op := range ops {
		if op.typ == ActionDelete {
			_ = b.Delete(keyBufs[i], nil)
			continue
		}
		enc = codec.Encode(enc[:0], ts, newProps[i])
		_ = b.Set(keyBufs[i], enc, nil)
	}
	if err := b.Commit(db.writeOpts); err != nil {
		return 0, err
	}
	when := timeFromTicks(ts)
	etag := etagFor(when)
	for _, op := range ops {
		if op.entity != nil {
			op.entity.Timestamp = when
			op.entity.ETag = etag
		}
	}
	return 0, nil
}

// resolveOp checks op's precondition against the stored entity at key and
// returns the properties to store (nil for a delete) and the stored
// entity's Timestamp in ticks (0 if absent).
// REQUIRES: the partition lock is held.
func (t *Table) resolveOp(op *writeOp, key []byte) ([]codec.Property, int64, error) {
	if op.typ == ActionUpsertReplace {
		// Needs nothing of the stored entity: the clock alone keeps its
		// Timestamp increasing.
		return op.props, 0, nil
	}
	val, closer, err := t.db.pdb.Get(key)
	found := true
	switch {
	case err == pebble.ErrNotFound:
		found = false
	case err != nil:
		return nil, 0, err
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
	switch op.typ {
	case ActionInsert:
		if found {
			return nil, 0, newError(CodeEntityAlreadyExists, "entity (%q, %q) already exists", op.pk, op.rk)
		}
		return op.props, 0, nil
	case ActionUpsertMerge:
		if !found {
			return op.props, 0, nil
		}
	case ActionUpdateMerge, ActionUpdateReplace, ActionDelete:
		if !found {
			return nil, 0, newError(CodeResourceNotFound, "entity (%q, %q) does not exist", op.pk, op.rk)
		}
		if op.ifMatch != ETagAny && op.ifMatch != etagFor(timeFromTicks(stamp)) {
			return nil, 0, newError(CodeUpdateConditionNotSatisfied, "etag %s does not match entity (%q, %q)", op.ifMatch, op.pk, op.rk)
		}
		if op.typ == ActionDelete {
			return nil, stamp, nil
		}
		if op.typ == ActionUpdateReplace {
			return op.props, stamp, nil
		}
	}
	// Merge into the stored entity; the result must still fit Azure's
	// limits.
	old, err := rec.Properties()
	if err != nil {
		return nil, 0, corruptRecord(key, err)
	}
	merged := mergeProperties(old, op.props)
	if err := checkEntityLimits(op.pk, op.rk, merged); err != nil {
		return nil, 0, err
	}
	return merged, stamp, nil
}

// String returns the value of the matching aztables TransactionType
// ("add", "updatemerge", "updatereplace", "insertmerge", "insertreplace",
// "delete"), so aztables.TransactionType(a.String()) names the same action.
func (a ActionType) String() string {
	switch a {
	case ActionInsert:
		return "add"
	case ActionUpdateMerge:
		return "updatemerge"
	case ActionUpdateReplace:
		return "updatereplace"
	case ActionUpsertMerge:
		return "insertmerge"
	case ActionUpsertReplace:
		return "insertreplace"
	case ActionDelete:
		return "delete"
	}
	return fmt.Sprintf("ActionType(%d)", uint8(a))
}
