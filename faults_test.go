package tablestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/edm"
)

func TestQueryIteratorFollowsTableIdentity(t *testing.T) {
	for _, recreate := range []bool{false, true} {
		t.Run(fmt.Sprintf("recreate=%v", recreate), func(t *testing.T) {
			db := openTestDB(t, nil)
			tb, err := db.CreateTable(ctx, "Moving")
			require.NoError(t, err)
			insertRows(t, tb, 30)
			n := 0
			var last error
			for _, err := range tb.Query(ctx, Query{Top: 10}) {
				if err != nil {
					last = err
					break
				}
				if n++; n == 5 {
					require.NoError(t, db.DeleteTable(ctx, "Moving"))
					if recreate {
						again, err := db.CreateTable(ctx, "moving")
						require.NoError(t, err)
						insertRows(t, again, 30)
					}
				}
			}
			require.Equal(t, 10, n, "rows before the next page")
			requireCode(t, last, edm.CodeTableNotFound)
		})
	}
}

func TestContinuationOfAnotherTable(t *testing.T) {
	db := openTestDB(t, nil)
	a, err := db.CreateTable(ctx, "First")
	require.NoError(t, err)
	b, err := db.CreateTable(ctx, "Second")
	require.NoError(t, err)
	insertRows(t, a, 20)
	insertRows(t, b, 20)
	page, err := a.QueryPage(ctx, Query{Top: 5})
	require.NoError(t, err)
	require.NotEmpty(t, page.Continuation)
	_, err = b.QueryPage(ctx, Query{Top: 5, Continuation: page.Continuation})
	requireCode(t, err, edm.CodeTableNotFound)
	// The same token resumes its own table.
	next, err := a.QueryPage(ctx, Query{Top: 5, Continuation: page.Continuation})
	require.NoError(t, err)
	require.Equal(t, "r00005", next.Entities[0].RowKey)
	// A token from Azure's pair names no table and resumes any.
	tok, err := ContinuationFromNext(page.NextPartitionKey(), page.NextRowKey())
	require.NoError(t, err)
	other, err := b.QueryPage(ctx, Query{Top: 5, Continuation: tok})
	require.NoError(t, err)
	require.Equal(t, "r00005", other.Entities[0].RowKey)
}

func TestStoreErrorsAreTyped(t *testing.T) {
	db, err := OpenInMemory(nil)
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Typed")
	require.NoError(t, err)

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = tb.Insert(cctx, &Entity{PartitionKey: "p", RowKey: "r"})
	requireCode(t, err, edm.CodeOperationTimedOut)
	require.ErrorIs(t, err, context.Canceled)
	_, err = tb.QueryPage(cctx, Query{})
	require.ErrorIs(t, err, context.Canceled)

	require.NoError(t, db.Close())
	for what, err := range map[string]error{
		"second close": db.Close(),
		"insert":       tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "r"}),
		"create table with a bad name": func() error {
			_, err := db.CreateTable(ctx, "x") // too short: ErrClosed comes first
			return err
		}(),
		"delete table": db.DeleteTable(ctx, "Typed"),
		"list tables": func() error {
			_, err := db.ListTables(ctx, nil)
			return err
		}(),
	} {
		requireCode(t, err, edm.CodeStoreClosed)
		require.ErrorIs(t, err, ErrClosed, what)
		require.ErrorIs(t, err, ErrStoreClosed, what)
		require.NotEqual(t, edm.CodeServerBusy, ErrorCode(err), what) // clients retry ServerBusy; a closed store is not worth retrying
		var e *Error
		require.True(t, errors.As(err, &e), what)
	}
	require.NoError(t, db.Health())
}

func TestListTablesRejectsGarbageContinuation(t *testing.T) {
	db := openTestDB(t, nil)
	for _, tok := range []string{"!!", "a", "ab c", "x\x00y"} {
		_, err := db.ListTables(ctx, &ListTablesOptions{Continuation: tok})
		requireCode(t, err, edm.CodeInvalidInput)
	}
}

