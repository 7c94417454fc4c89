package tablestore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// The change feed.
//
// A table's change feed, off by default, records every committed change
// of the table: inserts, updates, merges, upserts and deletes, each
// action of a transaction or a bulk commit, range deletions (one record
// for the range), the removal of each entity that expired (see
// ChangeExpire), and, when the table is deleted, a final record. Each
// record is written in the same atomic batch as the change itself, so
// the feed holds a change exactly when the store does, also across
// crashes.
//
// Ordering: records carry a sequence number that strictly increases
// across the whole store in commit order, and Changes yields them in that
// order. Per entity, the feed's order is the order of its ETags (and
// Timestamps); the records of one transaction are consecutive.
//
// Costs: each change writes one more key in its batch (the keys, the
// Timestamp and, with ImagesNew, a copy of the new entity), and commits
// to tables with a feed are ordered by one store-wide lock held while
// Pebble applies the batch (not while it syncs). See docs/changes.md.

// The image modes.
const (
	// ImagesKeysOnly records the keys, ETag and Timestamp only.
	ImagesKeysOnly = driver.ImagesKeysOnly
	// ImagesNew also records the entity a write leaves (after a merge,
	// the merged entity), so the feed can rebuild the table.
	ImagesNew = driver.ImagesNew
)

// DefaultChangeRetention is the retention of a feed enabled with
// Retention 0.
const DefaultChangeRetention = 24 * time.Hour

// ChangeFeedOptions are the settings of a table's change feed.
type ChangeFeedOptions struct {
	// Retention is how long records are kept; older ones are deleted in
	// the background, and cursors before them fail with
	// ErrCursorExpired. Default DefaultChangeRetention (24 h).
	Retention time.Duration
	// Images says what records hold. Default ImagesKeysOnly.
	Images ImageMode
}

// ChangeFeedStatus describes a table's change feed.
type ChangeFeedStatus struct {
	Enabled bool
	// Options are the feed's settings (zero when the feed is off).
	Options ChangeFeedOptions
	// Oldest is the cursor before the oldest record kept, Latest the
	// cursor after the newest committed one (zero when the feed is off).
	Oldest, Latest Cursor
}

// EnableChangeFeed turns the table's change feed on, or changes its
// settings when it is on already (the records kept stay). Every commit
// to the table that starts after it returns is recorded, and none that
// ended before it started. The setting is durable.
//
// Errors: InvalidInput for a negative Retention or an unknown Images,
// TableNotFound, NotImplemented when the store's driver has no change
// feed (a remote store), ErrClosed, ctx's error.
func (t *Table) EnableChangeFeed(ctx context.Context, opts ChangeFeedOptions) error {
	if err := t.db.checkContext(ctx); err != nil {
		return err
	}
	if opts.Retention < 0 {
		return newError(edm.CodeInvalidInput, "change feed retention %v is negative", opts.Retention)
	}
	if opts.Retention == 0 {
		opts.Retention = DefaultChangeRetention
	}
	if opts.Images != ImagesKeysOnly && opts.Images != ImagesNew {
		return newError(edm.CodeInvalidInput, "unknown change feed image mode %d", opts.Images)
	}
	cf, err := t.feeder()
	if err != nil {
		return err
	}
	return mapError(cf.EnableChangeFeed(ctx, driver.ChangeFeedSettings{Retention: opts.Retention, Images: opts.Images}), false)
}

// DisableChangeFeed turns the table's change feed off and deletes its
// records: cursors in it fail from then on. Turning off a feed that is
// off is not an error.
//
// Errors: TableNotFound, NotImplemented, ErrClosed, ctx's error.
func (t *Table) DisableChangeFeed(ctx context.Context) error {
	if err := t.db.checkContext(ctx); err != nil {
		return err
	}
	cf, err := t.feeder()
	if err != nil {
		return err
	}
	return mapError(cf.DisableChangeFeed(ctx), false)
}

// ChangeFeed describes the table's change feed.
//
// Errors: TableNotFound, NotImplemented, ErrClosed, ctx's error.
func (t *Table) ChangeFeed(ctx context.Context) (*ChangeFeedStatus, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return nil, err
	}
	cf, err := t.feeder()
	if err != nil {
		return nil, err
	}
	st, err := cf.ChangeFeed(ctx)
	if err != nil {
		return nil, mapError(err, false)
	}
	out := &ChangeFeedStatus{Enabled: st.Enabled}
	if st.Enabled {
		out.Options = ChangeFeedOptions{Retention: st.Settings.Retention, Images: st.Settings.Images}
		out.Oldest = Cursor{kind: cursorAt, table: st.Table, seq: st.Oldest}
		out.Latest = Cursor{kind: cursorAt, table: st.Table, seq: st.End}
	}
	return out, nil
}

