package engine

import (
	"bytes"
	"context"
	"fmt"
	"strconv"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/keys"
	"github.com/tablestore/tablestore/internal/plan"
)

// QueryIndexPage implements driver.Indexer. It reads the index and the
// entities from one Pebble snapshot. Each entry costs a point read of its
// entity, which must exist and hold the entry's tuple (an entry left by a
// range deletion does not, see index_sweep.go); each entry counts as one
// examined entity for PageScanLimit.
func (t *table) QueryIndexPage(ctx context.Context, q *driver.IndexQueryRequest, emit func(driver.Row) error) (_ driver.IndexPageResult, err error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return driver.IndexPageResult{}, err
	}
	op := func() string { return "query through index " + q.Scan.Index.Name + " of table " + t.name }
	r, identity, err := t.openIndexReader(ctx, q, emit)
	if err != nil || r == nil {
		release()
		if err == nil {
			// Gone or replaced since the plan: the plain plan gives the
			// same pages.
			res, err := t.queryPage(ctx, q.Query, emit, false)
			return driver.IndexPageResult{PageResult: res}, err
		}
		return driver.IndexPageResult{}, t.db.storageErr(op(), err)
	}
	defer release()
	defer func() {
		if rec := recover(); rec != nil {
			t.db.recovered(rec, op(), &err)
		}
	}()
	defer r.idx.Close()
	defer r.ent.Close()
	if q.Scan.Order {
		err = r.indexOrder(q)
	} else {
		err = r.keyOrder(q)
	}
	if err != nil && !r.emitFailed {
		err = t.db.storageErr(op(), err)
	}
	if err != nil {
		return driver.IndexPageResult{}, err
	}
	r.result.Table = identity
	r.count()
	return driver.IndexPageResult{PageResult: r.result, Next: r.next}, nil
}

// openIndexReader returns a reader of the page with its iterators open,
// and the table's identity; or no reader, for a key-order scan, when the
// index is gone, another or not ready. The iterators are opened under the
// catalog lock, with the index found declared: dropping it (which takes
// the lock) cannot come between.
func (t *table) openIndexReader(ctx context.Context, q *driver.IndexQueryRequest, emit func(driver.Row) error) (*indexReader, string, error) {
	db := t.db
	db.catMu.RLock()
	defer db.catMu.RUnlock()
	info, err := t.resolveLocked()
	if err != nil {
		return nil, "", err
	}
	identity := strconv.FormatUint(info.id, 10)
	if q.Query.Table != "" && q.Query.Table != identity {
		return nil, "", errorf(edm.CodeTableNotFound, "table %q is not the table the continuation was made for (deleted or re-created since)", t.name)
	}
	var ix *index
	for _, x := range db.ix.byTable[info.id] {
		if x.identity() == q.Index && x.ready {
			ix = x
		}
	}
	if ix == nil {
		if !q.Scan.Order {
			return nil, "", nil
		}
		return nil, "", errorf(edm.CodeResourceNotFound, "index %q of table %q does not exist (dropped or created again since the query was planned)", q.Scan.Index.Name, t.name)
	}
	rq := *q.Query
	rq.Residual = q.Scan.Residual
	r := &indexReader{
		pageReader: pageReader{ctx: ctx, db: db, rd: db.pdb, live: true, q: &rq, id: info.id, emit: emit, start: db.opts.Clock().UnixNano()},
		ix:         ix,
	}
	if r.ttl, r.now, err = db.ttlNowFor(info.id); err != nil {
		return nil, "", err
	}
	// Two iterators with one view of the store: one over the index, a
	// clone of it over the entities.
	ilo, ihi := keys.IndexSpan(info.id, ix.id)
	if r.idx, err = db.pdb.NewIter(&pebble.IterOptions{LowerBound: ilo, UpperBound: ihi}); err != nil {
		return nil, "", err
	}
	elo, ehi := keys.EntitySpan(info.id)
	if r.ent, err = r.idx.Clone(pebble.CloneOptions{IterOptions: &pebble.IterOptions{LowerBound: elo, UpperBound: ehi}}); err != nil {
		_ = r.idx.Close()
		return nil, "", err
	}
	return r, identity, nil
}

// indexReader reads one page through an index.
type indexReader struct {
	pageReader
	ix   *index
	idx  *pebble.Iterator // over the index
	ent  *pebble.Iterator // over the entities, with idx's view
	next []byte           // the resume position of an index-order page
	// Buffers for an entity's key and tuple.
	key, tuple []byte
}

