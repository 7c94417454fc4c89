package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/keys"
)

// Range deletions and indexes.
//
// A range deletion (deleterange.go) stays one range deletion of the
// entities, under the partition's lock, whatever the table's indexes:
//
//   - A Partitioned index whose whole partition is deleted loses the
//     partition's entries in a range deletion of its own, in the same
//     batch: exact.
//   - Every other index (table-wide, or Partitioned under a RowKey range)
//     keeps the entries of the deleted entities. The same batch records
//     the deleted range as pending, under the table's index metadata (so
//     it goes with the table):
//
//     table | 0xFF | index ID 0 | 'S' | pk 0x00 from 0x00 to  ->  stamp (8 bytes)
//
// An entry whose entity is gone, or holds other values, is never
// returned: every read of an index checks each entry against its entity
// (index_read.go), and a uniqueness check ignores, and deletes, such an
// entry. A background sweep, started by the range deletion (and at Open
// for ranges still pending), reads each index of the table, deletes the
// entries of the pending ranges whose entity does not hold them (each
// under its partition's lock, checked again there), then removes the
// records it has served. Check counts an entry that does not match its
// entity as damage unless a pending range covers it. A table-wide index
// is read whole by a sweep, so a sweep costs a read of the index; it runs
// on its own goroutine and serves every range pending when it starts.

const sweepRecordTag = 'S'

// sweepRecordPrefix is the key prefix of a table's pending ranges.
func sweepRecordPrefix(tableID uint64) []byte {
	return append(keys.IndexPrefix(nil, tableID, 0), sweepRecordTag)
}

// pendingRange is one recorded range deletion.
type pendingRange struct {
	key, stamp []byte
	pk         string
	from, to   string // "" unbounded
}

// covers reports whether the range holds the entity (pk, rk).
func (r *pendingRange) covers(pk, rk []byte) bool {
	return string(pk) == r.pk && (r.from == "" || string(rk) >= r.from) && (r.to == "" || string(rk) < r.to)
}

// sweeper runs the sweeps of the tables with pending ranges.
type sweeper struct {
	mu      sync.Mutex
	tables  map[uint64]bool // tables to sweep; guarded by mu
	running bool            // a sweep goroutine runs; guarded by mu
	stamp   atomic.Int64    // the last record stamp
	// sweeps counts finished table sweeps, for tests.
	sweeps atomic.Int64
}

// indexRangeDelete adds to b, the range deletion of [from, to) in the
// partition, what the table's indexes need (see above), and reports
// whether it recorded a pending range, for the caller to wake the
// sweeper once b is committed.
// REQUIRES: the partition lock and db.catMu (read mode) are held.
func (p partition) indexRangeDelete(b *pebble.Batch, from, to string) bool {
	record := false
	for _, ix := range p.db.tableIndexes(p.tableID) {
		if ix.spec.Partitioned && from == "" && to == "" {
			lo := append(append(keys.IndexPrefix(nil, p.tableID, ix.id), p.pk...), keys.Sep)
			hi := append(append(keys.IndexPrefix(nil, p.tableID, ix.id), p.pk...), keys.Sep+1)
			_ = b.DeleteRange(lo, hi, nil)
			continue
		}
		record = true
	}
	if !record {
		return false
	}
	k := sweepRecordPrefix(p.tableID)
	k = append(append(k, p.pk...), keys.Sep)
	k = append(append(k, from...), keys.Sep)
	k = append(k, to...)
	stamp := p.db.ix.sweep.nextStamp()
	_ = b.Set(k, binary.BigEndian.AppendUint64(nil, uint64(stamp)), nil)
	return true
}

// nextStamp returns a stamp no record written since the process started
// has had, and, clocks permitting, none before.
func (s *sweeper) nextStamp() int64 {
	for {
		last := s.stamp.Load()
		next := max(last+1, time.Now().UnixNano())
		if s.stamp.CompareAndSwap(last, next) {
			return next
		}
	}
}

