package tablestore

import (
	"context"
	"iter"
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

// QueryPage reads one page.
func (t *Table) QueryPage(ctx context.Context, q Query) (*Page, error) { panic("skeleton") }

// Query iterates over every entity matching q, across pages.
func (t *Table) Query(ctx context.Context, q Query) iter.Seq2[*Entity, error] { panic("skeleton") }

// Explain describes how q would run: the plan kind, the key ranges and the
// residual filter.
func (t *Table) Explain(q Query) (string, error) { panic("skeleton") }
