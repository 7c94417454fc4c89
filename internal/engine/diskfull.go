package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tablestore/tablestore/driver"
)

// How a full disk is handled.
//
// Pebble meets a full disk in two ways. A flush or compaction that
// fails is retried in the background (BackgroundError); when flushes keep
// failing the memtables queue up and a commit then waits in Pebble's write
// stall, with no way to cancel it. A failed write of the write-ahead log or
// the MANIFEST is fatal to Pebble. The engine keeps all three from hanging
// or stopping its callers:
//
//   - The store's FS is wrapped (spaceFS): every ENOSPC it sees marks the
//     store full at once. A write to a WAL or MANIFEST file that fails with
//     ENOSPC is not reported to Pebble: it waits until space returns and
//     is retried, so Pebble's commit pipeline is held up instead of broken.
//   - While the store is full, writes are refused before anything reaches
//     Pebble, with an error matching driver.ErrNoSpace; while Pebble stalls
//     writes (WriteStallBegin), a write waits for the stall to end, at
//     most until its deadline, and is then refused the same way. Reads go
//     on. Health reports the condition; it is not a fault.
//   - A monitor polls the free space every pollInterval while the store is
//     full and clears the condition when space is back, so writes resume
//     without a restart.
//   - A synced write hands its batch to Pebble on its own goroutine
//     (boundedWrite) and waits at most until its deadline: ctx's, or
//     Options.WriteTimeout; an unsynced one runs on the caller's.
//     A write refused before the hand-over was not applied; one whose batch
//     was handed over and did not finish in time may still be applied once
//     space returns, and its error says so (errMaybeApplied).

// pollInterval is how often the monitor looks for free space.
const pollInterval = 200 * time.Millisecond

// minFreeBytes is the free space the monitor waits for before writes
// resume: room for a memtable's flush, which frees the logs it covers.
func (db *Engine) minFreeBytes() uint64 {
	return max(db.opts.MemTableSize, 1<<20)
}

// spaceGate is the engine's disk-full and write-stall state.
type spaceGate struct {
	full    atomic.Bool
	stalled atomic.Bool
	mu      sync.Mutex
	// changed is closed and replaced whenever full or stalled clears.
	changed chan struct{}
	polling bool
	since   time.Time // when the store was last found full
}

// noSpaceError is the error of a write refused on a full disk.
func noSpaceError() error {
	return fmt.Errorf("%w: writes are refused until space is freed on the store's disk; reads go on", driver.ErrNoSpace)
}

// errMaybeApplied wraps the error of a write whose batch was handed to
// Pebble but did not finish within its deadline.
func errMaybeApplied(cause error) error {
	return fmt.Errorf("tablestore: the write did not finish in time and may still be applied once the disk has space: %w", cause)
}

// spaceHealth returns noSpaceError while the store is full, else nil.
func (db *Engine) spaceHealth() error {
	if db.space.full.Load() {
		return noSpaceError()
	}
	return nil
}

// markFull records that the disk is full and starts the monitor.
func (db *Engine) markFull() {
	g := &db.space
	g.mu.Lock()
	g.since = time.Now()
	g.full.Store(true)
	start := !g.polling
	g.polling = true
	g.mu.Unlock()
	if start {
		go db.pollSpace()
	}
}

// pollSpace waits until the disk has minFreeBytes free, then clears the
// condition; it ends early when Close has closed Pebble.
func (db *Engine) pollSpace() {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	for {
		select {
		case <-db.pebbleClosed.Done():
			db.space.mu.Lock()
			db.space.polling = false
			db.space.mu.Unlock()
			return
		case <-t.C:
		}
		if !db.hasSpace() {
			continue
		}
		g := &db.space
		g.mu.Lock()
		// An ENOSPC seen since the last tick keeps the store full.
		if time.Since(g.since) < pollInterval {
			g.mu.Unlock()
			continue
		}
		g.full.Store(false)
		g.polling = false
		g.broadcastLocked()
		g.mu.Unlock()
		return
	}
}

// hasSpace reports whether the disk has room again: the FS's free space
// when it reports one, else a probe file written and removed.
func (db *Engine) hasSpace() bool {
	fs := db.rawFS()
	if u, err := fs.GetDiskUsage(db.dir); err == nil {
		return u.AvailBytes >= db.minFreeBytes()
	}
	name := fs.PathJoin(db.dir, "space-probe.tmp")
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return false
	}
	_, err = f.Write(make([]byte, 64<<10))
	if err == nil {
		err = f.Sync()
	}
	_ = f.Close()
	_ = fs.Remove(name)
	return err == nil
}

// rawFS is the store's FS under spaceFS.
func (db *Engine) rawFS() vfs.FS {
	if s, ok := db.fs.(*spaceFS); ok {
		return s.FS
	}
	return db.fs
}

