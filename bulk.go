package tablestore

import (
	"context"
	"fmt"
	"slices"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/structmap"
)

// BulkOptions configure a BulkWriter. A nil *BulkOptions, and every zero
// field, means the default given in the field's comment.
type BulkOptions struct {
	// Action is the write each entity gets: ActionInsert (an entity that
	// exists is refused with EntityAlreadyExists), ActionUpsertReplace
	// or ActionUpsertMerge. Other types are InvalidInput.
	// Default: ActionInsert.
	Action ActionType

	// ContinueOnError makes an entity the store refuses (one that exists,
	// for ActionInsert; a merge whose result exceeds Azure's limits) a
	// report in its commit's BulkCommit.Refused, and the writer goes on
	// with the others. Without it the writer stops at the first refused
	// entity: every entity added before it is written, it and every
	// entity added after it are not, and Add and Flush return its
	// *BulkError from then on. Default: false.
	ContinueOnError bool

	// BatchEntities is the most entities one commit writes. At most
	// 100,000. Default: 1,000.
	BatchEntities int

	// BatchBytes bounds the encoded entities (keys and properties) one
	// commit writes; an entity that would cross it starts the next
	// commit. Keep it well under half of Options.MemTableSize: Pebble
	// takes a larger batch as a memtable of its own. At most 64 MiB.
	// Default: 1 MiB.
	BatchBytes int

	// OnCommit, if set, is called once per commit, in commit order, on
	// the goroutine that calls Add and Flush: during the first Add after
	// the commit ended, or during the Add or Flush that waits for it. See
	// BulkCommit. Default: nil.
	OnCommit func(BulkCommit)
}

// Bounds and defaults of BulkOptions.
const (
	defaultBulkEntities = 1000
	defaultBulkBytes    = 1 << 20
	maxBulkEntities     = 100_000
	maxBulkBytes        = 64 << 20
)

// BulkCommit describes one commit of a BulkWriter, for progress and for
// resuming a load: every entity whose Seq is below Through is settled
// (written, refused, or rejected by Add), and none at or above it is
// written. With synced commits (the default; see Options.NoSync) the
// written ones are durable when OnCommit is called.
type BulkCommit struct {
	// Through is one past the Seq of the last entity the commit settled.
	Through int64
	// Written is the number of entities the commit wrote.
	Written int
	// Refused lists the entities the commit refused, in Seq order (only
	// with ContinueOnError).
	Refused []*BulkError
}

// BulkStats counts what a BulkWriter has done.
type BulkStats struct {
	Added   int64 // calls to Add, that is the next Seq
	Written int64 // entities written
	Refused int64 // entities the store refused (see ContinueOnError)
	Invalid int64 // entities Add rejected before queueing them
	Commits int64 // commits made
}

// BulkError is the error of one entity of a BulkWriter: its position
// among the writer's Add calls (Seq, from 0), its keys, and the *Error
// that says why. It unwraps to the *Error, so errors.Is(err,
// ErrEntityAlreadyExists) and the like work.
type BulkError struct {
	Seq          int64
	PartitionKey string
	RowKey       string
	Err          *Error
}

func (e *BulkError) Error() string {
	return fmt.Sprintf("tablestore: bulk entity %d (%q, %q): %s: %s", e.Seq, e.PartitionKey, e.RowKey, e.Err.Code, e.Err.Message)
}

// Unwrap returns the entity's *Error.
func (e *BulkError) Unwrap() error { return e.Err }

