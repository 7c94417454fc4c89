package replicate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// Positions keeps a replicator's positions durably, one cursor per
// table. Load reports ok false for a table with none (it is then copied
// whole first). Save must be durable when it returns; it is called from
// several goroutines, one per table.
type Positions interface {
	Load(table string) (c tablestore.Cursor, ok bool, err error)
	Save(table string, c tablestore.Cursor) error
}

// Options configure Run.
type Options struct {
	// Tables are the source tables to mirror; nil mirrors every table of
	// the source as Run starts.
	Tables []string
	// Positions keeps the positions; nil keeps them in memory only (a new
	// Run then starts over with a copy).
	Positions Positions
	// Follow keeps applying new commits until ctx ends; without it Run
	// returns once each table has caught up with the feed's end as of
	// its start.
	Follow bool
	// OnProgress, if set, is called after the initial copy, after
	// changes are applied (at most every SaveEvery per table), and, with
	// Follow, when the table is caught up (Progress.CaughtUp), from the
	// table's goroutine.
	OnProgress func(Progress)
	// SaveEvery is how often a table's position is saved while changes
	// are applied (it is always saved when Run returns). Default: 200 ms.
	SaveEvery time.Duration
}

// Progress is one table's progress.
type Progress struct {
	Table string
	// Copied is the number of entities the initial copy wrote (0 when the
	// table resumed from a saved position).
	Copied int64
	// Applied is the number of changes applied since Run started.
	Applied int64
	// Cursor is the position applied through.
	Cursor tablestore.Cursor
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

// ChangeError is a change the target refused: Run stops on it. Err is
// the target's error, so tablestore.ErrorCode(err) gives its code.
type ChangeError struct {
	Table  string
	Change tablestore.Change
	Err    error
}

func (e *ChangeError) Error() string {
	c := e.Change
	return fmt.Sprintf("replicate: table %s: change %s (%s of (%q, %q)): %v", e.Table, c.Cursor, c.Op.String(), c.PartitionKey, c.RowKey, e.Err)
}

// Unwrap returns the target's error.
func (e *ChangeError) Unwrap() error { return e.Err }

// Run mirrors tables of src into dst, one way, as the package comment
// describes: a copy of each table without a saved position, then its
// change feed.
//
// Errors: InvalidInput (a *tablestore.Error) for a source table whose
// feed keeps keys only; a *ChangeError for a change the target refused
// after the retries; the source's errors (ErrCursorExpired when the
// replicator fell behind the retention, NotImplemented when src has no
// change feed); Positions' errors. With Follow, ctx ending is a normal
// end (nil); without it, ctx's error.
func Run(ctx context.Context, src, dst *tablestore.DB, opts Options) error {
	err := runTables(ctx, src, dst, opts)
	if opts.Follow && ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || tablestore.ErrorCode(err) == edm.CodeOperationTimedOut) {
		return nil
	}
	return err
}

func runTables(ctx context.Context, src, dst *tablestore.DB, opts Options) error {
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
		opts.Positions = &memPositions{m: map[string]tablestore.Cursor{}}
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
	m  map[string]tablestore.Cursor
}

func (p *memPositions) Load(t string) (tablestore.Cursor, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.m[t]
	return c, ok, nil
}

func (p *memPositions) Save(t string, c tablestore.Cursor) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[t] = c
	return nil
}

// tableReplicator mirrors one table.
type tableReplicator struct {
	src, dst *tablestore.Table
	name     string
	opts     *Options

	prog      Progress
	saved     tablestore.Cursor
	lastSave  time.Time
	pending   []tablestore.Change // upserts of the open source commit, by partition order
	lastApply tablestore.Change
	caughtUp  bool // the last read ended at the feed's end and no commit came within SaveEvery
}

