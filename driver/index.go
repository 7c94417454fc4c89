package driver

import (
	"bytes"
	"context"

	"github.com/tablestore/tablestore/filter"
)

// IndexState is the state of a secondary index.
type IndexState uint8

// The index states.
const (
	// IndexBuilding: the index is being filled from the table's
	// entities. Writes keep it exact meanwhile; queries do not use it.
	IndexBuilding IndexState = iota + 1
	// IndexReady: the index holds an entry for every entity and queries
	// may use it.
	IndexReady
)

// String returns "building" or "ready"; "unknown" for any other value.
func (s IndexState) String() string {
	switch s {
	case IndexBuilding:
		return "building"
	case IndexReady:
		return "ready"
	}
	return "unknown"
}

// ParseIndexState is the inverse of IndexState's String: it reports
// false for a name no state has ("unknown" included).
func ParseIndexState(name string) (IndexState, bool) {
	for _, s := range []IndexState{IndexBuilding, IndexReady} {
		if s.String() == name {
			return s, true
		}
	}
	return 0, false
}

// IndexSpec declares a secondary index. The caller has validated it: a
// name of 1 to 63 letters, digits and underscores starting with a letter,
// 1 to 4 distinct user property names (not PartitionKey, RowKey or
// Timestamp).
type IndexSpec struct {
	// Name names the index in its table (case-insensitively unique): 1
	// to 63 ASCII letters, digits and underscores, starting with a
	// letter.
	Name string
	// Properties are the indexed user properties, 1 to 4 distinct valid
	// property names; not PartitionKey, RowKey or Timestamp.
	Properties []string
	// Partitioned orders the entries within each partition, like a local
	// index: only queries inside partitions can use it, and deleting a
	// whole partition deletes its entries exactly.
	Partitioned bool
	// Unique refuses a second entity with the same values of every
	// property, across the table (within each partition for a
	// Partitioned index). Values compare as filters compare them by type:
	// an Int32 5 and an Int64 5 are different values. An entity lacking
	// one of the properties is exempt.
	Unique bool
}

// IndexStatus describes one index of a table.
type IndexStatus struct {
	IndexSpec
	// ID is the index's identity: an index dropped and created again
	// under the same name has another. At most 64 bytes.
	ID    string
	State IndexState
	// Done counts the entities the build has indexed and Total estimates
	// the entities it will index (it counts the table when the build
	// starts and grows when writes add entities). A ready index keeps its
	// build's last figures; an index opened from disk, or a driver that
	// does not report progress, gives zeros.
	Done, Total int64
}

// Indexer is a Table that keeps secondary indexes. It is optional:
// package tablestore answers NotImplemented for index management on a
// driver whose tables lack it and plans every query without indexes.
type Indexer interface {
	// CreateIndex declares an index and fills it from the table's
	// entities while writes go on, returning when it is ready. Every
	// write keeps the index exact from the call's start. When ctx ends,
	// the call fails, or the store closes before it is ready, the index
	// is removed and nothing of it stays. Errors: TableNotFound,
	// InvalidInput for a name the table's indexes already have
	// (case-insensitively), EntityAlreadyExists naming the index when a
	// Unique index meets two entities with the same values.
	CreateIndex(ctx context.Context, spec IndexSpec) error

	// DropIndex removes an index (ready or building, which ends its
	// build) in constant time. Errors: TableNotFound, ResourceNotFound
	// for a name the table has no index of (case-insensitively).
	DropIndex(ctx context.Context, name string) error

	// Indexes lists the table's indexes by name, case-insensitively. It
	// reads no stored data, so the caller may call it to plan each query.
	// Errors: TableNotFound.
	Indexes(ctx context.Context) ([]IndexStatus, error)

	// QueryIndexPage reads one page of a query through an index, with
	// QueryPage's contract for emit, Top, page budgets and consistency.
	// Every entry found is checked against its entity before the
	// residual is evaluated, so an entry left by a range deletion never
	// returns an entity.
	//
	// A key-order scan (q.Scan.Order false) emits in (PartitionKey,
	// RowKey) order and resumes like QueryPage, at q.Query's resume point
	// and with the result's NextPartitionKey and NextRowKey: its pages
	// are those of QueryPage for q.Query. When the index is gone, another
	// (its ID is not q.Index) or not ready, the driver answers
	// q.Query with QueryPage instead, which returns the same entities.
	//
	// An index-order scan (q.Scan.Order true) emits in the index's order
	// and resumes at q.Next, which the result's Next names; then an index
	// that is gone, another or not ready is ResourceNotFound.
	QueryIndexPage(ctx context.Context, q *IndexQueryRequest, emit func(Row) error) (IndexPageResult, error)
}

