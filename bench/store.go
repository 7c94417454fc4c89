package main

import (
	"context"
	"errors"
)

// A store is one side of the comparison (tablestore, raw Pebble or
// SQLite) opened on one directory. Every method is safe for concurrent
// use. Each method does the same logical work on every side; the
// comments say what that work is.
type store interface {
	// upsertBatch writes recs (all in one partition, at most 100) as one
	// atomic batch of insert-or-replace writes.
	upsertBatch(ctx context.Context, recs []record) error
	// insert adds one entity and fails if it exists already.
	insert(ctx context.Context, rec *record) error
	// get reads one entity, decodes all its properties into the side's
	// decoded form (a record for the raw sides, an Entity for tablestore)
	// and returns how many user properties it has.
	get(ctx context.Context, pk, rk string) (int, error)
	// rangeQuery returns the entities of partition pk with
	// lo <= RowKey < hi, decoded; it returns how many there were.
	rangeQuery(ctx context.Context, pk, lo, hi string) (int, error)
	// partitionScan returns every entity of partition pk, decoded.
	partitionScan(ctx context.Context, pk string) (int, error)
	// filterScan scans the whole table and returns the entities whose
	// Int32 property Bucket equals bucket (decoded), evaluating the
	// predicate on the stored bytes; it returns how many matched.
	filterScan(ctx context.Context, bucket int32) (int, error)
	// page reads up to top entities of the whole table in key order,
	// starting at token ("" is the beginning), and returns how many it
	// read and the token of the next page ("" when done). Each call is
	// stateless: it opens and closes its own cursor.
	page(ctx context.Context, token string, top int) (int, string, error)
	// readModifyWrite reads the entity, increments its Count and writes it
	// back only if it has not changed since the read (ETag or version
	// check). It returns errConflict when another writer got there first.
	readModifyWrite(ctx context.Context, pk, rk string) error
	// readCount returns the Count property of an entity (to check that
	// no read-modify-write update was lost).
	readCount(ctx context.Context, pk, rk string) (int32, error)
	close() error
}

// errConflict reports a lost optimistic-concurrency race in
// readModifyWrite.
var errConflict = errors.New("bench: write conflict")

// errNotFound reports a missing entity in get.
var errNotFound = errors.New("bench: entity not found")

// sideNames are the sides in report order.
var sideNames = []string{sideTablestore, sideTyped, sidePebble, sidePebbleMaps, sideSQLite}

const (
	sideTablestore = "tablestore"
	sideTyped      = "typed" // tablestore through its typed (struct) API
	sidePebble     = "pebble"
	sidePebbleMaps = "pebble-maps" // raw pebble read into property maps
	sideSQLite     = "sqlite"
)

// readsOnly reports whether side takes part in the read workloads only.
func readsOnly(side string) bool { return side == sidePebbleMaps }

// storeSettings are the settings every side gets alike.
type storeSettings struct {
	sync      bool  // fsync every commit
	cacheSize int64 // block or page cache bytes
	blockSize int   // Pebble's data block bytes (both Pebble sides); 0 is the default
}

// openStore opens side name in dir.
func openStore(name, dir string, s storeSettings) (store, error) {
	switch name {
	case sideTablestore:
		return openTablestore(dir, s)
	case sideTyped:
		return openTyped(dir, s)
	case sidePebble:
		return openPebble(dir, s)
	case sidePebbleMaps:
		p, err := openPebble(dir, s)
		if err != nil {
			return nil, err
		}
		return pebbleMapsStore{p.(*pebbleStore)}, nil
	case sideSQLite:
		return openSQLite(dir, s)
	}
	return nil, errors.New("bench: unknown side " + name)
}
