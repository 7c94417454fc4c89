package tablestore

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"
	"strings"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/plan"
)

// The index states.
const (
	// IndexBuilding: CreateIndex is filling the index from the table's
	// entities. Writes keep it exact meanwhile; queries do not use it.
	IndexBuilding = driver.IndexBuilding
	// IndexReady: queries may use the index.
	IndexReady = driver.IndexReady
)

// IndexInfo describes one index of a table: the driver's status (its
// spec, identity, state and build progress) and its estimated size.
type IndexInfo struct {
	driver.IndexStatus
	// Entries and Bytes estimate the index's entries and the disk space
	// they take, as Table.Stats estimates a table's: up to 20,000 entries
	// are counted, the rest estimated from disk usage; Bytes leave out
	// the newest writes, still in memory. Zero when the driver cannot
	// estimate.
	Entries, Bytes int64
}

// MaxIndexProperties is the most properties an index can have.
const MaxIndexProperties = 4

// maxIndexNameLen bounds an index name.
const maxIndexNameLen = 63

// CreateIndex declares a secondary index and builds it from the table's
// entities, returning once it is ready. The build runs online: reads and
// writes go on meanwhile, and every write keeps the index exact from the
// start of the call, in the same atomic commit as the entity. Indexes
// reports the build's progress from another goroutine.
//
// An index entry orders by the values' tuple, compared property by
// property with the EDM type first (so values of different types never
// interleave, and an Int32 5, an Int64 5 and a Double 5 are three
// values), an absent property before every value; then by PartitionKey
// and RowKey. Every entity has an entry.
//
// Queries use a ready index by themselves where it keeps Azure's
// (PartitionKey, RowKey) order: a filter that pins every indexed
// property with `eq` (or an `or` of such equalities), in a query that
// would otherwise scan a partition or the table; Query.Index reads one in
// its own order. Explain shows the choice.
//
// When ctx ends, the store closes, or the build fails, the index is
// removed and nothing of it stays. A build a crash interrupts is removed
// at the next Open; call CreateIndex again.
//
// Errors: InvalidInput for a spec that breaks the rules above, a name the
// table's indexes already have, or a table with 16 indexes;
// PropertyNameInvalid and PropertyNameTooLong for a property name;
// EntityAlreadyExists, naming the index and both entities, when a Unique
// index meets two entities with the same values; TableNotFound;
// NotImplemented for a driver without indexes (the remote Azure driver);
// ErrClosed; ctx's error.
func (t *Table) CreateIndex(ctx context.Context, spec IndexSpec) error {
	if err := t.db.checkContext(ctx); err != nil {
		return err
	}
	if err := validateIndexSpec(spec); err != nil {
		return err
	}
	d, err := t.indexer()
	if err != nil {
		return err
	}
	spec.Properties = slices.Clone(spec.Properties)
	return mapError(d.CreateIndex(ctx, spec), false)
}

// DropIndex removes an index (matched case-insensitively), ready or
// building, in constant time: one atomic write, whatever the index
// holds; a build in progress fails. Queries planned with the index go on
// without it: a key-order page reads the table as planned without the
// index, an index-order query (Query.Index) fails with ResourceNotFound.
// Errors: ResourceNotFound for no such index, TableNotFound,
// NotImplemented, ErrClosed, ctx's error.
func (t *Table) DropIndex(ctx context.Context, name string) error {
	if err := t.db.checkContext(ctx); err != nil {
		return err
	}
	d, err := t.indexer()
	if err != nil {
		return err
	}
	return mapError(d.DropIndex(ctx, name), false)
}

// Indexes lists the table's indexes, sorted by name case-insensitively,
// with their state, build progress and estimated size. It reads no entity
// nor index entry: the sizes come from the store's metadata. Errors:
// TableNotFound, NotImplemented, ErrClosed, ctx's error.
func (t *Table) Indexes(ctx context.Context) ([]IndexInfo, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return nil, err
	}
	d, err := t.indexer()
	if err != nil {
		return nil, err
	}
	sts, err := d.Indexes(ctx)
	if err != nil {
		return nil, mapError(err, false)
	}
	var sizes map[string]driver.TableStats
	if sz, ok := d.(driver.IndexSizer); ok {
		if sizes, err = sz.IndexSizes(ctx); err != nil {
			return nil, mapError(err, false)
		}
	}
	out := make([]IndexInfo, len(sts))
	for i, st := range sts {
		size := sizes[st.ID]
		out[i] = IndexInfo{IndexStatus: st, Entries: size.Entities, Bytes: size.Bytes}
	}
	return out, nil
}

