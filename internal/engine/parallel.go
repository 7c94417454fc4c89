package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"math"
	"runtime"
	"sync/atomic"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/keys"
	"golang.org/x/sync/errgroup"
)

// parallelAfter is how many entities a page examines serially before it
// may go on in parallel (see scanParallel): at a few hundred nanoseconds
// an entity, well under a millisecond, and one percent of a page that
// reaches the default PageScanLimit. A variable so tests can change it.
var parallelAfter = 1024

// Sizes of a parallel scan, in Pebble's estimate of sstable bytes
// (variables so tests can shrink them).
var (
	// parallelMinBytes is the least what is left of a page's ranges must
	// hold to be read in parallel (see scanParallel).
	parallelMinBytes uint64 = 2 << 20
	// firstChunkBytes is the size of a page's first segment; each next
	// one doubles, up to parallelChunkBytes. A page that ends soon (a
	// filter matching much, a small Top) so reads little past its end.
	firstChunkBytes uint64 = 256 << 10
	// parallelChunkBytes is the largest segment. It bounds the work read
	// past the end of a page and thrown away; at about 100 bytes an entity
	// a 1 MiB segment is some ten thousand entities, a few milliseconds.
	parallelChunkBytes uint64 = 1 << 20
	// minChunkBytes is the smallest segment, cut where the page is
	// expected to end (see progress.left).
	minChunkBytes uint64 = 64 << 10
)

// parallelPages counts pages read by parallelScan, for tests.
var parallelPages atomic.Int64

// ParallelPages returns how many query pages were read in parallel since
// the process started; tests use it to show the parallel path ran.
func ParallelPages() int64 { return parallelPages.Load() }

// chunkHook, when set (by tests), is called by a worker before it reads
// each chunk.
var chunkHook func()

// span is a half-open range of stored keys.
type span struct{ lo, hi []byte }

// parallelOK reports whether a page may be read by scanParallel: more
// than one worker, a forward read, and a residual filter to evaluate
// (without one every entity is a match, the page ends after Top entities
// and there is nothing to share out).
func (r *pageReader) parallelOK() bool {
	return r.db.opts.Parallelism > 1 && !r.reverse && r.q.Residual != nil
}

// scanParallel is offered the rest of a page's ranges by scan, with
// scan's iterator, once the page has examined parallelAfter entities
// without ending; it reads that rest with parallelScan when it holds at
// least parallelMinBytes on disk, and reports whether it did. So a page
// that ends early (a small table, a short range, a filter matching much)
// is read serially at no extra cost, and one that goes on pays one size
// estimate before its workers start. Clones of it give every part of the
// page the same view of the store; it is not moved.
func (r *pageReader) scanParallel(it *pebble.Iterator, rest []driver.KeyRange) (bool, error) {
	spans := rawSpans(r.id, rest)
	if parallelTrace != nil {
		parallelTrace(nil, spans[0].lo, r.examined, r.emitted, "")
	}
	used, err := r.db.pdb.EstimateDiskUsage(spans[0].lo, spans[len(spans)-1].hi)
	if err != nil || used < parallelMinBytes {
		return false, err
	}
	return true, r.parallelScan(it, spans)
}

// rawSpans maps ranges to stored keys.
func rawSpans(id uint64, ranges []driver.KeyRange) []span {
	out := make([]span, len(ranges))
	for i, rg := range ranges {
		out[i].lo = clampEntities(keys.Entity(nil, id, rg.Start.PartitionKey, rg.Start.RowKey), id)
		if rg.Unbounded {
			out[i].hi = keys.EntitiesEnd(nil, id)
		} else {
			out[i].hi = clampEntities(keys.Entity(nil, id, rg.End.PartitionKey, rg.End.RowKey), id)
		}
	}
	return out
}

// bounds locates bytes in a chunk's buf.
type bounds struct{ lo, hi int32 }

