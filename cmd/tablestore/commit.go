package main

import (
	"context"
	"errors"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// committer writes records to a table in entity group transactions:
// consecutive records of one PartitionKey, up to 100 actions and 4 MiB
// per transaction, in input order. A record the store rejects (a limit,
// EntityAlreadyExists with insert) is handed to reject after every record
// before it is committed; nothing of it or after it is committed first.
type committer struct {
	// ctx is used for the commits; it should not be cancelled midway, so
	// that every commit's outcome is known.
	ctx    context.Context
	table  *tablestore.Table
	action tablestore.ActionType
	// committed is called after each commit with its records.
	committed func(recs []*record) error
	// reject is called for each rejected record in order, with the reason;
	// it returns nil to go on, or the error that stops the run.
	reject func(rec *record, err error) error

	group   []*record
	actions []tablestore.TransactionAction
}

// add queues rec, committing the queued group first when rec cannot join
// it. A bad record commits the queued group, then goes to reject.
func (c *committer) add(rec *record) error {
	if rec.err != nil {
		if err := c.flush(); err != nil {
			return err
		}
		return c.reject(rec, rec.err)
	}
	if len(c.group) > 0 && (len(c.group) == tablestore.MaxTransactionActions || c.group[0].partitionKey() != rec.partitionKey()) {
		if err := c.flush(); err != nil {
			return err
		}
	}
	c.group = append(c.group, rec)
	return nil
}

// flush commits the queued group.
func (c *committer) flush() error {
	g := c.group
	c.group = c.group[:0]
	return c.commit(g)
}

// commit commits g, splitting it where the store says it must: at a
// repeated RowKey, at the action that crosses 4 MiB, and around a record
// the store rejects.
func (c *committer) commit(g []*record) error {
	for len(g) > 0 {
		c.actions = c.actions[:0]
		for _, r := range g {
			c.actions = append(c.actions, r.action(c.action))
		}
		err := c.table.SubmitTransaction(c.ctx, c.actions)
		if err == nil {
			return c.committed(g)
		}
		var be *tablestore.BatchError
		if !errors.As(err, &be) || be.Index < 0 || be.Index >= len(g) {
			return err
		}
		i := be.Index
		switch be.Err.Code {
		case edm.CodeInvalidDuplicateRow, edm.CodeRequestBodyTooLarge:
			if i == 0 {
				// One entity alone cannot cross either limit; be safe.
				return err
			}
			// Commit the records before the split, then go on from it.
			if err := c.commit(g[:i]); err != nil {
				return err
			}
			g = g[i:]
		case edm.CodeTableNotFound, edm.CodeCommandsInBatchActOnDifferentPartitions:
			return err
		default:
			if !recordCode(be.Err.Code) {
				return err
			}
			if err := c.commit(g[:i]); err != nil {
				return err
			}
			if err := c.reject(g[i], be.Err); err != nil {
				return err
			}
			g = g[i+1:]
		}
	}
	return nil
}

// recordCode reports whether a transaction failing with code at an
// action is that action's record's fault, not the store's or the run's.
func recordCode(code tablestore.Code) bool {
	switch code {
	case edm.CodeEntityAlreadyExists, edm.CodePropertiesNeedValue,
		edm.CodeOutOfRangeInput, edm.CodeKeyValueTooLarge,
		edm.CodePropertyNameInvalid, edm.CodePropertyNameTooLong,
		edm.CodeInvalidValueType, edm.CodePropertyValueTooLarge,
		edm.CodeTooManyProperties, edm.CodeEntityTooLarge,
		edm.CodeInvalidInput, edm.CodeDuplicatePropertiesSpecified,
		edm.CodeUpdateConditionNotSatisfied, edm.CodeResourceNotFound:
		return true
	}
	return false
}

// sink takes an import's or a copy's records in input order: the
// committer (entity group transactions) or the bulkLoader.
type sink interface {
	// add takes the next record; its error stops the run.
	add(rec *record) error
	// flush writes every record taken.
	flush() error
}

// bulkLoader writes records through a tablestore.BulkWriter: any order
// of partitions, batches spanning partitions, one synced commit per
// batch. Records are settled (written or rejected) in input order, after
// the commit that made them durable: settle is called for each, then
// committed once per commit, so a resume point recorded there is exact.
//
// Without skip, a rejected record stops the run: every record before it
// is written, nothing at or after it (the *stopError names it). With
// skip, rejected records are settled with their error and the run goes
// on.
type bulkLoader struct {
	ctx  context.Context
	w    *tablestore.BulkWriter
	skip bool
	// settle is called for each settled record in input order, with nil
	// for a written one or the reason it was rejected.
	settle func(rec *record, err error) error
	// committed is called after the records of a commit are settled.
	committed func() error

	queue   []queued // records taken and not settled, in input order
	next    int64    // the writer's next Seq
	pending int      // queued records in the writer
	cbErr   error    // the first error of settle or committed in OnCommit
}

// queued is a record waiting to be settled: in the writer (seq >= 0), or
// rejected before it (seq -1, err set).
type queued struct {
	rec *record
	seq int64
	err error
}

// newBulkLoader returns a loader writing to t with action; opts.OnCommit
// is the loader's.
func newBulkLoader(ctx context.Context, t *tablestore.Table, opts tablestore.BulkOptions,
	settle func(*record, error) error, committed func() error) (*bulkLoader, error) {
	l := &bulkLoader{ctx: ctx, skip: opts.ContinueOnError, settle: settle, committed: committed}
	opts.OnCommit = l.onCommit
	w, err := t.NewBulkWriter(&opts)
	if err != nil {
		return nil, err
	}
	l.w = w
	return l, nil
}

func (l *bulkLoader) add(rec *record) error {
	if rec.err != nil {
		return l.reject(rec, rec.err)
	}
	seq := l.next
	l.next++
	var err error
	if rec.encoded != nil {
		err = l.w.Add(l.ctx, rec.encoded)
	} else {
		err = l.w.Add(l.ctx, rec.entity)
	}
	if l.cbErr != nil {
		return l.cbErr
	}
	var be *tablestore.BulkError
	switch {
	case err == nil:
		// Add copied the entity; a JSON record is named by its line, so
		// its RawEntity can take the next line.
		if rec.encoded != nil && rec.line > 0 {
			recycleRaw(rec.encoded)
			rec.encoded = nil
		}
		l.queue = append(l.queue, queued{rec: rec, seq: seq})
		l.pending++
		return nil
	case errors.As(err, &be) && be.Seq == seq:
		return l.reject(rec, be.Err) // rec itself is invalid
	}
	return l.fail(err)
}

func (l *bulkLoader) flush() error {
	err := l.w.Flush(l.ctx)
	if l.cbErr != nil {
		return l.cbErr
	}
	if err != nil {
		return l.fail(err)
	}
	return l.settleThrough(l.next, nil)
}

// reject handles a record rejected before the writer: with skip it is
// settled in its turn; else the records before it are written and the
// run stops at it.
func (l *bulkLoader) reject(rec *record, err error) error {
	if !l.skip {
		if ferr := l.flush(); ferr != nil {
			return ferr
		}
		return &stopError{rec: rec, err: err}
	}
	l.queue = append(l.queue, queued{rec: rec, seq: -1, err: err})
	if l.pending == 0 {
		return l.settleThrough(l.next, nil)
	}
	return nil
}

// fail turns the writer's error into the run's: a refused entity that
// stopped it names its record (which OnCommit left at the queue's
// front); any other error is returned as it is.
func (l *bulkLoader) fail(err error) error {
	var be *tablestore.BulkError
	if errors.As(err, &be) {
		for _, q := range l.queue {
			if q.seq == be.Seq {
				return &stopError{rec: q.rec, err: be.Err}
			}
		}
	}
	return err
}

// onCommit settles the records a commit settled.
func (l *bulkLoader) onCommit(c tablestore.BulkCommit) {
	if l.cbErr != nil {
		return
	}
	var refused map[int64]error
	for _, be := range c.Refused {
		if refused == nil {
			refused = map[int64]error{}
		}
		refused[be.Seq] = be.Err
	}
	l.cbErr = l.settleThrough(c.Through, refused)
}

// settleThrough settles the queued records before the first one in the
// writer at or after Seq through, then reports the commit.
func (l *bulkLoader) settleThrough(through int64, refused map[int64]error) error {
	n := 0
	for ; n < len(l.queue); n++ {
		q := &l.queue[n]
		if q.seq >= through {
			break
		}
		err := q.err
		if q.seq >= 0 {
			l.pending--
			err = refused[q.seq]
		}
		if serr := l.settle(q.rec, err); serr != nil {
			return serr
		}
	}
	if n == 0 {
		return nil
	}
	rest := copy(l.queue, l.queue[n:])
	clear(l.queue[rest:])
	l.queue = l.queue[:rest]
	return l.committed()
}
