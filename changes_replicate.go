package tablestore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// ReplicatePositions keeps a replicator's positions durably, one cursor
// per table. Load reports ok false for a table with none (it is then
// copied whole first). Save must be durable when it returns; it is
// called from several goroutines, one per table.
type ReplicatePositions interface {
	Load(table string) (c Cursor, ok bool, err error)
	Save(table string, c Cursor) error
}

// ReplicateOptions configure Replicate.
type ReplicateOptions struct {
	// Tables are the source tables to mirror; nil mirrors every table of
	// the source as Replicate starts.
	Tables []string
	// Positions keeps the positions; nil keeps them in memory only (a new
	// Replicate then starts over with a copy).
	Positions ReplicatePositions
	// Follow keeps applying new commits until ctx ends; without it
	// Replicate returns once each table has caught up with the feed's end
	// as of its start.
	Follow bool
	// OnProgress, if set, is called after the initial copy, after
	// changes are applied (at most every SaveEvery per table), and, with
	// Follow, when the table is caught up (ReplicateProgress.CaughtUp),
	// from the table's goroutine.
	OnProgress func(ReplicateProgress)
	// SaveEvery is how often a table's position is saved while changes
	// are applied (it is always saved when Replicate returns). Default:
	// 200 ms.
	SaveEvery time.Duration
}

// ReplicateProgress is one table's progress.
type ReplicateProgress struct {
	Table string
	// Copied is the number of entities the initial copy wrote (0 when the
	// table resumed from a saved position).
	Copied int64
	// Applied is the number of changes applied since Replicate started.
	Applied int64
	// Cursor is the position applied through.
	Cursor Cursor
	// LagChanges bounds the changes committed to the store and not yet
	// applied (a difference of store-wide sequence numbers, so commits to
	// other tables count too); LagTime is how long ago the oldest of them
	// was committed (0 when caught up).
	LagChanges uint64
	LagTime    time.Duration
	// CaughtUp says the table has applied the whole feed as of a read
	// that reached its end, and no commit came within SaveEvery: with
	// Follow, it is reported once each time the feed goes quiet, with the
	// position saved and the lag 0.
	CaughtUp bool
	// CopyTime is how long the initial copy took (0 when the table
	// resumed from a saved position).
	CopyTime time.Duration
}

// ReplicateError is a change the target refused: Replicate stops on it.
type ReplicateError struct {
	Table  string
	Change Change
	Err    error
}

func (e *ReplicateError) Error() string {
	c := e.Change
	return fmt.Sprintf("tablestore: replicate table %s: change %s (%s of (%q, %q)): %v", e.Table, c.Cursor, ChangeOpName(c.Op), c.PartitionKey, c.RowKey, e.Err)
}

// Unwrap returns the target's error.
func (e *ReplicateError) Unwrap() error { return e.Err }

// Replicate mirrors tables of src (the embedded engine, with change
// feeds) into dst (any store: Azure Table Storage, Cosmos DB for Table,
// Azurite, another server, a local store), one way.
//
// For a table with no saved position it turns the table's feed on with
// ImagesNew when it is off (a feed of keys only is InvalidInput), creates
// the target table if needed and empties it, takes the feed's end as its
// position, copies every entity (upserts that replace), saves the
// position, and then applies the feed from that
// position; changes made during the copy are applied again, to no
// effect. Each change is applied as an idempotent write: the new entity
// replaces (Upsert with Replace), a delete and an expiry (ChangeExpire)
// delete, ignoring absence, and a range deletion deletes the range at
// the target (Partition.DeleteRange, which on a remote store queries and
// deletes in transactions: not atomic there). The source's TTL settings
// are not copied: an entity that expires at the source leaves the target
// when its removal reaches the feed (the sweeper's commit, or a write
// over it), so until then the target still shows it. The upserts of one source commit to one partition go in
// entity group transactions of up to 100. A deleted source table ends
// its replication (the target is left as it is).
//
// Positions are saved after the changes they cover are applied, so a
// replicator that is killed and started again resumes where it saved,
// repeating a few changes to no effect and losing or reordering none.
// Errors the target may not repeat (ServerBusy, OperationTimedOut,
// InternalError) are retried with a backoff; any other ends Replicate
// with a *ReplicateError naming the change. The source's errors
// (ErrCursorExpired when the replicator fell behind the retention) end
// it too. With Follow, ctx ending is a normal end (nil).
func Replicate(ctx context.Context, src, dst *DB, opts ReplicateOptions) error {
	err := replicate(ctx, src, dst, opts)
	if opts.Follow && ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || ErrorCode(err) == CodeOperationTimedOut) {
		return nil
	}
	return err
}