func (t *Table) feeder() (driver.ChangeFeeder, error) {
	cf, ok := t.drv.(driver.ChangeFeeder)
	if !ok {
		return nil, newError(edm.CodeNotImplemented, "this store's driver has no change feed")
	}
	return cf, nil
}

// Cursor is a position in a table's change feed: the changes after it
// are read next. The zero Cursor is the feed's beginning (the oldest
// change kept). A cursor from a Change or ParseCursor names the table it
// belongs to: it fails with ErrCursorStale on a table deleted or
// re-created since, and with ErrCursorExpired once retention has deleted
// the changes after it. Cursors stay valid across restarts of the store.
type Cursor struct {
	kind  cursorKind
	table uint64
	seq   uint64
	time  time.Time
}

type cursorKind uint8

const (
	cursorBeginning cursorKind = iota
	cursorNow
	cursorTime
	cursorAt
)

// CursorBeginning is the beginning of a feed: the oldest change kept.
func CursorBeginning() Cursor { return Cursor{} }

// CursorNow is the end of a feed when the read starts: only changes
// committed after that are read.
func CursorNow() Cursor { return Cursor{kind: cursorNow} }

// CursorAt is the first change whose Timestamp is at or after t. It
// fails with ErrCursorExpired when t is older than the feed's retention.
func CursorAt(t time.Time) Cursor { return Cursor{kind: cursorTime, time: t} }

