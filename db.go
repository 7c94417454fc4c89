package tablestore

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/engine"
)

// DB is an open store: a set of tables behind one driver (the embedded
// engine, or another driver.Conn given to OpenDriver). A DB is safe for
// concurrent use by many goroutines.
type DB struct {
	opts   Options
	conn   driver.Conn
	closed atomic.Bool
}

// Open opens the store in directory dir, creating it when dir does not
// exist, is empty, or holds only what a creation killed before its first
// write left (unless Options.MustExist, which refuses such a directory
// with ResourceNotFound). Errors: InvalidInput for an option outside its
// bounds (see Options); ErrNotStore (code InvalidInput) when dir
// holds files but no store; ErrCorrupt (InternalError) when the store's
// MANIFEST or a WAL is damaged (CheckDir names the file); I/O and lock
// errors (InternalError), such as a store open in another process.
func Open(dir string, opts *Options) (*DB, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	e, err := engine.Open(dir, o.engineOptions())
	if err != nil {
		return nil, mapError(err, false)
	}
	return &DB{opts: o, conn: e}, nil
}

// OpenInMemory opens an empty store that lives in memory only, for tests.
// It runs the same code as Open on Pebble's in-memory filesystem; its
// contents are gone after Close.
func OpenInMemory(opts *Options) (*DB, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	e, err := engine.OpenInMemory(o.engineOptions())
	if err != nil {
		return nil, mapError(err, false)
	}
	return &DB{opts: o, conn: e}, nil
}

// OpenDriver returns a DB over an open driver connection, such as the
// remote Azure driver's. The DB validates everything before it reaches
// conn and maps conn's errors to this package's; Close closes conn. Of
// opts only FilterLimits applies: the others configure the embedded
// engine. A nil conn is InvalidInput.
func OpenDriver(conn driver.Conn, opts *Options) (*DB, error) {
	if conn == nil {
		return nil, newError(CodeInvalidInput, "driver connection is nil")
	}
	return &DB{opts: opts.withDefaults(), conn: conn}, nil
}

// Close releases the store. Synced commits are already durable; with
// NoSync, Close syncs the write-ahead log first. Close waits for
// operations in flight (a query page, a write) to finish; operations that
// start later return ErrClosed, and so does a second Close.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return mapError(ErrClosed, false)
	}
	return mapError(db.conn.Close(), false)
}

// Table returns a handle on the named table (matched case-insensitively).
// It does not check that the table exists: operations on a missing table
// fail with TableNotFound.
func (db *DB) Table(name string) *Table {
	return &Table{db: db, name: name, drv: db.conn.Table(name)}
}

// checkContext returns ctx's error, or ErrClosed if db is closed. Calls
// check it before validating, so those errors come first.
func (db *DB) checkContext(ctx context.Context) error {
	if db.closed.Load() {
		return mapError(ErrClosed, false)
	}
	return mapError(ctx.Err(), false)
}

// mapError turns a driver's error into this package's, in one place for
// every driver: a *driver.Error becomes an *Error with the same code and
// message, wrapped in a *BatchError with the failing action's index when
// tx is set (a transaction); any other error becomes an *Error that
// unwraps to it (see codeOf).
func mapError(err error, tx bool) error {
	if err == nil {
		return nil
	}
	var de *driver.Error
	if !errors.As(err, &de) {
		var e *Error
		if errors.As(err, &e) {
			return err
		}
		return &Error{Code: codeOf(err), Message: strings.TrimPrefix(err.Error(), "tablestore: "), err: err}
	}
	e := &Error{Code: de.Code, Message: de.Message}
	if tx {
		return &BatchError{Index: de.Index, Err: e}
	}
	return e
}