func replicate(ctx context.Context, src, dst *DB, opts ReplicateOptions) error {
	tables := opts.Tables
	if tables == nil {
		for name, err := range src.TableNames(ctx, "") {
			if err != nil {
				return err
			}
			tables = append(tables, name)
		}
	}
	if opts.Positions == nil {
		opts.Positions = &memPositions{m: map[string]Cursor{}}
	}
	if opts.SaveEvery <= 0 {
		opts.SaveEvery = 200 * time.Millisecond
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, name := range tables {
		g.Go(func() error {
			r := &tableReplicator{src: src.Table(name), dst: dst.Table(name), name: name, opts: &opts}
			return r.run(gctx, dst)
		})
	}
	return g.Wait()
}

type memPositions struct {
	mu sync.Mutex
	m  map[string]Cursor
}

func (p *memPositions) Load(t string) (Cursor, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.m[t]
	return c, ok, nil
}

func (p *memPositions) Save(t string, c Cursor) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[t] = c
	return nil
}

// tableReplicator mirrors one table.
type tableReplicator struct {
	src, dst *Table
	name     string
	opts     *ReplicateOptions

	prog      ReplicateProgress
	saved     Cursor
	lastSave  time.Time
	pending   []Change // upserts of the open source commit, by partition order
	lastApply Change
	caughtUp  bool // the last read ended at the feed's end and no commit came within SaveEvery
}

func (r *tableReplicator) run(ctx context.Context, dst *DB) error {
	r.prog.Table = r.name
	st, err := r.src.ChangeFeed(ctx)
	if err != nil {
		return err
	}
	switch {
	case !st.Enabled:
		if err := r.src.EnableChangeFeed(ctx, ChangeFeedOptions{Images: ImagesNew}); err != nil {
			return err
		}
	case st.Options.Images != ImagesNew:
		return newError(CodeInvalidInput, "replicate table %s: its change feed keeps keys only; replication needs ImagesNew", r.name)
	}
	from, ok, err := r.opts.Positions.Load(r.name)
	if err != nil {
		return err
	}
	if !ok {
		// The target table is made only before a copy: one that goes
		// away later stops the replication at the first change.
		if _, err := dst.CreateTableIfNotExists(ctx, r.name); err != nil {
			return fmt.Errorf("replicate table %s: create the target table: %w", r.name, err)
		}
		if from, err = r.copy(ctx); err != nil {
			return err
		}
	}
	r.saved, r.prog.Cursor = from, from
	if !ok {
		r.report()
	}
	err = r.follow(ctx, from)
	if serr := r.save(true); err == nil {
		err = serr
	}
	return err
}

// copy empties the target table (an interrupted copy may have left
// entities the source has deleted since), copies the table, and returns
// the position the feed resumes from.
func (r *tableReplicator) copy(ctx context.Context) (Cursor, error) {
	if err := r.clearTarget(ctx); err != nil {
		return Cursor{}, fmt.Errorf("replicate table %s: empty the target table: %w", r.name, err)
	}
	st, err := r.src.ChangeFeed(ctx)
	if err != nil {
		return Cursor{}, err
	}
	start := time.Now()
	w, err := r.dst.NewBulkWriter(&BulkOptions{Action: ActionUpsertReplace, BatchEntities: 100})
	if err != nil {
		return Cursor{}, err
	}
	for e, err := range r.src.Query(ctx, Query{}) {
		if err != nil {
			return Cursor{}, err
		}
		e.Timestamp, e.ETag = time.Time{}, ""
		if err := w.Add(ctx, e); err != nil {
			return Cursor{}, fmt.Errorf("replicate table %s: copy (%q, %q): %w", r.name, e.PartitionKey, e.RowKey, err)
		}
		r.prog.Copied++
	}
	if err := w.Flush(ctx); err != nil {
		return Cursor{}, fmt.Errorf("replicate table %s: copy: %w", r.name, err)
	}
	if err := r.opts.Positions.Save(r.name, st.Latest); err != nil {
		return Cursor{}, err
	}
	r.prog.CopyTime = time.Since(start)
	return st.Latest, nil
}

