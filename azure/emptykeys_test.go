package azure_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/tablestoretest"
)

// TestEmptyKeys writes, reads, queries and deletes entities with empty
// keys through the driver, which aztables alone refuses for an empty
// PartitionKey, against tablestore's server.
func TestEmptyKeys(t *testing.T) {
	ctx := context.Background()
	s := tablestoretest.NewServer(t)
	db := openRemote(t, s.ConnectionString())
	tb, err := db.CreateTable(ctx, "Empties")
	require.NoError(t, err)
	for _, k := range [][2]string{{"", ""}, {"", "r'1"}, {"p", ""}} {
		require.NoError(t, tb.Insert(ctx, &ts.Entity{PartitionKey: k[0], RowKey: k[1], Properties: map[string]any{"V": int32(1)}}))
	}
	e, err := tb.Get(ctx, "", "", nil)
	require.NoError(t, err)
	require.Equal(t, int32(1), e.Properties["V"])
	require.NoError(t, tb.Update(ctx, &ts.Entity{Properties: map[string]any{"W": int32(2)}}, ts.Merge, e.ETag))
	require.NoError(t, tb.Upsert(ctx, &ts.Entity{RowKey: "new"}, ts.Replace))
	require.NoError(t, tb.Partition("").NewBatch().
		Upsert(&ts.Entity{RowKey: "b1"}, ts.Merge).
		Update(&ts.Entity{RowKey: "r'1", Properties: map[string]any{"V": int32(3)}}, ts.Replace, ts.ETagAny).
		Delete("", "new", ts.ETagAny).
		Submit(ctx))
	var got []string
	for e, err := range tb.Query(ctx, ts.Query{Filter: "PartitionKey eq ''", Top: 1}) {
		require.NoError(t, err)
		got = append(got, e.RowKey)
	}
	require.Equal(t, []string{"", "b1", "r'1"}, got)
	e, err = tb.Get(ctx, "", "", nil)
	require.NoError(t, err)
	require.Equal(t, int32(2), e.Properties["W"])
	require.NoError(t, tb.Delete(ctx, "", "", ts.ETagAny))
	_, err = tb.Get(ctx, "", "", nil)
	require.ErrorIs(t, err, ts.ErrResourceNotFound)
	_, err = tb.Get(ctx, "p", "", nil)
	require.NoError(t, err)
}
