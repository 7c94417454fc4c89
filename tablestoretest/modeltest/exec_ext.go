package modeltest

import (
	"slices"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/tablestoretest/modeltest/internal/model"
)

// This file runs the extensions' operations: indexes, time-to-live and
// the change feed.

// indexOp creates or drops an index on both sides, then compares the
// table's index listings.
func (r *runner) indexOp(op *Op) {
	tb := r.table(op)
	var gotErr, wantErr error
	if op.kind == kindCreateIndex {
		gotErr = tb.CreateIndex(r.ctx, op.indexSpec())
		wantErr = r.ref.m.CreateIndex(op.table, op.indexSpec())
	} else {
		gotErr = tb.DropIndex(r.ctx, op.index)
		wantErr = r.ref.m.DropIndex(op.table, op.index)
	}
	r.sameError(gotErr, wantErr, false)
	got, gotErr := tb.Indexes(r.ctx)
	want, wantErr := r.ref.m.Indexes(op.table)
	r.sameError(gotErr, wantErr, false)
	if len(got) != len(want) {
		r.failf("indexes: store %v, model %v", got, want)
	}
	for i, w := range want {
		g := got[i]
		if g.Name != w.Name || !slices.Equal(g.Properties, w.Properties) || g.Partitioned != w.Partitioned || g.Unique || g.State != ts.IndexReady {
			r.failf("index %d: store %+v, model %+v (ready)", i, g, w)
		}
	}
}

// setTTL sets a table's time-to-live on both sides, compares the
// settings read back, then every entity of the table.
func (r *runner) setTTL(op *Op) {
	s := ts.TTL{Default: op.dur, Property: op.prop}
	gotErr := r.table(op).SetTTL(r.ctx, s)
	wantErr := r.ref.m.SetTTL(op.table, s)
	r.sameError(gotErr, wantErr, false)
	got, gotErr := r.table(op).TTL(r.ctx)
	want, wantErr := r.ref.m.TTL(op.table)
	r.sameError(gotErr, wantErr, false)
	if got != want {
		r.failf("TTL: store %+v, model %+v", got, want)
	}
	if wantErr == nil {
		r.compareTable(op.table)
	}
}

// advanceClock moves the store's clock and the model's forward, then
// compares every table with a time-to-live: what expired must be gone,
// what did not must be there.
func (r *runner) advanceClock(op *Op) {
	r.advance(op.dur)
	r.ref.m.Advance(op.dur)
	for _, name := range r.ref.m.TableNames() {
		if ttl, err := r.ref.m.TTL(name); err == nil && ttl != (ts.TTL{}) {
			r.compareTable(name)
		}
	}
}

// compareTable reads a whole table on both sides and compares.
func (r *runner) compareTable(table string) {
	got, gotErr := r.pages(ts.Query{}, r.db.Table(table).QueryPage)
	want, wantErr := r.ref.m.Query(table, ts.Query{})
	r.sameError(gotErr, wantErr, false)
	r.sameEntities(table, got, want)
	r.outcomes["ttl-compared-rows"] += len(want)
}

// feedSwitch turns a table's change feed on or off on both sides, and
// compares the feed's status read back.
func (r *runner) feedSwitch(op *Op) {
	tb := r.table(op)
	var gotErr, wantErr error
	if op.kind == kindEnableFeed {
		gotErr = tb.EnableChangeFeed(r.ctx, ts.ChangeFeedOptions{Retention: feedRetention, Images: op.images})
		wantErr = r.ref.m.EnableChangeFeed(op.table, op.images)
	} else {
		gotErr = tb.DisableChangeFeed(r.ctx)
		wantErr = r.ref.m.DisableChangeFeed(op.table)
	}
	r.sameError(gotErr, wantErr, false)
	if wantErr != nil {
		return
	}
	st, err := tb.ChangeFeed(r.ctx)
	if err != nil {
		r.failf("ChangeFeed: %v", err)
	}
	on := r.ref.m.FeedOn(op.table)
	if st.Enabled != on || (on && (st.Options.Images != op.images || st.Options.Retention != feedRetention)) {
		r.failf("feed status %+v, model: on %v, images %v", st, on, op.images)
	}
}

// readChanges reads the table's feed (of one partition, if op names it)
// from the beginning and compares it with the changes the model
// recorded, then resumes from the cursor of one of the changes read and
// compares the rest.
func (r *runner) readChanges(op *Op) {
	tb := r.table(op)
	want, wantErr := r.ref.m.Changes(op.table, op.pk)
	got, gotErr := r.changes(tb, op, ts.CursorBeginning())
	r.sameError(gotErr, wantErr, false)
	if wantErr != nil {
		return
	}
	r.sameChanges(op.table, got, want, nil)
	r.outcomes["feed-changes"] += len(want)
	if len(got) == 0 {
		return
	}
	i := op.n % len(got)
	rest, err := r.changes(tb, op, got[i].Cursor)
	if err != nil {
		r.failf("changes from the cursor of change %d: %v", i, err)
	}
	r.note = "resumed after change " + got[i].Cursor.String()
	r.sameChanges(op.table, rest, want[i+1:], &got[i])
}

