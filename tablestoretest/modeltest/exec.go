package modeltest

import (
	"context"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/rootapi"
	"github.com/tablestore/tablestore/tablestoretest/modeltest/internal/model"
)

// This file runs each kind of operation on the store and on the model
// and compares what they answer. Every write the model makes here, the
// generator's apply makes on the same results.

// exec runs one operation.
func (r *runner) exec(op *Op) {
	switch op.kind {
	case kindCreateTable:
		r.createTable(op)
	case kindDeleteTable:
		r.deleteTable(op)
	case kindListTables:
		r.listTables(op)
	case kindInsert:
		r.write(op, func(e *ts.Entity) error { return r.table(op).Insert(r.ctx, e) },
			func(e *ts.Entity) (ts.ETag, error) { return r.ref.m.Insert(op.table, e) })
	case kindUpsert:
		r.write(op, func(e *ts.Entity) error { return r.table(op).Upsert(r.ctx, e, op.mode) },
			func(e *ts.Entity) (ts.ETag, error) { return r.ref.m.Upsert(op.table, e, op.mode) })
	case kindUpdate:
		storeETag, modelETag := r.ifMatch(idOf(op.table, op.entity.PartitionKey, op.entity.RowKey), op.ifMatch)
		r.write(op, func(e *ts.Entity) error { return r.table(op).Update(r.ctx, e, op.mode, storeETag) },
			func(e *ts.Entity) (ts.ETag, error) { return r.ref.m.Update(op.table, e, op.mode, modelETag) })
	case kindPartitionInsert, kindPartitionUpsert, kindPartitionUpdate:
		r.partitionWrite(op)
	case kindGet:
		r.get(op)
	case kindDelete:
		r.delete(op)
	case kindCheck:
		r.checkKey(op.table, op.pk, op.rk)
	case kindTransaction:
		r.transaction(op)
	case kindQuery:
		r.query(op)
	case kindQueryWrites:
		r.queryWrites(op)
	case kindPartitionQuery:
		r.partitionQuery(op)
	case kindPartitionDelete:
		r.partitionDelete(op)
	case kindSegments:
		r.segments(op)
	case kindReopen:
		r.reopen()
	case kindCreateIndex, kindDropIndex:
		r.indexOp(op)
	case kindSetTTL:
		r.setTTL(op)
	case kindAdvance:
		r.advanceClock(op)
	case kindEnableFeed, kindDisableFeed:
		r.feedSwitch(op)
	case kindReadChanges:
		r.readChanges(op)
	default:
		r.failf("unknown operation %q", op.kind)
	}
}

// table returns a handle on op's table: the one kept from an earlier
// operation when op says so and there is one, else a new one, which is
// kept.
func (r *runner) table(op *Op) *ts.Table {
	lower := strings.ToLower(op.table)
	if tb, ok := r.handles[lower]; ok && op.kept {
		return tb
	}
	tb := r.db.Table(op.table)
	r.handles[lower] = tb
	return tb
}

// stampRE matches the Timestamp placeholders of a generated filter.
var stampRE = regexp.MustCompile(`\{stamp (\d+)\}`)

// filter returns text with each {stamp N} replaced by a DateTime literal:
// the clock's start for N = 0, else the (N-1)th, modulo their number, of
// the sorted Timestamps the store gave the versions the runner knows (the
// start when there are none).
func (r *runner) filter(text string) string {
	if !strings.Contains(text, "{stamp ") {
		return text
	}
	var stamps []time.Time
	for _, v := range r.eng {
		for _, s := range v.stamp {
			stamps = append(stamps, s)
		}
	}
	slices.SortFunc(stamps, time.Time.Compare)
	out := stampRE.ReplaceAllStringFunc(text, func(m string) string {
		n, _ := strconv.Atoi(stampRE.FindStringSubmatch(m)[1])
		tm := clockStart
		if n > 0 && len(stamps) > 0 {
			tm = stamps[(n-1)%len(stamps)]
		}
		return "datetime'" + tm.UTC().Format("2006-01-02T15:04:05.0000000Z") + "'"
	})
	r.note = "filter as run: " + out
	return out
}

// ---- tables ----

func (r *runner) createTable(op *Op) {
	tb, gotErr := r.db.CreateTable(r.ctx, op.table)
	wantErr := r.ref.m.CreateTable(op.table)
	r.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		if tb == nil || !strings.EqualFold(tb.Name(), op.table) {
			r.failf("CreateTable returned handle %v", tb)
		}
		r.forgetTable(op.table)
	}
}