// follow applies the feed from c. It reads the feed to its end in
// rounds; between rounds, with Follow, it waits for a commit, and one
// that does not come within SaveEvery makes it save the position and
// report the table caught up (lag 0) once.
func (r *tableReplicator) follow(ctx context.Context, from Cursor) error {
	cf, err := r.src.feeder()
	if err != nil {
		return err
	}
	for {
		// The end before the read: a wait from it misses no commit.
		st, err := r.src.ChangeFeed(ctx)
		if err != nil {
			return fmt.Errorf("replicate table %s: read the feed: %w", r.name, err)
		}
		for c, err := range r.src.Changes(ctx, ChangesQuery{From: from}) {
			if err != nil {
				return fmt.Errorf("replicate table %s: read the feed: %w", r.name, err)
			}
			from = c.Cursor
			r.caughtUp = false
			if c.Op == ChangeDropTable {
				return r.flushAndMark(ctx, c)
			}
			if err := r.apply(ctx, c); err != nil {
				return err
			}
			if c.Index == c.Count-1 {
				if err := r.flushAndMark(ctx, c); err != nil {
					return err
				}
			}
		}
		if err := r.flush(ctx); err != nil {
			return err
		}
		if !r.opts.Follow {
			return nil
		}
		wait := ctx
		cancel := context.CancelFunc(func() {})
		if !r.caughtUp {
			wait, cancel = context.WithTimeout(ctx, r.opts.SaveEvery)
		}
		err = cf.WaitChanges(wait, st.Latest.seq)
		cancel()
		switch {
		case err == nil:
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			r.caughtUp = true
			if err := r.save(true); err != nil {
				return err
			}
		default:
			return fmt.Errorf("replicate table %s: wait for the feed: %w", r.name, mapChangesError(err))
		}
	}
}

// apply applies c, or holds it in pending when it is an upsert that can
// join a transaction.
func (r *tableReplicator) apply(ctx context.Context, c Change) error {
	switch c.Op {
	case ChangeInsert, ChangeUpdateMerge, ChangeUpdateReplace, ChangeUpsertMerge, ChangeUpsertReplace:
		if c.Entity == nil {
			return &ReplicateError{Table: r.name, Change: c, Err: errors.New("the change has no image")}
		}
		if len(r.pending) > 0 && (r.pending[0].PartitionKey != c.PartitionKey || len(r.pending) == 100) {
			if err := r.flush(ctx); err != nil {
				return err
			}
		}
		r.pending = append(r.pending, c)
		return nil
	}
	if err := r.flush(ctx); err != nil {
		return err
	}
	var op func() error
	switch c.Op {
	case ChangeDelete, ChangeExpire:
		op = func() error {
			err := r.dst.Delete(ctx, c.PartitionKey, c.RowKey, ETagAny)
			if errors.Is(err, ErrResourceNotFound) {
				return nil
			}
			return err
		}
	case ChangeDeleteRange:
		op = func() error { return r.deleteRange(ctx, c.PartitionKey, c.RowKey, c.ToRowKey) }
	default:
		return &ReplicateError{Table: r.name, Change: c, Err: fmt.Errorf("unknown operation %d", c.Op)}
	}
	if err := retry(ctx, op); err != nil {
		return &ReplicateError{Table: r.name, Change: c, Err: err}
	}
	r.applied(c, 1)
	return nil
}

// clearTarget deletes every entity of the target table: transactions of
// up to 100 deletes per partition, or single deletes (absence ignored)
// when one fails.
func (r *tableReplicator) clearTarget(ctx context.Context) error {
	var keys [][2]string
	for e, err := range r.dst.Query(ctx, Query{Select: []string{"RowKey"}}) {
		if err != nil {
			return err
		}
		keys = append(keys, [2]string{e.PartitionKey, e.RowKey})
	}
	for len(keys) > 0 {
		n := 1
		for n < len(keys) && n < 100 && keys[n][0] == keys[0][0] {
			n++
		}
		acts := make([]TransactionAction, n)
		for i := range n {
			acts[i] = TransactionAction{Type: ActionDelete, Entity: &Entity{PartitionKey: keys[i][0], RowKey: keys[i][1]}}
		}
		if err := r.dst.SubmitTransaction(ctx, acts); err != nil {
			for _, k := range keys[:n] {
				if err := r.dst.Delete(ctx, k[0], k[1], ETagAny); err != nil && !errors.Is(err, ErrResourceNotFound) {
					return err
				}
			}
		}
		keys = keys[n:]
	}
	return nil
}

