package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

// table is a handle on one table, by name; it caches its catalog lookup.
type table struct {
	db    *Engine
	name  string
	cache atomic.Pointer[tableCache]
	view  *View // nil: the live store (see view.go)
}

var _ driver.Table = (*table)(nil)

// Table implements driver.Conn.
func (db *Engine) Table(name string) driver.Table {
	return &table{db: db, name: name}
}

// tableCache is a handle's memory of its catalog lookup.
type tableCache struct {
	version uint64
	info    tableInfo
}

// resolve returns the table's catalog entry, from the handle's cache when
// the catalog has not changed since. Errors: TableNotFound.
func (t *table) resolve() (tableInfo, error) {
	if t.view != nil {
		return t.view.lookup(t.name)
	}
	return t.resolveWith(t.db.lookupTable)
}

// resolveLocked is resolve for a caller that holds db.catMu.
func (t *table) resolveLocked() (tableInfo, error) { return t.resolveWith(t.db.lookupTableLocked) }

func (t *table) resolveWith(lookup func(string) (tableInfo, error)) (tableInfo, error) {
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

// Exists implements driver.Table.
func (t *table) Exists(ctx context.Context) error {
	if err := t.db.checkContext(ctx); err != nil {
		return err
	}
	_, err := t.resolve()
	return err
}

// Get implements driver.Table with one Pebble Get (bloom filters make a
// miss cheap) and one copy of the stored bytes.
func (t *table) Get(ctx context.Context, pk, rk string, _ []string) (_ driver.Row, err error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return driver.Row{}, err
	}
	defer release()
	// The description is built only when needed: a Sprintf per Get
	// would cost more than a cached read.
	op := func() string { return fmt.Sprintf("get (%s, %q, %q)", t.name, pk, rk) }
	defer func() {
		if r := recover(); r != nil {
			t.db.recovered(r, op(), &err)
		}
	}()
	info, err := t.resolve()
	if err != nil {
		return driver.Row{}, err
	}
	// Pebble keeps the key until closer.Close, so it cannot live on the
	// stack; a pooled buffer saves allocating it.
	kb := getKeyBuf.Get().(*getKey)
	defer getKeyBuf.Put(kb)
	key := keys.Entity(keyBuf(kb[:0], len(pk)+len(rk)), info.id, pk, rk)
	val, closer, err := t.reader().Get(key)
	if err == pebble.ErrNotFound {
		return driver.Row{}, errorf(edm.CodeResourceNotFound, "entity (%q, %q) does not exist", pk, rk)
	}
	if err != nil {
		return driver.Row{}, t.db.storageErr(op(), err)
	}
	if s := t.ttlFor(info.id); s != nil {
		// Expired: absent (see ttl.go).
		if now, err := t.expiryNow(); err != nil || s.expired(val, now) {
			closer.Close()
			if err != nil {
				return driver.Row{}, err
			}
			return driver.Row{}, expiredErr(pk, rk)
		}
	}
	// The copy of the record and the ETag's text share one allocation.
	n := len(val)
	out := make([]byte, n, n+driver.ETagLen)
	copy(out, val)
	closer.Close()
	rec := driver.Record(out[:n:n])
	etag := ""
	if ticks, err := rec.Timestamp(); err == nil {
		out = driver.AppendETagTicks(out, ticks)
		etag = unsafe.String(&out[n], len(out)-n)
	}
	return driver.Row{PartitionKey: pk, RowKey: rk, Record: rec, ETag: etag}, nil
}

// getKey is a Get's key buffer; keys that do not fit are allocated.
type getKey [128]byte

var getKeyBuf = sync.Pool{New: func() any { return new(getKey) }}

// keyBuf returns buf, or a new buffer when buf cannot hold an entity key
// of n key bytes, so building the key allocates at most once.
func keyBuf(buf []byte, n int) []byte {
	if n += 9; cap(buf) < n {
		return make([]byte, 0, n)
	}
	return buf[:0]
}
