package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

// Secondary indexes.
//
// An index's entries live in its table's key span (see package keys), so
// dropping the table drops them in the same range deletion; its
// declaration lives in the catalog's keyspace:
//
//	meta | 'I' | table ID (8 bytes BE) | index ID (4 bytes BE)  ->  JSON indexRecord
//	meta | 'J'                                                 ->  next index ID (4 bytes BE)
//
// Index IDs are unique in the store and never reused, so an entry of a
// dropped index can never be taken for one of a new index.
//
// Every commit keeps every index of its table, building or ready, exact
// in the same Pebble batch as the entities (index_write.go), under the
// partition's lock; a Unique table-wide index also locks the value tuples
// it checks (striped, across partitions). A range deletion stays one
// range deletion (index_sweep.go): a Partitioned index loses the
// partition's entries in a range deletion of its own, and the entries
// other indexes keep for deleted entities are left behind, recorded as
// pending, never returned (every read checks each entry against its
// entity, index_read.go) and removed by a background sweep.
//
// CreateIndex declares the index (state building) and fills it online
// (index_build.go); it becomes ready when every entity has an entry. A
// build that fails, is cancelled, or meets Close removes the index; a
// build a crash interrupted is removed at the next Open (its CreateIndex
// never returned success), in one range deletion. DropIndex is one range
// deletion.
const (
	catalogIndexTag     = 'I'
	catalogNextIndexTag = 'J'
)

// maxIndexesPerTable bounds a table's indexes: each costs every write.
const maxIndexesPerTable = 16

// indexes is the engine's index state.
type indexes struct {
	// byTable lists each table's indexes, by table ID, in creation order.
	// Guarded by Engine.catMu: writers replace a slice, never modify one.
	byTable map[uint64][]*index
	nextID  uint32 // guarded by catMu held in write mode

	tuples tupleLocks // for Unique table-wide indexes
	sweep  sweeper
}

// index is one declared index.
type index struct {
	id      uint32
	tableID uint64
	spec    driver.IndexSpec
	lower   string // lowercase name
	// ready is set when the build ends; guarded by Engine.catMu.
	ready bool
	// Build progress.
	done, total atomic.Int64
}

// identity is the index's ID as driver.IndexStatus.ID has it.
func (ix *index) identity() string { return strconv.FormatUint(uint64(ix.id), 10) }

// indexRecord is an index's stored declaration.
type indexRecord struct {
	Name        string   `json:"name"`
	Properties  []string `json:"properties"`
	Partitioned bool     `json:"partitioned,omitempty"`
	Unique      bool     `json:"unique,omitempty"`
	Ready       bool     `json:"ready,omitempty"`
}

func indexCatalogKey(tableID uint64, indexID uint32) []byte {
	k := append(keys.TablePrefix(nil, keys.MetaTableID), catalogIndexTag)
	k = binary.BigEndian.AppendUint64(k, tableID)
	return binary.BigEndian.AppendUint32(k, indexID)
}

func nextIndexIDKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), catalogNextIndexTag)
}

// indexCatalogSpan covers the declarations of one table's indexes.
func indexCatalogSpan(tableID uint64) (start, end []byte) {
	start = append(keys.TablePrefix(nil, keys.MetaTableID), catalogIndexTag)
	start = binary.BigEndian.AppendUint64(start, tableID)
	return start, keys.Successor(append(bytes.Clone(start), 0xff, 0xff, 0xff, 0xff))
}

func (ix *index) record() []byte {
	v, _ := json.Marshal(indexRecord{Name: ix.spec.Name, Properties: ix.spec.Properties,
		Partitioned: ix.spec.Partitioned, Unique: ix.spec.Unique, Ready: ix.ready})
	return v
}

