package tablestore

import (
	"context"
	"errors"
	"strings"
)

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
	if err := validateTableName(name); err != nil {
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

// Exists reports whether the table the handle names exists; see
// DB.TableExists.
func (t *Table) Exists(ctx context.Context) (bool, error) {
	return t.db.TableExists(ctx, t.name)
}
