package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
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

// tableInfo is one catalog entry.
type tableInfo struct {
	id   uint64
	name string // as created
}

func catalogKey(lowerName string) []byte {
	k := keys.TablePrefix(nil, keys.MetaTableID)
	k = append(k, catalogTableTag)
	return append(k, lowerName...)
}

func nextIDKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), catalogNextTag)
}

// loadCatalog reads every table entry into memory at Open.
func (db *Engine) loadCatalog() error {
	db.tables = make(map[string]tableInfo)
	db.nextID = 1
	prefix := catalogKey("")
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: keys.Successor(append(prefix[:len(prefix):len(prefix)], 0xff))})
	if err != nil {
		return db.storageErr("open: read the catalog", err)
	}
	for it.First(); it.Valid(); it.Next() {
		v := it.Value()
		if len(v) < 8 {
			err := &driver.CorruptError{Op: fmt.Sprintf("open: read the catalog entry %q", it.Key()), Err: errors.New("value shorter than 8 bytes")}
			_ = it.Close()
			return err
		}
		info := tableInfo{id: binary.BigEndian.Uint64(v), name: string(v[8:])}
		db.tables[strings.ToLower(info.name)] = info
		if info.id >= db.nextID {
			db.nextID = info.id + 1
		}
	}
	if err := it.Close(); err != nil {
		return db.storageErr("open: read the catalog", err)
	}
	db.publishNames()
	v, closer, err := db.pdb.Get(nextIDKey())
	switch {
	case err == pebble.ErrNotFound:
	case err != nil:
		return db.storageErr("open: read the catalog", err)
	default:
		if len(v) == 8 && binary.BigEndian.Uint64(v) > db.nextID {
			db.nextID = binary.BigEndian.Uint64(v)
		}
		_ = closer.Close()
	}
	return nil
}

// CreateTable implements driver.Conn. The catalog change is always synced.
func (db *Engine) CreateTable(ctx context.Context, name string) error {
	_, err := boundedWrite(db, ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, db.createTable(ctx, name) })
	return err
}

func (db *Engine) createTable(ctx context.Context, name string) (err error) {
	release, err := db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	defer db.recoverStop("create table "+name, &err)
	lower := strings.ToLower(name)
	db.catMu.Lock()
	defer db.catMu.Unlock()
	if _, ok := db.tables[lower]; ok {
		return errorf(edm.CodeTableAlreadyExists, "table %q already exists", name)
	}
	info := tableInfo{id: db.nextID, name: name}
	b := db.pdb.NewBatch()
	defer b.Close()
	_ = b.Set(catalogKey(lower), append(binary.BigEndian.AppendUint64(nil, info.id), name...), nil)
	_ = b.Set(nextIDKey(), binary.BigEndian.AppendUint64(nil, info.id+1), nil)
	if err := db.commitChanges(ctx, b, nil, pebble.Sync); err != nil {
		return db.storageErr("create table "+name, err)
	}
	db.tables[lower] = info
	db.nextID++
	db.catVersion.Add(1)
	db.publishNames()
	return nil
}

// DeleteTable implements driver.Conn in one atomic step that takes
// constant time: the catalog entry and a range deletion of the table's
// keys commit in one synced batch, and the space is reclaimed by later
// compactions. The name can be created again at once, as a new empty table
// with a new ID.
func (db *Engine) DeleteTable(ctx context.Context, name string) error {
	_, err := boundedWrite(db, ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, db.deleteTable(ctx, name) })
	return err
}

// dropCommitHook, when set (by tests), is called by a table's deletion
// after its batch is built and before it commits.
var dropCommitHook func()

func (db *Engine) deleteTable(ctx context.Context, name string) (err error) {
	release, err := db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	defer db.recoverStop("delete table "+name, &err)
	lower := strings.ToLower(name)
	db.catMu.Lock()
	defer db.catMu.Unlock()
	info, ok := db.tables[lower]
	if !ok {
		return errorf(edm.CodeResourceNotFound, "table %q does not exist", name)
	}
	start, end := keys.TableSpan(info.id)
	b := db.pdb.NewBatch()
	defer b.Close()
	_ = b.Delete(catalogKey(lower), nil)
	_ = b.Delete(policyKey(info.id), nil)
	_ = b.DeleteRange(start, end, nil)
	db.deleteIndexCatalog(b, info.id)
	db.forgetTTL(b, info.id)
	c := &db.changes
	c.setMu.Lock()
	defer c.setMu.Unlock()
	cb, dropped, err := db.dropChanges(b, info.id)
	if err != nil {
		return err
	}
	if dropCommitHook != nil {
		dropCommitHook()
	}
	if err := db.commitChanges(ctx, b, cb, pebble.Sync); err != nil {
		return db.storageErr("delete table "+name, err)
	}
	if dropped != nil {
		c.setFeed(info.id, dropped)
	}
	if db.ttlFor(info.id) != nil {
		db.setTTL(info.id, nil)
	}
	db.forgetIndexes(info.id)
	delete(db.tables, lower)
	db.catVersion.Add(1)
	db.publishNames()
	return nil
}

// lookupTableLocked resolves a table name. Errors: TableNotFound.
// REQUIRES: db.catMu held (either mode) for the result to stay valid.
func (db *Engine) lookupTableLocked(name string) (tableInfo, error) {
	info, ok := db.tables[strings.ToLower(name)]
	if !ok {
		return tableInfo{}, errorf(edm.CodeTableNotFound, "table %q does not exist", name)
	}
	return info, nil
}

// lookupTable resolves a table name for a reader. Readers take no lock
// beyond this lookup; a table deleted afterwards reads as empty.
// Errors: TableNotFound.
func (db *Engine) lookupTable(name string) (tableInfo, error) {
	db.catMu.RLock()
	defer db.catMu.RUnlock()
	return db.lookupTableLocked(name)
}

// ListTables implements driver.Conn from the in-memory catalog.
func (db *Engine) ListTables(ctx context.Context, req driver.ListTablesRequest) (driver.ListTablesResult, error) {
	if err := db.checkContext(ctx); err != nil {
		return driver.ListTablesResult{}, err
	}
	after := strings.ToLower(req.After)
	prefix := strings.ToLower(req.Prefix)
	db.catMu.RLock()
	var names []string
	for lower, info := range db.tables {
		if strings.HasPrefix(lower, prefix) && lower >= after {
			names = append(names, info.name)
		}
	}
	db.catMu.RUnlock()
	sort.Slice(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
	res := driver.ListTablesResult{Names: names}
	if len(names) > req.Top {
		res.Names = names[:req.Top]
		res.Next = names[req.Top]
	}
	return res, nil
}