func (r *runner) deleteTable(op *Op) {
	gotErr := r.db.DeleteTable(r.ctx, op.table)
	wantErr := r.ref.m.DeleteTable(op.table)
	r.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		r.forgetTable(op.table)
	}
}

func (r *runner) listTables(op *Op) {
	want, wantErr := r.ref.m.ListTables(op.prefix, op.top)
	got, gotErr := r.listAllTables(op.prefix, op.top)
	r.sameError(gotErr, wantErr, false)
	if wantErr == nil && strings.Join(got, ",") != strings.Join(want, ",") {
		r.failf("tables: store %q, model %q", got, want)
	}
}

// listAllTables pages through ListTables, checking each page's size.
func (r *runner) listAllTables(prefix string, top int) ([]string, error) {
	var names []string
	cont := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			r.failf("ListTables does not end")
		}
		p, err := r.db.ListTables(r.ctx, &ts.ListTablesOptions{Prefix: prefix, Top: top, Continuation: cont})
		if err != nil {
			return nil, err
		}
		if (top > 0 && len(p.Names) > top) || len(p.Names) > 1000 {
			r.failf("ListTables page of %d names for top %d", len(p.Names), top)
		}
		names = append(names, p.Names...)
		if p.Continuation == "" {
			return names, nil
		}
		cont = p.Continuation
	}
}

// ---- single entities ----

// write runs one single-entity write of op's entity on the store (on a
// copy, which receives the store's Timestamp and ETag) and on the model
// (on another copy), compares their errors and, on success, pairs the
// store's new version with the model's. For an input built to fail, it
// checks the model fails with the code the input was built for, and that
// the entity on that key, if any, is untouched.
func (r *runner) write(op *Op, store func(*ts.Entity) error, model func(*ts.Entity) (ts.ETag, error)) {
	e := op.entity
	se := copyEntity(e)
	gotErr := store(se)
	etag, wantErr := model(copyEntity(e))
	if op.want != "" {
		if code, _ := modelCode(wantErr); code != op.want {
			r.failf("model gave %v for an input built to fail with %s", wantErr, op.want)
		}
	}
	r.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		r.wrote(idOf(op.table, e.PartitionKey, e.RowKey), se.ETag, se.Timestamp, etag)
	}
	if op.want != "" && validKeys(e) {
		r.checkKey(op.table, e.PartitionKey, e.RowKey)
	}
}

// modelCode returns the code of a model error.
func modelCode(err error) (ts.Code, bool) {
	we, ok := err.(*model.Error)
	if !ok {
		return "", false
	}
	return we.Code, true
}

// partitionWrite writes op's entity through a Partition view, with the
// entity's PartitionKey left "" when op says so.
func (r *runner) partitionWrite(op *Op) {
	p := r.table(op).Partition(op.entity.PartitionKey)
	through := func(f func(*ts.Entity) error) func(*ts.Entity) error {
		return func(e *ts.Entity) error {
			if op.emptyPK {
				e.PartitionKey = ""
			}
			return f(e)
		}
	}
	switch op.kind {
	case kindPartitionInsert:
		r.write(op, through(func(e *ts.Entity) error { return p.Insert(r.ctx, e) }),
			func(e *ts.Entity) (ts.ETag, error) { return r.ref.m.Insert(op.table, e) })
	case kindPartitionUpsert:
		r.write(op, through(func(e *ts.Entity) error { return p.Upsert(r.ctx, e, op.mode) }),
			func(e *ts.Entity) (ts.ETag, error) { return r.ref.m.Upsert(op.table, e, op.mode) })
	default:
		storeETag, modelETag := r.ifMatch(idOf(op.table, op.entity.PartitionKey, op.entity.RowKey), op.ifMatch)
		r.write(op, through(func(e *ts.Entity) error { return p.Update(r.ctx, e, op.mode, storeETag) }),
			func(e *ts.Entity) (ts.ETag, error) { return r.ref.m.Update(op.table, e, op.mode, modelETag) })
	}
}

func (r *runner) get(op *Op) {
	var opts *ts.GetOptions
	if op.sel != nil {
		opts = &ts.GetOptions{Select: slices.Clone(op.sel)}
	}
	got, gotErr := r.table(op).Get(r.ctx, op.pk, op.rk, opts)
	want, wantErr := r.ref.m.Get(op.table, op.pk, op.rk, op.sel)
	r.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		r.sameEntity(op.table, got, want)
	}
	typed, typedErr := ts.GetStruct[typedRow](r.ctx, r.table(op), op.pk, op.rk, opts)
	r.sameTyped("GetStruct", got, gotErr, typed, typedErr)
}

