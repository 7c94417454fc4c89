package engine

// Snapshots: a read-only view of the whole store at one instant, on a
// Pebble snapshot. The view's catalog is read from the snapshot itself,
// so tables created later are absent and tables deleted later present;
// its expiry settings and expiry clock are those of the instant it was
// taken.
//
// Cost: an open snapshot pins every key version newer compactions would
// drop (overwritten and deleted entities, dropped tables), so the store's
// disk use grows with what is rewritten while it stays open; the
// memtables it needs are not freed either. Metrics reports the open
// views and the age of the oldest.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

// View is a read-only snapshot of the store: a driver.Conn whose tables
// answer Exists, Get, QueryPage and QueryPageReverse as of the instant
// it was taken, and refuse writes. Close releases it; the engine's Close
// releases views still open.
type View struct {
	db     *Engine
	snap   *pebble.Snapshot
	at     time.Time
	tables map[string]tableInfo // by lowercase name
	ttl    map[uint64]*ttlSettings
	now    int64 // expiry clock at the instant, in ticks
	// mu is held in read mode by each read and in write mode by Close.
	mu     sync.RWMutex
	closed atomic.Bool
}

var (
	_ driver.Snapshot    = (*View)(nil)
	_ driver.Snapshotter = (*Engine)(nil)
)

// views are the open views, for Close and Metrics.
type views struct {
	mu   sync.Mutex
	open map[*View]struct{}
}

// errViewReadOnly is a write's error on a view.
func errViewReadOnly(op string) error {
	return errorf(edm.CodeOperationNotAllowedOnCurrentTarget, "%s: a snapshot is read-only", op)
}

// Snapshot returns a view of the store as of now: every commit
// acknowledged before the call is in it, each transaction entirely or
// not at all, and nothing committed after the call returns. The view's
// Time orders it with continuous backup's records (see backup.go): a
// restore to that time holds exactly what the view holds.
func (db *Engine) Snapshot(ctx context.Context) (_ driver.Snapshot, err error) {
	release, err := db.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	defer db.recoverStop("snapshot", &err)
	v := &View{db: db}
	if v.now, err = db.expiryNow(); err != nil {
		return nil, err
	}
	if m := db.ttl.tables.Load(); m != nil {
		v.ttl = *m
	}
	// Under the commit order lock, the snapshot and its time are one
	// point in the order of commits and of backup records.
	db.changes.mu.Lock()
	v.snap = db.pdb.NewSnapshot()
	var mark uint64
	if db.backup != nil {
		// A mark in the backup's log at the view's instant, so a
		// restore to it is in the window as soon as it is written.
		mark, v.at = db.backupMark()
	} else {
		v.at = db.opts.Clock()
	}
	db.changes.mu.Unlock()
	if mark > 0 {
		if err := db.backupWrite(mark, false); err != nil {
			_ = v.snap.Close()
			return nil, err
		}
	}
	if v.tables, err = readCatalog(v.snap); err != nil {
		_ = v.snap.Close()
		return nil, db.storageErr("snapshot: read the catalog", err)
	}
	db.views.mu.Lock()
	if db.views.open == nil {
		db.views.open = map[*View]struct{}{}
	}
	db.views.open[v] = struct{}{}
	db.views.mu.Unlock()
	return v, nil
}

// readCatalog reads the catalog entries of r.
func readCatalog(r pebble.Reader) (map[string]tableInfo, error) {
	prefix := catalogKey("")
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: keys.Successor(append(prefix[:len(prefix):len(prefix)], 0xff))})
	if err != nil {
		return nil, err
	}
	m := map[string]tableInfo{}
	for it.First(); it.Valid(); it.Next() {
		v := it.Value()
		if len(v) < 8 {
			_ = it.Close()
			return nil, &driver.CorruptError{Op: fmt.Sprintf("read the catalog entry %q", it.Key()), Err: errors.New("value shorter than 8 bytes")}
		}
		info := tableInfo{id: binary.BigEndian.Uint64(v), name: string(v[8:])}
		m[strings.ToLower(info.name)] = info
	}
	return m, it.Close()
}

// Time is the instant the view shows, on the store's clock.
func (v *View) Time() time.Time { return v.at }

// enter admits a read of the view.
func (v *View) enter(ctx context.Context) (func(), error) {
	release, err := v.db.enter(ctx)
	if err != nil {
		return nil, err
	}
	v.mu.RLock()
	if v.closed.Load() {
		v.mu.RUnlock()
		release()
		return nil, driver.ErrClosed
	}
	return func() { v.mu.RUnlock(); release() }, nil
}

// Close releases the view; reads in flight finish first. A second Close
// returns ErrClosed.
func (v *View) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed.Swap(true) {
		return driver.ErrClosed
	}
	v.db.views.mu.Lock()
	delete(v.db.views.open, v)
	v.db.views.mu.Unlock()
	return v.snap.Close()
}

