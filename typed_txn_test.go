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

// TestBatchStructActions checks the batch builder's struct actions: each
// adds the TransactionAction with Struct set, so a batch of them stores
// what the same batch of MarshalEntity's entities stores, sets the
// Timestamp and ETag fields of structs passed by pointer, and in a
// partition's batch fills an empty PartitionKey.
func TestBatchStructActions(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "BatchStructs")
	require.NoError(t, err)
	c := func(pk, rk string) *Customer {
		v := sampleCustomer()
		v.PartitionKey, v.RowKey = pk, rk
		return &v
	}
	a, b, byValue := c("p", "a"), c("p", "b"), *c("p", "v")
	require.NoError(t, tbl.NewBatch().InsertStruct(a).InsertStruct(b).UpsertStruct(byValue, Replace).Submit(ctx))
	require.NotEmpty(t, a.ETag, "a struct passed by pointer gets its ETag")
	require.Equal(t, a.ETag, b.ETag)
	require.False(t, a.Timestamp.IsZero())
	require.Empty(t, byValue.ETag, "a struct passed by value is not changed")
	for _, v := range []*Customer{a, b, &byValue} {
		got, err := GetAs[Customer](ctx, tbl, v.PartitionKey, v.RowKey, nil)
		require.NoError(t, err)
		want, err := MarshalEntity(v)
		require.NoError(t, err)
		e := mustGet(t, tbl, v.PartitionKey, v.RowKey)
		requireSameProperties(t, want.Properties, e.Properties)
		require.Equal(t, v.Name, got.Name)
	}

	// Update with another version's ETag fails at its index and changes
	// nothing.
	first := a.ETag
	a.Name = "changed"
	require.NoError(t, tbl.NewBatch().UpdateStruct(a, Merge, a.ETag).Submit(ctx))
	require.NotEqual(t, first, a.ETag)
	b.Name = "never"
	err = tbl.NewBatch().UpsertStruct(c("p", "c"), Merge).UpdateStruct(b, Replace, a.ETag).Submit(ctx)
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, 1, be.Index)
	requireCode(t, err, CodeUpdateConditionNotSatisfied)
	_, err = tbl.Get(ctx, "p", "c", nil)
	requireCode(t, err, CodeResourceNotFound)

	// DeleteStruct reads the keys; an unknown mode fails at its action.
	require.NoError(t, tbl.NewBatch().DeleteStruct(b, ETagAny).DeleteStruct(byValue, ETagAny).Submit(ctx))
	_, err = tbl.Get(ctx, "p", "b", nil)
	requireCode(t, err, CodeResourceNotFound)
	err = tbl.NewBatch().UpsertStruct(a, UpdateMode(9)).Submit(ctx)
	require.ErrorAs(t, err, &be)
	requireCode(t, err, CodeInvalidInput)

	// In a partition's batch, an empty PartitionKey becomes the
	// partition's: in the caller's struct when passed by pointer.
	p := tbl.Partition("q")
	byPtr, byVal := c("", "1"), *c("", "2")
	require.NoError(t, p.NewBatch().InsertStruct(byPtr).InsertStruct(byVal).Submit(ctx))
	require.Equal(t, "q", byPtr.PartitionKey)
	require.Empty(t, byVal.PartitionKey, "a struct passed by value is copied, not changed")
	for _, rk := range []string{"1", "2"} {
		_, err := GetAs[Customer](ctx, tbl, "q", rk, nil)
		require.NoError(t, err)
	}
	err = p.NewBatch().UpsertStruct(c("q", "3"), Merge).UpsertStruct(c("other", "4"), Merge).Submit(ctx)
	require.ErrorAs(t, err, &be)
	require.Equal(t, 1, be.Index)
	requireCode(t, err, CodeCommandsInBatchActOnDifferentPartitions)
	_, err = tbl.Get(ctx, "q", "3", nil)
	requireCode(t, err, CodeResourceNotFound)

	// A value that is no struct fails as SubmitTransaction fails it.
	err = tbl.NewBatch().InsertStruct(7).Submit(ctx)
	require.ErrorAs(t, err, &be)
	requireCode(t, err, CodeInvalidValueType)
}
