package tablestore

import "context"

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
	Type   ActionType
	Entity *Entity // for ActionDelete only PartitionKey and RowKey are read
	// IfMatch is required for updates and deletes (ETagAny allowed) and
	// must be empty for the other actions.
	IfMatch ETag
}

// SubmitTransaction applies 1 to 100 actions on one partition atomically.
func (t *Table) SubmitTransaction(ctx context.Context, actions []TransactionAction) error {
	panic("skeleton")
}
