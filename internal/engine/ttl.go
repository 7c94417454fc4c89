package engine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
)

// Time to live. A table's settings live in the catalog's keyspace, keyed
// by table ID (a table created again under the same name starts without):
//
//	meta | 'X' | table ID (8 bytes BE)  ->  JSON {"default":ns,"property":name}
//
// An entity of a table with settings expires at its expiry property's
// DateTime if it has one, else at its Timestamp plus the default; with
// neither it never expires. It is expired when its expiry is at or
// before "now", the expiry clock (see expiryNow), and from then on it is
// absent for every read and every precondition, before the sweeper
// (ttl_sweep.go) removes it through the expiry index (ttl_index.go).
const catalogTTLTag = 'X'

func ttlKey(id uint64) []byte {
	k := keys.TablePrefix(nil, keys.MetaTableID)
	k = append(k, catalogTTLTag)
	return binary.BigEndian.AppendUint64(k, id)
}

// ttlSettings are one table's settings, in ticks. Immutable once
// published.
type ttlSettings struct {
	def      int64 // ticks; 0: none
	property string
}

// ttlState is the engine's expiry state.
type ttlState struct {
	// tables maps table IDs to their settings; replaced whole (copy on
	// write) under setMu, read without a lock, so a table without
	// settings pays one atomic load and one map lookup.
	tables atomic.Pointer[map[uint64]*ttlSettings]
	// gates maps the IDs of the tables a SetTTL is rebuilding to a
	// channel closed when it ends: writes to such a table wait for it
	// (see lockForWrite). Copy on write under setMu, installed under
	// catMu in write mode; nil when empty.
	gates atomic.Pointer[map[uint64]chan struct{}]
	setMu sync.Mutex
	// hwm is the greatest "now" handed out (see expiryNow).
	hwm atomic.Int64
	// The sweeper: stop is closed by Close; wake nudges it.
	stop     chan struct{}
	stopOnce sync.Once
	wake     chan struct{}
	started  atomic.Bool
	// swept counts the entities the sweeper removed, for tests and stats.
	swept atomic.Int64
}

// ttlFor returns table id's settings, nil when it has none.
func (db *Engine) ttlFor(id uint64) *ttlSettings {
	m := db.ttl.tables.Load()
	if m == nil {
		return nil
	}
	return (*m)[id]
}

// expiry returns rec's expiry in ticks under s, and false when it never
// expires.
func (s *ttlSettings) expiry(rec driver.Record) (int64, bool) {
	if s.property != "" {
		if v, ok := rec.Lookup(s.property); ok && v.Type == edm.TypeDateTime {
			return v.Int, true
		}
	}
	if s.def > 0 {
		if ts, err := rec.Timestamp(); err == nil {
			return ts + s.def, true
		}
	}
	return 0, false
}

// propsExpiry is expiry for an entity about to be written with Timestamp
// ts and properties props.
func (s *ttlSettings) propsExpiry(props []driver.Property, ts int64) (int64, bool) {
	if s.property != "" {
		for i := range props {
			if props[i].Name == s.property && props[i].Value.Type == edm.TypeDateTime {
				return props[i].Value.Int, true
			}
		}
	}
	if s.def > 0 {
		return ts + s.def, true
	}
	return 0, false
}

// expired reports whether the stored record rec has expired at now.
func (s *ttlSettings) expired(rec []byte, now int64) bool {
	e, ok := s.expiry(driver.Record(rec))
	return ok && e <= now
}

// expiryNow returns "now" for expiry, in ticks: the store's clock, which
// never goes backwards. It is at least every Timestamp issued and every
// "now" handed out before, in this process or (through the clock's
// durable ceiling) an earlier one, so an entity once expired stays
// expired across a step back of Options.Clock and across a restart.
func (db *Engine) expiryNow() (int64, error) {
	wall := edm.TicksFromTime(db.opts.Clock())
	if h := db.ttl.hwm.Load(); wall <= h {
		return h, nil
	}
	now, err := db.clock.observe(wall)
	if err != nil {
		return 0, err
	}
	for {
		h := db.ttl.hwm.Load()
		if now <= h {
			return h, nil
		}
		if db.ttl.hwm.CompareAndSwap(h, now) {
			return now, nil
		}
	}
}

// observe records now (the wall clock, in ticks) as seen: later
// Timestamps are greater, and it stays below the durable ceiling, moved
// as next moves it. It returns the greatest of now and every value
// issued.
func (c *timestampClock) observe(now int64) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.issueLocked(func() (int64, bool) {
		if now <= c.last {
			return c.last, false
		}
		return now, true
	})
}

