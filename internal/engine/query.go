package engine

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/keys"
)

// BudgetCheckEvery is how many examined entities pass between checks of
// the context and of PageTimeLimit; reading the clock per entity would
// cost more than evaluating most filters.
const BudgetCheckEvery = 64

// QueryPage implements driver.Table. It reads q.Ranges from the resume
// point on, evaluating the residual filter on each stored entity's
// encoded bytes. A page ends early when it has examined PageScanLimit
// entities or run for PageTimeLimit. The resume point it returns is the
// key of the next entity in the ranges, so More is true exactly when at
// least one more entity remains to be examined.
func (t *table) QueryPage(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	return t.queryPage(ctx, q, emit, false)
}

var _ driver.ReverseQuerier = (*table)(nil)

// QueryPageReverse implements driver.ReverseQuerier: QueryPage reading
// the same ranges from the resume point down, with an iterator running
// backwards (Pebble's Prev), at the cost of a forward read.
func (t *table) QueryPageReverse(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	return t.queryPage(ctx, q, emit, true)
}

func (t *table) queryPage(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error, reverse bool) (_ driver.PageResult, err error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return driver.PageResult{}, err
	}
	defer release()
	op := func() string { return "query of table " + t.name }
	defer func() {
		if r := recover(); r != nil {
			t.db.recovered(r, op(), &err)
		}
	}()
	info, err := t.resolve()
	if err != nil {
		return driver.PageResult{}, err
	}
	identity := strconv.FormatUint(info.id, 10)
	if q.Table != "" && q.Table != identity {
		return driver.PageResult{}, errorf(edm.CodeTableNotFound, "table %q is not the table the continuation was made for (deleted or re-created since)", t.name)
	}
	ranges := q.Ranges
	if q.NextPartitionKey != "" || q.NextRowKey != "" {
		next := driver.Key{PartitionKey: q.NextPartitionKey, RowKey: q.NextRowKey}
		if reverse {
			ranges = driver.RangesUpto(q.Ranges, next)
		} else {
			ranges = driver.RangesFrom(q.Ranges, next)
		}
	}
	if reverse {
		ranges = slices.Clone(ranges)
		slices.Reverse(ranges)
	}
	r := &pageReader{ctx: ctx, db: t.db, rd: t.reader(), live: t.view == nil, q: q, id: info.id, emit: emit, reverse: reverse, start: t.db.opts.Clock().UnixNano()}
	if r.ttl, r.now, err = t.ttlNow(info.id); err != nil {
		return driver.PageResult{}, err
	}
	switch {
	case len(ranges) == 0:
	case allPoints(ranges):
		err = r.readPoints(ranges)
	default:
		err = r.scan(ranges)
	}
	if err != nil && !r.emitFailed {
		err = t.db.storageErr(op(), err)
	}
	if err != nil {
		return driver.PageResult{}, err
	}
	r.result.Table = identity
	r.count()
	return r.result, nil
}

// count records in the page's result what the page read.
func (r *pageReader) count() {
	r.result.Counted, r.result.Examined, r.result.IndexEntries = true, r.examined, r.entries
}

// pageReader reads one page and enforces its budgets.
type pageReader struct {
	ctx      context.Context
	db       *Engine
	rd       pebble.Reader // the live store or a view's snapshot
	live     bool          // rd is the live store
	q        *driver.QueryRequest
	id       uint64
	emit     func(driver.Row) error
	reverse  bool // ranges are in reading order, each read backwards
	result   driver.PageResult
	emitted  int
	examined int
	entries  int   // index entries read (index.go's reader)
	start    int64 // clock reading at the start, in nanoseconds
	// view is reused for every entity, so evaluating the residual
	// allocates nothing.
	view driver.RowView
	// The ETag of the last emitted Timestamp, shared by the rows of one
	// transaction.
	lastTicks int64
	lastETag  string
	// keys holds the text of emitted keys: one allocation per chunk
	// instead of two per entity.
	keys []byte
	// emitFailed says the error ending the page is emit's, returned as is.
	emitFailed bool
	// ttl is the table's expiry settings (nil: none) and now the expiry
	// clock at the page's start: expired entities are skipped.
	ttl *ttlSettings
	now int64
}

// Chunks of key text start at keysFirst bytes and double up to
// keysChunk.
const (
	keysFirst = 256
	keysChunk = 8 << 10
)

// keyStrings returns pk and rk as strings sliced from the page's key
// chunk. Chunk bytes handed out are never written again.
func (r *pageReader) keyStrings(pk, rk []byte) (string, string) {
	n := len(pk) + len(rk)
	if cap(r.keys)-len(r.keys) < n {
		r.keys = make([]byte, 0, max(min(2*cap(r.keys), keysChunk), keysFirst, n))
	}
	start := len(r.keys)
	r.keys = append(append(r.keys, pk...), rk...)
	b := r.keys[start:]
	return unsafe.String(unsafe.SliceData(b), len(pk)), unsafe.String(unsafe.SliceData(b[len(pk):]), len(rk))
}

// stop says why a page ends before its ranges do.
type stop int

const (
	goOn stop = iota
	stopFull
	stopBudget
)

// admit is called with each entity the page reaches, before it is
// examined: it reports whether the page must end here, leaving this entity
// as the resume point, or returns ctx's error.
func (r *pageReader) admit() (stop, error) {
	if r.emitted >= r.q.Top {
		return stopFull, nil
	}
	if r.examined >= r.db.opts.PageScanLimit {
		return stopBudget, nil
	}
	if r.examined > 0 && r.examined%BudgetCheckEvery == 0 {
		if err := r.ctx.Err(); err != nil {
			return goOn, err
		}
		if r.db.opts.Clock().UnixNano()-r.start >= int64(r.db.opts.PageTimeLimit) {
			return stopBudget, nil
		}
	}
	return goOn, nil
}