func (g *spaceGate) broadcastLocked() {
	if g.changed != nil {
		close(g.changed)
	}
	g.changed = make(chan struct{})
}

func (g *spaceGate) wait() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.changed == nil {
		g.changed = make(chan struct{})
	}
	return g.changed
}

func (db *Engine) stallBegin() { db.space.stalled.Store(true) }

func (db *Engine) stallEnd() {
	g := &db.space
	g.mu.Lock()
	g.stalled.Store(false)
	g.broadcastLocked()
	g.mu.Unlock()
}

// admitWrite returns nil when a write may be handed to Pebble: at once
// unless the store is full (noSpaceError) or Pebble stalls writes, in
// which case it waits for the stall to end, at most until ctx is done or
// Options.WriteTimeout has passed.
func (db *Engine) admitWrite(ctx context.Context) error {
	var expired <-chan time.Time
	for {
		if db.space.full.Load() {
			return noSpaceError()
		}
		if !db.space.stalled.Load() {
			return nil
		}
		ch := db.space.wait()
		if !db.space.stalled.Load() || db.space.full.Load() {
			continue
		}
		if expired == nil && db.opts.WriteTimeout > 0 {
			t := time.NewTimer(db.opts.WriteTimeout)
			defer t.Stop()
			expired = t.C
		}
		var cause error
		select {
		case <-ch:
			continue
		case <-ctx.Done():
			cause = ctx.Err()
		case <-expired:
			cause = db.timeoutError()
		}
		if db.space.full.Load() {
			return noSpaceError()
		}
		return fmt.Errorf("%w: writes are stalled while the store's disk catches up (%w)", driver.ErrNoSpace, cause)
	}
}

// timeoutError is the cause of a write given up after WriteTimeout.
func (db *Engine) timeoutError() error {
	return fmt.Errorf("%w: storage did not accept the write within the write timeout (%v)", context.DeadlineExceeded, db.opts.WriteTimeout)
}

// waitBounded waits for done and returns what it sends, or giveUp's
// error once ctx is done, or once Options.WriteTimeout has passed while
// the disk is full or Pebble stalls writes (a healthy store's slow work,
// such as a large bulk write, is waited for).
func (db *Engine) waitBounded(ctx context.Context, done <-chan error, giveUp func() error) error {
	var tick <-chan time.Time
	var t *time.Timer
	if db.opts.WriteTimeout > 0 {
		t = time.NewTimer(db.opts.WriteTimeout)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return giveUp()
		case <-tick:
			if db.space.full.Load() || db.space.stalled.Load() {
				return giveUp()
			}
			t.Reset(db.opts.WriteTimeout)
		}
	}
}

// handOver is one write's claim on handing its batch to Pebble: either
// the write hands it over (begin) or its caller gives up first (abandon),
// never both.
type handOver struct{ state atomic.Int32 }

const (
	handPending int32 = iota
	handGiven
	handAbandoned
)

// begin claims the hand-over; false means the caller has given up and the
// batch must not be committed.
func (h *handOver) begin() bool {
	return h == nil || h.state.CompareAndSwap(handPending, handGiven) || h.state.Load() == handGiven
}

type handOverKey struct{}

// handOverOf returns the hand-over of a write run by boundedWrite, or nil.
func handOverOf(ctx context.Context) *handOver {
	h, _ := ctx.Value(handOverKey{}).(*handOver)
	return h
}

// errAbandoned is returned inside an abandoned write; its caller never
// sees it.
var errAbandoned = errors.New("tablestore: write abandoned before it was applied")

// boundedWrite runs the write fn on its own goroutine and waits for it
// as waitBounded does, returning fn's result only when fn finished (the
// zero R when the caller gave up). fn must hand its batches to Pebble
// through commitChanges or commitBatch, which refuse to start once the
// caller has given up: a write given up before its hand-over is not
// applied, and its error says why (the full disk, ctx, the write
// timeout); one given up after may still be applied, and its error says
// so. fn must own what it reads: a write given up on outlives its
// caller's call (see cloneActions).
//
// With NoSync, fn runs on the caller's goroutine: a goroutine per write
// would more than double an unsynced write's cost, and such a write
// waits for nothing but the memtable, which the gate keeps from stalling
// on a full disk. Only the rare write that rotates the memtable just as
// the WAL meets a full disk then waits for space.
func boundedWrite[R any](db *Engine, ctx context.Context, fn func(ctx context.Context) (R, error)) (R, error) {
	var zero R
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if db.opts.NoSync {
		return fn(ctx)
	}
	h := &handOver{}
	var res R // set before done is sent; read only after it is received
	done := make(chan error, 1)
	go func() {
		r, err := fn(context.WithValue(ctx, handOverKey{}, h))
		res = r
		done <- err
	}()
	finished := true
	err := db.waitBounded(ctx, done, func() error {
		cause := ctx.Err()
		if cause == nil {
			cause = db.timeoutError()
		}
		if db.space.full.Load() {
			cause = fmt.Errorf("%w (%w)", noSpaceError(), cause)
		}
		if h.state.CompareAndSwap(handPending, handAbandoned) {
			finished = false
			return cause
		}
		select {
		case err := <-done: // finished just now
			return err
		default:
			finished = false
			return errMaybeApplied(cause)
		}
	})
	if !finished {
		return zero, err
	}
	return res, err
}