// changes reads every change after from, through the iterator or by
// pages of op.top.
func (r *runner) changes(tb *ts.Table, op *Op, from ts.Cursor) ([]ts.Change, error) {
	q := ts.ChangesQuery{From: from, PartitionKey: op.pk, Top: op.top}
	var all []ts.Change
	if op.iterate {
		for c, err := range tb.Changes(r.ctx, q) {
			if err != nil {
				return nil, err
			}
			all = append(all, c)
			if len(all) > 1_000_000 {
				r.failf("change feed does not end")
			}
		}
		return all, nil
	}
	for pages := 0; ; pages++ {
		if pages > 100_000 {
			r.failf("change feed does not end")
		}
		p, err := tb.ReadChanges(r.ctx, q)
		if err != nil {
			if pages > 0 {
				r.failf("change page %d failed: %v", pages, err)
			}
			return nil, err
		}
		if len(p.Changes) > op.top {
			r.failf("change page of %d for a limit of %d", len(p.Changes), op.top)
		}
		all = append(all, p.Changes...)
		if !p.More {
			return all, nil
		}
		q.From = p.Cursor
	}
}

// sameChanges compares changes read from the store with the model's, in
// order: operation, keys, the version written (by the pairs of store and
// model versions seen), the image, and the grouping into commits. prev
// is the change read just before got[0], if any.
func (r *runner) sameChanges(table string, got []ts.Change, want []model.Change, prev *ts.Change) {
	for i := range max(len(got), len(want)) {
		switch {
		case i >= len(got):
			r.failf("change feed: store %d changes, model %d; first missing: %s", len(got), len(want), describeModelChange(want[i]))
		case i >= len(want):
			r.failf("change feed: store %d changes, model %d; first extra: %s", len(got), len(want), describeChange(got[i]))
		}
		g, w := got[i], want[i]
		fail := func(what string) {
			r.failf("change %d: %s\nstore: %s\nmodel: %s", i, what, describeChange(got[i]), describeModelChange(want[i]))
		}
		if g.Op != w.Op || g.PartitionKey != w.PK || g.RowKey != w.RK || g.ToRowKey != w.ToRK {
			fail("differs")
		}
		if i > 0 {
			prev = &got[i-1]
		}
		if prev != nil && g.Seq <= prev.Seq {
			fail("sequence does not increase")
		}
		if g.Index != w.Index || g.Count != w.Count {
			fail("place in its commit differs")
		}
		switch {
		case w.Index == 0 && g.Commit != g.Seq:
			fail("first change of a commit: Commit is not its Seq")
		case w.Index > 0 && (prev == nil || g.Commit != prev.Commit):
			fail("not in its transaction's commit")
		}
		kind := ts.CommitSingle
		if w.Op == ts.ChangeDeleteRange {
			kind = ts.CommitRangeDelete
		}
		if g.Kind != kind {
			fail("commit kind differs")
		}
		if w.ETag == "" {
			if g.ETag != "" || g.Entity != nil {
				fail("a deletion with an ETag or an image")
			}
			continue
		}
		if g.ETag != etagOf(g.Timestamp) {
			fail("ETag does not derive from the Timestamp")
		}
		r.pair(idOf(table, g.PartitionKey, g.RowKey), g.ETag, w.ETag)
		switch {
		case w.Entity == nil && g.Entity != nil:
			fail("an image the feed does not record")
		case w.Entity != nil:
			if g.Entity == nil || g.Entity.ETag != g.ETag || !g.Entity.Timestamp.Equal(g.Timestamp) {
				fail("image missing, or not of the version written")
			}
			if _, same := compareProperties(g.Entity, w.Entity); !same || g.Entity.PartitionKey != w.PK || g.Entity.RowKey != w.RK {
				fail("image differs")
			}
		}
	}
}

// describeChange is a change as a failure message shows it.
func describeChange(c ts.Change) string {
	d := "\n  " + c.Op.String() + " " + c.PartitionKey + "/" + c.RowKey + "→" + c.ToRowKey + " " + string(c.ETag)
	if c.Entity != nil {
		d += " " + Describe(c.Entity)
	}
	return d
}

// describeModelChange is the model's change c as describeChange shows
// the store's.
func describeModelChange(c model.Change) string {
	return describeChange(ts.Change{Op: c.Op, PartitionKey: c.PK, RowKey: c.RK, ToRowKey: c.ToRK, ETag: c.ETag, Entity: c.Entity})
}