// loadIndexes reads every index declaration at Open, after the catalog.
// A declaration still building was interrupted by a crash: unless the
// store is read-only it is removed here, its entries with it, in one
// synced batch; a read-only store ignores it. Tables with pending sweeps
// are queued for the sweeper.
func (db *Engine) loadIndexes() error {
	db.ix.byTable = map[uint64][]*index{}
	db.ix.nextID = 1
	db.ix.tuples.seed = db.locks.seed
	db.ix.sweep.tables = map[uint64]bool{}
	known := map[uint64]bool{}
	for _, info := range db.tables {
		known[info.id] = true
	}
	prefix := append(keys.TablePrefix(nil, keys.MetaTableID), catalogIndexTag)
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: []byte{0, 0, 0, 0, 0, 0, 0, 0, catalogIndexTag + 1}})
	if err != nil {
		return db.storageErr("open: read the index catalog", err)
	}
	b := db.pdb.NewBatch()
	defer b.Close()
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		var rec indexRecord
		if len(k) != len(prefix)+12 || json.Unmarshal(it.Value(), &rec) != nil || len(rec.Properties) == 0 {
			_ = it.Close()
			return &driver.CorruptError{Op: fmt.Sprintf("open: read the index catalog entry %q", k), Err: errors.New("malformed entry")}
		}
		tableID := binary.BigEndian.Uint64(k[len(prefix):])
		id := binary.BigEndian.Uint32(k[len(prefix)+8:])
		db.ix.nextID = max(db.ix.nextID, id+1)
		if !known[tableID] || !rec.Ready {
			if !db.opts.readOnly {
				start, end := keys.IndexSpan(tableID, id)
				_ = b.DeleteRange(start, end, nil)
				_ = b.Delete(k, nil)
			}
			continue
		}
		ix := &index{id: id, tableID: tableID, lower: strings.ToLower(rec.Name), ready: true,
			spec: driver.IndexSpec{Name: rec.Name, Properties: rec.Properties, Partitioned: rec.Partitioned, Unique: rec.Unique}}
		db.ix.byTable[tableID] = append(db.ix.byTable[tableID], ix)
	}
	if err := it.Close(); err != nil {
		return db.storageErr("open: read the index catalog", err)
	}
	v, closer, err := db.pdb.Get(nextIndexIDKey())
	switch {
	case err == pebble.ErrNotFound:
	case err != nil:
		return db.storageErr("open: read the index catalog", err)
	default:
		if len(v) == 4 {
			db.ix.nextID = max(db.ix.nextID, binary.BigEndian.Uint32(v))
		}
		_ = closer.Close()
	}
	if !b.Empty() {
		if err := db.commitBatch(b, pebble.Sync); err != nil {
			return db.storageErr("open: remove interrupted index builds", err)
		}
	}
	if db.opts.readOnly {
		return nil
	}
	return db.queuePendingSweeps()
}

// deleteIndexCatalog adds to b, a table's deletion, the removal of the
// table's index declarations (its entries go with the table's span).
// REQUIRES: db.catMu held in write mode.
func (db *Engine) deleteIndexCatalog(b *pebble.Batch, tableID uint64) {
	if len(db.ix.byTable[tableID]) == 0 {
		return
	}
	start, end := indexCatalogSpan(tableID)
	_ = b.DeleteRange(start, end, nil)
}

// forgetIndexes drops a deleted table's indexes from memory.
// REQUIRES: db.catMu held in write mode.
func (db *Engine) forgetIndexes(tableID uint64) {
	delete(db.ix.byTable, tableID)
}

// tableIndexes returns the indexes, building or ready, that writes to the
// table must keep exact. The slice must not be modified.
// REQUIRES: db.catMu held (either mode).
func (db *Engine) tableIndexes(tableID uint64) []*index { return db.ix.byTable[tableID] }

// live reports whether ix is still declared.
// REQUIRES: db.catMu held (either mode).
func (db *Engine) live(ix *index) bool {
	return slices.Contains(db.ix.byTable[ix.tableID], ix)
}

var _ driver.Indexer = (*table)(nil)

