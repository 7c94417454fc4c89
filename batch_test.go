package tablestore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/edm"
)

// TestBatchStructActions checks the batch builder's struct actions: each
// adds the TransactionAction whose Entity is StructEntity(v), so a batch
// of them stores what the same batch of MarshalEntity's entities stores,
// sets the Timestamp and ETag fields of structs passed by pointer, and in
// a partition's batch fills an empty PartitionKey.
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
	require.NoError(t, tbl.NewBatch().Insert(StructEntity(a)).Insert(StructEntity(b)).Upsert(StructEntity(byValue), Replace).Submit(ctx))
	require.NotEmpty(t, a.ETag, "a struct passed by pointer gets its ETag")
	require.Equal(t, a.ETag, b.ETag)
	require.False(t, a.Timestamp.IsZero())
	require.Empty(t, byValue.ETag, "a struct passed by value is not changed")
	for _, v := range []*Customer{a, b, &byValue} {
		got, err := GetStruct[Customer](ctx, tbl, v.PartitionKey, v.RowKey, nil)
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
	require.NoError(t, tbl.NewBatch().Update(StructEntity(a), Merge, a.ETag).Submit(ctx))
	require.NotEqual(t, first, a.ETag)
	b.Name = "never"
	err = tbl.NewBatch().Upsert(StructEntity(c("p", "c")), Merge).Update(StructEntity(b), Replace, a.ETag).Submit(ctx)
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, 1, be.Index)
	requireCode(t, err, edm.CodeUpdateConditionNotSatisfied)
	_, err = tbl.Get(ctx, "p", "c", nil)
	requireCode(t, err, edm.CodeResourceNotFound)

	// Delete takes the struct's keys; an unknown mode fails at its action.
	require.NoError(t, tbl.NewBatch().Delete(b.PartitionKey, b.RowKey, ETagAny).Delete(byValue.PartitionKey, byValue.RowKey, ETagAny).Submit(ctx))
	_, err = tbl.Get(ctx, "p", "b", nil)
	requireCode(t, err, edm.CodeResourceNotFound)
	err = tbl.NewBatch().Upsert(StructEntity(a), UpdateMode(9)).Submit(ctx)
	require.ErrorAs(t, err, &be)
	requireCode(t, err, edm.CodeInvalidInput)

	// In a partition's batch, an empty PartitionKey becomes the
	// partition's: in the caller's struct when passed by pointer.
	p := tbl.Partition("q")
	byPtr, byVal := c("", "1"), *c("", "2")
	require.NoError(t, p.NewBatch().Insert(StructEntity(byPtr)).Insert(StructEntity(byVal)).Submit(ctx))
	require.Equal(t, "q", byPtr.PartitionKey)
	require.Empty(t, byVal.PartitionKey, "a struct passed by value is copied, not changed")
	for _, rk := range []string{"1", "2"} {
		_, err := GetStruct[Customer](ctx, tbl, "q", rk, nil)
		require.NoError(t, err)
	}
	err = p.NewBatch().Upsert(StructEntity(c("q", "3")), Merge).Upsert(StructEntity(c("other", "4")), Merge).Submit(ctx)
	require.ErrorAs(t, err, &be)
	require.Equal(t, 1, be.Index)
	requireCode(t, err, edm.CodeCommandsInBatchActOnDifferentPartitions)
	_, err = tbl.Get(ctx, "q", "3", nil)
	requireCode(t, err, edm.CodeResourceNotFound)

	// A value that is no struct fails as SubmitTransaction fails it.
	err = tbl.NewBatch().Insert(StructEntity(7)).Submit(ctx)
	require.ErrorAs(t, err, &be)
	requireCode(t, err, edm.CodeInvalidValueType)
}
