package tablestore

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTransactionStructsMatchMaps submits every struct write case as a
// transaction action twice: as Struct, and as Entity set to MarshalEntity's
// result. Errors and stored entities must be the same.
func TestTransactionStructsMatchMaps(t *testing.T) {
	db := openTestDB(t, nil)
	structs, err := db.CreateTable(ctx, "Structs")
	require.NoError(t, err)
	maps, err := db.CreateTable(ctx, "Maps")
	require.NoError(t, err)
	for name, v := range structWriteCases() {
		for _, typ := range []ActionType{ActionUpsertMerge, ActionUpsertReplace, ActionInsert} {
			t.Run(fmt.Sprintf("%s/%s", name, typ), func(t *testing.T) {
				e, marshalErr := MarshalEntity(v)
				pk := "p"
				if marshalErr == nil {
					pk = e.PartitionKey
				}
				first := func() *Entity {
					return &Entity{PartitionKey: pk, RowKey: "first", Properties: map[string]any{"X": int32(1)}}
				}
				gotErr := structs.SubmitTransaction(ctx, []TransactionAction{
					{Type: ActionUpsertReplace, Entity: first()},
					{Type: typ, Struct: v},
				})
				var wantErr error
				if marshalErr != nil {
					wantErr = asBatchError(1, marshalErr)
				} else {
					wantErr = maps.SubmitTransaction(ctx, []TransactionAction{
						{Type: ActionUpsertReplace, Entity: first()},
						{Type: typ, Entity: e},
					})
				}
				require.Equal(t, errText(wantErr), errText(gotErr))
				if wantErr != nil {
					return
				}
				got, err := structs.Get(ctx, e.PartitionKey, e.RowKey, nil)
				require.NoError(t, err)
				want, err := maps.Get(ctx, e.PartitionKey, e.RowKey, nil)
				require.NoError(t, err)
				requireSameProperties(t, want.Properties, got.Properties)
				if c, ok := v.(*Customer); ok {
					require.Equal(t, got.ETag, c.ETag, "the struct's ETag is set")
					require.Equal(t, got.Timestamp, c.Timestamp, "the struct's Timestamp is set")
				}
			})
		}
	}
}

// TestTransactionStructForm checks the checks of a transaction's form
// with structs among its actions.
func TestTransactionStructForm(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "Txn")
	require.NoError(t, err)
	c := func(pk, rk string) *Customer {
		v := sampleCustomer()
		v.PartitionKey, v.RowKey = pk, rk
		return &v
	}
	ent := func(pk, rk string) *Entity {
		return &Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"A": "a"}}
	}
	tests := []struct {
		name    string
		actions []TransactionAction
		code    Code
		index   int
	}{
		{"both entity and struct", []TransactionAction{
			{Type: ActionUpsertMerge, Struct: c("p", "a")},
			{Type: ActionUpsertMerge, Entity: ent("p", "b"), Struct: c("p", "b")},
		}, CodeInvalidInput, 1},
		{"neither", []TransactionAction{
			{Type: ActionUpsertMerge, Struct: c("p", "a")},
			{Type: ActionUpsertMerge},
		}, CodeInvalidInput, 1},
		{"struct repeats an entity's row", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "b")},
			{Type: ActionUpsertMerge, Struct: c("p", "a")},
			{Type: ActionUpsertMerge, Struct: c("p", "b")},
		}, CodeInvalidDuplicateRow, 2},
		{"first repeat in action order", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "z")},
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
			{Type: ActionUpsertMerge, Struct: c("p", "z")},
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
		}, CodeInvalidDuplicateRow, 2},
		{"repeat after a bad action", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "z")},
			{Type: ActionUpsertMerge, Struct: 7},
			{Type: ActionUpsertMerge, Struct: c("p", "z")},
		}, CodeInvalidValueType, 1},
		{"struct on another partition", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
			{Type: ActionUpsertMerge, Struct: c("q", "b")},
		}, CodeCommandsInBatchActOnDifferentPartitions, 1},
		{"delete by struct needs if-match", []TransactionAction{
			{Type: ActionUpsertMerge, Entity: ent("p", "a")},
			{Type: ActionDelete, Struct: c("p", "b")},
		}, CodeInvalidInput, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tbl.SubmitTransaction(ctx, tc.actions)
			var be *BatchError
			require.ErrorAs(t, err, &be)
			require.Equal(t, tc.index, be.Index, "%v", err)
			require.Equal(t, tc.code, be.Err.Code, "%v", err)
		})
	}
	page, err := tbl.QueryPage(ctx, Query{})
	require.NoError(t, err)
	require.Empty(t, page.Entities, "failed transactions write nothing")

	// A struct by value is written but, being a copy, gets no version.
	byValue, byPointer := *c("p", "v"), c("p", "w")
	require.NoError(t, tbl.SubmitTransaction(ctx, []TransactionAction{
		{Type: ActionInsert, Struct: byValue},
		{Type: ActionInsert, Struct: byPointer},
	}))
	require.Empty(t, byValue.ETag)
	got, err := tbl.Get(ctx, "p", "w", nil)
	require.NoError(t, err)
	require.Equal(t, got.ETag, byPointer.ETag)
	require.NoError(t, tbl.SubmitTransaction(ctx, []TransactionAction{{Type: ActionDelete, Struct: c("p", "v"), IfMatch: ETagAny}}))
	_, err = tbl.Get(ctx, "p", "v", nil)
	requireCode(t, err, CodeResourceNotFound)
}