// CreateIndex implements driver.Indexer: it declares the index in one
// synced write, builds it (see index_build.go), and marks it ready in
// another. Close waits for the build, which then ends, removing the
// index, with ErrClosed.
func (t *table) CreateIndex(ctx context.Context, spec driver.IndexSpec) (err error) {
	release, err := t.db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	op := fmt.Sprintf("create index %s of table %s", spec.Name, t.name)
	defer t.db.recoverStop(op, &err)
	ix, err := t.declareIndex(spec)
	if err != nil {
		return err
	}
	err = t.db.buildIndex(ctx, ix)
	if err == nil {
		err = t.db.markReady(ix)
	}
	if err != nil {
		if rerr := t.db.removeIndex(ix); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	return nil
}

// declareIndex records a new index, building, and publishes it to
// writers.
func (t *table) declareIndex(spec driver.IndexSpec) (*index, error) {
	db := t.db
	db.catMu.Lock()
	defer db.catMu.Unlock()
	info, err := t.resolveLocked()
	if err != nil {
		return nil, err
	}
	lower := strings.ToLower(spec.Name)
	list := db.ix.byTable[info.id]
	for _, ix := range list {
		if ix.lower == lower {
			return nil, errorf(edm.CodeInvalidInput, "table %q already has an index named %q", t.name, ix.spec.Name)
		}
	}
	if len(list) >= maxIndexesPerTable {
		return nil, errorf(edm.CodeInvalidInput, "table %q already has %d indexes, the most a table can have", t.name, maxIndexesPerTable)
	}
	if db.ix.nextID == 0 {
		return nil, errorf(edm.CodeInvalidInput, "the store has used every index ID")
	}
	spec.Properties = slices.Clone(spec.Properties)
	ix := &index{id: db.ix.nextID, tableID: info.id, spec: spec, lower: lower}
	b := db.pdb.NewBatch()
	defer b.Close()
	_ = b.Set(indexCatalogKey(info.id, ix.id), ix.record(), nil)
	_ = b.Set(nextIndexIDKey(), binary.BigEndian.AppendUint32(nil, ix.id+1), nil)
	if err := db.commitBatch(b, pebble.Sync); err != nil {
		return nil, db.storageErr("declare index "+spec.Name, err)
	}
	db.ix.nextID++
	db.ix.byTable[info.id] = append(slices.Clip(list), ix)
	return ix, nil
}

// markReady records that ix's build is complete. The synced write also
// makes every unsynced write of the build durable. Errors: ix dropped
// meanwhile (ResourceNotFound), or its table (TableNotFound).
func (db *Engine) markReady(ix *index) error {
	db.catMu.Lock()
	defer db.catMu.Unlock()
	if err := db.stillLive(ix); err != nil {
		return err
	}
	ix.ready = true
	if err := db.setKey(indexCatalogKey(ix.tableID, ix.id), ix.record(), pebble.Sync); err != nil {
		ix.ready = false
		return db.storageErr("mark index "+ix.spec.Name+" ready", err)
	}
	return nil
}

// stillLive returns nil when ix is declared, else why not.
// REQUIRES: db.catMu held (either mode).
func (db *Engine) stillLive(ix *index) error {
	if db.live(ix) {
		return nil
	}
	if _, ok := (*db.names.Load())[ix.tableID]; !ok {
		return errorf(edm.CodeTableNotFound, "the table of index %q was deleted", ix.spec.Name)
	}
	return errorf(edm.CodeResourceNotFound, "index %q was dropped", ix.spec.Name)
}

// removeIndex drops ix, if still declared: its declaration and, in one
// range deletion, its entries, in one synced batch.
func (db *Engine) removeIndex(ix *index) error {
	db.catMu.Lock()
	defer db.catMu.Unlock()
	if !db.live(ix) {
		return nil
	}
	return db.dropIndexLocked(ix)
}

// dropIndexLocked removes a declared index.
// REQUIRES: db.catMu held in write mode.
func (db *Engine) dropIndexLocked(ix *index) error {
	start, end := keys.IndexSpan(ix.tableID, ix.id)
	b := db.pdb.NewBatch()
	defer b.Close()
	_ = b.Delete(indexCatalogKey(ix.tableID, ix.id), nil)
	_ = b.DeleteRange(start, end, nil)
	if err := db.commitBatch(b, pebble.Sync); err != nil {
		return db.storageErr("drop index "+ix.spec.Name, err)
	}
	list := db.ix.byTable[ix.tableID]
	i := slices.Index(list, ix)
	db.ix.byTable[ix.tableID] = slices.Concat(list[:i], list[i+1:])
	return nil
}

// DropIndex implements driver.Indexer: one synced batch deleting the
// declaration and, in one range deletion, the entries. A build of the
// index in progress fails with ResourceNotFound.
func (t *table) DropIndex(ctx context.Context, name string) (err error) {
	release, err := t.db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	defer t.db.recoverStop("drop index "+name+" of table "+t.name, &err)
	t.db.catMu.Lock()
	defer t.db.catMu.Unlock()
	info, err := t.resolveLocked()
	if err != nil {
		return err
	}
	lower := strings.ToLower(name)
	for _, ix := range t.db.ix.byTable[info.id] {
		if ix.lower == lower {
			return t.db.dropIndexLocked(ix)
		}
	}
	return errorf(edm.CodeResourceNotFound, "table %q has no index named %q", t.name, name)
}

// Indexes implements driver.Indexer from memory.
func (t *table) Indexes(ctx context.Context) ([]driver.IndexStatus, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return nil, err
	}
	t.db.catMu.RLock()
	defer t.db.catMu.RUnlock()
	info, err := t.resolveLocked()
	if err != nil {
		return nil, err
	}
	list := t.db.ix.byTable[info.id]
	out := make([]driver.IndexStatus, 0, len(list))
	for _, ix := range list {
		st := driver.IndexStatus{IndexSpec: ix.spec, ID: ix.identity(), State: driver.IndexBuilding,
			Done: ix.done.Load(), Total: ix.total.Load()}
		st.Properties = slices.Clone(st.Properties)
		if ix.ready {
			st.State = driver.IndexReady
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b driver.IndexStatus) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	return out, nil
}

var _ driver.IndexSizer = (*table)(nil)

// IndexSizes implements driver.IndexSizer from sstable metadata over each
// index's key span, as TableStats estimates a table's entities.
func (t *table) IndexSizes(ctx context.Context) (map[string]driver.TableStats, error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	t.db.catMu.RLock()
	info, err := t.resolveLocked()
	list := t.db.ix.byTable[info.id]
	t.db.catMu.RUnlock()
	if err != nil {
		return nil, err
	}
	t.db.flushForStats(ctx)
	unflushed := t.db.pdb.Metrics().WAL.Size > 0
	out := make(map[string]driver.TableStats, len(list))
	for _, ix := range list {
		start, end := keys.IndexSpan(info.id, ix.id)
		st, err := t.db.spanStats(start, end)
		if err != nil {
			return nil, err
		}
		st.Unflushed = unflushed
		out[ix.identity()] = st
	}
	return out, nil
}

// tupleLockStripes is the number of mutexes Unique indexes spread their
// value tuples over.
const tupleLockStripes = 1024

// tupleLocks serializes, across partitions, the writes that add or
// remove entries of one value tuple of a Unique table-wide index, so
// that checking the tuple is free and writing it are one step.
type tupleLocks struct {
	seed    maphash.Seed
	stripes [tupleLockStripes]sync.Mutex
}
