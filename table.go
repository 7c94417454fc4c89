package tablestore

import (
	"context"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/internal/codec"
	"github.com/tablestore/tablestore/internal/keys"
)

// Table is a handle on one table. It is cheap, safe for concurrent use,
// and addresses the table by name: after DeleteTable and CreateTable of the
// same name, an old handle addresses the new table.
//
// Every write validates its input completely before it reads or writes
// anything, so a rejected write changes nothing. Writes to one partition
// are serialized; reads take no lock and see only committed writes.
type Table struct {
	db    *DB
	name  string
	cache atomic.Pointer[tableCache]
}

// Name returns the name the handle was made with.
func (t *Table) Name() string { return t.name }

// Insert adds a new entity. On success it sets e.Timestamp and e.ETag.
// Errors: EntityAlreadyExists, TableNotFound, and the validation codes
// (PropertiesNeedValue, OutOfRangeInput, KeyValueTooLarge,
// PropertyNameInvalid, PropertyNameTooLong, InvalidValueType,
// PropertyValueTooLarge, TooManyProperties, EntityTooLarge, InvalidInput).
func (t *Table) Insert(ctx context.Context, e *Entity) error {
	return t.write(ctx, ActionInsert, e, "")
}

// Update changes an existing entity if its ETag matches ifMatch (ETagAny
// matches any). Merge keeps stored properties not in e; Replace drops
// them. On success it sets e.Timestamp and e.ETag.
// Errors: ResourceNotFound when absent, UpdateConditionNotSatisfied on an
// ETag mismatch, InvalidInput for an empty or malformed ifMatch (see
// ETag) or a bad mode,
// EntityTooLarge or TooManyProperties when a merge result exceeds Azure's
// limits, TableNotFound, and the validation codes of Insert.
func (t *Table) Update(ctx context.Context, e *Entity, mode UpdateMode, ifMatch ETag) error {
	typ, err := modeAction(mode, ActionUpdateMerge, ActionUpdateReplace)
	if err != nil {
		return err
	}
	return t.write(ctx, typ, e, ifMatch)
}

// Upsert inserts the entity, or updates it (Merge or Replace) if it exists,
// whatever its ETag. On success it sets e.Timestamp and e.ETag.
// Errors: those of Update except ResourceNotFound and
// UpdateConditionNotSatisfied.
func (t *Table) Upsert(ctx context.Context, e *Entity, mode UpdateMode) error {
	typ, err := modeAction(mode, ActionUpsertMerge, ActionUpsertReplace)
	if err != nil {
		return err
	}
	return t.write(ctx, typ, e, "")
}

// Delete removes an entity if its ETag matches ifMatch (ETagAny matches
// any). Errors: ResourceNotFound, UpdateConditionNotSatisfied,
// InvalidInput for an empty or malformed ifMatch (see ETag),
// TableNotFound, and the key codes.
func (t *Table) Delete(ctx context.Context, partitionKey, rowKey string, ifMatch ETag) error {
	return t.write(ctx, ActionDelete, &Entity{PartitionKey: partitionKey, RowKey: rowKey}, ifMatch)
}

func modeAction(mode UpdateMode, merge, replace ActionType) (ActionType, error) {
	switch mode {
	case Merge:
		return merge, nil
	case Replace:
		return replace, nil
	}
	return 0, newError(CodeInvalidInput, "unknown update mode %d", uint8(mode))
}

// write runs one single-entity write as a one-op transaction.
func (t *Table) write(ctx context.Context, typ ActionType, e *Entity, ifMatch ETag) error {
	op, err := prepareOp(typ, e, ifMatch)
	if err != nil {
		return err
	}
	_, err = t.commitOps(ctx, []writeOp{op})
	return err
}

// GetOptions adjust a Get.
type GetOptions struct {
	// Select lists the properties to return; nil returns all. PartitionKey,
	// RowKey, Timestamp and ETag are always returned; a selected property
	// the entity lacks is absent from Properties.
	Select []string
}

// Get reads one entity. The returned entity is the caller's to keep.
// Errors: ResourceNotFound, TableNotFound, InvalidInput for a bad Select,
// and the key codes of Insert.
func (t *Table) Get(ctx context.Context, partitionKey, rowKey string, opts *GetOptions) (*Entity, error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if err := validateKey("PartitionKey", partitionKey); err != nil {
		return nil, err
	}
	if err := validateKey("RowKey", rowKey); err != nil {
		return nil, err
	}
	var sel []string
	if opts != nil && opts.Select != nil {
		if err := validateSelect(opts.Select); err != nil {
			return nil, err
		}
		sel = opts.Select
	}
	info, err := t.resolve()
	if err != nil {
		return nil, err
	}
	key := keys.Entity(nil, info.id, partitionKey, rowKey)
	val, closer, err := t.db.pdb.Get(key)
	if err == pebble.ErrNotFound {
		return nil, newError(CodeResourceNotFound, "entity (%q, %q) does not exist", partitionKey, rowKey)
	}
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return decodeEntity(partitionKey, rowKey, codec.Record(val), sel) // errors already name the entity
}
