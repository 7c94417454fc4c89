package tablestore

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"iter"
	"strings"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/entityenc"
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
	// Top is the page size, 1..1000, as Azure's $top: it bounds each page,
	// not the results, so an iterator (Query, QueryStructs) goes on past it,
	// page after page; Limit bounds those. Zero means 1000; anything else
	// is InvalidInput.
	Top int
	// Limit is the most entities the iterators (Table.Query,
	// Partition.Query, QueryStructs, in key or index order) yield in all: they
	// stop after Limit entities, reading no page past the one that holds
	// the last (its size trimmed to what is left). 0 means no limit; a
	// negative Limit is InvalidInput. QueryPage and the other one-page
	// reads ignore it: Top sizes a page.
	Limit int
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
	PageCost
}

// PageCost is what a page read to find its entities: comparing Examined
// with the entities returned shows what a filter without a fitting key
// range or index costs. Both are -1 when the store cannot tell (the
// remote Azure driver).
type PageCost struct {
	// Examined is the number of stored entities the page looked at,
	// matching or not (expired ones included). A read through an index
	// examines each entity its entries name.
	Examined int
	// IndexEntries is the number of secondary index entries read; 0
	// for a read without an index.
	IndexEntries int
}

// costOf returns the cost a driver reported for a page.
func costOf(res driver.PageResult) PageCost {
	if !res.Counted {
		return PageCost{Examined: -1, IndexEntries: -1}
	}
	return PageCost{Examined: res.Examined, IndexEntries: res.IndexEntries}
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
// pages may or may not show. q.Limit, when not 0, stops it after that
// many entities. On an error the iterator yields (nil, err) and stops.
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
		lim := pq.limiter(q.Limit)
		for {
			lim.sizePage()
			page, err := t.readPage(ctx, pq)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, e := range page.Entities {
				if !yield(e, nil) || lim.done() {
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
	top, err := entityenc.PageSize(q.Top)
	if err != nil {
		return nil, coded(err)
	}
	if q.Limit < 0 {
		return nil, newError(edm.CodeInvalidInput, "the query's limit is %d; it must be 0 (no limit) or more", q.Limit)
	}
	if q.Select != nil {
		if err := entityenc.ValidateSelect(q.Select); err != nil {
			return nil, coded(err)
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
			return nil, newError(edm.CodeInvalidInput, "the segment is of another table")
		}
		p = p.Within(s.r)
	}
	var within *driver.KeyRange
	if q.Segment != nil {
		r := q.Segment.r
		within = &r
	}
	pq := &preparedQuery{
		req:     driver.QueryRequest{Filter: root, FilterText: text, Ranges: p.Ranges, Within: within, Residual: p.Residual, Select: q.Select, Top: top},
		plan:    p,
		ranges:  p.Ranges,
		reverse: q.Reverse,
	}
	if q.Reverse {
		if _, ok := t.drv.(driver.ReverseQuerier); !ok {
			return nil, newError(edm.CodeNotImplemented, "this store cannot read a query in reverse")
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
			return nil, newError(edm.CodeInvalidInput, "the continuation token is from a query in the other direction")
		}
		pq.resume(from, table)
	}
	return pq, nil
}

// limiter counts what an iterator yields against Query.Limit.
type limiter struct {
	pq         *preparedQuery
	top, limit int // the page size asked for; 0: no limit
	yielded    int
}

func (pq *preparedQuery) limiter(limit int) *limiter {
	return &limiter{pq: pq, top: pq.req.Top, limit: limit}
}

// sizePage makes the next page no larger than what the limit leaves,
// and marks it final when a full page reaches the limit.
func (l *limiter) sizePage() {
	if l.limit > 0 {
		left := l.limit - l.yielded
		l.pq.req.Top = min(l.top, left)
		l.pq.req.Final = left <= l.top
	}
}

// done counts one entity yielded and reports whether the limit is
// reached.
func (l *limiter) done() bool {
	l.yielded++
	return l.limit > 0 && l.yielded >= l.limit
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
	// The driver gets the ranges already cut at k: ('', '') is a valid
	// position, and a request naming it reads like one naming none, which
	// is the same forward but would restart a reverse read at the end.
	pq.req.Ranges = pq.ranges
}

// filterError turns an error of package filter into an *Error with the
// same code (InvalidInput or NotImplemented); the message keeps the
// position and the excerpt with its caret.
func filterError(err error) error {
	var fe *filter.Error
	if !errors.As(err, &fe) {
		return newError(edm.CodeInvalidInput, "invalid filter: %v", err)
	}
	e := newError(fe.Code, "%s", strings.TrimPrefix(fe.Error(), "filter: "))
	e.err = fe // errors.As finds the position
	return e
}

// readPage reads one page of a prepared query from its resume point.
func (t *Table) readPage(ctx context.Context, pq *preparedQuery) (*Page, error) {
	page := &Page{}
	d := &entityDecoder{props: entityenc.Decoder{Select: pq.req.Select}}
	cont, cost, err := t.readRows(ctx, pq, func(r driver.Row) error {
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
	page.Continuation, page.PageCost = cont, cost
	return page, nil
}

// readRows passes one page's rows to emit, in the query's direction, and
// returns the page's continuation ("" when the query is complete) and
// cost.
func (t *Table) readRows(ctx context.Context, pq *preparedQuery, emit func(driver.Row) error) (string, PageCost, error) {
	if pq.index != nil {
		return t.readIndexRows(ctx, pq, emit)
	}
	read := t.drv.QueryPage
	if pq.reverse {
		read = t.drv.(driver.ReverseQuerier).QueryPageReverse
	}
	res, err := read(ctx, &pq.req, emit)
	if err != nil {
		return "", PageCost{}, mapError(err, false)
	}
	if res.Counted {
		pq.req.PreviousExamined = res.Examined // for the query's next page
	}
	if !res.More {
		return "", costOf(res), nil
	}
	return encodeContinuation(plan.Key{PartitionKey: res.NextPartitionKey, RowKey: res.NextRowKey}, pq.reverse, res.Table), costOf(res), nil
}

// A continuation token names the next (PartitionKey, RowKey) position a
// query reads and, when the driver gives one, the identity of the table
// the previous page read (the embedded engine's table ID, in decimal); it
// holds no raw stored key and no server state, so tokens never expire,
// and resuming is one seek.
//
// Encoding: base64url without padding of
//
//	version (1 byte: 1 forward, 2 reverse (reading from the position
//	down), 3 forward with a table identity, 4 reverse with one)
//	versions 3 and 4 only: uvarint length of the table identity, its bytes
//	uvarint length of PartitionKey, PartitionKey bytes, RowKey bytes
//	CRC-32C (4 bytes, big-endian) of everything before it
//
// The checksum catches damaged and hand-edited tokens; it is not a secret.
// A forged token that passes it still only names a position: both keys are
// checked against the key rules, so it can move a query forward or back
// within its own table and nowhere else. The identity makes a token from
// a page of another table, or of a table since deleted or re-created
// under the same name, fail with TableNotFound. Nothing ties a token to
// its filter: one from another query of the same table resumes this query
// at the named position (as Azure's NextPartitionKey/NextRowKey would).

const (
	continuationVersion             = 1
	reverseContinuationVersion      = 2
	continuationTableVersion        = 3
	reverseContinuationTableVersion = 4
	maxTableIdentityBytes           = 64
)

// maxContinuationKeyBytes bounds the bytes of each key of a token: 1024
// UTF-16 code units (the key length limit) take at most 4 KiB of UTF-8. It
// lets decoding reject an oversized token before any other work.
const maxContinuationKeyBytes = 4 << 10

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// encodeContinuation returns the token for position k of a forward or
// reverse query in the table with identity table ("" for none).
func encodeContinuation(k plan.Key, reverse bool, table string) string {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(table)+len(k.PartitionKey)+len(k.RowKey)+4)
	version := byte(continuationVersion)
	if table != "" {
		version = continuationTableVersion
	}
	if reverse {
		version++
	}
	b = append(b, version)
	if table != "" {
		b = binary.AppendUvarint(b, uint64(len(table)))
		b = append(b, table...)
	}
	b = binary.AppendUvarint(b, uint64(len(k.PartitionKey)))
	b = append(b, k.PartitionKey...)
	b = append(b, k.RowKey...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeContinuation parses a token into its position, its direction and
// its table identity ("" when it has none). Every failure is an
// InvalidInput *Error; it never panics, whatever the input.
func decodeContinuation(tok string) (k plan.Key, reverse bool, table string, err error) {
	bad := func(why string) (plan.Key, bool, string, error) {
		return plan.Key{}, false, "", newError(edm.CodeInvalidInput, "malformed continuation token: %s", why)
	}
	if len(tok) > 2*(2*maxContinuationKeyBytes+maxTableIdentityBytes+24) {
		return bad("too long")
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return bad("not base64url")
	}
	if len(b) < 1+1+4 {
		return bad("too short")
	}
	body, sum := b[:len(b)-4], b[len(b)-4:]
	if crc32.Checksum(body, crc32c) != binary.BigEndian.Uint32(sum) {
		return bad("checksum mismatch")
	}
	rest := body[1:]
	switch body[0] {
	case continuationVersion, reverseContinuationVersion:
	case continuationTableVersion, reverseContinuationTableVersion:
		n, w := binary.Uvarint(rest)
		if w <= 0 || n == 0 || n > maxTableIdentityBytes || n > uint64(len(rest)-w) {
			return bad("bad table identity length")
		}
		table, rest = string(rest[w:w+int(n)]), rest[w+int(n):]
	default:
		return bad("unknown version")
	}
	n, w := binary.Uvarint(rest)
	rest = rest[max(w, 0):]
	if w <= 0 || n > uint64(len(rest)) {
		return bad("bad partition key length")
	}
	k = plan.Key{PartitionKey: string(rest[:n]), RowKey: string(rest[n:])}
	if err := checkContinuationKey(k.PartitionKey); err != "" {
		return bad("partition key: " + err)
	}
	if err := checkContinuationKey(k.RowKey); err != "" {
		return bad("row key: " + err)
	}
	return k, body[0] == reverseContinuationVersion || body[0] == reverseContinuationTableVersion, table, nil
}

// checkContinuationKey applies the key rules (entityenc.ValidateKey) to
// one key of a position; "" is a valid key. Control characters are among
// the bytes it rejects, so a position stays inside its table's key span.
// It returns why s is not acceptable, or "".
func checkContinuationKey(s string) string {
	if err := entityenc.ValidateKey("key", s); err != nil {
		return err.(*entityenc.Error).Message
	}
	return ""
}

// NextPartitionKey returns the PartitionKey of the position the next page
// starts at, Azure's x-ms-continuation-NextPartitionKey; "" when the query
// is complete (or the Continuation is not a valid token). An empty key is
// a valid position too: Continuation, not this, tells whether more
// remains.
func (p *Page) NextPartitionKey() string {
	k, ok := p.next()
	if !ok {
		return ""
	}
	return k.PartitionKey
}

// NextRowKey returns the RowKey of the position the next page starts at,
// Azure's x-ms-continuation-NextRowKey; "" when the query is complete, or
// when that RowKey is empty (see NextPartitionKey).
func (p *Page) NextRowKey() string {
	k, ok := p.next()
	if !ok {
		return ""
	}
	return k.RowKey
}

func (p *Page) next() (plan.Key, bool) {
	if p == nil || p.Continuation == "" {
		return plan.Key{}, false
	}
	k, _, _, err := decodeContinuation(p.Continuation)
	return k, err == nil
}

// ContinuationFromNext returns the token for Azure's continuation pair
// (NextPartitionKey, NextRowKey), such as a client that speaks Azure's
// protocol sends back. Two empty values give "": the position of two
// empty keys is the table's first, where a forward query starts anyway. Keys that
// break the key rules are InvalidInput.
func ContinuationFromNext(nextPartitionKey, nextRowKey string) (string, error) {
	if nextPartitionKey == "" && nextRowKey == "" {
		return "", nil
	}
	for _, s := range [2]string{nextPartitionKey, nextRowKey} {
		if why := checkContinuationKey(s); why != "" {
			return "", newError(edm.CodeInvalidInput, "invalid continuation key %q: %s", s, why)
		}
	}
	return encodeContinuation(plan.Key{PartitionKey: nextPartitionKey, RowKey: nextRowKey}, false, ""), nil
}

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
		return nil, newError(edm.CodeInvalidInput, "segment count %d is out of range 1..%d", n, MaxSegments)
	}
	sg, ok := t.drv.(driver.Segmenter)
	if !ok {
		return nil, newError(edm.CodeNotImplemented, "this store cannot split a table into segments")
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

// PlanKind says how a query reads a table, from cheapest to costliest, in
// the terms of Azure's table design guide.
type PlanKind uint8

// The plan kinds.
const (
	// PlanEmpty reads nothing: the filter contradicts itself on the keys,
	// as in `PartitionKey eq 'a' and PartitionKey eq 'b'`.
	PlanEmpty PlanKind = PlanKind(plan.Empty)
	// PlanPoint reads single entities by PartitionKey and RowKey, as in
	// `PartitionKey eq 'a' and RowKey eq '1'`. A disjunction of such
	// terms is a few point reads, where Azure would scan.
	PlanPoint PlanKind = PlanKind(plan.Point)
	// PlanRange reads RowKey ranges inside known partitions, as in
	// `PartitionKey eq 'a' and RowKey ge 'S' and RowKey lt 'T'`.
	PlanRange PlanKind = PlanKind(plan.Range)
	// PlanPartitionScan reads whole partitions, as in
	// `PartitionKey eq 'a' and Age gt 30`.
	PlanPartitionScan PlanKind = PlanKind(plan.PartitionScan)
	// PlanTableScan reads across partitions: no PartitionKey equality.
	// Bounds on PartitionKey still narrow it.
	PlanTableScan PlanKind = PlanKind(plan.TableScan)
)

// String returns "empty", "point", "range", "partition scan" or
// "table scan".
func (k PlanKind) String() string { return plan.Kind(k).String() }

// QueryPlan describes how a query runs. See Table.Plan.
type QueryPlan struct {
	Kind PlanKind
	// Ranges describe the key ranges read, in order, one per element, as
	// conditions on the keys (see String).
	Ranges []string
	// Residual is the canonical text of the filter evaluated on each
	// entity in the ranges; "" when every entity there matches.
	Residual string
	// Reverse is set for a Reverse query, whose Ranges are listed in the
	// order they are read: last first.
	Reverse bool
	// Index names the secondary index the query reads, "" for none. In
	// key order (chosen by the planner) Ranges stay the key ranges, each
	// read for every value tuple the text lists; in index order
	// (Query.Index) Ranges describe the ranges of the index read. Residual
	// is then what the index does not guarantee.
	Index string
	// Warnings name the comparisons of the filter that can match none of
	// the entities sampled (see Table.Plan): a literal of a type the
	// property never has there, or a property name seen only in another
	// case. The filter stays valid; Azure too returns nothing for it.
	Warnings []string

	text string
}

// String returns the plan as text, one item per line:
//
//	plan: range
//	ranges:
//	  PartitionKey = 'Sales', 'A' <= RowKey < 'B'
//	residual: Age gt 30
//
// Each range line describes one half-open range of (PartitionKey, RowKey)
// positions by the conditions that hold exactly inside it, written with
// <, <=, >= and > so they are not mistaken for the filter:
//
//	PartitionKey = 'p', RowKey = 'r'            one entity
//	PartitionKey = 'p', 'a' <= RowKey < 'b'     part of one partition
//	PartitionKey = 'p'                          a whole partition
//	(PartitionKey, RowKey) >= ('a', 'm'), PartitionKey < 'c'
//	all                                         the whole table
//
// "ranges: none" means nothing is read; "residual: none" means no entity
// in the ranges is filtered out. A Reverse query's plan line ends with
// ", reverse" ("plan: range, reverse") and its ranges are listed in the
// order they are read, last first. Each of Warnings follows on a line of
// its own, after "warning: ".
func (p *QueryPlan) String() string { return p.text }

// Plan returns how q would run: its kind, the key ranges it reads (from
// q.Continuation on, when given), its residual filter and warnings. For
// the warnings it reads a sample, the first PlanSampleSize entities of
// the plan's key ranges (ignoring the filter), and takes the property
// names and types found there, and the properties of the table's
// indexes, as those the table holds; an empty sample warns of nothing.
// It checks that the table exists. Errors are those of QueryPage for the
// same query.
func (t *Table) Plan(ctx context.Context, q Query) (*QueryPlan, error) { return t.plan(ctx, q, nil) }

// plan is Plan in the table, or in part when not nil.
func (t *Table) plan(ctx context.Context, q Query, part *Partition) (*QueryPlan, error) {
	pq, err := t.prepareIn(context.WithValue(ctx, explainingKey{}, true), q, part)
	if err != nil {
		return nil, err
	}
	if err := t.drv.Exists(ctx); err != nil {
		return nil, mapError(err, false)
	}
	p := pq.plan
	qp := &QueryPlan{Kind: PlanKind(p.Kind), Reverse: pq.reverse}
	if pq.reverse {
		qp.text = p.FormatReverse(pq.ranges)
		for i := len(pq.ranges) - 1; i >= 0; i-- {
			qp.Ranges = append(qp.Ranges, pq.ranges[i].String())
		}
	} else {
		qp.text = p.Format(pq.ranges)
		for _, r := range pq.ranges {
			qp.Ranges = append(qp.Ranges, r.String())
		}
	}
	if p.Residual != nil {
		qp.Residual = filter.Format(p.Residual)
	}
	if pq.index != nil {
		explainIndex(pq, qp)
	}
	if err := t.sampleWarnings(ctx, pq, qp); err != nil {
		return nil, err
	}
	return qp, nil
}

// PlanSampleSize is how many entities Plan reads, from the start of the
// plan's key ranges and without the filter, to find the property names
// and types that its Warnings are based on.
const PlanSampleSize = 100

// sampleWarnings fills qp.Warnings: the comparisons of pq's filter that
// can match none of the first PlanSampleSize entities of its key ranges,
// by their property names and types, nor the properties of the table's
// indexes (by name only).
func (t *Table) sampleWarnings(ctx context.Context, pq *preparedQuery, qp *QueryPlan) error {
	if pq.req.Filter == nil || len(pq.plan.Ranges) == 0 {
		return nil
	}
	var seen filter.Seen
	req := driver.QueryRequest{Ranges: pq.plan.Ranges, Top: PlanSampleSize}
	_, err := t.drv.QueryPage(ctx, &req, func(r driver.Row) error {
		it := r.Record.Iter()
		for it.Next() {
			seen.Add(string(it.Name()), it.Value().Type)
		}
		return nil
	})
	if err != nil {
		return mapError(err, false)
	}
	if d, err := t.indexer(); err == nil {
		if sts, err := d.Indexes(ctx); err == nil {
			for _, st := range sts {
				for _, p := range st.Properties {
					seen.AddName(p)
				}
			}
		}
	}
	qp.Warnings = filter.Warnings(pq.req.Filter, &seen)
	for _, w := range qp.Warnings {
		qp.text += "warning: " + w + "\n"
	}
	return nil
}
