package tablestore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/plan"
)

// MaxSegments is the most segments Table.Segments returns.
const MaxSegments = 1000

// Segment is one of the disjoint key ranges Table.Segments splits a table
// into: the half-open range of (PartitionKey, RowKey) positions from its
// start to its end. Set it in Query.Segment to read only the segment; the
// segments of one call, each read on its own goroutine if wished, return
// every entity of the table exactly once (as of when each is read). A
// Segment is immutable and safe for concurrent use.
type Segment struct {
	table string // lowercased
	r     plan.KeyRange
}

// Start returns the segment's first position; ("", "") is the table's
// start.
func (s *Segment) Start() (partitionKey, rowKey string) {
	return s.r.Start.PartitionKey, s.r.Start.RowKey
}

// End returns the position after the segment and true, or false when the
// segment runs to the end of the table.
func (s *Segment) End() (partitionKey, rowKey string, bounded bool) {
	if s.r.Unbounded {
		return "", "", false
	}
	return s.r.End.PartitionKey, s.r.End.RowKey, true
}

// String describes the segment's range in the format of QueryPlan's
// ranges.
func (s *Segment) String() string { return s.r.String() }

// Segments splits the table into n disjoint key ranges that together
// cover it, for segmented scans (exports, migrations, map-reduce jobs):
// each segment is read by a query with Query.Segment set, on as many
// goroutines as wished. The split follows the data volume: on the
// embedded engine, the store's size estimates for a large table and an
// entity count for a small one, so segments hold about equal amounts of
// data as of the call. Segments may be empty (a table with fewer than n
// entities has some), and writes after the call change their balance but
// never their coverage: together they still hold every entity once.
//
// Errors: InvalidInput unless 1 <= n <= MaxSegments, TableNotFound,
// NotImplemented for a driver that cannot split (a remote Azure store),
// ErrClosed, ctx's error.
func (t *Table) Segments(ctx context.Context, n int) ([]*Segment, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxSegments {
		return nil, newError(CodeInvalidInput, "segment count %d is out of range 1..%d", n, MaxSegments)
	}
	sg, ok := t.drv.(driver.Segmenter)
	if !ok {
		return nil, newError(CodeNotImplemented, "this store cannot split a table into segments")
	}
	splits, err := sg.Segments(ctx, n)
	if err != nil {
		return nil, mapError(err, false)
	}
	if len(splits) != n-1 {
		return nil, fmt.Errorf("tablestore: the driver returned %d splits for %d segments", len(splits), n)
	}
	name := strings.ToLower(t.name)
	out := make([]*Segment, n)
	start := plan.Key{}
	for i := range n {
		s := &Segment{table: name, r: plan.KeyRange{Start: start, Unbounded: i == n-1}}
		if i < n-1 {
			s.r.End = splits[i]
			if plan.Compare(s.r.End, start) < 0 {
				return nil, errors.New("tablestore: the driver returned splits out of order")
			}
			start = splits[i]
		}
		out[i] = s
	}
	return out, nil
}