// IndexSizer is an Indexer that can estimate its indexes' sizes from its
// store's metadata, as StatsReader estimates a table's, without reading
// them. It is optional: sizes are reported as zero without it.
type IndexSizer interface {
	// IndexSizes estimates each of the table's indexes, by identity
	// (IndexStatus.ID): Entities estimates its entries, Bytes the disk
	// space they take. An index missing from the map has no estimate.
	// Errors: TableNotFound.
	IndexSizes(ctx context.Context) (map[string]TableStats, error)
}

// IndexQueryRequest is one planned page of a query through an index. The
// caller reuses one for every page, changing only the resume point.
type IndexQueryRequest struct {
	// Query is the same query without the index: Filter, Plan, Select,
	// Top, Table, and, for a key-order scan, the resume point.
	Query *QueryRequest
	// Scan is the index plan.
	Scan *IndexScan
	// Index is the identity (IndexStatus.ID) of the index Scan was
	// planned for.
	Index string
	// Next is where an index-order scan resumes: a previous result's
	// Next; nil starts at the beginning.
	Next []byte
}

// IndexPageResult ends one page of a query through an index.
type IndexPageResult struct {
	// PageResult holds More, the table's identity and, for a key-order
	// scan, the resume point.
	PageResult
	// Next, for an index-order scan with More, is the position the next
	// page resumes at, opaque to the caller.
	Next []byte
}

// IndexScan is a planned read of one secondary index. Every entry read is
// checked against its entity, which Residual then filters; so every
// matching entity lies in what it reads.
//
// In key order (Order false) it looks up each of Tuples, reading the
// tuple's entries inside the key ranges Ranges, and merges the tuples'
// entries into (PartitionKey, RowKey) order: the order, pages and resume
// points of a plain query. In index order (Order true) it reads Spans of
// index suffixes, in the index's own order.
//
// Tuples and span bounds are the embedded engine's encoding of value
// tuples (order-preserving, each value led by its type); a driver that
// keeps indexes its own way plans its own reads from Index and Residual.
type IndexScan struct {
	Index IndexSpec
	Order bool
	// Tuples are the encoded value tuples to look up, sorted and
	// distinct; none reads nothing.
	Tuples [][]byte
	// Ranges are the key ranges each tuple's entries are read in: those
	// of the plain plan. For a Partitioned index every one lies inside one
	// partition.
	Ranges []KeyRange
	// Spans are sorted, non-overlapping ranges of index suffixes; none
	// reads nothing.
	Spans []IndexSpan
	// Residual is what is left of the filter to evaluate on each entity
	// found; nil means every entity found matches.
	Residual filter.Node
}

// IndexSpan is a half-open range [Start, End) of index suffixes; a nil
// Start starts at the index's first entry and a nil End runs to its end.
type IndexSpan struct{ Start, End []byte }

// SpansFrom returns the spans still to read when an index-order read
// resumes at suffix pos, with their positions in s.Spans.
func (s *IndexScan) SpansFrom(pos []byte) ([]IndexSpan, []int) {
	var out []IndexSpan
	var idx []int
	for i, sp := range s.Spans {
		if sp.End != nil && bytes.Compare(sp.End, pos) <= 0 {
			continue
		}
		if bytes.Compare(sp.Start, pos) < 0 {
			sp.Start = pos
		}
		out = append(out, sp)
		idx = append(idx, i)
	}
	return out, idx
}
