package tablestore

import (
	"context"
	"errors"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// MaxChangesPage is the most changes one ReadChanges call returns.
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

// ReadChanges reads at most limit changes (1 to MaxChangesPage) of the
// table's feed after q.From, in commit order: the page-at-a-time form
// of Changes, for readers that hand cursors to other processes (the
// REST server's feed endpoints). With q.Follow, a read that finds no
// change waits for commits (woken by them, not by polling) and reads
// again, until it finds one, the table is deleted, or ctx ends: then it
// returns the empty page, whose Cursor is still a position, with ctx's
// error.
//
// Errors: InvalidInput for a limit out of range, and Changes' errors:
// TableNotFound, ResourceNotFound when the feed is off, ErrCursorExpired
// (code OutOfRangeInput) for a cursor older than the retention,
// ErrCursorStale (code InvalidInput), NotImplemented, ErrClosed, ctx's
// error.
func (t *Table) ReadChanges(ctx context.Context, q ChangesQuery, limit int) (*ChangesPage, error) {
	if limit < 1 || limit > MaxChangesPage {
		return nil, newError(edm.CodeInvalidInput, "change page limit %d is out of range 1..%d", limit, MaxChangesPage)
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
