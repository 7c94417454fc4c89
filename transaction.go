package tablestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablestore/tablestore/driver"
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
	txn, err := prepareTransaction(actions)
	if err != nil {
		return err
	}
	res, err := t.drv.Commit(ctx, txn)
	if err != nil {
		return mapError(err, true)
	}
	for _, a := range actions {
		if a.Type != ActionDelete {
			a.Entity.Timestamp, a.Entity.ETag = res.Timestamp, ETag(res.ETag)
		}
	}
	return nil
}

// prepareTransaction validates a whole transaction; errors are *BatchError.
func prepareTransaction(actions []TransactionAction) ([]driver.Action, error) {
	switch {
	case len(actions) == 0:
		return nil, asBatchError(0, newError(CodeInvalidInput, "a transaction needs at least one action"))
	case len(actions) > MaxTransactionActions:
		return nil, asBatchError(MaxTransactionActions, newError(CodeInvalidInput,
			"the transaction has %d actions; the maximum is %d", len(actions), MaxTransactionActions))
	}
	txn := make([]driver.Action, len(actions))
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
		da, n, err := prepareAction(a.Type, a.Entity, a.IfMatch)
		if err != nil {
			return nil, asBatchError(i, err)
		}
		size += n
		if size > MaxTransactionBytes {
			return nil, asBatchError(i, newError(CodeRequestBodyTooLarge,
				"the transaction's payload exceeds %d bytes", MaxTransactionBytes))
		}
		txn[i] = da
	}
	return txn, nil
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