// BulkWriter writes many entities to one table, in any order of
// partitions, committing them in batches that span partitions: one
// synced commit per batch rather than per entity or per partition, so an
// unsorted load runs about as fast as a sorted one.
//
// Atomicity. Each entity's write is atomic, and is checked against the
// stored entity as the single write of the same action would be
// (Insert, or Upsert with Replace or Merge); its Timestamp is greater
// than the stored one's. Nothing is atomic across entities, unlike an
// entity group transaction: a commit's entities may become visible
// together, but a refused entity does not stop the others (with
// ContinueOnError), other writers interleave with a load, and a load
// that stops (an error, a crash) leaves written the entities it wrote
// and not the rest. When entities must be written all or nothing, use
// SubmitTransaction (one partition, up to 100 entities).
//
// Order. Entities are written in Add order: an entity added twice ends
// with its later value (the writer commits before an entity whose keys
// its pending batch already holds, so a batch never holds one entity
// twice). BulkCommit.Through, which only grows, tells a loader how far
// its input is durably written, so it can resume exactly.
//
// On the embedded engine a commit takes the locks of every partition it
// touches and writes its entities in one Pebble batch with one sync. A
// driver without bulk commits (a remote service) gets each run of
// consecutive entities of one partition as entity group transactions of
// up to 100 entities and 4 MiB instead: the same results, slower on
// input not grouped by partition.
//
// Commits run one at a time, each in the background while Add fills the
// next batch. Call Flush at the end: it commits the last batch and waits
// for the commits; a writer dropped without it leaves its pending
// entities unwritten and the outcome of a commit in flight unreported.
// A BulkWriter is not safe for concurrent use.
type BulkWriter struct {
	t    *Table
	opts BulkOptions
	bulk driver.BulkCommitter // nil: commit through transactions

	fill  *bulkBatch // the batch Add fills
	spare *bulkBatch // the other one: in flight, or free
	// flight, when not nil, delivers the outcome of the commit in
	// flight (of spare); it has room for it, so the commit never waits.
	flight chan bulkOutcome
	names  entityenc.NameCache
	stats  BulkStats
	err    error // the error that stopped the writer
}

// bulkBatch is one batch of a BulkWriter: each entity's action (Record
// set at commit), Seq, record end in buf, and Azure size.
type bulkBatch struct {
	acts  []driver.Action
	seqs  []int64
	ends  []int
	sizes []int
	buf   []byte
	bytes int
	keys  map[bulkKey]struct{}
}

type bulkKey struct{ pk, rk string }

// bulkOutcome is what committing a batch did.
type bulkOutcome struct {
	c    BulkCommit
	stop *BulkError // the entity that stopped the writer
	err  error      // the commit failed: nothing of it was written
}

func (b *bulkBatch) reset() {
	clear(b.acts)
	b.acts, b.seqs, b.ends, b.sizes, b.buf, b.bytes = b.acts[:0], b.seqs[:0], b.ends[:0], b.sizes[:0], b.buf[:0], 0
	clear(b.keys)
}

// NewBulkWriter returns a writer of entities into the table. It checks
// opts (InvalidInput for a value outside its bounds) but not that the
// table exists: the first commit fails with TableNotFound if it does not.
func (t *Table) NewBulkWriter(opts *BulkOptions) (*BulkWriter, error) {
	var o BulkOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case o.Action == 0:
		o.Action = ActionInsert
	case o.Action != ActionInsert && o.Action != ActionUpsertReplace && o.Action != ActionUpsertMerge:
		return nil, newError(edm.CodeInvalidInput, "a bulk writer takes ActionInsert, ActionUpsertReplace or ActionUpsertMerge, not %s", o.Action)
	}
	switch {
	case o.BatchEntities <= 0:
		o.BatchEntities = defaultBulkEntities
	case o.BatchEntities > maxBulkEntities:
		return nil, newError(edm.CodeInvalidInput, "BatchEntities %d is over %d", o.BatchEntities, maxBulkEntities)
	}
	switch {
	case o.BatchBytes <= 0:
		o.BatchBytes = defaultBulkBytes
	case o.BatchBytes > maxBulkBytes:
		return nil, newError(edm.CodeInvalidInput, "BatchBytes %d is over %d", o.BatchBytes, maxBulkBytes)
	}
	w := &BulkWriter{t: t, opts: o,
		fill:  &bulkBatch{keys: map[bulkKey]struct{}{}},
		spare: &bulkBatch{keys: map[bulkKey]struct{}{}}}
	w.bulk, _ = t.drv.(driver.BulkCommitter)
	return w, nil
}

