package server

import (
	"context"
	"encoding/json"
	"net/http"
)

// PageShape bends one Query Entities page, for tests of clients that
// must follow continuations (tablestoretest's paging faults). Every
// shape answers a valid page with a continuation, so a client that
// follows continuations still reads every entity.
type PageShape int

const (
	// PageAsIs serves the page as usual.
	PageAsIs PageShape = iota
	// PageEmpty answers no entities, with a continuation to where the
	// request began (the empty key from the start).
	PageEmpty
	// PageOne ends the page after its first entity.
	PageOne
	// PagePartition ends the page at the end of its first partition
	// (when $select keeps PartitionKey).
	PagePartition
)

type pageShapeKey struct{}

// WithPageShape returns ctx asking the handler to serve the Query
// Entities request it carries with its page bent as s; other requests
// ignore it. A harness wrapping the handler sets it.
func WithPageShape(ctx context.Context, s PageShape) context.Context {
	return context.WithValue(ctx, pageShapeKey{}, s)
}

// pageShape is the shape r's context asks for.
func pageShape(r *http.Request) PageShape {
	s, _ := r.Context().Value(pageShapeKey{}).(PageShape)
	return s
}

// partitionCut ends a page, through queryPage's keep, before its first
// entity of another partition than its first.
type partitionCut struct {
	end   int     // where the last entity kept ends in the page
	first *string // the first entity's PartitionKey
}

// keep reports whether the page's n-th entity, the last in page, stays.
func (c *partitionCut) keep(page []byte, n int) bool {
	var e struct{ PartitionKey *string }
	last := page[c.end:]
	if len(last) > 0 && last[0] == ',' {
		last = last[1:]
	}
	if json.Unmarshal(last, &e) != nil || e.PartitionKey == nil {
		return true
	}
	if n == 1 {
		c.first = e.PartitionKey
	} else if c.first != nil && *e.PartitionKey != *c.first {
		return false
	}
	c.end = len(page)
	return true
}
