package tablestore

import "context"

// DB is an open store: a set of tables in one Pebble instance. A DB is
// safe for concurrent use by many goroutines.
type DB struct {
	opts Options
}

// Open opens (creating if needed) the store in directory dir.
func Open(dir string, opts *Options) (*DB, error) { panic("skeleton") }

// OpenInMemory opens an empty store that lives in memory only, for tests.
// It runs the same code as Open on Pebble's in-memory filesystem.
func OpenInMemory(opts *Options) (*DB, error) { panic("skeleton") }

// Close flushes nothing extra (synced commits are already durable) and
// releases the store. Operations after Close return ErrClosed.
func (db *DB) Close() error { panic("skeleton") }

// CreateTable creates a table. Names follow Azure's rules:
// ^[A-Za-z][A-Za-z0-9]{2,62}$, "tables" is reserved, and names are unique
// case-insensitively while keeping the case they were created with.
// Errors: TableAlreadyExists, InvalidResourceName, OutOfRangeInput,
// InvalidInput.
func (db *DB) CreateTable(ctx context.Context, name string) (*Table, error) { panic("skeleton") }

// DeleteTable deletes a table and all its entities in one atomic step
// that takes constant time; the name can be created again at once.
// Errors: ResourceNotFound when no such table exists.
func (db *DB) DeleteTable(ctx context.Context, name string) error { panic("skeleton") }

// Table returns a handle on the named table (matched case-insensitively).
// It does not check that the table exists: operations on a missing table
// fail with TableNotFound.
func (db *DB) Table(name string) *Table { panic("skeleton") }

// ListTablesOptions select and page a table listing.
type ListTablesOptions struct {
	Prefix       string // only names starting with Prefix (case-insensitive)
	Top          int    // page size, 1..1000; default 1000
	Continuation string // from a previous TablePage; "" starts at the beginning
}

// TablePage is one page of a table listing, sorted case-insensitively.
type TablePage struct {
	Names        []string // as created
	Continuation string   // "" when the listing is complete
}

// ListTables returns one page of table names.
func (db *DB) ListTables(ctx context.Context, opts *ListTablesOptions) (*TablePage, error) {
	panic("skeleton")
}