// Add validates e (an *Entity; a *RawEntity, queued as it is; or
// StructEntity(v), encoded as Table.InsertStruct encodes it) as the
// single write of the writer's action would, and queues it. When e does
// not fit in the pending batch (see BatchEntities, BatchBytes) or
// addresses an entity the batch holds, Add first starts
// committing the batch, after the commit before it has ended: one commit
// runs in the background while Add fills the next batch, so encoding
// overlaps the commit's write and sync. e is encoded at once: the caller
// may reuse it when Add returns. Add does not set e's Timestamp and ETag.
//
// Errors: a *BulkError for e itself when it is invalid (the validation
// codes of Insert); e is not queued and the writer goes on. The outcome
// of an earlier commit: a *BulkError for the entity that stopped the
// writer (without ContinueOnError), or the commit's error (TableNotFound,
// ErrClosed, ctx's error, an I/O error); e is then not queued, and the
// writer is stopped: every later call returns the same error. ctx
// applies to the commits Add starts.
func (w *BulkWriter) Add(ctx context.Context, e ActionEntity) error {
	if w.err != nil {
		return w.err
	}
	if err := w.t.db.checkContext(ctx); err != nil {
		return err
	}
	if err := w.poll(false); err != nil {
		return err
	}
	seq := w.stats.Added
	w.stats.Added++
	b := w.fill
	start := len(b.buf)
	a, buf, size, pk, rk, err := w.prepare(b.buf, e)
	if err != nil {
		b.buf = buf[:start]
		w.stats.Invalid++
		return &BulkError{Seq: seq, PartitionKey: pk, RowKey: rk, Err: asError(err)}
	}
	b.buf = buf
	n := len(buf) - start + len(a.PartitionKey) + len(a.RowKey)
	k := bulkKey{a.PartitionKey, a.RowKey}
	_, dup := b.keys[k]
	if len(b.acts) > 0 && (dup || len(b.acts) >= w.opts.BatchEntities || b.bytes+n > w.opts.BatchBytes) {
		// Commit the batch, then start the next with e's record.
		rec := slices.Clone(buf[start:])
		b.buf = buf[:start]
		if err := w.start(ctx); err != nil {
			return err
		}
		b = w.fill
		b.buf = append(b.buf, rec...)
	}
	b.acts = append(b.acts, a)
	b.seqs = append(b.seqs, seq)
	b.ends = append(b.ends, len(b.buf))
	b.sizes = append(b.sizes, size)
	b.bytes += n
	b.keys[k] = struct{}{}
	return nil
}

// prepare validates e for the writer's action and appends its record to
// buf, as prepareAction does; it returns e's keys, as far as they are
// known, for its *BulkError.
func (w *BulkWriter) prepare(buf []byte, e ActionEntity) (a driver.Action, out []byte, size int, pk, rk string, err error) {
	switch e := e.(type) {
	case *RawEntity:
		if e != nil {
			a, out, size, err = prepareRaw(buf, w.opts.Action, e, "")
			return a, out, size, e.PartitionKey, e.RowKey, err
		}
	case *structEntity:
		if e != nil && e.v != nil {
			var r structmap.Ref
			a, out, size, r, err = prepareStruct(buf, w.opts.Action, e.v, "")
			if r.Plan != nil {
				pk, rk = r.Keys()
			}
			return a, out, size, pk, rk, err
		}
	case *Entity:
		if e != nil {
			pk, rk = e.PartitionKey, e.RowKey
		}
		a, out, size, err = prepareAction(buf, w.opts.Action, e, "", &w.names)
		return a, out, size, pk, rk, err
	}
	return driver.Action{}, buf, 0, "", "", errNilEntity()
}

// Flush commits the pending entities and waits for every commit to end.
// Its errors are Add's, less validation.
func (w *BulkWriter) Flush(ctx context.Context) error {
	if w.err != nil {
		return w.err
	}
	if err := w.t.db.checkContext(ctx); err != nil {
		return err
	}
	if len(w.fill.acts) > 0 {
		if err := w.start(ctx); err != nil {
			return err
		}
	}
	return w.poll(true)
}

// Stats returns what the writer has done so far (commits still in flight
// not included).
func (w *BulkWriter) Stats() BulkStats { return w.stats }

// start waits for the commit in flight, then starts committing the
// filled batch in the background.
func (w *BulkWriter) start(ctx context.Context) error {
	if err := w.poll(true); err != nil {
		return err
	}
	b := w.fill
	start := 0
	for i := range b.acts {
		b.acts[i].Record = b.buf[start:b.ends[i]:b.ends[i]]
		start = b.ends[i]
	}
	w.fill, w.spare = w.spare, w.fill
	w.flight = make(chan bulkOutcome, 1)
	go func(flight chan<- bulkOutcome) {
		if w.bulk != nil {
			flight <- w.commitBulk(ctx, b)
		} else {
			flight <- w.commitTransactions(ctx, b)
		}
	}(w.flight)
	return nil
}