func (r *runner) delete(op *Op) {
	id := idOf(op.table, op.pk, op.rk)
	storeETag, modelETag := r.ifMatch(id, op.ifMatch)
	gotErr := r.table(op).Delete(r.ctx, op.pk, op.rk, storeETag)
	wantErr := r.ref.m.Delete(op.table, op.pk, op.rk, modelETag)
	r.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		r.forget(id)
	}
}

// checkKey compares one key on both sides, present or absent.
func (r *runner) checkKey(table, pk, rk string) {
	defer func(kind string) { r.kind = kind }(r.kind)
	r.kind = "readback"
	got, gotErr := r.db.Table(table).Get(r.ctx, pk, rk, nil)
	want, wantErr := r.ref.m.Get(table, pk, rk, nil)
	r.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		r.sameEntity(table, got, want)
	}
}

// ---- transactions ----

// transaction submits op's actions on both sides (some as structs, which
// must behave as the entity would), compares the errors (the failing
// index too, unless the transaction is empty or too long, where the index
// is not part of the contract), pairs the new versions, and reads back
// every key it named: all or nothing.
func (r *runner) transaction(op *Op) {
	n := len(op.actions)
	big := n >= 100
	storeActions := make([]ts.TransactionAction, n)
	modelActions := make([]ts.TransactionAction, n)
	submitted := make([]ts.TransactionAction, n)
	structs := make([]reflect.Value, n)
	for i, a := range op.actions {
		storeETag, modelETag := r.ifMatch(idOf(op.table, a.entity.PartitionKey, a.entity.RowKey), a.ifMatch)
		storeActions[i] = ts.TransactionAction{Type: a.typ, Entity: copyEntity(a.entity), IfMatch: storeETag}
		modelActions[i] = ts.TransactionAction{Type: a.typ, Entity: copyEntity(a.entity), IfMatch: modelETag}
		submitted[i] = storeActions[i]
		if a.asStruct {
			if v, ok := structOf(storeActions[i].Entity.(*ts.Entity)); ok {
				submitted[i].Entity, structs[i] = ts.StructEntity(v.Interface()), v
			}
		}
	}
	gotErr := rootAPI.SubmitTransaction(r.table(op), r.ctx, submitted, driver.CommitOptions{DistinctTimestamps: r.cfg.DistinctTimestamps})
	for i, v := range structs {
		if v.IsValid() && storeActions[i].Type != ts.ActionDelete {
			e := storeActions[i].Entity.(*ts.Entity)
			e.Timestamp = v.Elem().FieldByName("Timestamp").Interface().(time.Time)
			e.ETag = v.Elem().FieldByName("ETag").Interface().(ts.ETag)
		}
	}
	etags, wantErr := r.ref.m.SubmitTransaction(op.table, modelActions)
	if op.fault != "" && wantErr == nil {
		r.failf("model accepted a transaction with fault %s", op.fault)
	}
	r.sameError(gotErr, wantErr, op.fault != "empty" && n <= 100)
	if wantErr == nil {
		for i, a := range storeActions {
			e := a.Entity.(*ts.Entity)
			id := idOf(op.table, e.PartitionKey, e.RowKey)
			switch {
			case a.Type == ts.ActionDelete:
				r.forget(id)
			case e.ETag != "":
				r.wrote(id, e.ETag, e.Timestamp, etags[i])
			default:
				r.ref.wrote(id, etags[i])
			}
		}
	}
	for i, a := range op.actions {
		if i >= 10 && !big {
			break
		}
		if validKeys(a.entity) {
			r.checkKey(op.table, a.entity.PartitionKey, a.entity.RowKey)
		}
	}
}

// ---- queries ----

func (r *runner) query(op *Op) {
	q := ts.Query{Filter: r.filter(op.filter), Select: slices.Clone(op.sel), Top: op.top, Reverse: op.reverse, Index: op.index}
	var want []*ts.Entity
	var wantErr error
	if q.Index != "" {
		want, wantErr = r.ref.m.QueryIndex(op.table, q)
	} else {
		want, wantErr = r.ref.m.Query(op.table, q)
	}
	var got []*ts.Entity
	var gotErr error
	if op.iterate {
		got, gotErr = r.iterate(r.table(op).Query(r.ctx, q))
	} else {
		got, gotErr = r.pages(q, r.table(op).QueryPage)
	}
	r.sameError(gotErr, wantErr, false)
	if wantErr != nil {
		return
	}
	r.sameEntities(op.table, got, want)
	plan, err := r.table(op).Plan(context.Background(), q)
	if err != nil || plan.String() == "" {
		r.failf("Plan of a query that ran: %v, %v", plan, err)
	}
	if plan.Index != "" {
		r.outcomes[r.kind+":through-index"]++
	}
	r.outcomes["query-rows"] += len(want)
	if len(want) > 0 {
		r.outcomes["query:nonempty"]++
	}
}

