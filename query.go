package tablestore

import (
	"context"
	"errors"
	"iter"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
	"github.com/tablestore/tablestore/internal/keys"
	"github.com/tablestore/tablestore/internal/plan"
)

// Query describes an entity query: Azure's $filter, $select and $top.
type Query struct {
	// Filter is an OData $filter expression (see package filter); ""
	// matches every entity.
	Filter string
	// Select lists the properties to return; nil returns all. PartitionKey,
	// RowKey, Timestamp and ETag are always returned.
	Select []string
	// Top is the page size, 1..1000. Zero means 1000; anything else is
	// InvalidInput.
	Top int
	// Continuation resumes a query where a previous page ended; "" starts
	// at the beginning. It must come from the same table.
	Continuation string
}

// Page is one page of query results, in (PartitionKey, RowKey) order.
type Page struct {
	Entities []*Entity
	// Continuation is "" when the query is complete; otherwise pass it in
	// Query.Continuation to read the next page. A page may hold fewer than
	// Top entities, even none, and still carry a continuation.
	Continuation string
}

// budgetCheckEvery is how many examined entities pass between checks of
// the context and of PageTimeLimit; reading the clock per entity would
// cost more than evaluating most filters.
const budgetCheckEvery = 64

// QueryPage reads one page: at most Top matching entities, in
// (PartitionKey, RowKey) order, all read from one consistent view of the
// table. A page ends early, with a continuation, when it has examined
// Options.PageScanLimit entities or run for Options.PageTimeLimit; it then
// holds fewer than Top entities, possibly none. A page carries a
// continuation exactly when at least one more entity in the planned key
// ranges remains to be examined.
//
// Errors: InvalidInput for a bad Top, Select, Filter or Continuation
// (NotImplemented for filter features Azure lacks, such as comparing two
// properties), TableNotFound, ErrClosed, and ctx's error when ctx ends
// during the read.
func (t *Table) QueryPage(ctx context.Context, q Query) (*Page, error) {
	pq, err := t.prepare(ctx, q)
	if err != nil {
		return nil, err
	}
	return t.readPage(ctx, pq)
}

// Query iterates over every entity matching q, page after page, starting
// at q.Continuation; q.Top sets the page size. Each page is a consistent
// view, but the pages are read at different times, so writes between
// pages may or may not show. On an error the iterator yields (nil, err)
// and stops.
func (t *Table) Query(ctx context.Context, q Query) iter.Seq2[*Entity, error] {
	return func(yield func(*Entity, error) bool) {
		pq, err := t.prepare(ctx, q)
		if err != nil {
			yield(nil, err)
			return
		}
		for {
			page, err := t.readPage(ctx, pq)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, e := range page.Entities {
				if !yield(e, nil) {
					return
				}
			}
			if page.Continuation == "" {
				return
			}
			// The token is one this package just wrote; decoding it again
			// keeps a single code path for resuming.
			from, err := decodeContinuation(page.Continuation)
			if err != nil {
				yield(nil, err)
				return
			}
			pq.ranges = pq.plan.From(from)
		}
	}
}

// preparedQuery is a validated, planned query.
type preparedQuery struct {
	table  tableInfo
	plan   *plan.Plan
	ranges []plan.KeyRange // the plan's ranges from the continuation on
	sel    []string        // nil: every property
	top    int
}

// prepare validates q, compiles its filter, plans it and applies its
// continuation.
func (t *Table) prepare(ctx context.Context, q Query) (*preparedQuery, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return nil, err
	}
	top, err := pageSize(q.Top)
	if err != nil {
		return nil, err
	}
	if q.Select != nil {
		if err := validateSelect(q.Select); err != nil {
			return nil, err
		}
	}
	f, err := filter.Compile(q.Filter, t.db.opts.FilterLimits)
	if err != nil {
		return nil, filterError(err)
	}
	p := plan.New(f.Root)
	ranges := p.Ranges
	if q.Continuation != "" {
		from, err := decodeContinuation(q.Continuation)
		if err != nil {
			return nil, err
		}
		ranges = p.From(from)
	}
	info, err := t.resolve()
	if err != nil {
		return nil, err
	}
	return &preparedQuery{table: info, plan: p, ranges: ranges, sel: q.Select, top: top}, nil
}

// filterError turns an error of package filter into an *Error with the
// same code (InvalidInput or NotImplemented); the message keeps the
// position and the excerpt with its caret.
func filterError(err error) error {
	var fe *filter.Error
	if !errors.As(err, &fe) {
		return newError(CodeInvalidInput, "invalid filter: %v", err)
	}
	code := CodeInvalidInput
	if fe.Code == filter.CodeNotImplemented {
		code = CodeNotImplemented
	}
	return newError(code, "%s", strings.TrimPrefix(fe.Error(), "filter: "))
}

