package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// After the bulk load, the stores are not in the same state: raw
// Pebble's load is over before any compaction starts, so its data stays
// in L0 (sorted, non-overlapping files), while tablestore's slower load
// lets compactions run meanwhile and leaves files in L0, L5 and L6 with
// compaction debt; nothing compacts further while the stores are only
// read. Settling compacts every main store into its bottom levels before
// the reads, so every side reads the same LSM shape.

// compactMain compacts side's main store whole and returns how long it
// took. Raw Pebble's stores are compacted in place. tablestore does not
// expose its Pebble, so its store is closed, compacted by raw Pebble of
// the same version with the same options (format, bloom filters, block
// size; the files it writes are those the engine would write) and opened
// again. SQLite's write-ahead log is checkpointed into the database.
func compactMain(e *env, side string) (time.Duration, error) {
	s, err := e.mainStore(side)
	if err != nil {
		return 0, err
	}
	t0 := time.Now()
	switch p := s.(type) {
	case *pebbleStore:
		err = compactAll(e.ctx, p.db)
	case pebbleMapsStore:
		err = compactAll(e.ctx, p.db)
	case *sqliteStore:
		_, err = p.w.ExecContext(e.ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	case *tablestoreStore, *typedStore:
		err = compactTablestore(e, side, s)
	default:
		err = fmt.Errorf("cannot compact %T", s)
	}
	return time.Since(t0), err
}

// compactWhole compacts [lo, hi) of db until its files are in one level.
// One manual compaction moves the levels that hold files at its start
// down by one step: data all in L0 ends in Lbase and the level below, so
// it runs again (three times at most).
func compactWhole(ctx context.Context, db *pebble.DB, lo, hi []byte) error {
	for range 3 {
		if err := db.Compact(ctx, lo, hi, true); err != nil {
			return err
		}
		m := db.Metrics()
		levels := 0
		for i := range m.Levels {
			if m.Levels[i].TablesCount > 0 {
				levels++
			}
		}
		if levels <= 1 {
			return nil
		}
	}
	return nil
}

// compactAll compacts every key of db (every table ID: keys start with
// an 8-byte table ID) until its files are in one level.
func compactAll(ctx context.Context, db *pebble.DB) error {
	return compactWhole(ctx, db, []byte{0}, bytes.Repeat([]byte{0xff}, 9))
}

func compactTablestore(e *env, side string, s store) error {
	if err := s.close(); err != nil {
		return err
	}
	delete(e.main, side)
	dir := filepath.Join(e.dataDir, side+"-main", "tablestore")
	if err := compactClosedStore(e.ctx, dir, e.settings(false)); err != nil {
		return err
	}
	_, err := e.open(side, false)
	return err
}

// compactClosedStore compacts the closed tablestore store in dir whole
// with raw Pebble of the same version and options.
func compactClosedStore(ctx context.Context, dir string, s storeSettings) error {
	o := rawPebbleOptions(s)
	db, err := pebble.Open(dir, o)
	o.Cache.Unref()
	if err != nil {
		return err
	}
	if err := compactAll(ctx, db); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// settleStores records the LSM shape of every loaded main store, then,
// with c.settle, compacts each and records the shape again.
func settleStores(e *env, c config, res *results) error {
	res.Settled = c.settle
	res.ShapesAfterLoad, res.Shapes, res.SettleSeconds = map[string]lsmShape{}, map[string]lsmShape{}, map[string]float64{}
	for _, side := range c.sides {
		if !e.loaded[side] || side == sideSQLite {
			continue
		}
		sh, err := storeShape(e, side)
		if err != nil {
			return fmt.Errorf("LSM shape of %s: %w", side, err)
		}
		res.ShapesAfterLoad[side] = sh
		logf("settle: %s after the load: %s", side, sh)
	}
	if !c.settle {
		return nil
	}
	for _, side := range c.sides {
		if !e.loaded[side] {
			continue
		}
		d, err := compactMain(e, side)
		if err != nil {
			return fmt.Errorf("settle %s: %w", side, err)
		}
		res.SettleSeconds[side] = d.Seconds()
		if side == sideSQLite {
			continue
		}
		sh, err := storeShape(e, side)
		if err != nil {
			return fmt.Errorf("LSM shape of %s: %w", side, err)
		}
		res.Shapes[side] = sh
		logf("settle: %s compacted in %s: %s", side, d.Round(time.Millisecond), sh)
	}
	return nil
}