// match is a matching entity a worker found, its bytes in the chunk's
// buf.
type match struct {
	at          int    // 1-based position among the entities the chunk examined
	pk, rk, val bounds // the keys and the stored record
	after       bounds // the key of the next entity in the chunk, if any
}

// chunk is one key segment of a parallel scan and what a worker found in
// it. The merger sets the limits before it waits for the chunk; the
// worker owns the rest until it closes done.
type chunk struct {
	lo, hi   []byte
	rows     []match
	buf      []byte // the matches' bytes
	examined int
	est      uint64 // the segment's estimated size
	capped   bool   // stopped by a limit before the entity at next
	timeout  bool   // stopped by PageTimeLimit before the entity at next
	next     []byte // with capped or timeout: the first entity not examined
	// The most matches to keep and entities to examine: Top and
	// PageScanLimit until the merger knows what the page still needs.
	rowLimit, scanLimit atomic.Int64
	done                chan struct{}
}

// Chunks wait in freeChunks for the next parallel page once a page is
// done with them, so their buffers are reused from page to page. A
// sync.Pool would lose them to every other garbage collection, and a
// parallel page allocating its chunks anew doubles a scan's garbage:
// with as many workers as CPUs, each collection then takes a CPU from a
// worker. At most keptChunks are kept, each only if its buffers hold at
// most keptChunkBytes, so at most a few MiB stay allocated.
const (
	keptChunks     = 16
	keptChunkBytes = 256 << 10
)

var freeChunks = make(chan *chunk, keptChunks)

// newChunk returns an empty chunk for [lo, hi).
func newChunk(lo, hi []byte, top, scan int) *chunk {
	var c *chunk
	select {
	case c = <-freeChunks:
	default:
		c = new(chunk)
	}
	c.lo, c.hi = lo, hi
	c.rows, c.buf = c.rows[:0], c.buf[:0]
	c.examined, c.capped, c.timeout, c.next = 0, false, false, nil
	c.rowLimit.Store(int64(top))
	c.scanLimit.Store(int64(scan))
	c.done = make(chan struct{})
	return c
}

// release offers c, which no goroutine uses any more, for reuse.
func (c *chunk) release() {
	if cap(c.buf) > keptChunkBytes || cap(c.rows)*int(unsafe.Sizeof(match{})) > keptChunkBytes {
		return
	}
	c.lo, c.hi, c.next = nil, nil, nil
	select {
	case freeChunks <- c:
	default:
	}
}

// keep appends b to the chunk's buf.
func (c *chunk) keep(b []byte) bounds {
	lo := len(c.buf)
	c.buf = append(c.buf, b...)
	return bounds{int32(lo), int32(len(c.buf))}
}

func (c *chunk) bytes(b bounds) []byte { return c.buf[b.lo:b.hi] }