func (r *tableReplicator) run(ctx context.Context, dst *tablestore.DB) error {
	r.prog.Table = r.name
	st, err := r.src.ChangeFeed(ctx)
	if err != nil {
		return err
	}
	switch {
	case !st.Enabled:
		if err := r.src.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{Images: tablestore.ImagesNew}); err != nil {
			return err
		}
	case st.Options.Images != tablestore.ImagesNew:
		return &tablestore.Error{Code: edm.CodeInvalidInput, Message: fmt.Sprintf("replicate table %s: its change feed keeps keys only; replication needs ImagesNew", r.name)}
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
func (r *tableReplicator) copy(ctx context.Context) (tablestore.Cursor, error) {
	if err := r.clearTarget(ctx); err != nil {
		return tablestore.Cursor{}, fmt.Errorf("replicate table %s: empty the target table: %w", r.name, err)
	}
	st, err := r.src.ChangeFeed(ctx)
	if err != nil {
		return tablestore.Cursor{}, err
	}
	start := time.Now()
	w, err := r.dst.NewBulkWriter(&tablestore.BulkOptions{Action: tablestore.ActionUpsertReplace, BatchEntities: 100})
	if err != nil {
		return tablestore.Cursor{}, err
	}
	for e, err := range r.src.Query(ctx, tablestore.Query{}) {
		if err != nil {
			return tablestore.Cursor{}, err
		}
		e.Timestamp, e.ETag = time.Time{}, ""
		if err := w.Add(ctx, e); err != nil {
			return tablestore.Cursor{}, fmt.Errorf("replicate table %s: copy (%q, %q): %w", r.name, e.PartitionKey, e.RowKey, err)
		}
		r.prog.Copied++
	}
	if err := w.Flush(ctx); err != nil {
		return tablestore.Cursor{}, fmt.Errorf("replicate table %s: copy: %w", r.name, err)
	}
	if err := r.opts.Positions.Save(r.name, st.Latest); err != nil {
		return tablestore.Cursor{}, err
	}
	r.prog.CopyTime = time.Since(start)
	return st.Latest, nil
}

// follow applies the feed from c. It reads the feed to its end in
// rounds; between rounds, with Follow, it waits for a commit, and one
// that does not come within SaveEvery makes it save the position and
// report the table caught up (lag 0) once.
func (r *tableReplicator) follow(ctx context.Context, from tablestore.Cursor) error {
	for {
		// The end before the read: a wait from it misses no commit.
		st, err := r.src.ChangeFeed(ctx)
		if err != nil {
			return fmt.Errorf("replicate table %s: read the feed: %w", r.name, err)
		}
		for c, err := range r.src.Changes(ctx, tablestore.ChangesQuery{From: from}) {
			if err != nil {
				return fmt.Errorf("replicate table %s: read the feed: %w", r.name, err)
			}
			from = c.Cursor
			r.caughtUp = false
			if c.Op == tablestore.ChangeDropTable {
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
		committed, err := r.waitCommit(wait, st.Latest)
		cancel()
		switch {
		case committed:
		case ctx.Err() != nil:
			return ctx.Err()
		case wait.Err() != nil:
			r.caughtUp = true
			if err := r.save(true); err != nil {
				return err
			}
		default:
			return fmt.Errorf("replicate table %s: wait for the feed: %w", r.name, err)
		}
	}
}

// waitCommit waits for the table's first change after end: it reports
// true once one is committed, false with ctx's end or the feed's error.
func (r *tableReplicator) waitCommit(ctx context.Context, end tablestore.Cursor) (bool, error) {
	for _, err := range r.src.Changes(ctx, tablestore.ChangesQuery{From: end, Follow: true}) {
		return err == nil, err
	}
	// The iteration ends without a change only when ctx ends.
	return ctx.Err() == nil, ctx.Err()
}

// apply applies c, or holds it in pending when it is an upsert that can
// join a transaction.
func (r *tableReplicator) apply(ctx context.Context, c tablestore.Change) error {
	switch c.Op {
	case tablestore.ChangeInsert, tablestore.ChangeUpdateMerge, tablestore.ChangeUpdateReplace, tablestore.ChangeUpsertMerge, tablestore.ChangeUpsertReplace:
		if c.Entity == nil {
			return &ChangeError{Table: r.name, Change: c, Err: errors.New("the change has no image")}
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
	case tablestore.ChangeDelete, tablestore.ChangeExpire:
		op = func() error {
			err := r.dst.Delete(ctx, c.PartitionKey, c.RowKey, tablestore.ETagAny)
			if errors.Is(err, tablestore.ErrResourceNotFound) {
				return nil
			}
			return err
		}
	case tablestore.ChangeDeleteRange:
		op = func() error { return r.deleteRange(ctx, c.PartitionKey, c.RowKey, c.ToRowKey) }
	default:
		return &ChangeError{Table: r.name, Change: c, Err: fmt.Errorf("unknown operation %d", c.Op)}
	}
	if err := retry(ctx, op); err != nil {
		return &ChangeError{Table: r.name, Change: c, Err: err}
	}
	r.applied(c, 1)
	return nil
}

// clearTarget deletes every entity of the target table: transactions of
// up to 100 deletes per partition, or single deletes (absence ignored)
// when one fails.
func (r *tableReplicator) clearTarget(ctx context.Context) error {
	var keys [][2]string
	for e, err := range r.dst.Query(ctx, tablestore.Query{Select: []string{"RowKey"}}) {
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
		acts := make([]tablestore.TransactionAction, n)
		for i := range n {
			acts[i] = tablestore.TransactionAction{Type: tablestore.ActionDelete, Entity: &tablestore.Entity{PartitionKey: keys[i][0], RowKey: keys[i][1]}}
		}
		if err := r.dst.SubmitTransaction(ctx, acts); err != nil {
			for _, k := range keys[:n] {
				if err := r.dst.Delete(ctx, k[0], k[1], tablestore.ETagAny); err != nil && !errors.Is(err, tablestore.ErrResourceNotFound) {
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
	if !errors.Is(err, tablestore.ErrNotImplemented) {
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
	for e, err := range r.dst.Query(ctx, tablestore.Query{Filter: f, Select: []string{"RowKey"}}) {
		if err != nil {
			return err
		}
		rks = append(rks, e.RowKey)
	}
	for _, rk := range rks {
		if err := r.dst.Delete(ctx, pk, rk, tablestore.ETagAny); err != nil && !errors.Is(err, tablestore.ErrResourceNotFound) {
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
		op = func() error { return r.dst.Upsert(ctx, p[0].Entity, tablestore.Replace) }
	} else {
		acts := make([]tablestore.TransactionAction, len(p))
		for i := range p {
			acts[i] = tablestore.TransactionAction{Type: tablestore.ActionUpsertReplace, Entity: p[i].Entity}
		}
		op = func() error { return r.dst.SubmitTransaction(ctx, acts) }
	}
	if err := retry(ctx, op); err != nil {
		c := p[0]
		var be *tablestore.BatchError
		if errors.As(err, &be) && be.Index < len(p) {
			c = p[be.Index]
		}
		return &ChangeError{Table: r.name, Change: c, Err: err}
	}
	r.applied(p[len(p)-1], len(p))
	return nil
}

func (r *tableReplicator) applied(c tablestore.Change, n int) {
	r.prog.Applied += int64(n)
	r.prog.Cursor = c.Cursor
	r.lastApply = c
}

// flushAndMark ends a source commit: its pending upserts are applied,
// and the position moves past it (saved at most every SaveEvery).
func (r *tableReplicator) flushAndMark(ctx context.Context, c tablestore.Change) error {
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
		if st, err := r.src.ChangeFeed(context.Background()); err == nil && st.Latest.Seq() > p.Cursor.Seq() {
			p.LagChanges = st.Latest.Seq() - p.Cursor.Seq()
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
	if errors.Is(err, tablestore.ErrCorrupt) || errors.Is(err, tablestore.ErrClosed) {
		return false
	}
	switch tablestore.ErrorCode(err) {
	case edm.CodeServerBusy, edm.CodeOperationTimedOut, edm.CodeInternalError:
		return true
	}
	return strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "connection refused")
}
