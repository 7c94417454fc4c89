package tablestore

import (
	"context"
	"strings"

	"github.com/tablestore/tablestore/driver"
)

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
	if err := validateTableName(name); err != nil {
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
	top, err := pageSize(o.Top)
	if err != nil {
		return nil, err
	}
	if o.Continuation != "" && validateTableName(o.Continuation) != nil {
		return nil, newError(CodeInvalidInput, "malformed table continuation %q", o.Continuation)
	}
	res, err := db.conn.ListTables(ctx, driver.ListTablesRequest{Prefix: strings.ToLower(o.Prefix), After: o.Continuation, Top: top})
	if err != nil {
		return nil, mapError(err, false)
	}
	return &TablePage{Names: res.Names, Continuation: res.Next}, nil
}