// cloneActions copies actions and every byte they alias, for a write that
// may outlive its caller's call (boundedWrite): the driver's contract lets
// the caller reuse that memory once Commit returns.
func cloneActions(actions []driver.Action) []driver.Action {
	out := make([]driver.Action, len(actions))
	for i, a := range actions {
		if a.Record != nil {
			a.Record = append([]byte(nil), a.Record...)
		}
		if a.Properties != nil {
			props := make([]driver.Property, len(a.Properties))
			for j, p := range a.Properties {
				if p.Value.Bytes != nil {
					p.Value.Bytes = append([]byte(nil), p.Value.Bytes...)
				}
				props[j] = p
			}
			a.Properties = props
		}
		out[i] = a
	}
	return out
}

// isNoSpace reports whether err is a full disk's.
func isNoSpace(err error) bool { return err != nil && vfs.IsNoSpaceError(err) }

// spaceFS wraps the store's FS to see every ENOSPC, and to hold up a write
// to a WAL or MANIFEST file that meets one until space returns (see the
// comment at the top of this file).
type spaceFS struct {
	vfs.FS
	db *Engine
}

func (fs *spaceFS) Unwrap() vfs.FS { return fs.FS }

func (fs *spaceFS) note(err error) error {
	if isNoSpace(err) {
		fs.db.markFull()
	}
	return err
}

func (fs *spaceFS) wrap(name string, f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, fs.note(err)
	}
	base := fs.PathBase(name)
	retry := strings.HasSuffix(base, ".log") || strings.HasPrefix(base, "MANIFEST-")
	return &spaceFile{File: f, fs: fs, retry: retry}, nil
}

func (fs *spaceFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.Create(name, c)
	return fs.wrap(name, f, err)
}

func (fs *spaceFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.OpenReadWrite(name, c, opts...)
	return fs.wrap(name, f, err)
}

func (fs *spaceFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.FS.ReuseForWrite(oldname, newname, c)
	return fs.wrap(newname, f, err)
}

func (fs *spaceFS) Link(oldname, newname string) error {
	return fs.note(fs.FS.Link(oldname, newname))
}

func (fs *spaceFS) Rename(oldname, newname string) error {
	return fs.note(fs.FS.Rename(oldname, newname))
}

func (fs *spaceFS) MkdirAll(dir string, perm os.FileMode) error {
	return fs.note(fs.FS.MkdirAll(dir, perm))
}

// spaceFile is a file of spaceFS.
type spaceFile struct {
	vfs.File
	fs    *spaceFS
	retry bool // a log file: writes wait for space
}

// waitForSpace blocks until the monitor finds space again; false if the
// engine's Pebble instance was closed first.
func (f *spaceFile) waitForSpace() bool {
	db := f.fs.db
	db.markFull()
	for db.space.full.Load() {
		ch := db.space.wait()
		if !db.space.full.Load() {
			break
		}
		select {
		case <-ch:
		case <-db.pebbleClosed.Done():
			return false
		}
	}
	return true
}

func (f *spaceFile) Write(p []byte) (int, error) {
	written := 0
	for {
		n, err := f.File.Write(p[written:])
		written += n
		if err == nil || !isNoSpace(err) {
			return written, err
		}
		if !f.retry || !f.waitForSpace() {
			return written, f.fs.note(err)
		}
	}
}

func (f *spaceFile) WriteAt(p []byte, off int64) (int, error) {
	written := 0
	for {
		n, err := f.File.WriteAt(p[written:], off+int64(written))
		written += n
		if err == nil || !isNoSpace(err) {
			return written, err
		}
		if !f.retry || !f.waitForSpace() {
			return written, f.fs.note(err)
		}
	}
}

func (f *spaceFile) Preallocate(off, n int64) error { return f.fs.note(f.File.Preallocate(off, n)) }
func (f *spaceFile) Sync() error                    { return f.fs.note(f.File.Sync()) }
func (f *spaceFile) SyncData() error                { return f.fs.note(f.File.SyncData()) }
func (f *spaceFile) SyncTo(n int64) (bool, error) {
	full, err := f.File.SyncTo(n)
	return full, f.fs.note(err)
}
