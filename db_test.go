package tablestore

import (
	"context"
	"errors"
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
	requireCode(t, err, CodeInvalidInput)

	db, err := OpenDriver(failingConn{&driver.Error{Code: edm.CodeEntityAlreadyExists, Index: 3, Message: "entity exists"}}, nil)
	require.NoError(t, err)
	tbl := db.Table("people")
	e := &Entity{PartitionKey: "p", RowKey: "r"}
	err = tbl.Insert(ctx, e)
	require.ErrorIs(t, err, ErrEntityAlreadyExists)
	require.Equal(t, &Error{Code: CodeEntityAlreadyExists, Message: "entity exists"}, err)

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
