package tablestore_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// TestOpenMustExist checks that MustExist refuses every directory Open
// would make a new store in, with ResourceNotFound naming the directory,
// and creates nothing; and that it opens existing stores, with or
// without tables.
func TestOpenMustExist(t *testing.T) {
	ctx := context.Background()
	must := &ts.Options{MustExist: true}
	base := t.TempDir()
	requireNoStore := func(dir, why string) {
		t.Helper()
		before, _ := os.ReadDir(dir)
		db, err := ts.Open(dir, must)
		require.Nil(t, db)
		require.ErrorIs(t, err, ts.ErrResourceNotFound)
		require.Equal(t, edm.CodeResourceNotFound, ts.ErrorCode(err))
		require.ErrorContains(t, err, `no store in "`+dir+`": `+why)
		after, _ := os.ReadDir(dir)
		require.Equal(t, len(before), len(after), "nothing is created in %s", dir)
	}

	missing := filepath.Join(base, "missing")
	requireNoStore(missing, "the directory does not exist")
	_, err := os.Stat(missing)
	require.ErrorIs(t, err, os.ErrNotExist, "the directory is not created")

	empty := filepath.Join(base, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	requireNoStore(empty, "the directory is empty")

	// What a creation killed before its first write leaves.
	left := filepath.Join(base, "leftovers")
	require.NoError(t, os.Mkdir(left, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(left, "LOCK"), nil, 0o644))
	requireNoStore(left, "the directory holds only the start of a store creation that did not finish")

	// Files that are no store: ErrNotStore, as without MustExist.
	other := filepath.Join(base, "other")
	require.NoError(t, os.Mkdir(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "notes.txt"), []byte("x"), 0o644))
	_, err = ts.Open(other, must)
	require.ErrorIs(t, err, ts.ErrNotStore)

	// A store with no table, then one with a table, opens.
	store := filepath.Join(base, "store")
	db, err := ts.Open(store, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db, err = ts.Open(store, must)
	require.NoError(t, err)
	_, err = db.CreateTable(ctx, "People")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db, err = ts.Open(store, must)
	require.NoError(t, err)
	exists, err := db.Table("People").Exists(ctx)
	require.NoError(t, err)
	require.True(t, exists)
	require.NoError(t, db.Close())

	// OpenInMemory ignores it.
	db, err = ts.OpenInMemory(must)
	require.NoError(t, err)
	require.NoError(t, db.Close())
}

// TestOpenTwiceInProcess checks the message for a store already open.
func TestOpenTwiceInProcess(t *testing.T) {
	dir := t.TempDir()
	db, err := ts.Open(dir, nil)
	require.NoError(t, err)
	defer db.Close()
	_, err = ts.Open(dir, nil)
	require.ErrorContains(t, err, "the store is already open in this process")
	require.False(t, errors.Is(err, ts.ErrResourceNotFound))
}