// resumeAt ends the page with (pk, rk) as the next page's start.
func (r *pageReader) resumeAt(pk, rk string) {
	r.result = driver.PageResult{More: true, NextPartitionKey: pk, NextRowKey: rk}
}

// examine evaluates the residual filter on one stored entity and emits it
// when it matches. pkStr and rkStr are the keys as strings when the caller
// has them ("" to convert pk and rk).
func (r *pageReader) examine(pk, rk []byte, pkStr, rkStr string, val []byte) error {
	r.examined++
	if r.ttl != nil && r.ttl.expired(val, r.now) {
		return nil
	}
	if r.q.Residual != nil {
		// The view lives in r so that Eval's use of it allocates nothing;
		// without a residual filter every entity matches, and storing it
		// (three pointers under the write barrier) is skipped.
		r.view = driver.RowView{PartitionKey: pk, RowKey: rk, Record: val}
		if !filter.Eval(r.q.Residual, &r.view) {
			return nil
		}
		val = r.view.Record
	}
	if pkStr == "" {
		pkStr, rkStr = r.keyStrings(pk, rk)
	}
	return r.emitMatch(pkStr, rkStr, val)
}

// emitMatch emits a matching entity, with its ETag made from its
// Timestamp.
func (r *pageReader) emitMatch(pkStr, rkStr string, rec driver.Record) error {
	etag := ""
	if ticks, err := rec.Timestamp(); err == nil && !r.q.NoETag {
		if ticks != r.lastTicks || r.lastETag == "" {
			r.lastTicks, r.lastETag = ticks, driver.FormatETagTicks(ticks)
		}
		etag = r.lastETag
	}
	r.emitted++
	err := r.emit(driver.Row{PartitionKey: pkStr, RowKey: rkStr, Record: rec, ETag: etag})
	r.emitFailed = err != nil
	return err
}

func allPoints(ranges []driver.KeyRange) bool {
	for _, rg := range ranges {
		if _, ok := rg.Point(); !ok {
			return false
		}
	}
	return true
}

// readPoints serves a plan made only of points with Gets, which use the
// bloom filters, instead of an iterator. ranges are in reading order.
func (r *pageReader) readPoints(ranges []driver.KeyRange) error {
	get := r.rd.Get
	if len(ranges) > 1 && r.live {
		snap := r.db.pdb.NewSnapshot()
		defer snap.Close()
		get = snap.Get
	}
	var key []byte
	for _, rg := range ranges {
		k, _ := rg.Point()
		if k.PartitionKey != "" && k.PartitionKey[0] == keys.IndexTag {
			continue // no key holds it: the index keyspace
		}
		key = keys.Entity(key[:0], r.id, k.PartitionKey, k.RowKey)
		val, closer, err := get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		why, err := r.admit()
		if err == nil && why == goOn {
			err = r.examine([]byte(k.PartitionKey), []byte(k.RowKey), k.PartitionKey, k.RowKey, val)
		}
		closer.Close()
		if err != nil {
			return err
		}
		if why != goOn {
			r.resumeAt(k.PartitionKey, k.RowKey)
			return nil
		}
	}
	return nil
}

// scan serves a plan with an iterator, one range at a time, in the order
// of ranges and each backwards when r.reverse; the iterator is one
// consistent view across all of them. A page that may be read in
// parallel offers the rest of its ranges to scanParallel once it has
// examined parallelAfter entities, or at once when the query's previous
// page examined more (see driver.QueryRequest.PreviousExamined): that
// page did not end early, and this one most likely will not either.
func (r *pageReader) scan(ranges []driver.KeyRange) error {
	id := r.id
	it, err := r.rd.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
	handoff := -1
	if r.parallelOK() {
		handoff = parallelAfter
		if r.q.PreviousExamined > parallelAfter {
			handoff = 0
		}
	}
	var lower, upper []byte
	for i, rg := range ranges {
		lower = keys.Entity(keyBuf(lower, len(rg.Start.PartitionKey)+len(rg.Start.RowKey)), id, rg.Start.PartitionKey, rg.Start.RowKey)
		lower = clampEntities(lower, id)
		if rg.Unbounded {
			upper = keys.EntitiesEnd(upper[:0], id)
		} else {
			upper = keys.Entity(keyBuf(upper, len(rg.End.PartitionKey)+len(rg.End.RowKey)), id, rg.End.PartitionKey, rg.End.RowKey)
			upper = clampEntities(upper, id)
		}
		it.SetBounds(lower, upper)
		first, next := it.First, it.Next
		if r.reverse {
			first, next = it.Last, it.Prev
		}
		for valid := first(); valid; valid = next() {
			_, pk, rk, err := keys.Split(it.Key())
			if err != nil {
				return corruptRecord(it.Key(), err)
			}
			why, err := r.admit()
			if err != nil {
				return err
			}
			if why != goOn {
				r.resumeAt(string(pk), string(rk))
				return nil
			}
			if r.examined == handoff {
				handoff = -1
				rg.Start = driver.Key{PartitionKey: string(pk), RowKey: string(rk)}
				if done, err := r.scanParallel(it, append([]driver.KeyRange{rg}, ranges[i+1:]...)); done || err != nil {
					return err
				}
			}
			val, err := it.ValueAndErr()
			if err != nil {
				return err
			}
			if err := r.examine(pk, rk, "", "", val); err != nil {
				return err
			}
			if r.q.Final && r.emitted >= r.q.Top {
				return nil // no next page will resume: skip looking for one
			}
		}
		if err := it.Error(); err != nil {
			return err
		}
	}
	return nil
}