// visit examines the entity (pk, rk) that entries with tuples tuples
// point at: it counts as examined, and unless it is gone or holds none of
// the tuples, the residual decides whether it is emitted. One iterator
// serves every visit of a page: in key order its seeks move forward,
// and in any order they reuse its open files, where each Get would open
// them again.
func (r *indexReader) visit(pk, rk []byte, tuples ...[]byte) error {
	r.entries += len(tuples)
	r.key = keys.Entity(r.key[:0], r.id, string(pk), string(rk))
	if !r.ent.SeekGE(r.key) || !bytes.Equal(r.ent.Key(), r.key) {
		if err := r.ent.Error(); err != nil {
			return err
		}
		r.examined++
		return nil
	}
	val, err := r.ent.ValueAndErr()
	if err != nil {
		return err
	}
	r.tuple, _ = recordTuple(r.tuple[:0], r.ix, driver.Record(val))
	for _, want := range tuples {
		if bytes.Equal(r.tuple, want) {
			return r.examine(pk, rk, "", "", val)
		}
	}
	r.examined++
	return nil
}

// keyStream is the entries of one tuple inside the key ranges of a
// key-order scan, in (PartitionKey, RowKey) order, read ahead in batches
// through the reader's index iterator, which the streams share.
type keyStream struct {
	tuple  []byte
	ranges []plan.KeyRange
	ri     int    // the range being read
	from   []byte // where to go on reading in it; nil: its start
	// The entries read ahead: their keys, in slab.
	heads []streamEntry
	slab  []byte
	batch int // entries to read ahead next time
}

type streamEntry struct{ pk, rk []byte }

// maxReadAhead bounds the entries a stream reads ahead at once.
const maxReadAhead = 256

// head returns the stream's next entry, reading ahead when it has none;
// ok is false when the stream is done.
func (r *indexReader) head(s *keyStream) (e streamEntry, ok bool, err error) {
	if len(s.heads) == 0 {
		if err := r.readAhead(s); err != nil {
			return streamEntry{}, false, err
		}
		if len(s.heads) == 0 {
			return streamEntry{}, false, nil
		}
	}
	return s.heads[0], true, nil
}

// readAhead reads up to s.batch entries of s, moving through its ranges.
func (r *indexReader) readAhead(s *keyStream) error {
	s.heads, s.slab = s.heads[:0], s.slab[:0]
	it := r.idx
	for s.ri < len(s.ranges) && len(s.heads) < s.batch {
		lo, hi, err := r.bounds(s, s.ranges[s.ri])
		if err != nil {
			return err
		}
		if s.from != nil && bytes.Compare(s.from, lo) > 0 {
			lo = s.from
		}
		valid := it.SeekGE(lo)
		for ; valid && bytes.Compare(it.Key(), hi) < 0; valid = it.Next() {
			if len(s.heads) == s.batch {
				break
			}
			e, err := r.split(s, it.Key())
			if err != nil {
				return err
			}
			s.heads = append(s.heads, e)
		}
		if err := it.Error(); err != nil {
			return err
		}
		if valid && bytes.Compare(it.Key(), hi) < 0 {
			s.from = append(s.from[:0], it.Key()...)
			break
		}
		s.ri++
		s.from = nil
	}
	s.batch = min(2*s.batch, maxReadAhead)
	return nil
}

// split copies the keys of an entry of s into its slab.
func (r *indexReader) split(s *keyStream, key []byte) (streamEntry, error) {
	suffix := key[keys.IndexPrefixLen:]
	var pk, rk []byte
	if r.ix.spec.Partitioned {
		i := bytes.IndexByte(suffix, keys.Sep)
		if i < 0 || len(suffix) < i+1+len(s.tuple) {
			return streamEntry{}, &driver.CorruptError{Op: fmt.Sprintf("read of index %s entry %q", r.ix.spec.Name, key), Err: keys.ErrMalformedIndex}
		}
		pk, rk = suffix[:i], suffix[i+1+len(s.tuple):]
	} else {
		rest := suffix[len(s.tuple):]
		i := bytes.IndexByte(rest, keys.Sep)
		if i < 0 {
			return streamEntry{}, &driver.CorruptError{Op: fmt.Sprintf("read of index %s entry %q", r.ix.spec.Name, key), Err: keys.ErrMalformedIndex}
		}
		pk, rk = rest[:i], rest[i+1:]
	}
	// When the slab grows, earlier entries keep the old array, unchanged.
	start := len(s.slab)
	s.slab = append(append(s.slab, pk...), rk...)
	return streamEntry{pk: s.slab[start : start+len(pk) : start+len(pk)], rk: s.slab[start+len(pk) : len(s.slab) : len(s.slab)]}, nil
}

