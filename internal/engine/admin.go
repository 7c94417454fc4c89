package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

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
	db.flushForStats(ctx)
	start, end := keys.EntitySpan(info.id)
	st, err := db.spanStats(start, end)
	if err != nil {
		return driver.TableStats{}, err
	}
	st.Unflushed = db.pdb.Metrics().WAL.Size > 0 // live WAL data: writes not yet flushed
	return st, nil
}

// statsFlushEvery is how often size estimates may flush the memtables.
const statsFlushEvery = 30 * time.Second

// flushForStats flushes the memtables before a size estimate, which
// scales keys by disk usage: keys only in a memtable use none, and a key
// range written since the last flush (an index built, the newest
// partitions) would not count. It waits for the flush at most until ctx
// ends, and does nothing in a read-only store, one with nothing
// unflushed, or when an estimate flushed less than statsFlushEvery ago
// (estimates asked often under writes would otherwise make many small
// files); a failed flush leaves the estimate as it would have been.
func (db *Engine) flushForStats(ctx context.Context) {
	if db.opts.readOnly || db.pdb.Metrics().WAL.Size == 0 {
		return
	}
	now, last := time.Now().UnixNano(), db.statsFlush.Load()
	if now-last < int64(statsFlushEvery) || !db.statsFlush.CompareAndSwap(last, now) {
		return
	}
	done, err := db.pdb.AsyncFlush()
	if err != nil {
		return
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// statsCountBudget is how many keys spanStats counts one by one before
// it estimates the rest of a span; a variable for tests.
var statsCountBudget = 20_000

// statsSamples is how many places of a span too large to count
// spanStats measures its keys per byte at.
const statsSamples = 8

// minSample is the fewest keys a sample counts: enough for many blocks,
// so that the block at its end, which the usage counts whole, weighs
// little (at 2,500 an index of 20,000 entries read 12 % off).
const minSample = 5_000

// spanStats estimates the keys and bytes of [start, end); Unflushed is
// left false. Bytes are the sstables' bytes inside the span. Keys are
// counted by reading the span's first statsCountBudget live keys
// (memtables included, overwritten and deleted keys not), which is the
// exact count of a span that holds no more. Past that, the keys are the
// span's disk usage times its keys per byte, measured at statsSamples
// places spread evenly over its disk usage, each counting
// statsCountBudget/statsSamples keys or minSample, whichever is more
// (sampleDensity): keys per byte change along a span (an index's entries
// for entities without the property sort first and are short, RowKeys
// numbered without padding grow longer), so the first keys alone
// misjudge the rest. Counting goes on while every key counted is still
// only in memtables (no disk usage to scale by), which hold a bounded
// amount.
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
			n, err := db.sampleDensity(start, end)
			if err != nil {
				return driver.TableStats{}, err
			}
			st.Entities = n
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

// sampleDensity estimates the keys of [start, end), a span with keys on
// disk, as its disk usage times the keys per byte of statsSamples runs
// of keys, each starting at a key found at the middle of one of
// statsSamples equal parts of the usage (usageKey). A run's usage is the
// difference of the usages from start to its ends: EstimateDiskUsage
// counts the blocks holding a range's ends whole, and so the block at
// one end is counted and the one at the other not. A flush or compaction
// that changes the span's usage while the runs are measured skews them:
// the runs are measured again then, up to three times in all.
func (db *Engine) sampleDensity(start, end []byte) (int64, error) {
	from := func(k []byte) (float64, error) {
		u, err := db.pdb.EstimateDiskUsage(start, k)
		return float64(u), err
	}
	var n int64
	for range 3 {
		whole, err := from(end)
		if err != nil {
			return 0, err
		}
		if n, err = db.sampleRuns(start, end, whole, from); err != nil {
			return 0, err
		}
		after, err := from(end)
		if err != nil {
			return 0, err
		}
		if math.Abs(after-whole) <= whole/100 {
			break
		}
	}
	return n, nil
}

// sampleRuns is one measure of sampleDensity's, with whole the span's
// usage and from the usage from start to a key.
func (db *Engine) sampleRuns(start, end []byte, whole float64, from func([]byte) (float64, error)) (int64, error) {
	// Each run stands for an equal share of the usage: the mean of their
	// keys per byte (not their keys over their bytes, which would weigh
	// the sparse ones more).
	var density float64
	runs := 0
	for i := range statsSamples {
		at, err := db.usageKey(start, end, uint64(whole*(float64(i)+0.5)/statsSamples))
		if err != nil {
			return 0, err
		}
		n, next, err := db.countKeys(at, end, max(statsCountBudget/statsSamples, minSample))
		if err != nil {
			return 0, err
		}
		if next == nil {
			next = end
		}
		ua, err := from(at)
		if err != nil {
			return 0, err
		}
		un, err := from(next)
		if err != nil {
			return 0, err
		}
		if un > ua {
			density += float64(n) / (un - ua)
			runs++
		}
	}
	if runs == 0 {
		return 0, nil
	}
	return int64(density/float64(runs)*whole + 0.5), nil
}

// usageKey returns a key k of [start, end) with the disk usage of
// [start, k) about target: a search over the 8 bytes following the
// prefix the first and last keys of the range searched share, narrowed
// to the next 8 bytes while the range left holds more than a block (keys
// of one index value share their first bytes).
func (db *Engine) usageKey(start, end []byte, target uint64) ([]byte, error) {
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: start, UpperBound: end})
	if err != nil {
		return nil, err
	}
	lower, upper := start, end
	for range 8 {
		var first, last []byte
		if it.SeekGE(lower) {
			first = append(first, it.Key()...)
		}
		if it.SeekLT(upper) {
			last = append(last, it.Key()...)
		}
		if first == nil || last == nil || bytes.Compare(first, last) >= 0 {
			break
		}
		cp := 0
		for cp < len(first) && cp < len(last) && first[cp] == last[cp] {
			cp++
		}
		key := func(w uint64) []byte {
			return binary.BigEndian.AppendUint64(append([]byte(nil), first[:cp]...), w)
		}
		word := func(k []byte) uint64 {
			var b [8]byte
			copy(b[:], k[min(cp, len(k)):])
			return binary.BigEndian.Uint64(b[:])
		}
		lo, hi := word(first), word(last)+1
		for hi-lo > 1 {
			mid := lo + (hi-lo)/2
			u, err := db.pdb.EstimateDiskUsage(start, key(mid))
			if err != nil {
				it.Close()
				return nil, err
			}
			if u < target {
				lo = mid
			} else {
				hi = mid
			}
		}
		lower, upper = key(lo), key(hi)
		if bytes.Compare(lower, start) < 0 {
			lower = start
		}
		if bytes.Compare(upper, end) > 0 {
			upper = end
		}
		ul, err := db.pdb.EstimateDiskUsage(start, lower)
		if err != nil {
			it.Close()
			return nil, err
		}
		uu, err := db.pdb.EstimateDiskUsage(start, upper)
		if err != nil {
			it.Close()
			return nil, err
		}
		if block, err := db.pdb.EstimateDiskUsage(lower, lower); err != nil || uu-ul <= 2*block {
			if err != nil {
				it.Close()
				return nil, err
			}
			break
		}
	}
	k := lower
	if it.SeekGE(lower) {
		k = append([]byte(nil), it.Key()...)
	}
	return k, it.Close()
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
