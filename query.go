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
	// at the beginning. It must come from a page of the same table and from
	// a query with the same Reverse: one from another table, or from a
	// table since deleted (and perhaps re-created under the same name),
	// fails with TableNotFound. Tokens made by ContinuationFromNext name
	// no table and resume any table.
	Continuation string
	// Reverse returns the results in descending (PartitionKey, RowKey)
	// order, newest first for keys that grow with time: the same key
	// ranges as the forward query, read from the end. Its pages resume
	// downwards, at the same cost at any depth. Azure cannot read in
	// reverse (its design guide stores inverted timestamps instead), so a
	// driver for a remote Azure store refuses it with NotImplemented.
	Reverse bool
	// Segment, when set, restricts the query to one segment of
	// Table.Segments (of this table; another table's is InvalidInput):
	// the plan reads only the part of its ranges inside the segment.
	Segment *Segment
	// Index, when set, reads the query through the named ready index
	// (see Table.CreateIndex), in the index's order: by the indexed
	// values, then PartitionKey and RowKey (a Partitioned index:
	// PartitionKey, the values, RowKey). Comparisons of the indexed
	// properties narrow the read (equalities on the leading ones, then
	// ranges on the next); the rest of the filter is evaluated on each
	// entity. Its continuation tokens are its own. With Reverse or
	// Segment it is InvalidInput; an index that does not exist is
	// ResourceNotFound, one still building InvalidInput.
	Index string
}

// Page is one page of query results, in (PartitionKey, RowKey) order
// (descending for a Reverse query).
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
	pq, err := t.prepareIn(ctx, q, nil)
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
	return t.query(ctx, q, nil)
}

// query iterates over q's results in the table, or in part when not nil.
func (t *Table) query(ctx context.Context, q Query, part *Partition) iter.Seq2[*Entity, error] {
	return func(yield func(*Entity, error) bool) {
		pq, err := t.prepareIn(ctx, q, part)
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
			if pq.index != nil && pq.index.req.Scan.Order {
				if err := pq.resumeIndex(page.Continuation); err != nil {
					yield(nil, err)
					return
				}
				continue
			}
			// The token is one this package just wrote; decoding it again
			// keeps a single code path for resuming. It carries the
			// table's identity, so a table deleted or re-created between
			// pages ends the iteration with TableNotFound.
			from, _, table, err := decodeContinuation(page.Continuation)
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
	req     driver.QueryRequest
	plan    *plan.Plan      // req's Ranges and Residual come from it
	ranges  []plan.KeyRange // the plan's ranges from the continuation on
	reverse bool            // read with drv's driver.ReverseQuerier
	index   *indexQuery     // the read through an index, if any (index.go)
}

// prepareIn validates q, compiles its filter (and-ed with part's key when
// part is not nil), plans it and applies its continuation.
func (t *Table) prepareIn(ctx context.Context, q Query, part *Partition) (*preparedQuery, error) {
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
	root, text := f.Root, q.Filter
	if part != nil {
		if root, text, err = part.restrict(root, text); err != nil {
			return nil, err
		}
	}
	p := plan.New(root)
	if s := q.Segment; s != nil {
		if s.table != strings.ToLower(t.name) {
			return nil, newError(CodeInvalidInput, "the segment is of another table")
		}
		p = p.Within(s.r)
	}
	pq := &preparedQuery{
		req:     driver.QueryRequest{Filter: root, FilterText: text, Ranges: p.Ranges, Residual: p.Residual, Select: q.Select, Top: top},
		plan:    p,
		ranges:  p.Ranges,
		reverse: q.Reverse,
	}
	if q.Reverse {
		if _, ok := t.drv.(driver.ReverseQuerier); !ok {
			return nil, newError(CodeNotImplemented, "this store cannot read a query in reverse")
		}
	}
	if handled, err := t.prepareIndex(ctx, q, pq); err != nil {
		return nil, err
	} else if handled {
		return pq, nil
	}
	if q.Continuation != "" {
		from, reverse, table, err := decodeContinuation(q.Continuation)
		if err != nil {
			return nil, err
		}
		if reverse != q.Reverse {
			return nil, newError(CodeInvalidInput, "the continuation token is from a query in the other direction")
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
	if pq.reverse {
		pq.ranges = pq.plan.Upto(k)
	} else {
		pq.ranges = pq.plan.From(k)
	}
}

// filterError turns an error of package filter into an *Error with the
// same code (InvalidInput or NotImplemented); the message keeps the
// position and the excerpt with its caret.
func filterError(err error) error {
	var fe *filter.Error
	if !errors.As(err, &fe) {
		return newError(CodeInvalidInput, "invalid filter: %v", err)
	}
	e := newError(fe.Code, "%s", strings.TrimPrefix(fe.Error(), "filter: "))
	e.err = fe // errors.As finds the position
	return e
}

// readPage reads one page of a prepared query from its resume point.
func (t *Table) readPage(ctx context.Context, pq *preparedQuery) (*Page, error) {
	page := &Page{}
	d := &decoder{sel: pq.req.Select}
	cont, err := t.readRows(ctx, pq, func(r driver.Row) error {
		e, err := d.entity(r)
		if err != nil {
			return err
		}
		page.Entities = append(page.Entities, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	page.Continuation = cont
	return page, nil
}

// readRows passes one page's rows to emit, in the query's direction, and
// returns the page's continuation ("" when the query is complete).
func (t *Table) readRows(ctx context.Context, pq *preparedQuery, emit func(driver.Row) error) (string, error) {
	if pq.index != nil {
		return t.readIndexRows(ctx, pq, emit)
	}
	read := t.drv.QueryPage
	if pq.reverse {
		read = t.drv.(driver.ReverseQuerier).QueryPageReverse
	}
	res, err := read(ctx, &pq.req, emit)
	if err != nil {
		return "", mapError(err, false)
	}
	if !res.More {
		return "", nil
	}
	return encodeContinuation(plan.Key{PartitionKey: res.NextPartitionKey, RowKey: res.NextRowKey}, pq.reverse, res.Table), nil
}