// readPending returns the table's pending ranges in r.
func readPending(r pebble.Reader, tableID uint64) ([]pendingRange, error) {
	prefix := sweepRecordPrefix(tableID)
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: prefix, UpperBound: keys.ValueEnd(prefix)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []pendingRange
	for valid := it.First(); valid; valid = it.Next() {
		rest := it.Key()[len(prefix):]
		parts := bytes.SplitN(rest, []byte{keys.Sep}, 3)
		if len(parts) != 3 {
			return nil, &driver.CorruptError{Op: fmt.Sprintf("read of the pending index sweep %q", it.Key()), Err: keys.ErrMalformedIndex}
		}
		out = append(out, pendingRange{key: bytes.Clone(it.Key()), stamp: bytes.Clone(it.Value()),
			pk: string(parts[0]), from: string(parts[1]), to: string(parts[2])})
	}
	return out, it.Error()
}

// queuePendingSweeps queues, at Open, every table with pending ranges.
func (db *Engine) queuePendingSweeps() error {
	for tableID := range db.ix.byTable {
		pending, err := readPending(db.pdb, tableID)
		if err != nil {
			return db.storageErr("open: read pending index sweeps", err)
		}
		if len(pending) > 0 {
			db.wakeSweeper(tableID)
		}
	}
	return nil
}

// wakeSweeper queues the table for a sweep and starts the sweep goroutine
// unless it runs. The goroutine ends when no table is queued, or the
// store closes (the sweeps left run at the next Open).
func (db *Engine) wakeSweeper(tableID uint64) {
	s := &db.ix.sweep
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables[tableID] = true
	if !s.running {
		s.running = true
		go db.sweepLoop()
	}
}

func (db *Engine) sweepLoop() {
	s := &db.ix.sweep
	for {
		s.mu.Lock()
		var tableID uint64
		found := false
		for id := range s.tables {
			tableID, found = id, true
			break
		}
		if !found {
			s.running = false
			s.mu.Unlock()
			return
		}
		delete(s.tables, tableID)
		s.mu.Unlock()
		if err := db.sweepTable(context.Background(), tableID); err != nil {
			s.mu.Lock()
			s.running = false
			s.mu.Unlock()
			return // closed or faulted: the records stay for the next Open
		}
	}
}

