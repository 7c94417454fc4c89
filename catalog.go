package tablestore

import (
	"context"
	"encoding/binary"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/internal/keys"
)

// The catalog lives under the reserved metadata table ID:
//
//	meta | 'T' | lowercase name  ->  table ID (8 bytes BE) | name as created
//	meta | 'N'                   ->  next table ID (8 bytes BE)
const (
	catalogTableTag = 'T'
	catalogNextTag  = 'N'
)

func catalogKey(lowerName string) []byte {
	k := keys.TablePrefix(nil, keys.MetaTableID)
	k = append(k, catalogTableTag)
	return append(k, lowerName...)
}

func nextIDKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), catalogNextTag)
}

// loadCatalog reads every table entry into memory at Open.
func (db *DB) loadCatalog() error {
	db.tables = make(map[string]tableInfo)
	db.nextID = 1
	prefix := catalogKey("")
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: keys.Successor(append(prefix[:len(prefix):len(prefix)], 0xff))})
	if err != nil {
		return err
	}
	for it.First(); it.Valid(); it.Next() {
		v := it.Value()
		if len(v) < 8 {
			_ = it.Close()
			return newError(CodeInvalidInput, "corrupt catalog entry %q", it.Key())
		}
		info := tableInfo{id: binary.BigEndian.Uint64(v), name: string(v[8:])}
		db.tables[strings.ToLower(info.name)] = info
		if info.id >= db.nextID {
			db.nextID = info.id + 1
		}
	}
	if err := it.Close(); err != nil {
		return err
	}
	v, closer, err := db.pdb.Get(nextIDKey())
	switch {
	case err == pebble.ErrNotFound:
	case err != nil:
		return err
	default:
		if len(v) == 8 && binary.BigEndian.Uint64(v) > db.nextID {
			db.nextID = binary.BigEndian.Uint64(v)
		}
		_ = closer.Close()
	}
	return nil
}

// validateTableName applies Azure's rules: ^[A-Za-z][A-Za-z0-9]{2,62}$,
// and "tables" is reserved.
func validateTableName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return newError(CodeOutOfRangeInput, "table name %q must be 3 to 63 characters long", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		digit := c >= '0' && c <= '9'
		if !letter && !(digit && i > 0) {
			return newError(CodeInvalidResourceName, "table name %q must start with a letter and hold only letters and digits", name)
		}
	}
	if strings.EqualFold(name, "tables") {
		return newError(CodeInvalidInput, "table name %q is reserved", name)
	}
	return nil
}

// CreateTable creates a table. Names follow Azure's rules:
// ^[A-Za-z][A-Za-z0-9]{2,62}$, "tables" is reserved, and names are unique
// case-insensitively while keeping the case they were created with.
// Errors: TableAlreadyExists, InvalidResourceName (bad characters),
// OutOfRangeInput (bad length), InvalidInput (reserved name).
func (db *DB) CreateTable(ctx context.Context, name string) (*Table, error) {
	if err := validateTableName(name); err != nil {
		return nil, err
	}
	release, err := db.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	lower := strings.ToLower(name)
	db.catMu.Lock()
	defer db.catMu.Unlock()
	if _, ok := db.tables[lower]; ok {
		return nil, newError(CodeTableAlreadyExists, "table %q already exists", name)
	}
	info := tableInfo{id: db.nextID, name: name}
	b := db.pdb.NewBatch()
	defer b.Close()
	_ = b.Set(catalogKey(lower), append(binary.BigEndian.AppendUint64(nil, info.id), name...), nil)
	_ = b.Set(nextIDKey(), binary.BigEndian.AppendUint64(nil, info.id+1), nil)
	if err := b.Commit(pebble.Sync); err != nil { // catalog changes are always synced
		return nil, err
	}
	db.tables[lower] = info
	db.nextID++
	db.catVersion.Add(1)
	return &Table{db: db, name: name}, nil
}

// DeleteTable deletes a table and all its entities in one atomic step
// that takes constant time: the catalog entry and a range deletion of the
// table's keys commit in one batch, and the space is reclaimed by later
// compactions. The name can be created again at once; the new table starts
// empty. Errors: ResourceNotFound when no such table exists (as Azure).
func (db *DB) DeleteTable(ctx context.Context, name string) error {
	release, err := db.enter(ctx)
	if err != nil {
		return err
	}
	defer release()
	lower := strings.ToLower(name)
	db.catMu.Lock()
	defer db.catMu.Unlock()
	info, ok := db.tables[lower]
	if !ok {
		return newError(CodeResourceNotFound, "table %q does not exist", name)
	}
	start, end := keys.TableSpan(info.id)
	b := db.pdb.NewBatch()
	defer b.Close()
	_ = b.Delete(catalogKey(lower), nil)
	_ = b.DeleteRange(start, end, nil)
	if err := b.Commit(pebble.Sync); err != nil { // catalog changes are always synced
		return err
	}
	delete(db.tables, lower)
	db.catVersion.Add(1)
	return nil
}

// lookupTable resolves a table name. Errors: TableNotFound.
// REQUIRES: db.catMu held (either mode) for the result to stay valid.
func (db *DB) lookupTableLocked(name string) (tableInfo, error) {
	info, ok := db.tables[strings.ToLower(name)]
	if !ok {
		return tableInfo{}, newError(CodeTableNotFound, "table %q does not exist", name)
	}
	return info, nil
}

// lookupTable resolves a table name for a reader. Readers take no lock
// beyond this lookup; a table deleted afterwards reads as empty.
// Errors: TableNotFound.
func (db *DB) lookupTable(name string) (tableInfo, error) {
	db.catMu.RLock()
	defer db.catMu.RUnlock()
	return db.lookupTableLocked(name)
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
	after := ""
	if o.Continuation != "" {
		if validateTableName(o.Continuation) != nil {
			return nil, newError(CodeInvalidInput, "malformed table continuation %q", o.Continuation)
		}
		after = strings.ToLower(o.Continuation)
	}
	prefix := strings.ToLower(o.Prefix)
	db.catMu.RLock()
	var names []string
	for lower, info := range db.tables {
		if strings.HasPrefix(lower, prefix) && lower >= after {
			names = append(names, info.name)
		}
	}
	db.catMu.RUnlock()
	sort.Slice(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
	page := &TablePage{Names: names}
	if len(names) > top {
		page.Names = names[:top]
		page.Continuation = names[top]
	}
	return page, nil
}

// pageSize validates a Top value: 0 means 1000; 1..1000 are accepted.
func pageSize(top int) (int, error) {
	switch {
	case top == 0:
		return maxPageSize, nil
	case top < 0 || top > maxPageSize:
		return 0, newError(CodeInvalidInput, "top must be between 1 and %d, got %d", maxPageSize, top)
	}
	return top, nil
}

const maxPageSize = 1000