// closeViews releases every open view, before Pebble closes.
func (db *Engine) closeViews() {
	db.views.mu.Lock()
	open := make([]*View, 0, len(db.views.open))
	for v := range db.views.open {
		open = append(open, v)
	}
	db.views.mu.Unlock()
	for _, v := range open {
		_ = v.Close()
	}
}

// viewStats returns the open views and the instant of the oldest.
func (db *Engine) viewStats() (n int, oldest time.Time) {
	db.views.mu.Lock()
	defer db.views.mu.Unlock()
	for v := range db.views.open {
		if n == 0 || v.at.Before(oldest) {
			oldest = v.at
		}
		n++
	}
	return n, oldest
}

// CreateTable implements driver.Conn: refused.
func (v *View) CreateTable(context.Context, string) error {
	return errViewReadOnly("create table")
}

// DeleteTable implements driver.Conn: refused.
func (v *View) DeleteTable(context.Context, string) error {
	return errViewReadOnly("delete table")
}

// ListTables implements driver.Conn from the view's catalog.
func (v *View) ListTables(ctx context.Context, req driver.ListTablesRequest) (driver.ListTablesResult, error) {
	release, err := v.enter(ctx)
	if err != nil {
		return driver.ListTablesResult{}, err
	}
	defer release()
	after, prefix := strings.ToLower(req.After), strings.ToLower(req.Prefix)
	var names []string
	for lower, info := range v.tables {
		if strings.HasPrefix(lower, prefix) && lower >= after {
			names = append(names, info.name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
	res := driver.ListTablesResult{Names: names}
	if len(names) > req.Top {
		res.Names, res.Next = names[:req.Top], names[req.Top]
	}
	return res, nil
}

// Table implements driver.Conn.
func (v *View) Table(name string) driver.Table {
	return viewTable{t: &table{db: v.db, name: name, view: v}}
}

// lookup resolves a table name in the view's catalog.
func (v *View) lookup(name string) (tableInfo, error) {
	info, ok := v.tables[strings.ToLower(name)]
	if !ok {
		return tableInfo{}, errorf(edm.CodeTableNotFound, "table %q does not exist", name)
	}
	return info, nil
}

// viewTable is a table of a view: its reads only.
type viewTable struct{ t *table }

var (
	_ driver.Table           = viewTable{}
	_ driver.ReverseQuerier  = viewTable{}
	_ driver.OptionCommitter = viewTable{}
)

func (vt viewTable) Exists(ctx context.Context) error {
	release, err := vt.t.view.enter(ctx)
	if err != nil {
		return err
	}
	defer release()
	_, err = vt.t.resolve()
	return err
}

func (vt viewTable) Get(ctx context.Context, pk, rk string, sel []string) (driver.Row, error) {
	release, err := vt.t.view.enter(ctx)
	if err != nil {
		return driver.Row{}, err
	}
	defer release()
	return vt.t.Get(ctx, pk, rk, sel)
}

func (vt viewTable) QueryPage(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	release, err := vt.t.view.enter(ctx)
	if err != nil {
		return driver.PageResult{}, err
	}
	defer release()
	return vt.t.QueryPage(ctx, q, emit)
}

func (vt viewTable) QueryPageReverse(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	release, err := vt.t.view.enter(ctx)
	if err != nil {
		return driver.PageResult{}, err
	}
	defer release()
	return vt.t.QueryPageReverse(ctx, q, emit)
}

func (vt viewTable) Commit(context.Context, []driver.Action) (driver.CommitResult, error) {
	return driver.CommitResult{}, errViewReadOnly("write to table " + vt.t.name)
}

func (vt viewTable) CommitWith(ctx context.Context, actions []driver.Action, _ driver.CommitOptions) (driver.CommitResult, error) {
	return vt.Commit(ctx, actions)
}

// reader is what t reads from: its view's snapshot, or the live store.
func (t *table) reader() pebble.Reader {
	if t.view != nil {
		return t.view.snap
	}
	return t.db.pdb
}

// ttlNow is db.ttlNowFor for t's reads: a view's settings and instant.
func (t *table) ttlNow(id uint64) (*ttlSettings, int64, error) {
	if t.view != nil {
		return t.view.ttl[id], t.view.now, nil
	}
	return t.db.ttlNowFor(id)
}

// ttlFor is db.ttlFor for t's reads.
func (t *table) ttlFor(id uint64) *ttlSettings {
	if t.view != nil {
		return t.view.ttl[id]
	}
	return t.db.ttlFor(id)
}

// expiryNow is db.expiryNow for t's reads.
func (t *table) expiryNow() (int64, error) {
	if t.view != nil {
		return t.view.now, nil
	}
	return t.db.expiryNow()
}