// poll takes the outcome of the commit in flight, if it has ended or
// wait is set: it counts it, reports it to OnCommit, and returns the
// error that stops the writer, if any.
func (w *BulkWriter) poll(wait bool) error {
	if w.flight == nil {
		return nil
	}
	var o bulkOutcome
	if wait {
		o = <-w.flight
	} else {
		select {
		case o = <-w.flight:
		default:
			return nil
		}
	}
	w.flight = nil
	w.spare.reset()
	if o.err != nil {
		w.err = o.err
		return o.err
	}
	w.stats.Commits++
	w.stats.Written += int64(o.c.Written)
	w.stats.Refused += int64(len(o.c.Refused))
	if w.opts.OnCommit != nil {
		w.opts.OnCommit(o.c)
	}
	if o.stop != nil {
		w.err = o.stop
		return o.stop
	}
	return nil
}

// commitBulk commits b through the driver's bulk commit.
func (w *BulkWriter) commitBulk(ctx context.Context, b *bulkBatch) bulkOutcome {
	res, err := w.bulk.CommitBulk(ctx, b.acts, driver.BulkCommitOptions{StopAtFailure: !w.opts.ContinueOnError})
	if err != nil {
		return bulkOutcome{err: mapError(err, false)}
	}
	c := BulkCommit{Through: b.seqs[len(b.seqs)-1] + 1, Written: res.Applied}
	for _, f := range res.Failures {
		be := b.entityError(f.Index, mapError(f, false))
		if !w.opts.ContinueOnError {
			c.Through = be.Seq
			return bulkOutcome{c: c, stop: be}
		}
		c.Refused = append(c.Refused, be)
	}
	return bulkOutcome{c: c}
}

// commitTransactions commits b through Commit, for a driver without bulk
// commits: each run of consecutive entities of one partition in entity
// group transactions of up to 100 entities and 4 MiB, in order. An
// entity the driver refuses is taken out of its transaction, which is
// committed without it.
func (w *BulkWriter) commitTransactions(ctx context.Context, b *bulkBatch) bulkOutcome {
	c := BulkCommit{Through: b.seqs[len(b.seqs)-1] + 1}
	acts := b.acts
	for i := 0; i < len(acts); {
		j, size := i, 0
		for j < len(acts) && j-i < MaxTransactionActions && acts[j].PartitionKey == acts[i].PartitionKey &&
			size+b.sizes[j] <= MaxTransactionBytes {
			size += b.sizes[j]
			j++
		}
		for i < j {
			_, err := w.t.drv.Commit(ctx, acts[i:j])
			if err == nil {
				c.Written += j - i
				i = j
				break
			}
			de, ok := err.(*driver.Error)
			if !ok || de.Index < 0 || de.Index >= j-i || !entityCode(Code(de.Code)) {
				return bulkOutcome{err: mapError(err, false)}
			}
			// Commit the entities before the refused one, then go on
			// after it.
			k := i + de.Index
			if k > i {
				if _, err := w.t.drv.Commit(ctx, acts[i:k]); err != nil {
					return bulkOutcome{err: mapError(err, false)}
				}
				c.Written += k - i
			}
			be := b.entityError(k, mapError(de, false))
			if !w.opts.ContinueOnError {
				c.Through = be.Seq
				return bulkOutcome{c: c, stop: be}
			}
			c.Refused = append(c.Refused, be)
			i = k + 1
		}
	}
	return bulkOutcome{c: c}
}

// entityError describes the failure of b's entity i.
func (b *bulkBatch) entityError(i int, err error) *BulkError {
	return &BulkError{Seq: b.seqs[i], PartitionKey: b.acts[i].PartitionKey, RowKey: b.acts[i].RowKey, Err: asError(err)}
}

// asError returns err's *Error (every error mapError returns has one).
func asError(err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Code: codeOf(err), Message: err.Error(), err: err}
}

// entityCode reports whether a transaction failing with code at an
// action is that entity's fault, so the others can be committed without
// it.
func entityCode(code Code) bool {
	switch code {
	case edm.CodeEntityAlreadyExists, edm.CodeResourceNotFound, edm.CodeUpdateConditionNotSatisfied,
		edm.CodeTooManyProperties, edm.CodeEntityTooLarge, edm.CodePropertiesNeedValue, edm.CodeOutOfRangeInput,
		edm.CodeKeyValueTooLarge, edm.CodePropertyNameInvalid, edm.CodePropertyNameTooLong, edm.CodeInvalidValueType,
		edm.CodePropertyValueTooLarge, edm.CodeInvalidInput, edm.CodeDuplicatePropertiesSpecified:
		return true
	}
	return false
}