// pageReader accumulates one page and enforces its budgets.
type pageReader struct {
	ctx      context.Context
	db       *DB
	pq       *preparedQuery
	page     Page
	examined int
	start    int64 // clock reading at the start, in nanoseconds
	// view is reused for every entity, so evaluating the residual
	// allocates nothing.
	view codec.View
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
// as the continuation, or returns ctx's error.
func (r *pageReader) admit() (stop, error) {
	if len(r.page.Entities) >= r.pq.top {
		return stopFull, nil
	}
	if r.examined >= r.db.opts.PageScanLimit {
		return stopBudget, nil
	}
	if r.examined > 0 && r.examined%budgetCheckEvery == 0 {
		if err := r.ctx.Err(); err != nil {
			return goOn, err
		}
		if r.db.opts.Clock().UnixNano()-r.start >= int64(r.db.opts.PageTimeLimit) {
			return stopBudget, nil
		}
	}
	return goOn, nil
}

// examine evaluates the residual filter on one stored entity, decoding it
// only when it matches.
func (r *pageReader) examine(pk, rk []byte, val []byte) error {
	r.examined++
	r.view = codec.View{PartitionKey: pk, RowKey: rk, Record: codec.Record(val)}
	if !filter.Eval(r.pq.plan.Residual, &r.view) {
		return nil
	}
	e, err := decodeEntity(string(pk), string(rk), r.view.Record, r.pq.sel)
	if err != nil {
		return err
	}
	r.page.Entities = append(r.page.Entities, e)
	return nil
}

// readPage reads one page of a prepared query from its current ranges.
func (t *Table) readPage(ctx context.Context, pq *preparedQuery) (*Page, error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	r := &pageReader{ctx: ctx, db: t.db, pq: pq, start: t.db.opts.Clock().UnixNano()}
	switch {
	case len(pq.ranges) == 0:
	case allPoints(pq.ranges):
		err = r.readPoints()
	default:
		err = r.scan()
	}
	if err != nil {
		return nil, err
	}
	return &r.page, nil
}

func allPoints(ranges []plan.KeyRange) bool {
	for _, rg := range ranges {
		if _, ok := rg.Point(); !ok {
			return false
		}
	}
	return true
}

// readPoints serves a plan made only of points with Gets, which use the
// bloom filters, instead of an iterator.
func (r *pageReader) readPoints() error {
	get := r.db.pdb.Get
	if len(r.pq.ranges) > 1 {
		snap := r.db.pdb.NewSnapshot()
		defer snap.Close()
		get = snap.Get
	}
	var key []byte
	for _, rg := range r.pq.ranges {
		k, _ := rg.Point()
		key = keys.Entity(key[:0], r.pq.table.id, k.PartitionKey, k.RowKey)
		val, closer, err := get(key)
		if errors.Is(err, pebble.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		why, err := r.admit()
		if err == nil && why == goOn {
			err = r.examine([]byte(k.PartitionKey), []byte(k.RowKey), val)
		}
		closer.Close()
		if err != nil {
			return err
		}
		if why != goOn {
			r.page.Continuation = encodeContinuation(k)
			return nil
		}
	}
	return nil
}

// scan serves a plan with an iterator, one range at a time; the iterator
// is one consistent view across all of them.
func (r *pageReader) scan() error {
	id := r.pq.table.id
	it, err := r.db.pdb.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
	var lower, upper []byte
	for _, rg := range r.pq.ranges {
		lower = keys.Entity(lower[:0], id, rg.Start.PartitionKey, rg.Start.RowKey)
		if rg.Unbounded {
			_, upper = keys.TableSpan(id)
		} else {
			upper = keys.Entity(upper[:0], id, rg.End.PartitionKey, rg.End.RowKey)
		}
		it.SetBounds(lower, upper)
		for valid := it.First(); valid; valid = it.Next() {
			_, pk, rk, err := keys.Split(it.Key())
			if err != nil {
				return corruptRecord(it.Key(), err)
			}
			why, err := r.admit()
			if err != nil {
				return err
			}
			if why != goOn {
				r.page.Continuation = encodeContinuation(plan.Key{PartitionKey: string(pk), RowKey: string(rk)})
				return nil
			}
			val, err := it.ValueAndErr()
			if err != nil {
				return err
			}
			if err := r.examine(pk, rk, val); err != nil {
				return err
			}
		}
		if err := it.Error(); err != nil {
			return err
		}
	}
	return nil
}