// SweepIndexes sweeps every table's pending ranges now (see above), for
// tests that need the entries gone.
func (db *Engine) SweepIndexes(ctx context.Context) error {
	db.catMu.RLock()
	ids := make([]uint64, 0, len(db.ix.byTable))
	for id := range db.ix.byTable {
		ids = append(ids, id)
	}
	db.catMu.RUnlock()
	slices.Sort(ids)
	for _, id := range ids {
		if err := db.sweepTable(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// IndexSweeps returns how many table sweeps have finished, for tests.
func (db *Engine) IndexSweeps() int64 { return db.ix.sweep.sweeps.Load() }

// sweepTable serves the ranges pending in one table.
func (db *Engine) sweepTable(ctx context.Context, tableID uint64) (err error) {
	release, err := db.enterWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	defer db.recoverStop(fmt.Sprintf("index sweep of table #%d", tableID), &err)
	pending, err := readPending(db.pdb, tableID)
	if err != nil {
		return db.storageErr("read pending index sweeps", err)
	}
	if len(pending) == 0 {
		return nil
	}
	db.catMu.RLock()
	ixs := slices.Clone(db.tableIndexes(tableID))
	db.catMu.RUnlock()
	for _, ix := range ixs {
		if err := db.sweepIndex(ctx, ix, pending); err != nil {
			return err
		}
	}
	// Remove the records served, each under its partition's lock unless
	// a range deletion wrote it again meanwhile.
	for i := range pending {
		r := &pending[i]
		err := func() error {
			defer db.partition(tableID, r.pk).lock().Unlock()
			v, closer, err := db.pdb.Get(r.key)
			if err == pebble.ErrNotFound {
				return nil
			}
			if err != nil {
				return db.storageErr("read pending index sweep", err)
			}
			same := bytes.Equal(v, r.stamp)
			_ = closer.Close()
			if !same {
				return nil
			}
			return db.storageErr("remove pending index sweep", db.deleteKey(r.key, db.writeOpts))
		}()
		if err != nil {
			return err
		}
	}
	db.ix.sweep.sweeps.Add(1)
	return nil
}

// sweepIndex deletes ix's entries in the pending ranges whose entity does
// not hold them.
func (db *Engine) sweepIndex(ctx context.Context, ix *index, pending []pendingRange) error {
	n := len(ix.spec.Properties)
	var spans [][2][]byte
	if ix.spec.Partitioned {
		for _, r := range pending {
			lo := append(append(keys.IndexPrefix(nil, ix.tableID, ix.id), r.pk...), keys.Sep)
			hi := append(append(keys.IndexPrefix(nil, ix.tableID, ix.id), r.pk...), keys.Sep+1)
			spans = append(spans, [2][]byte{lo, hi})
		}
	} else {
		lo, hi := keys.IndexSpan(ix.tableID, ix.id)
		spans = append(spans, [2][]byte{lo, hi})
	}
	it, err := db.pdb.NewIter(nil)
	if err != nil {
		return db.storageErr("sweep index "+ix.spec.Name, err)
	}
	defer it.Close()
	// Candidates, by partition.
	type cand struct{ key, pk, rk, tuple []byte }
	var cands []cand
	seen := 0
	for _, sp := range spans {
		it.SetBounds(sp[0], sp[1])
		for valid := it.First(); valid; valid = it.Next() {
			if seen++; seen%4096 == 0 {
				if db.closed.Load() {
					return driver.ErrClosed
				}
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			tuple, pk, rk, err := keys.SplitIndexSuffix(it.Key()[keys.IndexPrefixLen:], n, ix.spec.Partitioned)
			if err != nil {
				return &driver.CorruptError{Op: fmt.Sprintf("sweep of index %s entry %q", ix.spec.Name, it.Key()), Err: err}
			}
			covered := false
			for i := range pending {
				if pending[i].covers(pk, rk) {
					covered = true
					break
				}
			}
			if !covered {
				continue
			}
			holds, err := db.entityHolds(nil, ix, pk, rk, tuple)
			if err != nil {
				return err
			}
			if !holds {
				k := bytes.Clone(it.Key())
				t, p, r, _ := keys.SplitIndexSuffix(k[keys.IndexPrefixLen:], n, ix.spec.Partitioned)
				cands = append(cands, cand{key: k, pk: p, rk: r, tuple: t})
			}
		}
		if err := it.Error(); err != nil {
			return db.storageErr("sweep index "+ix.spec.Name, err)
		}
	}
	slices.SortFunc(cands, func(a, b cand) int { return bytes.Compare(a.pk, b.pk) })
	for len(cands) > 0 {
		end := 1
		for end < len(cands) && bytes.Equal(cands[end].pk, cands[0].pk) {
			end++
		}
		group := cands[:end]
		cands = cands[end:]
		err := func() error {
			defer db.partition(ix.tableID, string(group[0].pk)).lock().Unlock()
			b := db.pdb.NewBatch()
			defer b.Close()
			for _, c := range group {
				holds, err := db.entityHolds(nil, ix, c.pk, c.rk, c.tuple)
				if err != nil {
					return err
				}
				if !holds {
					_ = b.Delete(c.key, nil)
				}
			}
			if b.Empty() {
				return nil
			}
			return db.storageErr("sweep index "+ix.spec.Name, db.commitBatch(b, db.writeOpts))
		}()
		if err != nil {
			return err
		}
	}
	return nil
}
