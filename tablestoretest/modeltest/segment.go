package modeltest

import (
	"slices"

	ts "github.com/tablestore/tablestore"
)

// opSegments splits a table into segments and reads each with a random
// query (pages or the iterator, forward or reverse), comparing each with
// the model's matches in the segment; together the segments must return
// the model's whole result exactly once.
func (h *harness) opSegments() {
	table := h.existingTable()
	if table == "" {
		return
	}
	n := 1 + h.rng.Intn(6)
	q := ts.Query{Filter: h.queryFilter(), Top: []int{0, 1, 3, 10}[h.rng.Intn(4)], Reverse: h.rng.Intn(4) == 0}
	h.begin("segments", "%s n %d filter %q top %d reverse %v", table, n, q.Filter, q.Top, q.Reverse)
	tb := h.table(table)
	segs, err := tb.Segments(h.ctx, n)
	if err != nil {
		h.failf("segments: %v", err)
	}
	if len(segs) != n {
		h.failf("%d segments, want %d", len(segs), n)
	}
	whole, wantErr := h.m.Query(table, q)
	parts := make([][]*ts.Entity, len(segs))
	for i, s := range segs {
		sq := q
		sq.Segment = s
		want, _ := h.m.QuerySegment(table, s, q)
		got, gotErr := h.pages(sq, tb.QueryPage)
		h.sameError(gotErr, wantErr, false)
		if wantErr != nil {
			return
		}
		h.sameEntities(table, got, want)
		parts[i] = got
	}
	if q.Reverse {
		// Segments are in ascending order, each read descending.
		slices.Reverse(parts)
	}
	all := slices.Concat(parts...)
	h.sameEntities(table, all, whole)
	h.outcomes["segment-rows"] += len(all)
}