// loadTTL reads every table's settings at Open and starts the sweeper.
// REQUIRES: the catalog and the clock are loaded.
func (db *Engine) loadTTL() error {
	db.ttl.hwm.Store(db.clock.last)
	db.ttl.stop = make(chan struct{})
	db.ttl.wake = make(chan struct{}, 1)
	known := map[uint64]bool{}
	for _, info := range db.tables {
		known[info.id] = true
	}
	m := map[uint64]*ttlSettings{}
	prefix := append(keys.TablePrefix(nil, keys.MetaTableID), catalogTTLTag)
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: []byte{0, 0, 0, 0, 0, 0, 0, 0, catalogTTLTag + 1}})
	if err != nil {
		return db.storageErr("open: read the expiry settings", err)
	}
	for it.First(); it.Valid(); it.Next() {
		k := it.Key()
		if len(k) != len(prefix)+8 {
			_ = it.Close()
			return corruptRecord(k, fmt.Errorf("bad expiry settings key"))
		}
		id := binary.BigEndian.Uint64(k[len(prefix):])
		s, err := decodeTTL(it.Value())
		if err != nil {
			_ = it.Close()
			return corruptRecord(k, err)
		}
		if known[id] && s.Enabled() {
			m[id] = &ttlSettings{def: int64(s.Default / 100), property: s.Property}
		}
	}
	if err := it.Close(); err != nil {
		return db.storageErr("open: read the expiry settings", err)
	}
	db.ttl.tables.Store(&m)
	if !db.opts.readOnly {
		db.startExpirySweeper()
	}
	return nil
}

type ttlJSON struct {
	Default  int64  `json:"default"` // nanoseconds
	Property string `json:"property,omitempty"`
}

func decodeTTL(v []byte) (driver.TTL, error) {
	var j ttlJSON
	if err := json.Unmarshal(v, &j); err != nil {
		return driver.TTL{}, err
	}
	return driver.TTL{Default: time.Duration(j.Default), Property: j.Property}, nil
}

var _ driver.TTLTable = (*table)(nil)

// TTL implements driver.TTLTable from memory.
func (t *table) TTL(ctx context.Context) (driver.TTL, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return driver.TTL{}, err
	}
	info, err := t.resolve()
	if err != nil {
		return driver.TTL{}, err
	}
	s := t.db.ttlFor(info.id)
	if s == nil {
		return driver.TTL{}, nil
	}
	return driver.TTL{Default: time.Duration(s.def) * 100, Property: s.property}, nil
}

// SetTTL implements driver.TTLTable. Writes to the table wait while it
// runs; writes to other tables, reads and catalog changes do not. It
// closes the table's gate (see lockForWrite) under the catalog lock in
// write mode, which waits for the writes in flight. Then, holding the
// catalog lock in read mode for each step but the scan, it removes the
// entities that have expired under the old settings (in batches of their
// own, recorded in the change feed as the sweeper's), so new settings
// never make an expired entity live again, and in one synced batch stores
// the settings and rebuilds the table's expiry index by a scan of the
// table, in time proportional to the table's size. It publishes the
// settings and opens the gate. Settings that change nothing write
// nothing.
func (t *table) SetTTL(ctx context.Context, s driver.TTL) (err error) {
	release, err := t.db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	op := "set the expiry settings of table " + t.name
	defer t.db.recoverStop(op, &err)
	db := t.db
	var next *ttlSettings
	if s.Enabled() {
		next = &ttlSettings{def: int64(s.Default / 100), property: s.Property}
	}
	info, gate, err := t.closeTTLGate(ctx)
	if err != nil {
		return err
	}
	defer db.openTTLGate(info.id, gate)
	// The catalog lock is held in read mode only for short steps, never
	// across the scan: a catalog change waiting for it would hold every
	// other reader of the catalog back. current says, under it, whether
	// the name still holds the gated table.
	current := func() error {
		if cur, err := t.resolveLocked(); err != nil {
			return err
		} else if cur.id != info.id {
			return errorf(edm.CodeTableNotFound, "table %q was deleted", t.name)
		}
		return nil
	}
	old := db.ttlFor(info.id)
	if (old == nil && next == nil) || (old != nil && next != nil && *old == *next) {
		return nil
	}
	if old != nil {
		// What has expired stays expired: remove it before settings that
		// could make it live again apply.
		now, err := db.expiryNow()
		if err != nil {
			return err
		}
		for {
			db.catMu.RLock()
			n, err := 0, current()
			if err == nil {
				n, err = db.sweepExpiredTable(info.id, old, now, 1000)
			}
			db.catMu.RUnlock()
			if err != nil {
				return err
			}
			if n < 1000 {
				break
			}
		}
	}
	b := db.pdb.NewBatch()
	defer b.Close()
	if next == nil {
		_ = b.Delete(ttlKey(info.id), nil)
	} else {
		v, _ := json.Marshal(ttlJSON{Default: int64(time.Duration(next.def) * 100), Property: next.property})
		_ = b.Set(ttlKey(info.id), v, nil)
	}
	// The scan needs no lock: the gate holds the table's writes off, and
	// an entry a range deletion leaves behind meanwhile is checked
	// against its entity when swept, as after any range deletion.
	if err := db.rebuildExpiryIndex(ctx, b, info.id, next); err != nil {
		return err
	}
	db.catMu.RLock()
	defer db.catMu.RUnlock()
	if err := current(); err != nil {
		return err
	}
	if err := db.commitBatch(b, pebble.Sync); err != nil {
		return db.storageErr(op, err)
	}
	db.setTTL(info.id, next)
	db.wakeExpirySweeper()
	return nil
}

