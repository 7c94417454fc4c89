package tablestore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/engine"
)

// flush flushes the embedded engine's memtable, so tests and benchmarks
// can read from sstables.
func flush(db *DB) error { return db.conn.(*engine.Engine).Flush() }

// failingConn is a driver whose every call fails with err.
type failingConn struct{ err error }

func (c failingConn) CreateTable(context.Context, string) error { return c.err }
func (c failingConn) DeleteTable(context.Context, string) error { return c.err }
func (c failingConn) ListTables(context.Context, driver.ListTablesRequest) (driver.ListTablesResult, error) {
	return driver.ListTablesResult{}, c.err
}
func (c failingConn) Table(string) driver.Table     { return failingTable(c) }
func (c failingConn) Close() error                  { return nil }
func (c failingTable) Exists(context.Context) error { return c.err }
func (c failingTable) Get(context.Context, string, string, []string) (driver.Row, error) {
	return driver.Row{}, c.err
}
func (c failingTable) Commit(context.Context, []driver.Action) (driver.CommitResult, error) {
	return driver.CommitResult{}, c.err
}
func (c failingTable) QueryPage(context.Context, *driver.QueryRequest, func(driver.Row) error) (driver.PageResult, error) {
	return driver.PageResult{}, c.err
}

type failingTable failingConn

// TestOpenDriverMapsErrors checks that a driver's errors reach the caller
// as this package's: codes, sentinels, transaction indexes, and the shared
// ErrClosed and ErrCorrupt.
func TestOpenDriverMapsErrors(t *testing.T) {
	_, err := OpenDriver(nil, nil)
	requireCode(t, err, edm.CodeInvalidInput)

	db, err := OpenDriver(failingConn{&driver.Error{Code: edm.CodeEntityAlreadyExists, Index: 3, Message: "entity exists"}}, nil)
	require.NoError(t, err)
	tbl := db.Table("people")
	e := &Entity{PartitionKey: "p", RowKey: "r"}
	err = tbl.Insert(ctx, e)
	require.ErrorIs(t, err, ErrEntityAlreadyExists)
	require.Equal(t, &Error{Code: edm.CodeEntityAlreadyExists, Message: "entity exists"}, err)

	err = tbl.NewBatch().Insert(e).Submit(ctx)
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, 3, be.Index)
	require.ErrorIs(t, err, ErrEntityAlreadyExists)

	for _, sentinel := range []error{ErrClosed, ErrCorrupt} {
		db, err := OpenDriver(failingConn{sentinel}, nil)
		require.NoError(t, err)
		_, err = db.Table("people").Get(ctx, "p", "r", nil)
		require.True(t, errors.Is(err, sentinel), "%v", err)
	}

	db, err = OpenDriver(failingConn{&driver.Error{Code: edm.CodeTableNotFound, Message: "no table"}}, nil)
	require.NoError(t, err)
	_, err = db.Table("people").Plan(ctx, Query{})
	require.ErrorIs(t, err, ErrTableNotFound)
	_, err = db.Table("people").QueryPage(ctx, Query{})
	require.ErrorIs(t, err, ErrTableNotFound)
	_, err = db.ListTables(ctx, nil)
	require.ErrorIs(t, err, ErrTableNotFound)
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.Close(), ErrClosed)
}

// TestEngineOptions checks that every setting the embedded engine takes
// reaches it from Options, and that zero fields get their defaults.
func TestEngineOptions(t *testing.T) {
	clock := func() time.Time { return time.Unix(1, 0) }
	o := &Options{NoSync: true, CacheSize: 1 << 20, MemTableSize: 2 << 20, BloomBitsPerKey: 7,
		BlockSize: 16 << 10, Clock: clock, PageScanLimit: 5, PageTimeLimit: time.Minute, Parallelism: 3,
		OnCorruption: func(error) {}}
	d := o.withDefaults()
	e := d.engineOptions()
	require.True(t, e.NoSync)
	require.Equal(t, []any{int64(1 << 20), uint64(2 << 20), 7, 16 << 10, 5, time.Minute, 3},
		[]any{e.CacheSize, e.MemTableSize, e.BloomBitsPerKey, e.BlockSize, e.PageScanLimit, e.PageTimeLimit, e.Parallelism})
	require.Equal(t, time.Unix(1, 0), e.Clock())
	require.NotNil(t, e.OnFault)

	var zero *Options
	d = zero.withDefaults()
	e = d.engineOptions()
	require.Equal(t, []any{int64(defaultCacheSize), uint64(defaultMemTableSize), defaultBloomBits, 0, defaultPageScanLimit, defaultPageTimeLimit},
		[]any{e.CacheSize, e.MemTableSize, e.BloomBitsPerKey, e.BlockSize, e.PageScanLimit, e.PageTimeLimit})
	require.Nil(t, e.OnFault)
}

