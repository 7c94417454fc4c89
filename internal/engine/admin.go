package engine

import (
	"context"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/keys"
)

var (
	_ driver.Checkpointer = (*Engine)(nil)
	_ driver.StatsReader  = (*Engine)(nil)
)

// Checkpoint implements driver.Checkpointer with a Pebble checkpoint:
// hard links to the immutable sstables (copies across filesystems), a
// copy of the manifest and of the write-ahead log synced first, so
// everything committed so far, catalog included, is in it; the clock's
// ceiling is written beside it.
func (db *Engine) Checkpoint(ctx context.Context, dir string) error {
	release, err := db.enter(ctx)
	if err != nil {
		return err
	}
	defer release()
	if err := db.pdb.Checkpoint(dir, pebble.WithFlushedWAL()); err != nil {
		return fmt.Errorf("tablestore: checkpoint into %q: %w", dir, err)
	}
	// Every Timestamp in the checkpoint was issued before it was taken,
	// so below the durable ceiling now.
	if err := createClockFile(db.fs, dir, db.clock.durableCeiling()); err != nil {
		return fmt.Errorf("tablestore: checkpoint into %q: %w", dir, err)
	}
	return nil
}

// TableStats implements driver.StatsReader from sstable metadata: the
// bytes of every sstable that fall in the table's key span, and its
// entries (less tombstones) scaled by the fraction of each sstable's
// data inside the span. The memtable is not counted.
func (db *Engine) TableStats(ctx context.Context, name string) (driver.TableStats, error) {
	release, err := db.enter(ctx)
	if err != nil {
		return driver.TableStats{}, err
	}
	defer release()
	info, err := db.lookupTable(name)
	if err != nil {
		return driver.TableStats{}, err
	}
	start, end := keys.EntitySpan(info.id)
	st, err := db.spanStats(start, end)
	if err != nil {
		return driver.TableStats{}, err
	}
	st.Unflushed = db.pdb.Metrics().WAL.Size > 0 // live WAL data: writes not yet flushed
	return st, nil
}

// spanStats estimates the keys and bytes of [start, end) from sstable
// metadata, as TableStats describes; Unflushed is left false.
func (db *Engine) spanStats(start, end []byte) (driver.TableStats, error) {
	levels, err := db.pdb.SSTables(pebble.WithProperties(), pebble.WithKeyRangeFilter(start, end),
		pebble.WithApproximateSpanBytes())
	if err != nil {
		return driver.TableStats{}, err
	}
	var st driver.TableStats
	var entities float64
	for _, level := range levels {
		for _, f := range level {
			st.Bytes += int64(f.ApproximateSpanBytes)
			if f.Properties == nil || f.Size == 0 {
				continue
			}
			live := float64(f.Properties.NumEntries) - float64(f.Properties.NumDeletions)
			if live <= 0 {
				continue
			}
			// A file inside the span counts whole; for one that straddles
			// it, the span's share of its data blocks (the estimate of a
			// partial span leaves out index and filter blocks).
			frac := 1.0
			if f.ApproximateSpanBytes < f.Size && f.Properties.DataSize > 0 {
				frac = min(1, float64(f.ApproximateSpanBytes)/float64(f.Properties.DataSize))
			}
			entities += live * frac
		}
	}
	st.Entities = int64(entities + 0.5)
	return st, nil
}