// closeTTLGate resolves the table and closes its gate: once it returns,
// no write to the table is in flight and none starts until openTTLGate.
// It waits for another SetTTL of the table to end first.
func (t *table) closeTTLGate(ctx context.Context) (tableInfo, chan struct{}, error) {
	db := t.db
	for {
		db.catMu.Lock()
		info, err := t.resolveLocked()
		if err != nil {
			db.catMu.Unlock()
			return tableInfo{}, nil, err
		}
		if other := db.ttlGate(info.id); other != nil {
			db.catMu.Unlock()
			select {
			case <-other:
				continue
			case <-ctx.Done():
				return tableInfo{}, nil, ctx.Err()
			}
		}
		gate := make(chan struct{})
		db.ttl.setMu.Lock()
		m := map[uint64]chan struct{}{}
		if old := db.ttl.gates.Load(); old != nil {
			for k, v := range *old {
				m[k] = v
			}
		}
		m[info.id] = gate
		db.ttl.gates.Store(&m)
		db.ttl.setMu.Unlock()
		db.catMu.Unlock()
		return info, gate, nil
	}
}

// openTTLGate removes table id's gate and lets the writes waiting for it
// go on.
func (db *Engine) openTTLGate(id uint64, gate chan struct{}) {
	db.ttl.setMu.Lock()
	m := map[uint64]chan struct{}{}
	for k, v := range *db.ttl.gates.Load() {
		if k != id {
			m[k] = v
		}
	}
	if len(m) == 0 {
		db.ttl.gates.Store(nil)
	} else {
		db.ttl.gates.Store(&m)
	}
	db.ttl.setMu.Unlock()
	close(gate)
}

// ttlGate returns the gate of a SetTTL of table id in progress, or nil.
func (db *Engine) ttlGate(id uint64) chan struct{} {
	m := db.ttl.gates.Load()
	if m == nil {
		return nil
	}
	return (*m)[id]
}

// lockForWrite takes db.catMu in read mode and resolves the table for a
// write, first waiting for a SetTTL of the table in progress to end
// (without the catalog lock, so DDL goes on meanwhile). On success the
// caller holds db.catMu in read mode.
func (t *table) lockForWrite(ctx context.Context) (tableInfo, error) {
	db := t.db
	for {
		db.catMu.RLock()
		info, err := t.resolveLocked()
		if err != nil {
			db.catMu.RUnlock()
			return tableInfo{}, err
		}
		gate := db.ttlGate(info.id)
		if gate == nil {
			return info, nil
		}
		db.catMu.RUnlock()
		select {
		case <-gate:
		case <-ctx.Done():
			return tableInfo{}, ctx.Err()
		case <-db.faulted:
			return tableInfo{}, db.writable()
		}
	}
}

// setTTL publishes table id's settings (nil: none).
// REQUIRES: db.catMu held, and table id's writes held off (its gate, or
// catMu in write mode).
func (db *Engine) setTTL(id uint64, s *ttlSettings) {
	db.ttl.setMu.Lock()
	defer db.ttl.setMu.Unlock()
	m := map[uint64]*ttlSettings{}
	if old := db.ttl.tables.Load(); old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	if s == nil {
		delete(m, id)
	} else {
		m[id] = s
	}
	db.ttl.tables.Store(&m)
}

// forgetTTL adds to b, a table's deletion, the deletion of its settings;
// the caller drops them from memory (setTTL) once b committed, so an
// expired entity never shows meanwhile, nor after a refused deletion.
func (db *Engine) forgetTTL(b *pebble.Batch, id uint64) {
	_ = b.Delete(ttlKey(id), nil)
}

// expiredErr is the answer for a read of an entity that has expired.
func expiredErr(pk, rk string) error {
	return errorf(edm.CodeResourceNotFound, "entity (%q, %q) does not exist", pk, rk)
}
