package tablestore

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
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

	db, err := OpenDriver(failingConn{&driver.Error{Code: "EntityAlreadyExists", Index: 3, Message: "entity exists"}}, nil)
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

	db, err = OpenDriver(failingConn{&driver.Error{Code: "TableNotFound", Message: "no table"}}, nil)
	require.NoError(t, err)
	_, err = db.Table("people").Plan(Query{})
	require.ErrorIs(t, err, ErrTableNotFound)
	_, err = db.Table("people").QueryPage(ctx, Query{})
	require.ErrorIs(t, err, ErrTableNotFound)
	_, err = db.ListTables(ctx, nil)
	require.ErrorIs(t, err, ErrTableNotFound)
	require.NoError(t, db.Close())
	require.ErrorIs(t, db.Close(), ErrClosed)
}
