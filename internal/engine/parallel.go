package engine

import (
	"bytes"
	"context"
	"math/big"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
	"github.com/tablestore/tablestore/internal/keys"
	"github.com/tablestore/tablestore/internal/plan"
	"golang.org/x/sync/errgroup"
)

// parallelChunkBytes is the estimated size of the key segments a parallel
// scan hands its workers. Small segments bound the work read past the end
// of a page; each costs a few dozen size estimates to find.
const parallelChunkBytes = 1 << 20

// parallelPages counts pages read by parallelScan, for tests.
var parallelPages atomic.Int64

// ParallelPages returns how many query pages were read in parallel since
// the process started; tests use it to show the parallel path ran.
func ParallelPages() int64 { return parallelPages.Load() }

// span is a half-open range of stored keys.
type span struct{ lo, hi []byte }

// parallelOK reports whether a page over ranges should be read by
// parallelScan: a residual to evaluate, more than one worker, and enough
// data on disk in the ranges for several segments.
func (r *pageReader) parallelOK(spans []span) bool {
	if r.db.opts.Parallelism <= 1 || r.reverse || r.q.Plan.Residual == nil || len(spans) == 0 {
		return false
	}
	used, err := r.db.pdb.EstimateDiskUsage(spans[0].lo, spans[len(spans)-1].hi)
	return err == nil && used >= 2*parallelChunkBytes
}

// rawSpans maps ranges to stored keys.
func rawSpans(id uint64, ranges []plan.KeyRange) []span {
	out := make([]span, len(ranges))
	for i, rg := range ranges {
		out[i].lo = keys.Entity(nil, id, rg.Start.PartitionKey, rg.Start.RowKey)
		if rg.Unbounded {
			_, out[i].hi = keys.TableSpan(id)
		} else {
			out[i].hi = keys.Entity(nil, id, rg.End.PartitionKey, rg.End.RowKey)
		}
	}
	return out
}

// chunk is one key segment of a parallel scan and what a worker found in
// it.
type chunk struct {
	lo, hi   []byte
	rows     []driver.Row
	at       []int // at[i] is rows[i]'s 1-based position among the examined
	examined int
	capped   bool   // stopped by Top or PageScanLimit before its end
	timeout  bool   // stopped by PageTimeLimit before the entity at next
	next     []byte // with timeout: the first entity not examined
	done     chan struct{}
}

