package tablestore

import (
	"context"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/structmap"
)

// Batch collects the actions of one entity group transaction. It is a
// convenience over SubmitTransaction: each method adds one
// TransactionAction, whose Entity is the *Entity given or, for the
// struct methods, StructEntity(v) (a struct or a pointer to one, mapped
// by the field rules of MarshalEntity and written as InsertStruct writes
// it). A Batch is not safe for concurrent use.
type Batch struct {
	table     *Table
	partition *Partition // nil for a table's batch
	actions   []TransactionAction
	// structs holds the struct actions' entities. A full block is
	// replaced by a new one, never grown, so the pointers the actions
	// hold stay valid.
	structs []structEntity
}

// NewBatch starts an empty transaction on the table.
func (t *Table) NewBatch() *Batch { return &Batch{table: t} }

// Insert adds an insert action.
func (b *Batch) Insert(e *Entity) *Batch { return b.add(ActionInsert, e, "") }

// Update adds an update action (Merge or Replace) with If-Match. An
// unknown mode makes Submit fail with InvalidInput at this action.
func (b *Batch) Update(e *Entity, mode UpdateMode, ifMatch ETag) *Batch {
	typ, _ := modeAction(mode, ActionUpdateMerge, ActionUpdateReplace)
	return b.add(typ, e, ifMatch)
}

// Upsert adds an upsert action (Merge or Replace).
func (b *Batch) Upsert(e *Entity, mode UpdateMode) *Batch {
	typ, _ := modeAction(mode, ActionUpsertMerge, ActionUpsertReplace)
	return b.add(typ, e, "")
}

// Delete adds a delete action with If-Match.
func (b *Batch) Delete(partitionKey, rowKey string, ifMatch ETag) *Batch {
	return b.add(ActionDelete, &Entity{PartitionKey: partitionKey, RowKey: rowKey}, ifMatch)
}

// InsertStruct adds an insert action for the entity the struct v
// describes (a struct or a pointer to one), as Table.InsertStruct writes
// it. When v is a pointer, its Timestamp and ETag fields (where the
// struct has them) are set on success.
func (b *Batch) InsertStruct(v any) *Batch { return b.add(ActionInsert, b.structEntity(v), "") }

// UpdateStruct adds an update action (Merge or Replace) with If-Match for
// the entity the struct v describes; see InsertStruct.
func (b *Batch) UpdateStruct(v any, mode UpdateMode, ifMatch ETag) *Batch {
	typ, _ := modeAction(mode, ActionUpdateMerge, ActionUpdateReplace)
	return b.add(typ, b.structEntity(v), ifMatch)
}

// UpsertStruct adds an upsert action (Merge or Replace) for the entity
// the struct v describes; see InsertStruct.
func (b *Batch) UpsertStruct(v any, mode UpdateMode) *Batch {
	typ, _ := modeAction(mode, ActionUpsertMerge, ActionUpsertReplace)
	return b.add(typ, b.structEntity(v), "")
}

// DeleteStruct adds a delete action with If-Match for the entity whose
// keys are the PartitionKey and RowKey fields of the struct v (a struct
// or a pointer to one); its other fields are not read.
func (b *Batch) DeleteStruct(v any, ifMatch ETag) *Batch {
	return b.add(ActionDelete, b.structEntity(v), ifMatch)
}

func (b *Batch) add(typ ActionType, e ActionEntity, ifMatch ETag) *Batch {
	b.actions = append(b.actions, TransactionAction{Type: typ, Entity: e, IfMatch: ifMatch})
	return b
}

// structEntity is StructEntity(v) without an allocation per call: the
// wrapper comes from a block at least as large as the batch so far.
func (b *Batch) structEntity(v any) ActionEntity {
	if len(b.structs) == cap(b.structs) {
		b.structs = make([]structEntity, 0, max(8, len(b.actions)))
	}
	b.structs = append(b.structs, structEntity{v})
	return &b.structs[len(b.structs)-1]
}

// Len returns the number of actions added so far.
func (b *Batch) Len() int { return len(b.actions) }

// Submit runs the collected actions with SubmitTransaction. In a
// partition's batch, actions with an empty PartitionKey get the
// partition's first (an entity's field is set, and so is the
// PartitionKey field of a struct passed by pointer; a struct passed by
// value is copied), and an action naming another partition fails with
// CommandsInBatchActOnDifferentPartitions at its index.
func (b *Batch) Submit(ctx context.Context) error {
	if p := b.partition; p != nil {
		for i := range b.actions {
			if err := p.ownAction(&b.actions[i]); err != nil {
				return asBatchError(i, err)
			}
		}
	}
	return b.table.SubmitTransaction(ctx, b.actions)
}

// ownAction gives a's entity or struct the partition's key when its
// PartitionKey is empty, and refuses one naming another partition with
// CommandsInBatchActOnDifferentPartitions. An action without an entity,
// or with a struct the field rules reject, is left to SubmitTransaction
// to report.
func (p *Partition) ownAction(a *TransactionAction) error {
	pk := ""
	switch e := a.Entity.(type) {
	case *Entity:
		if e == nil {
			return nil
		}
		if e.PartitionKey == "" {
			e.PartitionKey = p.pk
		}
		pk = e.PartitionKey
	case *structEntity:
		r, ok, err := structmap.Resolve(e.v, nil)
		if !ok || err != nil {
			return nil
		}
		if pk, _ = r.Keys(); pk == "" && r.SetPartitionKey(p.pk) {
			pk = p.pk
			if !r.Owned {
				e.v = r.Pointer() // the copy holding the key
			}
		}
	default:
		return nil
	}
	if pk != p.pk {
		return newError(edm.CodeCommandsInBatchActOnDifferentPartitions,
			"partition key %q differs from the partition's %q", pk, p.pk)
	}
	return nil
}
