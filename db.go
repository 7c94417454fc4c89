package tablestore

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// DB is an open store: a set of tables in one Pebble instance. A DB is
// safe for concurrent use by many goroutines.
type DB struct {
	opts      Options
	pdb       *pebble.DB
	writeOpts *pebble.WriteOptions
	closed    atomic.Bool
	// closeMu is held in read mode by every operation while it uses
	// Pebble, and in write mode by Close, so Close waits for operations in
	// flight and later ones see ErrClosed.
	closeMu sync.RWMutex

	// catMu guards the catalog. Writes hold it in read mode from table
	// lookup to commit, so a table cannot be deleted under a write;
	// CreateTable and DeleteTable hold it in write mode.
	catMu  sync.RWMutex
	tables map[string]tableInfo // by lowercase name
	nextID uint64               // next table ID to assign
	// catVersion counts catalog changes, so Table handles can cache their
	// lookup and revalidate it with one atomic load.
	catVersion atomic.Uint64

	locks partitionLocks
	clock timestampClock
}

// tableInfo is one catalog entry.
type tableInfo struct {
	id   uint64
	name string // as created
}

// Open opens (creating if needed) the store in directory dir.
func Open(dir string, opts *Options) (*DB, error) {
	return open(dir, vfs.Default, opts)
}

// OpenInMemory opens an empty store that lives in memory only, for tests.
// It runs the same code as Open on Pebble's in-memory filesystem; its
// contents are gone after Close.
func OpenInMemory(opts *Options) (*DB, error) {
	return open("", vfs.NewMem(), opts)
}

func open(dir string, fs vfs.FS, opts *Options) (*DB, error) {
	o := opts.withDefaults()
	cache := pebble.NewCache(o.CacheSize)
	defer cache.Unref()
	popts := &pebble.Options{
		Cache:              cache,
		FS:                 fs,
		MemTableSize:       o.MemTableSize,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             quietLogger{},
	}
	if o.BloomBitsPerKey > 0 {
		for i := range popts.Levels {
			popts.Levels[i].FilterPolicy = bloom.FilterPolicy(o.BloomBitsPerKey)
		}
	}
	pdb, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, fmt.Errorf("tablestore: open %q: %w", dir, err)
	}
	db := &DB{opts: o, pdb: pdb, writeOpts: pebble.Sync}
	db.locks.seed = maphash.MakeSeed()
	if o.NoSync {
		db.writeOpts = pebble.NoSync
	}
	if err := errors.Join(db.loadCatalog(), db.loadClock()); err != nil {
		_ = pdb.Close()
		return nil, err
	}
	return db, nil
}

// Close releases the store. Synced commits are already durable; with
// NoSync, Close syncs the write-ahead log first. Close waits for
// operations in flight (a query page, a write) to finish; operations that
// start later return ErrClosed, and so does a second Close.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return ErrClosed
	}
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	var errs []error
	if db.opts.NoSync {
		errs = append(errs, db.pdb.LogData(nil, pebble.Sync))
	}
	errs = append(errs, db.pdb.Close())
	return errors.Join(errs...)
}

// quietLogger drops Pebble's informational messages; a library must not
// write to the user's stderr. Fatalf still stops the process, as Pebble
// requires.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("tablestore: pebble: "+format, args...))
}

// Table returns a handle on the named table (matched case-insensitively).
// It does not check that the table exists: operations on a missing table
// fail with TableNotFound.
func (db *DB) Table(name string) *Table {
	return &Table{db: db, name: name}
}

// tableCache is a Table handle's memory of its catalog lookup.
type tableCache struct {
	version uint64
	info    tableInfo
}

// resolve returns the table's catalog entry, from the handle's cache when
// the catalog has not changed since. Errors: TableNotFound.
func (t *Table) resolve() (tableInfo, error) { return t.resolveWith(t.db.lookupTable) }

// resolveLocked is resolve for a caller that holds db.catMu.
func (t *Table) resolveLocked() (tableInfo, error) { return t.resolveWith(t.db.lookupTableLocked) }

func (t *Table) resolveWith(lookup func(string) (tableInfo, error)) (tableInfo, error) {
	v := t.db.catVersion.Load()
	if c := t.cache.Load(); c != nil && c.version == v {
		return c.info, nil
	}
	info, err := lookup(t.name)
	if err != nil {
		return tableInfo{}, err
	}
	t.cache.Store(&tableCache{version: v, info: info})
	return info, nil
}

// checkContext returns ctx's error, or ErrClosed if db is closed.
func (db *DB) checkContext(ctx context.Context) error {
	if db.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// enter admits an operation that will use Pebble: it fails with ctx's
// error or ErrClosed, or returns the function that ends the operation.
// Close waits for every admitted operation to end.
func (db *DB) enter(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	db.closeMu.RLock()
	if db.closed.Load() {
		db.closeMu.RUnlock()
		return nil, ErrClosed
	}
	return db.closeMu.RUnlock, nil
}