func (t *Table) indexer() (driver.Indexer, error) {
	d, ok := t.drv.(driver.Indexer)
	if !ok {
		return nil, newError(edm.CodeNotImplemented, "this store has no secondary indexes")
	}
	return d, nil
}

// validateIndexSpec checks a spec against IndexSpec's rules.
func validateIndexSpec(spec IndexSpec) error {
	if !validIndexName(spec.Name) {
		return newError(edm.CodeInvalidInput, "the index name %s is invalid: 1 to %d ASCII letters, digits and '_', starting with a letter",
			entityenc.QuoteShort(spec.Name), maxIndexNameLen)
	}
	if n := len(spec.Properties); n == 0 || n > MaxIndexProperties {
		return newError(edm.CodeInvalidInput, "index %s has %d properties; an index has 1 to %d", spec.Name, n, MaxIndexProperties)
	}
	for i, p := range spec.Properties {
		if entityenc.IsSystemName(p) {
			return newError(edm.CodeInvalidInput, "index %s cannot index %s: only user properties are indexed", spec.Name, p)
		}
		if err := entityenc.ValidatePropertyName(p); err != nil {
			return coded(err)
		}
		if slices.Contains(spec.Properties[:i], p) {
			return newError(edm.CodeInvalidInput, "index %s names property %s twice", spec.Name, p)
		}
	}
	return nil
}

func validIndexName(name string) bool {
	if name == "" || len(name) > maxIndexNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			return false
		}
	}
	return true
}

// indexQuery is a query's read through an index.
type indexQuery struct {
	req  driver.IndexQueryRequest
	scan *plan.IndexScan // req.Scan is &scan.IndexScan
}

// prepareIndex plans q, prepared as pq, through an index: the one
// q.Index names, read in index order, for which it also applies
// q.Continuation (handled true); or one the planner picks to read in key
// order, whose continuation is a plain one (handled false, pq.index
// possibly nil).
func (t *Table) prepareIndex(ctx context.Context, q Query, pq *preparedQuery) (handled bool, err error) {
	if q.Index == "" {
		d, ok := t.drv.(driver.Indexer)
		if !ok || q.Reverse || pq.plan.Kind < plan.PartitionScan || pq.req.Filter == nil {
			return false, nil
		}
		if sp, ok := t.drv.(driver.ServerPlanner); ok && sp.PlansKeyOrderReads() && ctx.Value(explainingKey{}) == nil {
			return false, nil // the service picks its index; the page is the same
		}
		sts, err := d.Indexes(ctx)
		if err != nil {
			if de := (*driver.Error)(nil); errors.As(err, &de) && de.Code == edm.CodeNotImplemented {
				return false, nil // a driver that has no indexes on this store
			}
			return false, mapError(err, false)
		}
		var ready []plan.Index
		for _, st := range sts {
			if st.State == driver.IndexReady {
				ready = append(ready, planIndexOf(st))
			}
		}
		scan := plan.ChooseIndex(pq.req.Filter, pq.plan, ready)
		if scan == nil {
			return false, nil
		}
		for _, st := range sts {
			if st.Name == scan.Index.Name {
				pq.index = &indexQuery{req: driver.IndexQueryRequest{Query: &pq.req, Scan: &scan.IndexScan, Index: st.ID}, scan: scan}
			}
		}
		return false, nil
	}
	switch {
	case q.Reverse:
		return true, newError(edm.CodeInvalidInput, "a query through an index cannot be read in reverse")
	case q.Segment != nil:
		return true, newError(edm.CodeInvalidInput, "a query through an index cannot be restricted to a segment")
	}
	d, err := t.indexer()
	if err != nil {
		return true, err
	}
	sts, err := d.Indexes(ctx)
	if err != nil {
		return true, mapError(err, false)
	}
	i := slices.IndexFunc(sts, func(st driver.IndexStatus) bool { return strings.EqualFold(st.Name, q.Index) })
	if i < 0 {
		return true, newError(edm.CodeResourceNotFound, "table %q has no index named %q", t.name, q.Index)
	}
	st := sts[i]
	if st.State != driver.IndexReady {
		return true, newError(edm.CodeInvalidInput, "index %s is still building", st.Name)
	}
	scan := plan.IndexOrder(pq.req.Filter, pq.plan, planIndexOf(st))
	pq.index = &indexQuery{req: driver.IndexQueryRequest{Query: &pq.req, Scan: &scan.IndexScan, Index: st.ID}, scan: scan}
	if q.Continuation != "" {
		if err := pq.resumeIndex(q.Continuation); err != nil {
			return true, err
		}
	}
	return true, nil
}

