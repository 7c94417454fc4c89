package tablestoretest

import (
	"context"
	"io"
	"testing"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
)

// DB is an embedded in-memory store for a test, with the state controls
// of Server: Snapshot, Restore, Reset, Load, Golden, a Clock, and
// InjectFault. Its
// methods fail the test given to NewDB on error.
type DB struct {
	t      testing.TB
	w      *world
	clock  *Clock
	faults faultSet
}

// NewDB opens an empty in-memory store whose Timestamps and TTL expiry
// follow the returned DB's Clock, and closes it when the test ends.
func NewDB(t testing.TB) *DB {
	t.Helper()
	d := &DB{t: t, clock: new(Clock)}
	d.w = &world{clock: d.clock, wrap: func(c driver.Conn) driver.Conn { return wrapConn(c, &d.faults) }}
	if err := d.w.start(); err != nil {
		t.Fatalf("tablestoretest: %v", err)
	}
	t.Cleanup(func() {
		if err := d.w.close(); err != nil {
			t.Errorf("tablestoretest: close store: %v", err)
		}
	})
	return d
}

// DB is the current store. Restore and Reset replace it (and close the
// one replaced): call DB again after either.
func (d *DB) DB() *tablestore.DB { return d.w.cur.Load().db }

// Clock is the store's clock (see Clock).
func (d *DB) Clock() *Clock { return d.clock }

// Snapshot copies the store's whole state (see Snapshot).
func (d *DB) Snapshot() *Snapshot {
	d.t.Helper()
	snap, err := d.w.snapshot()
	if err != nil {
		d.t.Fatalf("tablestoretest: snapshot: %v", err)
	}
	return snap
}

// Restore replaces the store with a copy of snap.
func (d *DB) Restore(snap *Snapshot) {
	d.t.Helper()
	if err := d.w.restore(snap); err != nil {
		d.t.Fatalf("tablestoretest: restore: %v", err)
	}
}

// SetBaseline makes Reset return the store to a copy of snap instead of
// an empty store (nil: an empty store again).
func (d *DB) SetBaseline(snap *Snapshot) { d.w.setBaseline(snap) }

// Reset gives a clean slate: the store back to its baseline, faults
// removed, the Clock back to the wall clock; given parts, only those
// (see Server.Reset).
func (d *DB) Reset(parts ...ResetPart) {
	d.t.Helper()
	if err := resetWorld(d.w, &d.faults, d.clock, nil, parts); err != nil {
		d.t.Fatalf("tablestoretest: reset: %v", err)
	}
}

// Load writes JSON-lines entities into table (see Server.Load).
func (d *DB) Load(table string, r io.Reader) {
	d.t.Helper()
	if err := load(context.Background(), d.DB(), table, r); err != nil {
		d.t.Fatalf("tablestoretest: load %s: %v", table, err)
	}
}

// Golden compares table with the file at path (see Server.Golden).
func (d *DB) Golden(t testing.TB, table, path string) {
	t.Helper()
	golden(t, d.DB(), table, path)
}
