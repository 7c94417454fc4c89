package tablestore

import (
	"context"
	"errors"
	"iter"
	"strings"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
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
	// at the beginning. It must come from a page of the same table: one
	// from another table, or from a table since deleted (and perhaps
	// re-created under the same name), fails with TableNotFound. Tokens
	// made by ContinuationFromNext name no table and resume any table.
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
			// keeps a single code path for resuming. It carries the
			// table's identity, so a table deleted or re-created between
			// pages ends the iteration with TableNotFound.
			from, table, err := decodeTableContinuation(page.Continuation)
			if err != nil {
				yield(nil, err)
				return
			}
			pq.resume(from, table)
		}
	}
}

// preparedQuery is a validated, planned query: the request its pages
// send to the driver.
type preparedQuery struct {
	req    driver.QueryRequest
	ranges []plan.KeyRange // the plan's ranges from the continuation on
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
	pq := &preparedQuery{
		req:    driver.QueryRequest{Filter: f.Root, FilterText: q.Filter, Plan: p, Select: q.Select, Top: top},
		ranges: p.Ranges,
	}
	if q.Continuation != "" {
		from, table, err := decodeTableContinuation(q.Continuation)
		if err != nil {
			return nil, err
		}
		pq.resume(from, table)
	}
	return pq, nil
}

// resume makes the next page start at position k of the table with
// identity table ("" for any).
func (pq *preparedQuery) resume(k plan.Key, table string) {
	pq.req.NextPartitionKey, pq.req.NextRowKey = k.PartitionKey, k.RowKey
	pq.req.Table = table
	pq.ranges = pq.req.Plan.From(k)
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

// readPage reads one page of a prepared query from its resume point.
func (t *Table) readPage(ctx context.Context, pq *preparedQuery) (*Page, error) {
	page := &Page{}
	sel := pq.req.Select
	res, err := t.drv.QueryPage(ctx, &pq.req, func(r driver.Row) error {
		e, err := decodeRow(r, sel, false)
		if err != nil {
			return err
		}
		page.Entities = append(page.Entities, e)
		return nil
	})
	if err != nil {
		return nil, mapError(err, false)
	}
	if res.More {
		page.Continuation = encodeTableContinuation(plan.Key{PartitionKey: res.NextPartitionKey, RowKey: res.NextRowKey}, res.Table)
	}
	return page, nil
}