// queryWrites pages through a query and makes op's writes, in order,
// behind its cursor: after each page, every write still to make whose key
// is at or before the page's last entity, until one is not; the writes
// left when the query ends follow it. A continuation token names the
// next key to read, so each page must hold exactly the matches between
// the previous page's last entity and its own last entity, as the model
// held them just before the page was read: the writes behind the cursor
// must not show. (A write ahead of the cursor may or may not show, as
// the page may have scanned past it: it waits.)
func (r *runner) queryWrites(op *Op) {
	writes := op.writes
	r.queryPagesWithWrites(op, func(last model.Key) {
		for len(writes) > 0 && !last.Less(keyOf(writes[0].entity)) {
			r.writeBetweenPages(op, writes[0])
			writes = writes[1:]
			r.outcomes["query-writes:behind-cursor"]++
		}
	})
	for _, w := range writes {
		r.writeBetweenPages(op, w)
		r.outcomes["query-writes:after-query"]++
	}
}

func keyOf(e *ts.Entity) model.Key { return model.Key{PK: e.PartitionKey, RK: e.RowKey} }

// queryPagesWithWrites reads op's query page by page, calling between
// with the last entity's key after each page that has a continuation and
// an entity.
func (r *runner) queryPagesWithWrites(op *Op, between func(last model.Key)) {
	q := ts.Query{Filter: r.filter(op.filter), Top: op.top}
	tb := r.table(op)
	var last *model.Key
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			r.failf("query does not end")
		}
		all, err := r.ref.m.Query(op.table, ts.Query{Filter: q.Filter})
		var rest []*ts.Entity
		for _, e := range all {
			if last == nil || last.Less(keyOf(e)) {
				rest = append(rest, e)
			}
		}
		p, gotErr := tb.QueryPage(r.ctx, q)
		r.sameError(gotErr, err, false)
		if err != nil {
			return
		}
		r.sameTypedPage(tb, q, p)
		if len(p.Entities) > q.Top {
			r.failf("page of %d entities for top %d", len(p.Entities), q.Top)
		}
		want := rest
		if p.Continuation != "" {
			n := 0
			if len(p.Entities) > 0 {
				endKey := keyOf(p.Entities[len(p.Entities)-1])
				for n < len(rest) && !endKey.Less(keyOf(rest[n])) {
					n++
				}
			}
			want = rest[:n]
		}
		r.sameEntities(op.table, p.Entities, want)
		if p.Continuation == "" {
			return
		}
		if len(p.Entities) > 0 {
			k := keyOf(p.Entities[len(p.Entities)-1])
			last = &k
			between(k)
		}
		q.Continuation = p.Continuation
	}
}

// writeBetweenPages makes one write of a query-writes on both sides: a
// delete of any version, or a replacing upsert.
func (r *runner) writeBetweenPages(op *Op, w action) {
	e := w.entity
	id := idOf(op.table, e.PartitionKey, e.RowKey)
	if w.typ == ts.ActionDelete {
		gotErr := r.table(op).Delete(r.ctx, e.PartitionKey, e.RowKey, ts.ETagAny)
		wantErr := r.ref.m.Delete(op.table, e.PartitionKey, e.RowKey, ts.ETagAny)
		r.sameError(gotErr, wantErr, false)
		if wantErr == nil {
			r.forget(id)
		}
		return
	}
	se := copyEntity(e)
	gotErr := r.table(op).Upsert(r.ctx, se, ts.Replace)
	etag, wantErr := r.ref.m.Upsert(op.table, copyEntity(e), ts.Replace)
	r.sameError(gotErr, wantErr, false)
	if wantErr == nil {
		r.wrote(id, se.ETag, se.Timestamp, etag)
	}
}

