package tablestore

import (
	"context"

	"github.com/tablestore/tablestore/edm"
)

// Batch collects the actions of one entity group transaction. It is a
// convenience over SubmitTransaction: each method adds one
// TransactionAction whose Entity is the ActionEntity given (an *Entity,
// a *RawEntity, or StructEntity(v) for a struct). A Batch is not safe for
// concurrent use.
type Batch struct {
	table     *Table
	partition *Partition // nil for a table's batch
	actions   []TransactionAction
}

// NewBatch starts an empty transaction on the table.
func (t *Table) NewBatch() *Batch { return &Batch{table: t} }

// NewBatch starts an empty entity group transaction on the partition. Its
// actions may leave PartitionKey "" (Batch.Delete takes "" too); one
// naming another partition makes Submit fail with a *BatchError at that
// action, code CommandsInBatchActOnDifferentPartitions.
func (p *Partition) NewBatch() *Batch { return &Batch{table: p.t, partition: p} }

// Insert adds an insert action.
func (b *Batch) Insert(e ActionEntity) *Batch { return b.add(ActionInsert, e, "") }

// Update adds an update action (Merge or Replace) with If-Match. An
// unknown mode makes Submit fail with InvalidInput at this action.
func (b *Batch) Update(e ActionEntity, mode UpdateMode, ifMatch ETag) *Batch {
	typ, _ := modeAction(mode, ActionUpdateMerge, ActionUpdateReplace)
	return b.add(typ, e, ifMatch)
}

// Upsert adds an upsert action (Merge or Replace).
func (b *Batch) Upsert(e ActionEntity, mode UpdateMode) *Batch {
	typ, _ := modeAction(mode, ActionUpsertMerge, ActionUpsertReplace)
	return b.add(typ, e, "")
}

// Delete adds a delete action with If-Match.
func (b *Batch) Delete(partitionKey, rowKey string, ifMatch ETag) *Batch {
	return b.add(ActionDelete, &Entity{PartitionKey: partitionKey, RowKey: rowKey}, ifMatch)
}

func (b *Batch) add(typ ActionType, e ActionEntity, ifMatch ETag) *Batch {
	b.actions = append(b.actions, TransactionAction{Type: typ, Entity: e, IfMatch: ifMatch})
	return b
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

// ownAction gives a's entity the partition's key when its PartitionKey
// is empty, and refuses one naming another partition with
// CommandsInBatchActOnDifferentPartitions; see Partition.own.
func (p *Partition) ownAction(a *TransactionAction) error {
	if pk, ok := p.own(a.Entity); ok && pk != p.pk {
		return newError(edm.CodeCommandsInBatchActOnDifferentPartitions,
			"partition key %q differs from the partition's %q", pk, p.pk)
	}
	return nil
}
