package tablestore

import "context"

// Batch collects the actions of one entity group transaction. It is a
// convenience over SubmitTransaction; a Batch is not safe for concurrent
// use.
type Batch struct {
	table     *Table
	partition *Partition // nil for a table's batch
	actions   []TransactionAction
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

func (b *Batch) add(typ ActionType, e *Entity, ifMatch ETag) *Batch {
	b.actions = append(b.actions, TransactionAction{Type: typ, Entity: e, IfMatch: ifMatch})
	return b
}

// Len returns the number of actions added so far.
func (b *Batch) Len() int { return len(b.actions) }

// Submit runs the collected actions with SubmitTransaction. In a
// partition's batch, actions with an empty PartitionKey get the
// partition's first, and an action naming another partition fails with
// CommandsInBatchActOnDifferentPartitions at its index.
func (b *Batch) Submit(ctx context.Context) error {
	if p := b.partition; p != nil {
		for i, a := range b.actions {
			if a.Entity == nil {
				continue
			}
			if a.Entity.PartitionKey == "" {
				a.Entity.PartitionKey = p.pk
			}
			if a.Entity.PartitionKey != p.pk {
				return asBatchError(i, newError(CodeCommandsInBatchActOnDifferentPartitions,
					"partition key %q differs from the partition's %q", a.Entity.PartitionKey, p.pk))
			}
		}
	}
	return b.table.SubmitTransaction(ctx, b.actions)
}