// ParseCursor parses a cursor's String. Errors: InvalidInput.
func ParseCursor(s string) (Cursor, error) {
	switch s {
	case "", "beginning":
		return CursorBeginning(), nil
	case "now":
		return CursorNow(), nil
	}
	tab, seq, ok := strings.Cut(s, ".")
	if ok {
		id, err1 := strconv.ParseUint(tab, 10, 64)
		n, err2 := strconv.ParseUint(seq, 10, 64)
		if err1 == nil && err2 == nil && id > 0 && tab[0] != '+' && seq[0] != '+' {
			return Cursor{kind: cursorAt, table: id, seq: n}, nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return CursorAt(t), nil
	}
	return Cursor{}, newError(edm.CodeInvalidInput, "%q is not a change cursor (a cursor a change gave, \"beginning\", \"now\" or an RFC 3339 time)", s)
}

// String returns the cursor's text, for ParseCursor: "TABLE.SEQ" for a
// position, "beginning", "now" or an RFC 3339 time otherwise. It is
// opaque: compare cursors only by the changes they yield.
func (c Cursor) String() string {
	switch c.kind {
	case cursorNow:
		return "now"
	case cursorTime:
		return c.time.UTC().Format(time.RFC3339Nano)
	case cursorAt:
		return fmt.Sprintf("%d.%d", c.table, c.seq)
	}
	return "beginning"
}

// Seq is the store-wide sequence number the cursor is after: a
// Change's Cursor has that Change's Seq. The difference of two cursors'
// Seq bounds the changes between them (commits to other tables count
// too). It is 0 for CursorBeginning, CursorNow and CursorAt.
func (c Cursor) Seq() uint64 {
	if c.kind != cursorAt {
		return 0
	}
	return c.seq
}

// The change operations.
const (
	ChangeInsert        = ChangeOp(ActionInsert)
	ChangeUpdateMerge   = ChangeOp(ActionUpdateMerge)
	ChangeUpdateReplace = ChangeOp(ActionUpdateReplace)
	ChangeUpsertMerge   = ChangeOp(ActionUpsertMerge)
	ChangeUpsertReplace = ChangeOp(ActionUpsertReplace)
	ChangeDelete        = ChangeOp(ActionDelete)
	// ChangeDeleteRange deleted the RowKeys [RowKey, ToRowKey) of a
	// partition ("" leaves a side unbounded: both "" is the whole
	// partition).
	ChangeDeleteRange = driver.ChangeDeleteRange
	// ChangeDropTable is a feed's final change: the table was deleted.
	ChangeDropTable = driver.ChangeDropTable
	// ChangeExpire removed an entity that had expired (see SetTTL),
	// apart from deletes. An entity is gone for reads from its expiry
	// instant (Change.Expiry) on, but its ChangeExpire is written by the
	// commit that removes it physically, so that is its place in the
	// feed: the background sweeper's commit (CommitSweep), or, when a
	// write replaces the expired entity first (an Insert over it, an
	// upsert), that write's commit, where it comes just before the
	// write's own change. Either way every change of the entity before
	// it is older, every one after it newer, and a consumer applying it
	// as a delete (of a present entity: the feed holds no ChangeExpire
	// for an entity already removed) ends with the table's entities; an
	// entity past its expiry whose ChangeExpire has not come yet is the
	// same as one reads hide. Timestamp is the removing commit's, ETag
	// the removed entity's (its last write's), Entity nil.
	ChangeExpire = driver.ChangeExpire
)

// The commit kinds, the values of Change.Kind (a driver.CommitKind,
// whose String names them).
const (
	// CommitSingle is a single-entity write or an entity group
	// transaction (Count > 1, or 1 for a transaction of one action).
	CommitSingle = driver.CommitSingle
	// CommitBulk is one batch of a BulkWriter.
	CommitBulk        = driver.CommitBulk
	CommitRangeDelete = driver.CommitRangeDelete
	CommitDropTable   = driver.CommitDropTable
	// CommitSweep is one batch of the background sweeper (or of SetTTL's
	// removal of what expired under the old settings): ChangeExpire
	// changes of one partition.
	CommitSweep = driver.CommitSweep
)

// Change is one committed change.
type Change struct {
	// Cursor is the position right after this change.
	Cursor Cursor
	// Seq is the change's place in the store-wide commit order.
	Seq uint64
	Op  ChangeOp
	// PartitionKey and RowKey name the entity written (or removed); for
	// ChangeDeleteRange, the partition and the range [RowKey, ToRowKey).
	PartitionKey, RowKey, ToRowKey string
	// Timestamp is the commit's. ETag is the written entity's new ETag
	// (derived from Timestamp); "" for deletions and the drop; for
	// ChangeExpire, the removed entity's ETag.
	Timestamp time.Time
	ETag      ETag
	// Expiry, for ChangeExpire only, is the instant the entity expired
	// at (at or before Timestamp): reads hid it from then on.
	Expiry time.Time
	// Entity is the entity the write left (Timestamp and ETag set), with
	// ImagesNew for every op but deletions and expiries; else nil.
	Entity *Entity
	// Commit identifies the commit that made the change (its first
	// change's Seq), Index is the change's place in it and Count the
	// commit's number of changes: the actions of one transaction share
	// Commit.
	Commit       uint64
	Index, Count int
	Kind         driver.CommitKind // CommitSingle, CommitBulk, ...
}

// ChangesQuery says what Changes reads.
type ChangesQuery struct {
	// From is where to start; the zero Cursor is the beginning.
	From Cursor
	// PartitionKey, when not "", reads only the changes of that
	// partition (and the final drop). "" reads every partition's, so
	// the changes of the empty partition key are read among them (each
	// Change names its keys).
	PartitionKey string
	// Follow keeps reading after the end: the iteration then waits for
	// new commits (woken by them, not by polling) until ctx ends, the
	// table is deleted, or the store closes.
	Follow bool
	// Top is the most changes one ReadChanges page holds, 1 to
	// MaxChangesPage, as Query.Top sizes a QueryPage; zero means
	// MaxChangesPage, anything else is InvalidInput. Changes reads in
	// pages of its own size and ignores it.
	Top int
}

// changesPage is how many changes one read gathers.
const changesPage = 256

// Changes yields the table's changes after q.From in commit order, each
// with the cursor right after it: resuming from a change's Cursor yields
// the changes after it, none twice and none missed. Without Follow the
// iteration ends at the feed's end as of its last read; with Follow it
// ends only when ctx ends (without an error), when the table is deleted
// (after the ChangeDropTable change), or on an error. Changes are read in
// pages under no lock: writers are never held up by readers. A change is
// yielded only once durable (with synced commits).
// A start from the beginning, now or a time is resolved again when
// retention prunes it before the first read.
//
// Errors (yielded once, ending the iteration): TableNotFound,
// ResourceNotFound when the table's feed is off, ErrCursorExpired (code
// OutOfRangeInput) for a cursor older than the retention, ErrCursorStale
// (code InvalidInput) for a cursor of another table (deleted or
// re-created) or ahead of the feed, NotImplemented, ErrClosed, ctx's
// error (while reading).
func (t *Table) Changes(ctx context.Context, q ChangesQuery) iter.Seq2[Change, error] {
	return func(yield func(Change, error) bool) {
		fail := func(err error) { yield(Change{}, mapChangesError(err)) }
		if err := t.db.checkContext(ctx); err != nil {
			fail(err)
			return
		}
		cf, err := t.feeder()
		if err != nil {
			fail(err)
			return
		}
		req, err := changesStart(ctx, t.name, cf, q)
		if err != nil {
			fail(err)
			return
		}
		var page []Change
		var convErr error
		emit := func(r driver.ChangeRecord) error {
			c, err := changeOf(req.Table, r)
			if err != nil {
				convErr = err
				return err
			}
			page = append(page, c)
			return nil
		}
		// A start resolved from the feed's state (the beginning, now, a
		// time) may be pruned before its first read; it is then resolved
		// again, a bounded number of times.
		restarts := 0
		for first := true; ; {
			page = page[:0]
			res, err := cf.ReadChanges(ctx, req, emit)
			if convErr != nil {
				err = convErr
			}
			if first && q.From.kind != cursorAt && restarts < maxChangesRestarts && errors.Is(err, driver.ErrCursorExpired) {
				restarts++
				if req, err = changesStart(ctx, t.name, cf, q); err != nil {
					fail(err)
					return
				}
				continue
			}
			first = false
			for _, c := range page {
				if !yield(c, nil) {
					return
				}
			}
			if err != nil {
				fail(err)
				return
			}
			req.Table, req.After = res.Table, res.Last
			if len(page) > 0 {
				req.FromTime = 0
			}
			if res.Dropped {
				return
			}
			if res.More {
				continue
			}
			if !q.Follow {
				return
			}
			if err := cf.WaitChanges(ctx, res.End); err != nil {
				if ctx.Err() != nil {
					return
				}
				fail(err)
				return
			}
		}
	}
}

// maxChangesRestarts bounds how often Changes resolves its start again.
const maxChangesRestarts = 8

// changesStart resolves q's start into the first read's request: a
// cursor's own position, or the feed's oldest change, its end, or the
// oldest change at or after a time.
func changesStart(ctx context.Context, name string, cf driver.ChangeFeeder, q ChangesQuery) (driver.ChangesRequest, error) {
	req := driver.ChangesRequest{PartitionKey: q.PartitionKey, Limit: changesPage}
	if q.From.kind == cursorAt {
		req.Table, req.After = q.From.table, q.From.seq
		return req, nil
	}
	st, err := cf.ChangeFeed(ctx)
	if err != nil {
		return req, err
	}
	if !st.Enabled {
		return req, newError(edm.CodeResourceNotFound, "table %q has no change feed", name)
	}
	req.Table, req.After = st.Table, st.Oldest
	switch q.From.kind {
	case cursorNow:
		req.After = st.End
	case cursorTime:
		if q.From.time.Before(time.Now().Add(-st.Settings.Retention)) {
			return req, fmt.Errorf("%w: %v is older than the retention (%v)", driver.ErrCursorExpired, q.From.time, st.Settings.Retention)
		}
		req.FromTime = edm.TicksFromTime(q.From.time)
	}
	return req, nil
}

// changeOf converts a driver's record.
func changeOf(table uint64, r driver.ChangeRecord) (Change, error) {
	ts := edm.TimeFromTicks(r.Timestamp)
	c := Change{
		Cursor:       Cursor{kind: cursorAt, table: table, seq: r.Seq},
		Seq:          r.Seq,
		Op:           r.Op,
		PartitionKey: r.PartitionKey,
		RowKey:       r.RowKey,
		ToRowKey:     r.ToRowKey,
		Timestamp:    ts,
		Commit:       r.Seq - uint64(r.Index),
		Index:        r.Index,
		Count:        r.Count,
		Kind:         r.Kind,
	}
	switch r.Op {
	case ChangeDelete, ChangeDeleteRange, ChangeDropTable:
	case ChangeExpire:
		c.ETag = etagFor(edm.TimeFromTicks(r.Removed))
		c.Expiry = edm.TimeFromTicks(r.Expiry)
	default:
		c.ETag = etagFor(ts)
	}
	if r.Record != nil {
		e, err := decodeEntity(r.PartitionKey, r.RowKey, driver.Record(r.Record), nil)
		if err != nil {
			return Change{}, err
		}
		c.Entity = e
	}
	return c, nil
}

// mapChangesError is mapError with the cursor errors given their codes.
func mapChangesError(err error) error {
	var code Code
	switch {
	case errors.Is(err, driver.ErrCursorExpired):
		code = edm.CodeOutOfRangeInput
	case errors.Is(err, driver.ErrCursorStale):
		code = edm.CodeInvalidInput
	default:
		return mapError(err, false)
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Code: code, Message: strings.TrimPrefix(err.Error(), "tablestore: "), err: err}
}

// MaxChangesPage is the most changes one ReadChanges call returns (ChangesQuery.Top).
const MaxChangesPage = 1000

// ChangesPage is one read of a change feed (Table.ReadChanges).
type ChangesPage struct {
	// Changes are the changes read, in commit order.
	Changes []Change
	// Cursor is the position the read reached: the next read starts
	// there. It is a position even when no change was read (the feed's
	// end as the read saw it, commits of other tables included), so a
	// reader resuming from it misses nothing and reads nothing twice.
	Cursor Cursor
	// More says the read stopped at its limit before the feed's end.
	More bool
	// Dropped says the table was deleted: Changes ends with the feed's
	// final ChangeDropTable change and nothing follows.
	Dropped bool
}

// ReadChanges reads at most q.Top changes (zero: MaxChangesPage) of the
// table's feed after q.From, in commit order: the page-at-a-time form
// of Changes, for readers that hand cursors to other processes (the
// REST server's feed endpoints). With q.Follow, a read that finds no
// change waits for commits (woken by them, not by polling) and reads
// again, until it finds one, the table is deleted, or ctx ends: then it
// returns the empty page, whose Cursor is still a position, with ctx's
// error.
//
// Errors: InvalidInput for a Top out of range, and Changes' errors:
// TableNotFound, ResourceNotFound when the feed is off, ErrCursorExpired
// (code OutOfRangeInput) for a cursor older than the retention,
// ErrCursorStale (code InvalidInput), NotImplemented, ErrClosed, ctx's
// error.
func (t *Table) ReadChanges(ctx context.Context, q ChangesQuery) (*ChangesPage, error) {
	limit, err := entityenc.PageSize(q.Top) // Query.Top's bounds: 1..MaxChangesPage, 0 the most
	if err != nil {
		return nil, coded(err)
	}
	if err := t.db.checkContext(ctx); err != nil {
		return nil, mapChangesError(err)
	}
	cf, err := t.feeder()
	if err != nil {
		return nil, err
	}
	req, err := changesStart(ctx, t.name, cf, q)
	if err != nil {
		return nil, mapChangesError(err)
	}
	req.Limit = limit
	page := &ChangesPage{}
	var convErr error
	emit := func(r driver.ChangeRecord) error {
		c, err := changeOf(req.Table, r)
		if err != nil {
			convErr = err
			return err
		}
		page.Changes = append(page.Changes, c)
		return nil
	}
	restarts := 0
	for {
		page.Changes = page.Changes[:0]
		res, err := cf.ReadChanges(ctx, req, emit)
		if convErr != nil {
			err = convErr
		}
		if q.From.kind != cursorAt && restarts < maxChangesRestarts && errors.Is(err, driver.ErrCursorExpired) {
			// A start resolved from the feed's state was pruned before
			// this read: resolve it again.
			restarts++
			if req, err = changesStart(ctx, t.name, cf, q); err != nil {
				return nil, mapChangesError(err)
			}
			req.Limit = limit
			continue
		}
		if err != nil {
			return nil, mapChangesError(err)
		}
		page.Cursor = Cursor{kind: cursorAt, table: res.Table, seq: res.Last}
		page.More, page.Dropped = res.More, res.Dropped
		if len(page.Changes) > 0 || res.More || res.Dropped || !q.Follow {
			return page, nil
		}
		// Nothing yet: the next read goes on from the position reached,
		// as a cursor (retention may not restart it silently).
		req.Table, req.After = res.Table, res.Last
		q.From = page.Cursor
		if err := cf.WaitChanges(ctx, res.End); err != nil {
			if ctx.Err() != nil {
				return page, ctx.Err()
			}
			return nil, mapChangesError(err)
		}
	}
}