func TestOpenRefusesForeignDirectory(t *testing.T) {
	// A directory of unrelated files.
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644))
	_, err := Open(dir, nil)
	require.ErrorIs(t, err, ErrNotStore)
	requireCode(t, err, edm.CodeInvalidInput)
	ls, _ := os.ReadDir(dir)
	require.Len(t, ls, 1, "open wrote into a foreign directory")

	// A file given as the directory.
	file := filepath.Join(dir, "notes.txt")
	_, err = Open(file, nil)
	require.ErrorIs(t, err, ErrNotStore)
	requireCode(t, err, edm.CodeInvalidInput)
	require.Contains(t, err.Error(), "is not a directory")
	_, err = Open(file, &Options{MustExist: true})
	requireCode(t, err, edm.CodeInvalidInput)
	b, _ := os.ReadFile(file)
	require.Equal(t, "hello", string(b))

	// A Pebble store with keys of another program.
	dir = t.TempDir()
	p, err := pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatNewest})
	require.NoError(t, err)
	require.NoError(t, p.Set([]byte("user:1"), []byte("x"), pebble.Sync))
	require.NoError(t, p.Close())
	_, err = Open(dir, nil)
	require.ErrorIs(t, err, ErrNotStore)
	_, err = os.Stat(filepath.Join(dir, "CLOCK"))
	require.ErrorIs(t, err, os.ErrNotExist, "open wrote the clock's file into another program's store")

	// A store made before the store marker: catalog keys only.
	dir = t.TempDir()
	p, err = pebble.Open(dir, &pebble.Options{FormatMajorVersion: pebble.FormatNewest})
	require.NoError(t, err)
	next := []byte{0, 0, 0, 0, 0, 0, 0, 0, 'N', 0, 0, 0, 0, 0, 0, 0, 7}
	require.NoError(t, p.Set(next[:9], next[9:], pebble.Sync))
	require.NoError(t, p.Close())
	db, err := Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	// A new directory, and an empty one.
	for _, d := range []string{filepath.Join(t.TempDir(), "new"), t.TempDir()} {
		requireBecomesStore(t, d)
	}
}

// requireBecomesStore opens dir as a new store, creates a table, and
// checks that the table is there after a reopen.
func requireBecomesStore(t *testing.T, dir string) {
	t.Helper()
	db, err := Open(dir, nil)
	require.NoError(t, err)
	_, err = db.CreateTable(ctx, "Fresh")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db, err = Open(dir, nil)
	require.NoError(t, err)
	page, err := db.ListTables(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Fresh"}, page.Names)
	require.NoError(t, db.Close())
}

// TestOpenAfterInterruptedCreation opens directories a killed Open left
// behind while it created a store: before Pebble set its MANIFEST marker
// no data can exist, so the directory becomes a new store. A store with
// data whose marker is lost stays damage.
func TestOpenAfterInterruptedCreation(t *testing.T) {
	// What a kill between Pebble writing its first MANIFEST and setting
	// the marker leaves (seen in the crash test): the lock and a MANIFEST
	// holding only the comparer's record.
	firstManifest := []byte("\xa1\x17\x77\x4a\x20\x00\x01\x01\x1aleveldb.BytewiseComparator\x03\x02\x04\x00")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "LOCK"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "MANIFEST-000001"), firstManifest, 0o644))
	requireBecomesStore(t, dir)

	// The same store with its MANIFEST marker removed: its WAL and
	// MANIFEST remain, so it is refused as damaged, and left as it is.
	ls, err := os.ReadDir(dir)
	require.NoError(t, err)
	removed := false
	for _, e := range ls {
		if strings.HasPrefix(e.Name(), "marker.manifest.") {
			require.NoError(t, os.Remove(filepath.Join(dir, e.Name())))
			removed = true
		}
	}
	require.True(t, removed, "no MANIFEST marker in %v", ls)
	before, err := os.ReadDir(dir)
	require.NoError(t, err)
	_, err = Open(dir, nil)
	require.ErrorIs(t, err, ErrCorrupt)
	after, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Equal(t, len(before), len(after), "open changed the damaged directory")
}

func TestCheckHealthyStore(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, nil)
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Healthy")
	require.NoError(t, err)
	insertRows(t, tb, 120)
	rep, err := db.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
	require.Equal(t, 120, rep.Entities)
	require.NoError(t, db.Health())
	require.NoError(t, db.Close())
	_, err = db.Check(ctx)
	require.ErrorIs(t, err, ErrClosed)

	rep, err = CheckDir(ctx, dir, nil)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
	require.Equal(t, 120, rep.Entities)
	_, err = CheckDir(ctx, t.TempDir(), nil)
	require.ErrorIs(t, err, ErrNotStore)
}