// TestOptionBounds checks that settings outside their bounds are refused
// as InvalidInput before anything is opened, and that the bounds
// themselves open.
func TestOptionBounds(t *testing.T) {
	for _, o := range []Options{
		{MemTableSize: 4 << 30},
		{MemTableSize: 1 << 40},
		{BlockSize: 1<<30 + 1},
		{Parallelism: 257},
	} {
		_, err := OpenInMemory(&o)
		require.ErrorIs(t, err, ErrInvalidInput, "%+v", o)
		_, err = Open(t.TempDir(), &o)
		require.ErrorIs(t, err, ErrInvalidInput, "%+v", o)
		_, err = CheckDir(context.Background(), t.TempDir(), &o)
		require.ErrorIs(t, err, ErrInvalidInput, "%+v", o)
	}
	for _, o := range []Options{{BlockSize: 1 << 30}, {Parallelism: 256}, {BlockSize: 1, MemTableSize: 1 << 20}} {
		db, err := OpenInMemory(&o)
		require.NoError(t, err, "%+v", o)
		require.NoError(t, db.Close())
	}
}

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
	requireCode(t, err, edm.CodeInvalidResourceName)
	_, err = db.CreateTableIfNotExists(ctx, "1bad")
	requireCode(t, err, edm.CodeInvalidResourceName)

	require.NoError(t, db.Close())
	_, err = db.TableExists(ctx, "Orders")
	require.ErrorIs(t, err, ErrClosed)
	_, err = db.CreateTableIfNotExists(ctx, "Orders")
	require.ErrorIs(t, err, ErrClosed)
}

// deleteEntities is the size of the large drop tests:
// $TABLESTORE_DELETE_ENTITIES, default 20,000.
func deleteEntities(t *testing.T) int {
	n := 20_000
	if s := os.Getenv("TABLESTORE_DELETE_ENTITIES"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	return n
}

// TestDeleteLargeTable loads a table on disk, drops it and re-creates the
// name at once. It logs how long the drop took; it asserts behaviour, not
// time. TABLESTORE_DELETE_ENTITIES sets the size (default 20,000; the
// one-million figure in the README comes from
// TABLESTORE_DELETE_ENTITIES=1000000 go test -run DeleteLarge -v .).
func TestDeleteLargeTable(t *testing.T) {
	n := deleteEntities(t)
	db, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "Big")
	require.NoError(t, err)
	_, err = db.CreateTable(ctx, "Neighbour")
	require.NoError(t, err)
	require.NoError(t, db.Table("Neighbour").Insert(ctx, &Entity{PartitionKey: "p", RowKey: "r"}))
	for i := 0; i < n; i += 100 {
		b := tbl.NewBatch()
		pk := fmt.Sprintf("p%05d", i/1000)
		for j := i; j < i+100 && j < n; j++ {
			b.Upsert(&Entity{PartitionKey: pk, RowKey: fmt.Sprintf("r%08d", j), Properties: map[string]any{"V": int64(j), "S": "some text of moderate length"}}, Replace)
		}
		require.NoError(t, b.Submit(ctx))
	}
	require.NoError(t, flush(db))

	start := time.Now()
	require.NoError(t, db.DeleteTable(ctx, "Big"))
	took := time.Since(start)
	t.Logf("DeleteTable of %d entities took %v", n, took)

	again, err := db.CreateTable(ctx, "Big")
	require.NoError(t, err)
	_, err = again.Get(ctx, "p00000", "r00000000", nil)
	requireCode(t, err, edm.CodeResourceNotFound)
	_, err = db.Table("Neighbour").Get(ctx, "p", "r", nil)
	require.NoError(t, err, "the drop must not touch other tables")
}