// pages reads every page of q with readPage, checking page sizes against
// Top.
func (r *runner) pages(q ts.Query, readPage func(context.Context, ts.Query) (*ts.Page, error)) ([]*ts.Entity, error) {
	limit := q.Top
	if limit == 0 {
		limit = 1000
	}
	var all []*ts.Entity
	for pages := 0; ; pages++ {
		if pages > 10_000 {
			r.failf("query does not end after %d pages", pages)
		}
		p, err := readPage(r.ctx, q)
		if err != nil {
			if pages > 0 {
				r.failf("page %d failed: %v", pages, err)
			}
			return nil, err
		}
		if len(p.Entities) > limit {
			r.failf("page of %d entities for top %d", len(p.Entities), q.Top)
		}
		all = append(all, p.Entities...)
		if p.Continuation == "" {
			return all, nil
		}
		q.Continuation = p.Continuation
	}
}

// iterate reads a whole result through an iterator (Table.Query,
// Partition.Query).
func (r *runner) iterate(seq func(func(*ts.Entity, error) bool)) ([]*ts.Entity, error) {
	var all []*ts.Entity
	for e, err := range seq {
		if err != nil {
			return nil, err
		}
		all = append(all, e)
		if len(all) > 100_000 {
			r.failf("query iterator does not end")
		}
	}
	return all, nil
}

// ---- through a Partition, and segments ----

// partitionQuery reads a query through a Partition and compares it with
// the model's matches in that partition.
func (r *runner) partitionQuery(op *Op) {
	q := ts.Query{Filter: r.filter(op.filter), Top: op.top, Reverse: op.reverse}
	p := r.table(op).Partition(op.pk)
	want, wantErr := r.ref.m.QueryPartition(op.table, op.pk, q)
	var got []*ts.Entity
	var gotErr error
	if op.iterate {
		got, gotErr = r.iterate(p.Query(r.ctx, q))
	} else {
		got, gotErr = r.pages(q, p.QueryPage)
	}
	r.sameError(gotErr, wantErr, false)
	if wantErr != nil {
		return
	}
	r.sameEntities(op.table, got, want)
	r.outcomes["partition-query-rows"] += len(want)
}

// partitionDelete deletes a partition, or a RowKey range of one, on both
// sides, then compares every entity of the partition.
func (r *runner) partitionDelete(op *Op) {
	p := r.table(op).Partition(op.pk)
	var gotErr error
	if op.all {
		gotErr = p.DeleteAll(r.ctx)
	} else {
		gotErr = p.DeleteRange(r.ctx, op.from, op.to)
	}
	wantErr := r.ref.m.DeleteRange(op.table, op.pk, op.from, op.to)
	r.sameError(gotErr, wantErr, false)
	if wantErr != nil {
		return
	}
	r.forgetRange(op.table, op.pk, op.from, op.to)
	got, err := r.pages(ts.Query{}, p.QueryPage)
	if err != nil {
		r.failf("partition scan after delete: %v", err)
	}
	want, _ := r.ref.m.QueryPartition(op.table, op.pk, ts.Query{})
	r.sameEntities(op.table, got, want)
}

// segments splits a table into segments and reads each with op's query,
// comparing each with the model's matches in the segment; together the
// segments must return the model's whole result exactly once.
func (r *runner) segments(op *Op) {
	q := ts.Query{Filter: r.filter(op.filter), Top: op.top, Reverse: op.reverse}
	tb := r.table(op)
	segs, err := tb.Segments(r.ctx, op.n)
	if err != nil {
		r.failf("segments: %v", err)
	}
	if len(segs) != op.n {
		r.failf("%d segments, want %d", len(segs), op.n)
	}
	whole, wantErr := r.ref.m.Query(op.table, q)
	parts := make([][]*ts.Entity, len(segs))
	for i, s := range segs {
		sq := q
		sq.Segment = s
		want, _ := r.ref.m.QuerySegment(op.table, s, q)
		got, gotErr := r.pages(sq, tb.QueryPage)
		r.sameError(gotErr, wantErr, false)
		if wantErr != nil {
			return
		}
		r.sameEntities(op.table, got, want)
		parts[i] = got
	}
	if q.Reverse {
		// Segments are in ascending order, each read descending.
		slices.Reverse(parts)
	}
	all := slices.Concat(parts...)
	r.sameEntities(op.table, all, whole)
	r.outcomes["segment-rows"] += len(all)
}

// rootAPI reaches the root's transaction with options (distinct
// Timestamps, as the server's Cosmos flavor commits a batch).
var rootAPI = rootapi.Get[*ts.DB, *ts.Table, ts.Query, *ts.Page, ts.JSONOptions, ts.TransactionAction]()
