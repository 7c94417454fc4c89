package tablestore

import (
	"context"
	"errors"
)

// ActionType is the kind of one action in an entity group transaction.
// The names follow the Azure SDKs' transaction action types.
type ActionType uint8

const (
	ActionInsert        ActionType = iota + 1 // Azure's Add
	ActionUpdateMerge                         // update (merge) with IfMatch
	ActionUpdateReplace                       // update (replace) with IfMatch
	ActionUpsertMerge                         // Azure's InsertMerge
	ActionUpsertReplace                       // Azure's InsertReplace
	ActionDelete                              // delete with IfMatch
)

// TransactionAction is one action of an entity group transaction.
type TransactionAction struct {
	Type ActionType
	// Entity is the entity to write; for ActionDelete only PartitionKey and
	// RowKey are read. On success the engine sets its Timestamp and ETag.
	Entity *Entity
	// IfMatch is required for updates and deletes (ETagAny allowed) and
	// must be empty for the other actions.
	IfMatch ETag
}

// Limits of one entity group transaction, as Azure's.
const (
	MaxTransactionActions = 100
	MaxTransactionBytes   = 4 << 20 // by Azure's entity size accounting
)

// SubmitTransaction applies 1 to 100 actions on one partition of the table
// atomically and in order: either every action takes effect or none does.
// Every entity written gets the same new Timestamp and ETag.
//
// The whole transaction is validated before anything is read or written:
// the action count (InvalidInput), one PartitionKey
// (CommandsInBatchActOnDifferentPartitions at the first action with
// another key), each RowKey at most once (InvalidDuplicateRow at the
// repeat), the payload size (RequestBodyTooLarge at the action that
// exceeds 4 MiB), and each action as the single write would be. Then,
// under the partition's lock, each action's precondition is checked (the
// codes of Insert, Update, Upsert and Delete). A failure is a *BatchError
// whose Index is the 0-based index of the failing action (0 for a missing
// table or an empty transaction) and which unwraps to an *Error with
// Azure's code.
//
// Transactions on one partition serialize; on different partitions they
// run in parallel.
func (t *Table) SubmitTransaction(ctx context.Context, actions []TransactionAction) error {
	ops, err := prepareTransaction(actions)
	if err != nil {
		return err
	}
	i, err := t.commitOps(ctx, ops)
	return asBatchError(i, err)
}

// prepareTransaction validates a whole transaction; errors are *BatchError.
func prepareTransaction(actions []TransactionAction) ([]writeOp, error) {
	switch {
	case len(actions) == 0:
		return nil, asBatchError(0, newError(CodeInvalidInput, "a transaction needs at least one action"))
	case len(actions) > MaxTransactionActions:
		return nil, asBatchError(MaxTransactionActions, newError(CodeInvalidInput,
			"the transaction has %d actions; the maximum is %d", len(actions), MaxTransactionActions))
	}
	ops := make([]writeOp, len(actions))
	seen := make(map[string]struct{}, len(actions))
	size := 0
	for i, a := range actions {
		if a.Entity == nil {
			return nil, asBatchError(i, newError(CodeInvalidInput, "action has no entity"))
		}
		if pk0 := actions[0].Entity.PartitionKey; a.Entity.PartitionKey != pk0 {
			return nil, asBatchError(i, newError(CodeCommandsInBatchActOnDifferentPartitions,
				"partition key %q differs from the transaction's %q", a.Entity.PartitionKey, pk0))
		}
		if _, dup := seen[a.Entity.RowKey]; dup {
			return nil, asBatchError(i, newError(CodeInvalidDuplicateRow,
				"row key %q appears more than once in the transaction", a.Entity.RowKey))
		}
		seen[a.Entity.RowKey] = struct{}{}
		op, err := prepareOp(a.Type, a.Entity, a.IfMatch)
		if err != nil {
			return nil, asBatchError(i, err)
		}
		size += op.size
		if size > MaxTransactionBytes {
			return nil, asBatchError(i, newError(CodeRequestBodyTooLarge,
				"the transaction's payload exceeds %d bytes", MaxTransactionBytes))
		}
		ops[i] = op
	}
	return ops, nil
}

// asBatchError wraps a failing action's error with its index. Errors that
// are not about an action (ErrClosed, a context error, an I/O error) are
// returned as they are.
func asBatchError(i int, err error) error {
	var e *Error
	if err == nil || !errors.As(err, &e) {
		return err
	}
	return &BatchError{Index: i, Err: e}
}

// Batch collects the actions of one entity group transaction. It is a
// convenience over SubmitTransaction; a Batch is not safe for concurrent
// use.
type Batch struct {
	table   *Table
	actions []TransactionAction
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

// Submit runs the collected actions with SubmitTransaction.
func (b *Batch) Submit(ctx context.Context) error {
	return b.table.SubmitTransaction(ctx, b.actions)
}