func planIndexOf(st driver.IndexStatus) plan.Index { return st.IndexSpec }

// explainingKey marks the context of Table.Plan: a key-order query's
// index is chosen to be explained even where the driver's service plans
// the read itself (driver.ServerPlanner).
type explainingKey struct{}

// resumeIndex applies an index-order continuation token to pq.
func (pq *preparedQuery) resumeIndex(tok string) error {
	table, index, pos, err := decodeIndexContinuation(tok)
	if err != nil {
		return err
	}
	if index != pq.index.req.Index {
		return newError(edm.CodeInvalidInput, "the continuation token is from another index, or from an index since dropped")
	}
	pq.req.Table = table
	pq.index.req.Next = pos
	return nil
}

// readIndexRows is readRows for a query through an index.
func (t *Table) readIndexRows(ctx context.Context, pq *preparedQuery, emit func(driver.Row) error) (string, PageCost, error) {
	res, err := t.drv.(driver.Indexer).QueryIndexPage(ctx, &pq.index.req, emit)
	if err != nil {
		return "", PageCost{}, mapError(err, false)
	}
	cost := costOf(res.PageResult)
	if !res.More {
		return "", cost, nil
	}
	if pq.index.req.Scan.Order {
		return encodeIndexContinuation(res.Table, pq.index.req.Index, res.Next), cost, nil
	}
	return encodeContinuation(plan.Key{PartitionKey: res.NextPartitionKey, RowKey: res.NextRowKey}, false, res.Table), cost, nil
}

// explainIndex fills qp, the plan of pq, with pq's index read: the index
// name, the printed scan, its residual and, in index order, its ranges.
func explainIndex(pq *preparedQuery, qp *QueryPlan) {
	scan := pq.index.scan
	qp.Index = scan.Index.Name
	qp.text = scan.Format(pq.ranges, pq.index.req.Next)
	qp.Residual = ""
	if scan.Residual != nil {
		qp.Residual = filter.Format(scan.Residual)
	}
	if scan.Order {
		qp.Ranges = nil
		_, idx := scan.SpansFrom(pq.index.req.Next)
		desc := scan.Descriptions()
		for _, i := range idx {
			qp.Ranges = append(qp.Ranges, desc[i])
		}
	}
}

// Index-order continuation tokens name a position in an index: the
// table's identity, the index's, and the next entry's position (opaque
// bytes of the driver's), base64url without padding of
//
//	version 16 (1 byte)
//	uvarint length of the table identity, its bytes
//	uvarint length of the index identity, its bytes
//	the position's bytes
//	CRC-32C (4 bytes, big-endian) of everything before it
//
// A plain query refuses them (unknown version), and a query through an
// index refuses plain tokens and tokens of another index.
const (
	indexContinuationVersion = 16
	maxIndexPositionBytes    = 1 << 20
)

func encodeIndexContinuation(table, index string, pos []byte) string {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(table)+len(index)+len(pos)+4)
	b = append(b, indexContinuationVersion)
	b = binary.AppendUvarint(b, uint64(len(table)))
	b = append(b, table...)
	b = binary.AppendUvarint(b, uint64(len(index)))
	b = append(b, index...)
	b = append(b, pos...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeIndexContinuation parses an index-order token. Every failure is
// InvalidInput; it never panics, whatever the input.
func decodeIndexContinuation(tok string) (table, index string, pos []byte, err error) {
	bad := func(why string) (string, string, []byte, error) {
		return "", "", nil, newError(edm.CodeInvalidInput, "malformed index continuation token: %s", why)
	}
	if len(tok) > 2*maxIndexPositionBytes {
		return bad("too long")
	}
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		return bad("not base64url")
	}
	if len(b) < 1+2+4 {
		return bad("too short")
	}
	body, sum := b[:len(b)-4], b[len(b)-4:]
	if crc32.Checksum(body, crc32c) != binary.BigEndian.Uint32(sum) {
		return bad("checksum mismatch")
	}
	if body[0] != indexContinuationVersion {
		return bad("not a token of a query through an index")
	}
	rest := body[1:]
	var parts [2]string
	for i := range parts {
		n, w := binary.Uvarint(rest)
		if w <= 0 || n > maxTableIdentityBytes || n > uint64(len(rest)-w) {
			return bad("bad identity length")
		}
		parts[i], rest = string(rest[w:w+int(n)]), rest[w+int(n):]
	}
	if len(rest) > maxIndexPositionBytes {
		return bad("position too long")
	}
	return parts[0], parts[1], slices.Clone(rest), nil
}
