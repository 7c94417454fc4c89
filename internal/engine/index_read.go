package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/codec"
	"github.com/tablestore/tablestore/internal/keys"
	"github.com/tablestore/tablestore/internal/plan"
)

// QueryIndexPage implements driver.Indexer. It reads the index and the
// entities from one Pebble snapshot. Each entry costs a point read of its
// entity, which must exist and hold the entry's tuple (an entry left by a
// range deletion does not, see index_sweep.go); each entry counts as one
// examined entity for PageScanLimit.
func (t *table) QueryIndexPage(ctx context.Context, q *driver.IndexQueryRequest, emit func(driver.Row) error) (_ driver.IndexPageResult, err error) {
	if err := t.db.checkContext(ctx); err != nil {
		return driver.IndexPageResult{}, err
	}
	info, err := t.resolve()
	if err != nil {
		return driver.IndexPageResult{}, err
	}
	ix := t.db.findIndex(info.id, q.Index)
	if ix == nil {
		if !q.Scan.Order {
			// Gone or replaced since the plan: the plain plan gives the
			// same pages.
			res, err := t.queryPage(ctx, q.Query, emit, false)
			return driver.IndexPageResult{PageResult: res}, err
		}
		return driver.IndexPageResult{}, errorf("ResourceNotFound", "index %q of table %q does not exist (dropped or created again since the query was planned)", q.Scan.Index.Name, t.name)
	}
	release, err := t.db.enter(ctx)
	if err != nil {
		return driver.IndexPageResult{}, err
	}
	defer release()
	op := func() string { return "query of index " + ix.spec.Name + " of table " + t.name }
	defer func() {
		if r := recover(); r != nil {
			t.db.recovered(r, op(), &err)
		}
	}()
	identity := strconv.FormatUint(info.id, 10)
	if q.Query.Table != "" && q.Query.Table != identity {
		return driver.IndexPageResult{}, errorf("TableNotFound", "table %q is not the table the continuation was made for (deleted or re-created since)", t.name)
	}
	rq := *q.Query
	rq.Plan = &plan.Plan{Kind: q.Query.Plan.Kind, Residual: q.Scan.Residual}
	r := &indexReader{
		pageReader: pageReader{ctx: ctx, db: t.db, q: &rq, id: info.id, emit: emit, start: t.db.opts.Clock().UnixNano()},
		ix:         ix,
		snap:       t.db.pdb.NewSnapshot(),
	}
	defer r.snap.Close()
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
	return driver.IndexPageResult{PageResult: r.result, Next: r.next}, nil
}

// indexReader reads one page through an index.
type indexReader struct {
	pageReader
	ix   *index
	snap *pebble.Snapshot
	next []byte // the resume position of an index-order page
}

// visit examines the entity (pk, rk) that entries with tuples tuples
// point at: it counts as examined, and unless it is gone or holds none of
// the tuples, the residual decides whether it is emitted.
func (r *indexReader) visit(pk, rk []byte, tuples ...[]byte) error {
	key := keys.Entity(nil, r.id, string(pk), string(rk))
	val, closer, err := r.snap.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		r.examined++
		return nil
	}
	if err != nil {
		return err
	}
	defer closer.Close()
	t, _ := recordTuple(nil, r.ix, codec.Record(val))
	for _, want := range tuples {
		if bytes.Equal(t, want) {
			return r.examine(pk, rk, "", "", val)
		}
	}
	r.examined++
	return nil
}

// keyStream is the entries of one tuple inside the key ranges of a
// key-order scan, in (PartitionKey, RowKey) order.
type keyStream struct {
	tuple  []byte
	ranges []plan.KeyRange
	ri     int
	it     *pebble.Iterator
	valid  bool
	pk, rk []byte // the head's keys; alias the iterator's key
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

// settle moves s to its first entry at or after its position, going on to
// its next ranges as each ends; s.valid reports whether one is found.
func (r *indexReader) settle(s *keyStream, found bool) error {
	for {
		if found {
			return r.head(s)
		}
		if err := s.it.Error(); err != nil {
			return err
		}
		if s.ri++; s.ri >= len(s.ranges) {
			s.valid = false
			return nil
		}
		lo, hi, err := r.bounds(s, s.ranges[s.ri])
		if err != nil {
			return err
		}
		s.it.SetBounds(lo, hi)
		found = s.it.First()
	}
}

// head reads the keys of s's current entry.
func (r *indexReader) head(s *keyStream) error {
	suffix := s.it.Key()[keys.IndexPrefixLen:]
	var rest []byte
	if r.ix.spec.Partitioned {
		i := bytes.IndexByte(suffix, keys.Sep)
		if i < 0 || len(suffix) < i+1+len(s.tuple) {
			return &driver.CorruptError{Op: fmt.Sprintf("read of index %s entry %q", r.ix.spec.Name, s.it.Key()), Err: keys.ErrMalformedIndex}
		}
		s.pk, s.rk = suffix[:i], suffix[i+1+len(s.tuple):]
		s.valid = true
		return nil
	}
	rest = suffix[len(s.tuple):]
	i := bytes.IndexByte(rest, keys.Sep)
	if i < 0 {
		return &driver.CorruptError{Op: fmt.Sprintf("read of index %s entry %q", r.ix.spec.Name, s.it.Key()), Err: keys.ErrMalformedIndex}
	}
	s.pk, s.rk = rest[:i], rest[i+1:]
	s.valid = true
	return nil
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
	streams := make([]*keyStream, len(q.Scan.Tuples))
	for i, tu := range q.Scan.Tuples {
		s := &keyStream{tuple: tu, ranges: ranges, ri: -1}
		it, err := r.snap.NewIter(nil)
		if err != nil {
			return err
		}
		defer it.Close()
		s.it = it
		if err := r.settle(s, false); err != nil {
			return err
		}
		streams[i] = s
	}
	group := make([]*keyStream, 0, len(streams))
	tuples := make([][]byte, 0, len(streams))
	for {
		group, tuples = group[:0], tuples[:0]
		for _, s := range streams {
			if !s.valid {
				continue
			}
			if len(group) > 0 {
				c := bytes.Compare(s.pk, group[0].pk)
				if c == 0 {
					c = bytes.Compare(s.rk, group[0].rk)
				}
				if c > 0 {
					continue
				}
				if c < 0 {
					group, tuples = group[:0], tuples[:0]
				}
			}
			group = append(group, s)
			tuples = append(tuples, s.tuple)
		}
		if len(group) == 0 {
			return nil
		}
		pk, rk := group[0].pk, group[0].rk
		why, err := r.admit()
		if err != nil {
			return err
		}
		if why != goOn {
			r.resumeAt(string(pk), string(rk))
			return nil
		}
		if err := r.visit(pk, rk, tuples...); err != nil {
			return err
		}
		for _, s := range group {
			if err := r.settle(s, s.it.Next()); err != nil {
				return err
			}
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
	it, err := r.snap.NewIter(nil)
	if err != nil {
		return err
	}
	defer it.Close()
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