// parallelScan reads a page on from spans as scan does, with the key
// space of spans cut into segments (see splitter) that Parallelism
// workers read concurrently, each with one clone of base for the whole
// page. Results are merged in key order and the page ends exactly where
// scan's would by Top and PageScanLimit (and, like scan, wherever
// PageTimeLimit runs out).
func (r *pageReader) parallelScan(base *pebble.Iterator, spans []span) error {
	parallelPages.Add(1)
	workers := r.db.opts.Parallelism
	// Clones are made here, on base's goroutine, and closed when the
	// group is done.
	its := make([]*pebble.Iterator, workers+1)
	defer func() {
		for _, it := range its {
			if it != nil {
				it.Close()
			}
		}
	}()
	for i := range its {
		opts := pebble.CloneOptions{IterOptions: &pebble.IterOptions{}}
		if i == workers { // the splitter's
			opts.IterOptions = &pebble.IterOptions{LowerBound: spans[0].lo, UpperBound: spans[len(spans)-1].hi}
		}
		var err error
		if its[i], err = base.Clone(opts); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(r.ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	// Chunks in flight: a worker done with its chunk takes another while
	// the merger waits for an earlier one, whose slot it frees only then.
	// With 2 per worker the workers of a 2-CPU scan waited for work about
	// 15 ms per 100,000 entities (block profile); with 4 under 1 ms.
	lookahead := 4 * workers
	work := make(chan *chunk, lookahead)
	order := make(chan *chunk, lookahead)
	slots := make(chan struct{}, lookahead)
	top, scanLimit := r.q.Top, r.db.opts.PageScanLimit
	// The dispatcher cuts segments in order, at most lookahead ahead of
	// the merger.
	// seen[i%lookahead] is the progress after the merger was done with
	// chunk i. The dispatcher cuts chunk j once the merger has released
	// chunk j-lookahead's slot, and sizes it by that chunk's progress, not
	// the latest: so the segments depend on the data, never on timing.
	seen := make([]progress, lookahead)
	// A panic on a goroutine of the group (Pebble's, on damaged data)
	// becomes the page's error, as on the page's own goroutine.
	safely := func(f func() error) func() error {
		return func() (err error) {
			defer r.db.recoverStop("parallel read of a query page", &err)
			return f()
		}
	}
	g.Go(safely(func() error {
		defer close(work)
		defer close(order)
		var dispatched uint64 // estimated bytes handed out
		sp, err := r.db.newSplitter(its[workers], spans[0].lo, spans[len(spans)-1].hi)
		if err != nil {
			return err
		}
		for j := 0; !sp.done(); j++ {
			select {
			case slots <- struct{}{}:
			case <-gctx.Done():
				return nil
			}
			most := uint64(math.MaxUint64)
			if j >= lookahead {
				most = seen[j%lookahead].left(top, scanLimit, workers, dispatched)
			}
			lo, hi, est, err := sp.next(most)
			if err != nil {
				return err
			}
			dispatched += est
			c := newChunk(lo, hi, top, scanLimit)
			c.est = est
			work <- c
			order <- c
		}
		return nil
	}))
	for w := range workers {
		g.Go(safely(func() error {
			it := its[w]
			for c := range work {
				if chunkHook != nil {
					chunkHook()
				}
				err := r.readChunk(gctx, it, spans, c)
				close(c.done)
				if err != nil {
					return err
				}
				// The merger, woken by close, waits on this P until this
				// goroutine blocks; with every P busy reading, that is
				// only when the work runs dry, so the merger would hold
				// the lookahead's slots and the workers would idle. Let
				// it run now: it merges the chunk in microseconds and
				// frees a slot for the dispatcher.
				runtime.Gosched()
			}
			return nil
		}))
	}
	held, err := r.mergeChunks(gctx, base, spans, order, slots, seen)
	cancel()
	werr := g.Wait()
	// Every goroutine of the group is done: the chunk the page ended in
	// and those it never merged can be reused.
	if held != nil {
		held.release()
	}
	for c := range order {
		c.release()
	}
	if err == nil && werr != nil && r.ctx.Err() == nil && werr != context.Canceled {
		err = werr
	}
	if err == nil {
		err = r.ctx.Err()
	}
	return err
}

// progress is what the merger had read of a page when it was done with
// a chunk: the merged chunks' estimated bytes and entities, and the
// page's entities examined and emitted (its serial start included).
type progress struct{ bytes, entities, examined, emitted int }

// left estimates how big the next segment should be so that the page,
// by its rate of matches and its bytes per entity so far, does not end
// long before the segments handed out: a worker's share of the bytes the
// page still needs after those in flight (dispatched, in total), or no
// bound before anything is known.
func (p progress) left(top, scanLimit, workers int, dispatched uint64) uint64 {
	if p.entities == 0 || p.bytes == 0 {
		return math.MaxUint64
	}
	rest := scanLimit - p.examined
	if p.emitted > 0 {
		rest = min(rest, (top-p.emitted)*p.examined/p.emitted)
	}
	need := float64(rest)*float64(p.bytes)/float64(p.entities) - (float64(dispatched) - float64(p.bytes))
	if need <= 0 {
		return 0
	}
	return uint64(need) / uint64(workers)
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

// readChunk examines the entities of c's segment inside spans with it,
// keeping copies of the matches, until it has c's row limit of them, has
// examined its scan limit, or PageTimeLimit runs out. Per entity it does
// what scan does, so a worker's time per entity is the serial one.
func (r *pageReader) readChunk(ctx context.Context, it *pebble.Iterator, spans []span, c *chunk) error {
	var view driver.RowView
	opts := &r.db.opts
	residual := r.q.Residual
	pending := -1 // index of a match whose next entity is not yet seen
	for _, s := range clip(spans, c.lo, c.hi) {
		it.SetBounds(s.lo, s.hi)
		for valid := it.First(); valid; valid = it.Next() {
			key := it.Key()
			if pending >= 0 {
				c.rows[pending].after = c.keep(key)
				pending = -1
			}
			if int64(len(c.rows)) >= c.rowLimit.Load() || int64(c.examined) >= c.scanLimit.Load() {
				c.capped, c.next = true, bytes.Clone(key)
				return nil
			}
			if c.examined > 0 && c.examined%BudgetCheckEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
				if opts.Clock().UnixNano()-r.start >= int64(opts.PageTimeLimit) {
					c.timeout, c.next = true, bytes.Clone(key)
					return nil
				}
			}
			_, pk, rk, err := keys.Split(key)
			if err != nil {
				return corruptRecord(key, err)
			}
			val, err := it.ValueAndErr()
			if err != nil {
				return err
			}
			c.examined++
			if r.ttl != nil && r.ttl.expired(val, r.now) {
				continue
			}
			view = driver.RowView{PartitionKey: pk, RowKey: rk, Record: driver.Record(val)}
			if !filter.Eval(residual, &view) {
				continue
			}
			c.rows = append(c.rows, match{at: c.examined, pk: c.keep(pk), rk: c.keep(rk), val: c.keep(val)})
			pending = len(c.rows) - 1
		}
		if err := it.Error(); err != nil {
			return err
		}
	}
	return nil
}

// parallelTrace, when set (by tests), is told where a page's serial part
// handed off (lo nil, hi the first key left, the page's counts so far)
// and about each chunk the merger reads: its bounds, how many of its
// entities the page examined and emitted, and, for the chunk that ends
// the page, why.
var parallelTrace func(lo, hi []byte, examined, emitted int, end string)

// mergeChunks emits the chunks' matches in order and ends the page where
// a serial scan would: before examining an entity, it stops there when
// Top entities have been emitted or PageScanLimit examined. Before
// waiting for a chunk it tells the chunk's worker what the page still
// needs, so the chunk where the page ends stops there. It releases each
// chunk it is done with and returns the one it had when it stopped (nil
// when none), which its worker may still be reading.
func (r *pageReader) mergeChunks(ctx context.Context, base *pebble.Iterator, spans []span, order <-chan *chunk, slots <-chan struct{}, seen []progress) (held *chunk, err error) {
	limit := r.db.opts.PageScanLimit
	i, read, entities := 0, 0, 0 // chunks merged, their estimated bytes and entities
	for c := range order {
		need := limit - r.examined // entities the page may still examine
		c.rowLimit.Store(int64(r.q.Top - r.emitted))
		c.scanLimit.Store(int64(need))
		select {
		case <-c.done:
		case <-ctx.Done():
			return c, nil // the error is the group's
		}
		emitted0 := r.emitted
		// trace ends the page's use of c, which examined its first
		// examined entities.
		trace := func(examined int, end string) {
			r.examined += examined
			if parallelTrace != nil {
				parallelTrace(c.lo, c.hi, examined, r.emitted-emitted0, end)
			}
		}
		prev := 0 // position of the last match emitted
		var after []byte
		for i := range c.rows {
			m := &c.rows[i]
			if r.emitted >= r.q.Top {
				trace(prev, "top")
				return c, r.stopAt(base, spans, c, prev+1, after)
			}
			if m.at > need {
				trace(need, "scan limit")
				return c, r.stopAt(base, spans, c, need+1, nil)
			}
			pk, rk := r.keyStrings(c.bytes(m.pk), c.bytes(m.rk))
			if err := r.emitMatch(pk, rk, driver.Record(c.bytes(m.val))); err != nil {
				return c, err
			}
			prev, after = m.at, c.bytes(m.after)
		}
		switch {
		case r.emitted >= r.q.Top:
			trace(prev, "top")
			return c, r.stopAt(base, spans, c, prev+1, after)
		case c.examined > need:
			trace(need, "scan limit")
			return c, r.stopAt(base, spans, c, need+1, nil)
		case c.capped:
			// Examined exactly the budget; the next entity is the stop.
			trace(c.examined, "scan limit")
			return c, r.stopAt(base, spans, c, c.examined+1, c.next)
		case c.timeout:
			trace(c.examined, "time limit")
			return c, r.stopAt(base, spans, c, c.examined+1, c.next)
		}
		trace(c.examined, "")
		read += int(c.est)
		entities += c.examined
		seen[i%len(seen)] = progress{read, entities, r.examined, r.emitted}
		<-slots
		c.release()
		i++
	}
	return nil, nil
}

// stopAt ends the page at the p-th entity of spans from the start of c
// (it may lie in a later chunk), whose key is known when next is not
// empty, or with no resume point when there is no such entity.
func (r *pageReader) stopAt(base *pebble.Iterator, spans []span, c *chunk, p int, next []byte) error {
	if len(next) > 0 {
		_, pk, rk, err := keys.Split(next)
		if err != nil {
			return corruptRecord(next, err)
		}
		r.resumeAt(string(pk), string(rk))
		return nil
	}
	it, err := base.Clone(pebble.CloneOptions{IterOptions: &pebble.IterOptions{}})
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

// splitter cuts [lo, end) into the consecutive segments of a parallel
// scan, each about a target size (Pebble's estimate of sstable bytes),
// growing from firstChunkBytes to parallelChunkBytes. Each cut is a
// stored key, found by a search with one EstimateDiskUsage call and one
// seek per probe: the first probe extrapolates the last segment, the next
// ones interpolate between the stored keys bracketing the target, keys
// read as numbers after their common prefix. Working between stored keys
// keeps the interpolation inside the byte values keys really use (say,
// decimal digits), where a fixed numbering of the whole span would put
// most probes in empty gaps. A cut within a factor of two of its target,
// or the best of maxProbes, is taken; keys spread unevenly give segments
// of uneven size, never wrong results.
type splitter struct {
	db      *Engine
	it      *pebble.Iterator // over [lo, end)
	lo, end []byte           // the next segment's start; the end of the last
	first   []byte           // the first stored key at or after lo
	size    uint64           // the next segment's target
	// The last segment's first and last stored keys and its size.
	prevA, prevB []byte
	prevU        float64
}

// maxProbes bounds the size estimates spent on one cut.
const maxProbes = 5

// newSplitter returns a splitter of [lo, end) reading stored keys with
// it, bounded to [lo, end); the caller closes it.
func (db *Engine) newSplitter(it *pebble.Iterator, lo, end []byte) (*splitter, error) {
	s := &splitter{db: db, it: it, lo: lo, end: end, size: firstChunkBytes}
	if it.First() {
		s.first = bytes.Clone(it.Key())
	} else if err := it.Error(); err != nil {
		return nil, err
	}
	return s, nil
}

// done reports whether every segment has been handed out.
func (s *splitter) done() bool { return s.lo == nil }

// between returns a key between a and b, a < b, at about the fraction f
// of the way, reading both as numbers after their common prefix.
func between(a, b []byte, f float64) []byte {
	n, xa, xb := keyDigits(a, b)
	x := xa + uint64(f*float64(xb-xa))
	k := make([]byte, n+8)
	copy(k, a[:n])
	binary.BigEndian.PutUint64(k[n:], x)
	return k
}

// keyDigits returns the length n of a's and b's common prefix and the 8
// bytes of each after it (zero-padded) as big-endian numbers.
func keyDigits(a, b []byte) (n int, xa, xb uint64) {
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	var ab, bb [8]byte
	copy(ab[:], a[n:])
	copy(bb[:], b[n:])
	return n, binary.BigEndian.Uint64(ab[:]), binary.BigEndian.Uint64(bb[:])
}

// beyond returns a key past b by f times the distance from a to b, a < b,
// or nil when that leaves the 8 bytes after their common prefix.
func beyond(a, b []byte, f float64) []byte {
	n, xa, xb := keyDigits(a, b)
	d := f * float64(xb-xa)
	if d >= float64(math.MaxUint64-xb) {
		return nil
	}
	k := make([]byte, n+8)
	copy(k, b[:n])
	binary.BigEndian.PutUint64(k[n:], xb+uint64(max(d, 1)))
	return k
}

// probe is a candidate cut: a stored key (nil for the end) and the
// estimated size of the segment up to it.
type probe struct {
	key  []byte
	used float64
}

// measure snaps k to the first stored key at or after it and estimates
// the segment up to there.
func (s *splitter) measure(k []byte) (probe, error) {
	var p probe
	if k != nil && s.it.SeekGE(k) {
		p.key = bytes.Clone(s.it.Key())
	} else if err := s.it.Error(); err != nil {
		return p, err
	}
	hi := p.key
	if hi == nil {
		hi = s.end
	}
	u, err := s.db.pdb.EstimateDiskUsage(s.lo, hi)
	p.used = float64(u)
	return p, err
}

// next returns the next segment; after the last, done is true.
func (s *splitter) next(most uint64) (lo, hi []byte, used uint64, err error) {
	lo = s.lo
	if s.first == nil {
		s.lo = nil
		return lo, s.end, 0, nil
	}
	target := float64(min(s.size, max(most, minChunkBytes)))
	s.size = min(2*s.size, parallelChunkBytes)
	// The bracket: stored keys known to cut too little and too much;
	// b nil is the end.
	a, b := probe{key: s.first}, probe{used: math.Inf(1)}
	var guess []byte
	if s.prevA != nil && s.prevU > 0 && bytes.Compare(s.prevA, s.prevB) < 0 {
		guess = beyond(s.prevA, s.prevB, target/s.prevU)
	}
	best := probe{used: math.Inf(1)}
	for n := 1; ; n++ {
		p, err := s.measure(guess)
		if err != nil {
			return nil, nil, 0, err
		}
		if math.Abs(math.Log(max(p.used, 1)/target)) < math.Abs(math.Log(max(best.used, 1)/target)) {
			best = p
		}
		if p.used <= 2*target && (p.used >= target/2 || p.key == nil) || n == maxProbes {
			break
		}
		if p.used < target/2 {
			a = p
		} else {
			b = p
		}
		if math.IsInf(b.used, 1) {
			guess = nil // the end, to bound the search
			continue
		}
		// Interpolate between a and the last stored key before b, so
		// the guess lies among stored keys.
		var valid bool
		if b.key == nil {
			valid = s.it.Last()
		} else {
			valid = s.it.SeekLT(b.key)
		}
		if !valid || bytes.Compare(s.it.Key(), a.key) <= 0 {
			if err := s.it.Error(); err != nil {
				return nil, nil, 0, err
			}
			break // no stored key between a and b
		}
		f := (target - a.used) / (b.used - a.used)
		guess = between(a.key, s.it.Key(), min(max(f, 1.0/16), 15.0/16))
	}
	if best.key == nil {
		s.lo = nil
		return lo, s.end, uint64(best.used), nil
	}
	s.prevA, s.prevB, s.prevU = s.first, best.key, best.used
	s.lo, s.first = best.key, best.key
	return lo, best.key, uint64(best.used), nil
}