// deleteRange deletes RowKeys [from, to) of partition pk at the target:
// Partition.DeleteRange, or, where the target cannot, a query of the
// range and a delete of each entity found (absence ignored). Neither is
// atomic on a remote store.
func (r *tableReplicator) deleteRange(ctx context.Context, pk, from, to string) error {
	err := r.dst.Partition(pk).DeleteRange(ctx, from, to)
	if !errors.Is(err, ErrNotImplemented) {
		return err
	}
	quote := func(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
	f := "PartitionKey eq " + quote(pk)
	if from != "" {
		f += " and RowKey ge " + quote(from)
	}
	if to != "" {
		f += " and RowKey lt " + quote(to)
	}
	var rks []string
	for e, err := range r.dst.Query(ctx, Query{Filter: f, Select: []string{"RowKey"}}) {
		if err != nil {
			return err
		}
		rks = append(rks, e.RowKey)
	}
	for _, rk := range rks {
		if err := r.dst.Delete(ctx, pk, rk, ETagAny); err != nil && !errors.Is(err, ErrResourceNotFound) {
			return err
		}
	}
	return nil
}

// flush applies the pending upserts: one transaction when there are
// several, else one upsert.
func (r *tableReplicator) flush(ctx context.Context) error {
	if len(r.pending) == 0 {
		return nil
	}
	p := r.pending
	r.pending = r.pending[:0]
	for i := range p {
		p[i].Entity.Timestamp, p[i].Entity.ETag = time.Time{}, ""
	}
	var op func() error
	if len(p) == 1 {
		op = func() error { return r.dst.Upsert(ctx, p[0].Entity, Replace) }
	} else {
		acts := make([]TransactionAction, len(p))
		for i := range p {
			acts[i] = TransactionAction{Type: ActionUpsertReplace, Entity: p[i].Entity}
		}
		op = func() error { return r.dst.SubmitTransaction(ctx, acts) }
	}
	if err := retry(ctx, op); err != nil {
		c := p[0]
		var be *BatchError
		if errors.As(err, &be) && be.Index < len(p) {
			c = p[be.Index]
		}
		return &ReplicateError{Table: r.name, Change: c, Err: err}
	}
	r.applied(p[len(p)-1], len(p))
	return nil
}

func (r *tableReplicator) applied(c Change, n int) {
	r.prog.Applied += int64(n)
	r.prog.Cursor = c.Cursor
	r.lastApply = c
}

// flushAndMark ends a source commit: its pending upserts are applied,
// and the position moves past it (saved at most every SaveEvery).
func (r *tableReplicator) flushAndMark(ctx context.Context, c Change) error {
	if err := r.flush(ctx); err != nil {
		return err
	}
	r.prog.Cursor = c.Cursor
	return r.save(false)
}

// save saves the position when it moved and (unless force) SaveEvery
// has passed, and reports progress.
func (r *tableReplicator) save(force bool) error {
	if !force && time.Since(r.lastSave) < r.opts.SaveEvery {
		return nil
	}
	r.lastSave = time.Now()
	if r.prog.Cursor != r.saved {
		if err := r.opts.Positions.Save(r.name, r.prog.Cursor); err != nil {
			return err
		}
		r.saved = r.prog.Cursor
	}
	r.report()
	return nil
}

// report calls OnProgress with the lag: 0 when caught up, else measured
// against the feed's end.
func (r *tableReplicator) report() {
	if r.opts.OnProgress == nil {
		return
	}
	p := r.prog
	p.CaughtUp = r.caughtUp
	if !r.caughtUp {
		if st, err := r.src.ChangeFeed(context.Background()); err == nil && st.Latest.seq > p.Cursor.seq {
			p.LagChanges = st.Latest.seq - p.Cursor.seq
			if !r.lastApply.Timestamp.IsZero() {
				p.LagTime = time.Since(r.lastApply.Timestamp)
			}
		}
	}
	r.opts.OnProgress(p)
}

// retry runs op, again after errors the target may not repeat.
func retry(ctx context.Context, op func() error) error {
	wait := 50 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || attempt == 6 || !retryable(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

func retryable(err error) bool {
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrClosed) {
		return false
	}
	switch ErrorCode(err) {
	case CodeServerBusy, CodeOperationTimedOut, CodeInternalError:
		return true
	}
	return strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "connection refused")
}