// parallelScan reads a page as scan does, with the key space of spans
// cut into segments of about parallelChunkBytes that Parallelism workers
// read concurrently from one snapshot. Results are merged in key order and
// the page ends exactly where scan's would by Top and PageScanLimit (and,
// like scan, wherever PageTimeLimit runs out).
func (r *pageReader) parallelScan(spans []span) error {
	parallelPages.Add(1)
	snap := r.db.pdb.NewSnapshot()
	defer snap.Close()
	workers := r.db.opts.Parallelism
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	lookahead := 2 * workers
	work := make(chan *chunk, lookahead)
	order := make(chan *chunk, lookahead)
	slots := make(chan struct{}, lookahead)
	// The dispatcher cuts segments in order, at most lookahead ahead of
	// the merger.
	g.Go(func() error {
		defer close(work)
		defer close(order)
		end := spans[len(spans)-1].hi
		for lo := spans[0].lo; bytes.Compare(lo, end) < 0; {
			select {
			case slots <- struct{}{}:
			case <-gctx.Done():
				return nil
			}
			hi, err := r.db.splitAfter(lo, end, parallelChunkBytes)
			if err != nil {
				return err
			}
			c := &chunk{lo: lo, hi: hi, done: make(chan struct{})}
			work <- c
			order <- c
			lo = hi
		}
		return nil
	})
	for range workers {
		g.Go(func() error {
			for c := range work {
				err := r.readChunk(gctx, snap, spans, c)
				close(c.done)
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := r.mergeChunks(gctx, snap, spans, order, slots)
	cancel()
	if werr := g.Wait(); err == nil && werr != nil && r.ctx.Err() == nil && werr != context.Canceled {
		err = werr
	}
	if err == nil {
		err = r.ctx.Err()
	}
	return err
}

// clip returns the parts of spans inside [lo, hi).
func clip(spans []span, lo, hi []byte) []span {
	var out []span
	for _, s := range spans {
		a, b := s.lo, s.hi
		if bytes.Compare(a, lo) < 0 {
			a = lo
		}
		if bytes.Compare(b, hi) > 0 {
			b = hi
		}
		if bytes.Compare(a, b) < 0 {
			out = append(out, span{a, b})
		}
	}
	return out
}

// readChunk examines the entities of c's segment inside spans, keeping
// copies of the matches, until it has Top of them, has examined
// PageScanLimit entities, or PageTimeLimit runs out.
func (r *pageReader) readChunk(ctx context.Context, snap *pebble.Snapshot, spans []span, c *chunk) error {
	it, err := snap.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
	var view codec.View
	opts := &r.db.opts
	for _, s := range clip(spans, c.lo, c.hi) {
		it.SetBounds(s.lo, s.hi)
		for valid := it.First(); valid; valid = it.Next() {
			if len(c.rows) >= r.q.Top || c.examined >= opts.PageScanLimit {
				c.capped = true
				return nil
			}
			if c.examined > 0 && c.examined%BudgetCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				if opts.Clock().UnixNano()-r.start >= int64(opts.PageTimeLimit) {
					c.timeout, c.next = true, bytes.Clone(it.Key())
					return nil
				}
			}
			_, pk, rk, err := keys.Split(it.Key())
			if err != nil {
				return corruptRecord(it.Key(), err)
			}
			val, err := it.ValueAndErr()
			if err != nil {
				return err
			}
			c.examined++
			view = codec.View{PartitionKey: pk, RowKey: rk, Record: codec.Record(val)}
			if !filter.Eval(r.q.Plan.Residual, &view) {
				continue
			}
			rec := codec.Record(bytes.Clone(val))
			etag := ""
			if ticks, err := rec.Timestamp(); err == nil {
				etag = codec.FormatETag(codec.TimeFromTicks(ticks))
			}
			c.rows = append(c.rows, driver.Row{PartitionKey: string(pk), RowKey: string(rk), Record: rec, ETag: etag})
			c.at = append(c.at, c.examined)
		}
		if err := it.Error(); err != nil {
			return err
		}
	}
	return nil
}

// mergeChunks emits the chunks' matches in order and ends the page where
// a serial scan would: before examining an entity, it stops there when
// Top entities have been emitted or PageScanLimit examined.
func (r *pageReader) mergeChunks(ctx context.Context, snap *pebble.Snapshot, spans []span, order <-chan *chunk, slots <-chan struct{}) error {
	limit := r.db.opts.PageScanLimit
	for c := range order {
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil // the error is the group's
		}
		<-slots
		need := limit - r.examined // entities the page may still examine
		prev := 0                  // position of the last match emitted
		for i, row := range c.rows {
			if r.emitted >= r.q.Top {
				return r.stopAt(snap, spans, c, prev+1)
			}
			if c.at[i] > need {
				return r.stopAt(snap, spans, c, need+1)
			}
			r.emitted++
			if err := r.emit(row); err != nil {
				r.emitFailed = true
				return err
			}
			prev = c.at[i]
		}
		switch {
		case r.emitted >= r.q.Top:
			return r.stopAt(snap, spans, c, prev+1)
		case c.examined > need:
			return r.stopAt(snap, spans, c, need+1)
		case c.capped:
			// Examined exactly the budget; the next entity is the stop.
			return r.stopAt(snap, spans, c, c.examined+1)
		case c.timeout:
			_, pk, rk, err := keys.Split(c.next)
			if err != nil {
				return corruptRecord(c.next, err)
			}
			r.resumeAt(string(pk), string(rk))
			return nil
		}
		r.examined += c.examined
	}
	return nil
}

// stopAt ends the page at the p-th entity of spans from the start of c
// (it may lie in a later chunk), or with no resume point when there is no
// such entity.
func (r *pageReader) stopAt(snap *pebble.Snapshot, spans []span, c *chunk, p int) error {
	it, err := snap.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
	n := 0
	for _, s := range clip(spans, c.lo, spans[len(spans)-1].hi) {
		it.SetBounds(s.lo, s.hi)
		for valid := it.First(); valid; valid = it.Next() {
			if n++; n < p {
				continue
			}
			_, pk, rk, err := keys.Split(it.Key())
			if err != nil {
				return corruptRecord(it.Key(), err)
			}
			r.resumeAt(string(pk), string(rk))
			return nil
		}
		if err := it.Error(); err != nil {
			return err
		}
	}
	return nil
}

// splitAfter returns a key k in (lo, end] such that the estimated disk
// usage of [lo, k) is about want, found by bisection; end when the rest is
// smaller.
func (db *Engine) splitAfter(lo, end []byte, want uint64) ([]byte, error) {
	used, err := db.pdb.EstimateDiskUsage(lo, end)
	if err != nil || used <= want {
		return end, err
	}
	a, b := keyNum(lo), keyNum(end)
	for range 64 {
		if new(big.Int).Sub(b, a).Cmp(big.NewInt(1)) <= 0 {
			break
		}
		mid := new(big.Int).Add(a, b)
		mid.Rsh(mid, 1)
		u, err := db.pdb.EstimateDiskUsage(lo, numKey(mid))
		if err != nil {
			return nil, err
		}
		if u >= want-want/4 && u <= want+want/4 {
			b = mid // close enough: segments need not be exact
			break
		}
		if u < want {
			a = mid
		} else {
			b = mid
		}
	}
	k := numKey(b)
	if bytes.Compare(k, lo) <= 0 || bytes.Compare(k, end) > 0 {
		return end, nil
	}
	return k, nil
}
