package tablestore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCreateTableIfNotExists(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)

	for _, name := range []string{"Orders", "Order", "Orders2", "orderz"} {
		ok, err := db.TableExists(ctx, name)
		require.NoError(t, err)
		require.False(t, ok, name)
	}
	tbl, err := db.CreateTableIfNotExists(ctx, "Orders")
	require.NoError(t, err)
	e := &Entity{PartitionKey: "p", RowKey: "r"}
	require.NoError(t, tbl.Insert(ctx, e))

	// Again, in another case: the same table, data kept.
	again, err := db.CreateTableIfNotExists(ctx, "ORDERS")
	require.NoError(t, err)
	_, err = again.Get(ctx, "p", "r", nil)
	require.NoError(t, err)

	for name, want := range map[string]bool{"Orders": true, "orders": true, "Order": false, "Orders2": false} {
		ok, err := db.TableExists(ctx, name)
		require.NoError(t, err)
		require.Equal(t, want, ok, name)
		ok, err = db.Table(name).Exists(ctx)
		require.NoError(t, err)
		require.Equal(t, want, ok, name)
	}
	_, err = db.CreateTable(ctx, "Orders2")
	require.NoError(t, err)
	ok, err := db.TableExists(ctx, "Orders2")
	require.NoError(t, err)
	require.True(t, ok)

	require.NoError(t, db.DeleteTable(ctx, "orders"))
	ok, err = tbl.Exists(ctx)
	require.NoError(t, err)
	require.False(t, ok)

	_, err = db.TableExists(ctx, "no spaces")
	requireCode(t, err, CodeInvalidResourceName)
	_, err = db.CreateTableIfNotExists(ctx, "1bad")
	requireCode(t, err, CodeInvalidResourceName)

	require.NoError(t, db.Close())
	_, err = db.TableExists(ctx, "Orders")
	require.ErrorIs(t, err, ErrClosed)
	_, err = db.CreateTableIfNotExists(ctx, "Orders")
	require.ErrorIs(t, err, ErrClosed)
}
