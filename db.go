package tablestore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/engine"
	"github.com/tablestore/tablestore/internal/entityenc"
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
// holds files but no store or is not a directory; ErrCorrupt (InternalError) when the store's
// MANIFEST or a WAL is damaged (CheckDir names the file); I/O and lock
// errors (InternalError), such as a store open in another process.
func Open(dir string, opts *Options) (*DB, error) {
	o := opts.withDefaults()
	if err := o.validate(); err != nil {
		return nil, err
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, mapError(fmt.Errorf("%w: %q is not a directory", driver.ErrNotStore, dir), false)
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
	if o.ContinuousBackup != nil {
		return nil, newError(edm.CodeInvalidInput, "continuous backup needs a store on disk")
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
// opts only FilterLimits and PropertyEncryption apply: the others
// configure the embedded engine. A nil conn is InvalidInput.
func OpenDriver(conn driver.Conn, opts *Options) (*DB, error) {
	if conn == nil {
		return nil, newError(edm.CodeInvalidInput, "driver connection is nil")
	}
	o := opts.withDefaults()
	var err error
	if o.sealer, err = o.PropertyEncryption.build(); err != nil {
		return nil, err
	}
	return &DB{opts: o, conn: conn}, nil
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
	return &Table{db: db, name: name, drv: db.opts.sealer.Table(name, db.conn.Table(name))}
}

// checkContext returns ctx's error, or ErrClosed if db is closed. Calls
// check it before validating, so those errors come first.
func (db *DB) checkContext(ctx context.Context) error {
	if db.closed.Load() {
		return mapError(ErrClosed, false)
	}
	return mapError(ctx.Err(), false)
}

// CreateTable creates a table. Names follow Azure's rules:
// ^[A-Za-z][A-Za-z0-9]{2,62}$, "tables" is reserved, and names are unique
// case-insensitively while keeping the case they were created with.
// Errors: TableAlreadyExists, InvalidResourceName (bad characters),
// OutOfRangeInput (bad length), InvalidInput (reserved name); ErrClosed
// and ctx's error come before any of these.
func (db *DB) CreateTable(ctx context.Context, name string) (*Table, error) {
	if err := db.checkContext(ctx); err != nil {
		return nil, err
	}
	if err := coded(entityenc.ValidateTableName(name)); err != nil {
		return nil, err
	}
	if err := db.conn.CreateTable(ctx, name); err != nil {
		return nil, mapError(err, false)
	}
	return db.Table(name), nil
}

// DeleteTable deletes a table and all its entities in one atomic step
// that takes constant time: the catalog entry and a range deletion of the
// table's keys commit in one batch, and the space is reclaimed by later
// compactions. The name can be created again at once; the new table starts
// empty. Errors: ResourceNotFound when no such table exists (as Azure).
func (db *DB) DeleteTable(ctx context.Context, name string) error {
	return mapError(db.conn.DeleteTable(ctx, name), false)
}

// ListTablesOptions select and page a table listing.
type ListTablesOptions struct {
	Prefix       string // only names starting with Prefix (case-insensitive)
	Top          int    // page size, 1..1000; 0 means 1000
	Continuation string // from a previous TablePage; "" starts at the beginning
}

// TablePage is one page of a table listing.
type TablePage struct {
	Names        []string // as created
	Continuation string   // "" when the listing is complete
}

// ListTables returns one page of table names, sorted case-insensitively
// (ties by exact name). Errors: InvalidInput for a bad Top or a
// continuation that names no valid table name.
func (db *DB) ListTables(ctx context.Context, opts *ListTablesOptions) (*TablePage, error) {
	if err := db.checkContext(ctx); err != nil {
		return nil, err
	}
	var o ListTablesOptions
	if opts != nil {
		o = *opts
	}
	top, err := entityenc.PageSize(o.Top)
	if err != nil {
		return nil, coded(err)
	}
	if o.Continuation != "" && entityenc.ValidateTableName(o.Continuation) != nil {
		return nil, newError(edm.CodeInvalidInput, "malformed table continuation %q", o.Continuation)
	}
	res, err := db.conn.ListTables(ctx, driver.ListTablesRequest{Prefix: strings.ToLower(o.Prefix), After: o.Continuation, Top: top})
	if err != nil {
		return nil, mapError(err, false)
	}
	return &TablePage{Names: res.Names, Continuation: res.Next}, nil
}

// TableNames iterates over the names of the tables starting with prefix
// (case-insensitive; "" for all), in ListTables' order, page after page;
// each page is read when the previous one is used up, so tables created
// or deleted meanwhile may or may not show. On an error it yields ("",
// err) and stops.
func (db *DB) TableNames(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		opts := &ListTablesOptions{Prefix: prefix}
		for {
			page, err := db.ListTables(ctx, opts)
			if err != nil {
				yield("", err)
				return
			}
			for _, n := range page.Names {
				if !yield(n, nil) {
					return
				}
			}
			if page.Continuation == "" {
				return
			}
			opts.Continuation = page.Continuation
		}
	}
}

// CreateTableIfNotExists creates the named table unless a table of that
// name (compared case-insensitively) exists, and returns a handle on it
// either way, as the Azure SDKs' CreateIfNotExists does. Errors: those of
// CreateTable other than TableAlreadyExists.
func (db *DB) CreateTableIfNotExists(ctx context.Context, name string) (*Table, error) {
	t, err := db.CreateTable(ctx, name)
	if errors.Is(err, ErrTableAlreadyExists) {
		return db.Table(name), nil
	}
	return t, err
}

// TableExists reports whether a table of that name (compared
// case-insensitively) exists. The answer can be stale by the time it is
// used: another goroutine may create or delete the table; the writes
// themselves answer TableNotFound. Errors: InvalidResourceName (or
// OutOfRangeInput) for a name no table can have, ErrClosed, ctx's error.
func (db *DB) TableExists(ctx context.Context, name string) (bool, error) {
	if err := db.checkContext(ctx); err != nil {
		return false, err
	}
	if err := coded(entityenc.ValidateTableName(name)); err != nil {
		return false, err
	}
	// Listing sorts names case-insensitively, so the first name with this
	// prefix is the name itself when the table exists.
	page, err := db.ListTables(ctx, &ListTablesOptions{Prefix: name, Top: 1})
	if err != nil {
		return false, err
	}
	return len(page.Names) > 0 && strings.EqualFold(page.Names[0], name), nil
}

// Snapshot is a read-only view of the whole store at one instant, from
// DB.Snapshot. Its tables are ordinary *Table handles: Get, Query, the
// typed reads and paging work on them as on the live store's, reading
// the instant's data; every write fails with code
// OperationNotAllowedOnCurrentTarget. A Snapshot is safe for concurrent
// use; Close releases it.
type Snapshot struct {
	db   *DB // over the view
	snap driver.Snapshot
}

// Snapshot takes a read-only view of the whole store, consistent across
// tables: every commit acknowledged before the call is in it, each
// transaction entirely or not at all, and no later commit. Tables created
// later are absent and tables deleted later present. It is cheap to take
// (no data is copied), but while it stays open the store keeps every
// version the view shows, so rewrites and deletions do not free disk
// space until it is closed; EngineMetrics reports the open snapshots and
// the oldest one's age. The caller must Close it; DB.Close releases any
// still open.
//
// Errors: NotImplemented for a driver that cannot take one (a remote
// store), ErrClosed, ctx's error.
func (db *DB) Snapshot(ctx context.Context) (*Snapshot, error) {
	if err := db.checkContext(ctx); err != nil {
		return nil, err
	}
	sn, ok := db.conn.(driver.Snapshotter)
	if !ok {
		return nil, newError(edm.CodeNotImplemented, "this store's driver cannot take a snapshot")
	}
	v, err := sn.Snapshot(ctx)
	if err != nil {
		return nil, mapError(err, false)
	}
	return &Snapshot{db: &DB{opts: db.opts, conn: v}, snap: v}, nil
}

// Time is the instant the snapshot shows, on the store's clock. With
// continuous backup on, a restore to this time gives exactly the data
// the snapshot shows.
func (s *Snapshot) Time() time.Time { return s.snap.Time() }

// Table returns a read-only handle on the named table as of the
// snapshot; see DB.Table.
func (s *Snapshot) Table(name string) *Table { return s.db.Table(name) }

// ListTables is DB.ListTables as of the snapshot.
func (s *Snapshot) ListTables(ctx context.Context, opts *ListTablesOptions) (*TablePage, error) {
	return s.db.ListTables(ctx, opts)
}

// TableNames is DB.TableNames as of the snapshot.
func (s *Snapshot) TableNames(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return s.db.TableNames(ctx, prefix)
}

// TableExists is DB.TableExists as of the snapshot.
func (s *Snapshot) TableExists(ctx context.Context, name string) (bool, error) {
	return s.db.TableExists(ctx, name)
}

// Close releases the snapshot. A second Close returns ErrClosed.
func (s *Snapshot) Close() error { return s.db.Close() }
