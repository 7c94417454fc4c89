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

// LogBytes is the bytes of batches committed to the write-ahead log since
// the store opened: a store whose figure has not moved holds what it
// held at open (every write goes through the log).
func (db *Engine) LogBytes() uint64 { return db.pdb.Metrics().WAL.BytesIn }

// TableStats implements driver.StatsReader: the bytes of every sstable
// that fall in the table's key span, and its entities as spanStats
// counts or estimates them.
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

// statsCountBudget is how many keys spanStats counts one by one before
// it estimates the rest of a span; a variable for tests.
var statsCountBudget = 20_000

// spanStats estimates the keys and bytes of [start, end); Unflushed is
// left false. Bytes are the sstables' bytes inside the span. Keys are
// counted by reading the span's first statsCountBudget live keys
// (memtables included, overwritten and deleted keys not), which is the
// exact count of a span that holds no more; past that, the keys of the
// rest of the span are its disk usage times the keys per byte of the
// part counted, so the cost stays bounded whatever the span's size.
// Counting goes on while every key counted is still only in memtables
// (no disk usage to scale by), which hold a bounded amount. The
// extrapolation assumes the rest's keys are about the size of the first
// ones, and keys of the rest still only in a memtable count only as far
// as the counted part held memtable keys too.
func (db *Engine) spanStats(start, end []byte) (driver.TableStats, error) {
	levels, err := db.pdb.SSTables(pebble.WithKeyRangeFilter(start, end), pebble.WithApproximateSpanBytes())
	if err != nil {
		return driver.TableStats{}, err
	}
	var st driver.TableStats
	for _, level := range levels {
		for _, f := range level {
			st.Bytes += int64(f.ApproximateSpanBytes)
		}
	}
	counted, next, err := db.countKeys(start, end, statsCountBudget)
	if err != nil {
		return driver.TableStats{}, err
	}
	for next != nil {
		head, err := db.pdb.EstimateDiskUsage(start, next)
		if err != nil {
			return driver.TableStats{}, err
		}
		if head > 0 {
			rest, err := db.pdb.EstimateDiskUsage(next, end)
			if err != nil {
				return driver.TableStats{}, err
			}
			// The whole span again, not st.Bytes: measured with head
			// and rest, after the count, so flushes and compactions
			// since st.Bytes do not skew the split.
			whole, err := db.pdb.EstimateDiskUsage(start, end)
			if err != nil {
				return driver.TableStats{}, err
			}
			h, r := splitUsage(head, rest, whole)
			st.Entities = int64(counted) + int64(float64(counted)*r/h+0.5)
			return st, nil
		}
		// The keys counted so far are all in memtables, which hold a
		// bounded amount: no density to scale by yet, so count on.
		more, after, err := db.countKeys(next, end, statsCountBudget)
		if err != nil {
			return driver.TableStats{}, err
		}
		counted, next = counted+more, after
	}
	st.Entities = int64(counted)
	return st, nil
}

// splitUsage splits whole, the disk usage of a span, at a key inside
// it, given head and rest, the usage of the two parts as measured
// apart. Each of those includes, in every sstable, the whole block
// holding the key, so their sum exceeds whole by those blocks, a large
// share of a small head. The share of each part is the mean of its own
// measure and whole less the other's, which cancels the shared blocks.
func splitUsage(head, rest, whole uint64) (h, r float64) {
	h = (float64(head) + float64(whole) - float64(rest)) / 2
	if h <= 0 || float64(whole) <= h {
		return float64(head), float64(rest)
	}
	return h, float64(whole) - h
}

// countKeys counts the live keys of [start, end) up to limit; next is the
// first key not counted, nil when the span holds no more than limit.
func (db *Engine) countKeys(start, end []byte, limit int) (n int, next []byte, err error) {
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return 0, nil, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if n == limit {
			next = append([]byte(nil), it.Key()...)
			break
		}
		n++
	}
	if err := it.Close(); err != nil {
		return 0, nil, err
	}
	return n, next, nil
}

// SetStatsCountBudget sets how many keys a size estimate counts before it
// extrapolates, and returns a function restoring the previous budget. It
// lets tests check the extrapolation on small tables.
func SetStatsCountBudget(n int) (restore func()) {
	old := statsCountBudget
	statsCountBudget = n
	return func() { statsCountBudget = old }
}
