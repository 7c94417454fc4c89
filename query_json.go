package tablestore

import (
	"context"
	"errors"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/plan"
	"github.com/tablestore/tablestore/internal/wire"
)

// AppendPageJSON reads one page of q as QueryPage does and appends its
// entities to dst as JSON objects separated by commas (the elements of
// a "value" array), each as AppendEntityJSON writes it at opts, straight
// from the stored entities without building an Entity or a property map.
// opts.Select is ignored: q.Select is the projection. It returns the
// extended buffer and the page, whose Entities is nil and whose
// Continuation and PageCost are QueryPage's.
//
// keep, when not nil, is called after each entity is appended, with
// what this call has appended so far and the number of entities on the
// page, this one included. When it returns false the entity is taken back out of the
// buffer and the page ends before it: its continuation resumes at that
// entity, and its PageCost is -1 (uncounted). A server uses it to bound a
// page's bytes. A query through an index in index order (Query.Index with
// an order the keys do not give) cannot end before an entity: keep must
// then be nil.
//
// Errors: those of QueryPage and of AppendEntityJSON's options, and
// InvalidInput for keep with an index-order read. On error dst's
// contents past its length are undefined.
func (t *Table) AppendPageJSON(ctx context.Context, dst []byte, q Query, opts *JSONOptions, keep func(b []byte, n int) bool) ([]byte, *Page, error) {
	o, err := wireOptions(opts)
	if err != nil {
		return dst, nil, err
	}
	o.Select = q.Select
	pq, err := t.prepareIn(ctx, q, nil)
	if err != nil {
		return dst, nil, err
	}
	if keep != nil && pq.index != nil && pq.index.req.Scan.Order {
		return dst, nil, newError(edm.CodeInvalidInput, "a page read in index order cannot end before an entity")
	}
	start, n := len(dst), 0
	var stop *plan.Key
	cont, cost, err := t.readRows(ctx, pq, func(r driver.Row) error {
		mark := len(dst)
		if n > 0 {
			dst = append(dst, ',')
		}
		out, err := wire.AppendRecord(dst, r.PartitionKey, r.RowKey, r.ETag, r.Record, &o)
		if err != nil {
			return mapError(coded(err), false) // a corrupt record's error names the entity
		}
		dst = out
		n++
		if keep != nil && !keep(dst[start:], n) {
			dst = dst[:mark]
			stop = &plan.Key{PartitionKey: r.PartitionKey, RowKey: r.RowKey}
			return errEndPage
		}
		return nil
	})
	switch {
	case stop != nil: // the error is errEndPage
		return dst, &Page{Continuation: encodeContinuation(*stop, q.Reverse, pq.req.Table),
			PageCost: PageCost{Examined: -1, IndexEntries: -1}}, nil
	case err != nil:
		return dst, nil, err
	}
	return dst, &Page{Continuation: cont, PageCost: cost}, nil
}

// errEndPage is how AppendPageJSON's keep ends a page.
var errEndPage = errors.New("tablestore: page ended by its caller")

// GetJSON reads one entity as Get does and appends it to dst as one JSON
// object, as AppendEntityJSON writes it at opts, straight from the stored
// entity without building an Entity or a property map; opts.Select is
// the projection (Get's Select). It returns the extended buffer and the
// entity's ETag.
//
// Errors: those of Get and of AppendEntityJSON's options. On error dst is
// returned at its length.
func (t *Table) GetJSON(ctx context.Context, dst []byte, partitionKey, rowKey string, opts *JSONOptions) ([]byte, ETag, error) {
	o, err := wireOptions(opts)
	if err != nil {
		return dst, "", err
	}
	r, _, err := t.get(ctx, partitionKey, rowKey, &GetOptions{Select: o.Select})
	if err != nil {
		return dst, "", err
	}
	etag := r.ETag
	if etag == "" {
		ticks, err := r.Record.Timestamp()
		if err != nil {
			return dst, "", corruptEntity(partitionKey, rowKey, err)
		}
		etag = string(etagFor(edm.TimeFromTicks(ticks)))
	}
	out, err := wire.AppendRecord(dst, r.PartitionKey, r.RowKey, etag, r.Record, &o)
	if err != nil {
		return dst, "", mapError(coded(err), false)
	}
	return out, ETag(etag), nil
}