// bounds returns the stored keys of the stream's entries in range rg.
func (r *indexReader) bounds(s *keyStream, rg plan.KeyRange) (lo, hi []byte, err error) {
	prefix := keys.IndexPrefix(nil, r.ix.tableID, r.ix.id)
	if !r.ix.spec.Partitioned {
		pre := append(prefix, s.tuple...)
		lo = keys.AppendIndexSuffix(bytes.Clone(pre), false, nil, rg.Start.PartitionKey, rg.Start.RowKey)
		if rg.Unbounded {
			return lo, keys.ValueEnd(pre), nil
		}
		return lo, keys.AppendIndexSuffix(bytes.Clone(pre), false, nil, rg.End.PartitionKey, rg.End.RowKey), nil
	}
	pk, ok := rg.Partition()
	if !ok {
		return nil, nil, fmt.Errorf("engine: a key-order scan of partitioned index %s has a range across partitions", r.ix.spec.Name)
	}
	pre := append(append(append(prefix, pk...), keys.Sep), s.tuple...)
	lo = append(bytes.Clone(pre), rg.Start.RowKey...)
	if rg.End.PartitionKey == pk {
		return lo, append(bytes.Clone(pre), rg.End.RowKey...), nil
	}
	return lo, keys.ValueEnd(pre), nil
}

// keyOrder reads a key-order scan: the tuples' entries inside the key
// ranges left from the resume point, merged in (PartitionKey, RowKey)
// order. Entries of several tuples at one position (all but one left by a
// range deletion) make one visit.
func (r *indexReader) keyOrder(q *driver.IndexQueryRequest) error {
	ranges := q.Scan.Ranges
	if next := (plan.Key{PartitionKey: q.Query.NextPartitionKey, RowKey: q.Query.NextRowKey}); next != (plan.Key{}) {
		ranges = (&plan.Plan{Ranges: ranges}).From(next)
	}
	if len(ranges) == 0 || len(q.Scan.Tuples) == 0 {
		return nil
	}
	first := min(max(q.Query.Top+1, 8), maxReadAhead)
	streams := make([]*keyStream, len(q.Scan.Tuples))
	for i, tu := range q.Scan.Tuples {
		streams[i] = &keyStream{tuple: tu, ranges: ranges, batch: first}
	}
	group := make([]*keyStream, 0, len(streams))
	tuples := make([][]byte, 0, len(streams))
	for {
		group, tuples = group[:0], tuples[:0]
		var min streamEntry
		for _, s := range streams {
			e, ok, err := r.head(s)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if len(group) > 0 {
				c := bytes.Compare(e.pk, min.pk)
				if c == 0 {
					c = bytes.Compare(e.rk, min.rk)
				}
				if c > 0 {
					continue
				}
				if c < 0 {
					group, tuples = group[:0], tuples[:0]
				}
			}
			min = e
			group = append(group, s)
			tuples = append(tuples, s.tuple)
		}
		if len(group) == 0 {
			return nil
		}
		why, err := r.admit()
		if err != nil {
			return err
		}
		if why != goOn {
			r.resumeAt(string(min.pk), string(min.rk))
			return nil
		}
		if err := r.visit(min.pk, min.rk, tuples...); err != nil {
			return err
		}
		for _, s := range group {
			s.heads = s.heads[1:]
		}
	}
}

// indexOrder reads an index-order scan from q.Next on.
func (r *indexReader) indexOrder(q *driver.IndexQueryRequest) error {
	spans := q.Scan.Spans
	if q.Next != nil {
		spans, _ = q.Scan.SpansFrom(q.Next)
	}
	prefix := keys.IndexPrefix(nil, r.ix.tableID, r.ix.id)
	_, indexEnd := keys.IndexSpan(r.ix.tableID, r.ix.id)
	it := r.idx
	n := len(r.ix.spec.Properties)
	for _, sp := range spans {
		lo := append(bytes.Clone(prefix), sp.Start...)
		hi := indexEnd
		if sp.End != nil {
			hi = append(bytes.Clone(prefix), sp.End...)
		}
		it.SetBounds(lo, hi)
		for valid := it.First(); valid; valid = it.Next() {
			suffix := it.Key()[keys.IndexPrefixLen:]
			tuple, pk, rk, err := keys.SplitIndexSuffix(suffix, n, r.ix.spec.Partitioned)
			if err != nil {
				return &driver.CorruptError{Op: fmt.Sprintf("read of index %s entry %q", r.ix.spec.Name, it.Key()), Err: err}
			}
			why, err := r.admit()
			if err != nil {
				return err
			}
			if why != goOn {
				r.result.More = true
				r.next = bytes.Clone(suffix)
				return nil
			}
			if err := r.visit(pk, rk, tuple); err != nil {
				return err
			}
		}
		if err := it.Error(); err != nil {
			return err
		}
	}
	return nil
}

// clampEntities returns the stored key k of a position in table id, or
// the end of the table's entities when k lies beyond it (a position
// whose PartitionKey starts with 0xFF, which no key holds: a filter's
// literal can name one), so that no read of entities reaches the
// table's index keyspace.
func clampEntities(k []byte, id uint64) []byte {
	if len(k) > 8 && k[8] == keys.IndexTag {
		return k[:9]
	}
	return k
}
