package tablestoretest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/engine"
)

// A world is the swappable store behind a Server or a DB: the current
// store (with the handler serving it, for a Server) is replaced whole by
// Restore and Reset, so neither has to empty a store in place.
type world struct {
	clock *Clock
	// newHandler makes the handler serving a store; nil for NewDB.
	newHandler func(*tablestore.DB) (http.Handler, error)
	// wrap wraps a store's driver (fault injection); nil: none.
	wrap func(driver.Conn) driver.Conn

	cur atomic.Pointer[state]
	// mu serializes Snapshot, Restore and Reset.
	mu sync.Mutex
	// baseline is what Reset returns the state to; nil: an empty store.
	baseline *Snapshot
	// last is the snapshot the last Restore or Reset copied (nil: an
	// empty store); once one is copied a second time in a row (or by a
	// Reset), ahead is the next copy of it, opened in the background.
	last  *Snapshot
	ahead *pendingStore
	// closing counts stores replaced and being closed.
	closing sync.WaitGroup
	cpSeq   int
}

// state is one store: its filesystem, the DB over it and its handler.
type state struct {
	fs  *vfs.MemFS
	eng *engine.Engine
	db  *tablestore.DB
	h   http.Handler
	// origin is the snapshot the store is a copy of (nil: it was opened
	// empty), and logBytes the engine's LogBytes once open: while that
	// has not moved, the store is still an exact copy of origin.
	origin   *Snapshot
	logBytes uint64
}

// pristine reports whether st still holds exactly a copy of snap (nil:
// an empty store).
func (st *state) pristine(snap *Snapshot) bool {
	return st.origin == snap && st.eng.LogBytes() == st.logBytes
}

type spareResult struct {
	st  *state
	err error
}

// pendingStore is a copy of snap (nil: an empty store) being opened in
// the background; its channel holds the result once the open ends.
type pendingStore struct {
	snap *Snapshot
	done chan spareResult
}

// openAhead opens a copy of snap in the background.
func (w *world) openAhead(snap *Snapshot) *pendingStore {
	p := newPending(snap)
	w.background(nil, p)
	return p
}

func newPending(snap *Snapshot) *pendingStore {
	return &pendingStore{snap: snap, done: make(chan spareResult, 1)}
}

// discard closes p's store once its open ends.
func (p *pendingStore) discard() {
	if r := <-p.done; r.st != nil {
		_ = r.st.db.Close()
	}
}

// liveDir is the store's directory in its MemFS.
const liveDir = "db"

// blockCache is the block cache all the process's test stores share:
// making a cache of its own was a tenth of a new store's cost. It holds
// no goroutine and at most its size in memory.
var blockCache = sync.OnceValue(func() *pebble.Cache { return pebble.NewCache(4 << 20) })

// engineOptions are the stores' settings: small, as test stores are.
func (w *world) engineOptions() engine.Options {
	return engine.Options{
		NoSync:        true,
		Cache:         blockCache(),
		MemTableSize:  1 << 20,
		Clock:         w.clock.Now,
		PageScanLimit: 100_000,
		PageTimeLimit: 5 * time.Second, // Azure's figure, as the library's default
		Parallelism:   1,
	}
}

// open opens a store on fs (a fresh MemFS when nil).
func (w *world) open(fs *vfs.MemFS) (*state, error) {
	if fs == nil {
		fs = vfs.NewMem()
	}
	e, err := engine.OpenFS(liveDir, fs, w.engineOptions())
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	var conn driver.Conn = e
	if w.wrap != nil {
		conn = w.wrap(e)
	}
	db, err := tablestore.OpenDriver(conn, &tablestore.Options{Clock: w.clock.Now})
	if err != nil {
		_ = e.Close()
		return nil, err
	}
	st := &state{fs: fs, eng: e, db: db, logBytes: e.LogBytes()}
	if w.newHandler != nil {
		if st.h, err = w.newHandler(db); err != nil {
			_ = db.Close()
			return nil, err
		}
	}
	return st, nil
}

// start opens the first store.
func (w *world) start() error {
	st, err := w.open(nil)
	if err != nil {
		return err
	}
	w.cur.Store(st)
	return nil
}

// swap makes st current and, with next, opens a copy of next.snap; then
// it closes the store st replaces (requests still running on it finish
// first). Both run on one goroutine in the background.
func (w *world) swap(st *state, next *pendingStore) {
	w.background(w.cur.Swap(st), next)
}

// background opens next's copy (when not nil), then closes old (when
// not nil), on a goroutine close waits for.
func (w *world) background(old *state, next *pendingStore) {
	if old == nil && next == nil {
		return
	}
	w.closing.Add(1)
	go func() {
		defer w.closing.Done()
		if next != nil {
			st, err := w.openCopy(next.snap)
			next.done <- spareResult{st, err}
		}
		if old != nil {
			_ = old.db.Close()
		}
	}()
}

// close closes the current store and any opened ahead, after the
// replaced ones.
func (w *world) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if st := w.cur.Swap(nil); st != nil {
		err = st.db.Close()
	}
	if w.ahead != nil {
		w.ahead.discard()
		w.ahead = nil
	}
	w.closing.Wait()
	return err
}

// Snapshot is a copy of a store's whole contents at one instant: its
// tables and entities, table settings (TTL, indexes, access policies),
// the service properties and the clock's high-water mark. It is
// immutable; Restore may use it any number of times, on any Server or
// DB of this package.
type Snapshot struct {
	files []snapshotFile
}

type snapshotFile struct {
	name string
	data []byte
}

// Size is the bytes the snapshot holds.
func (s *Snapshot) Size() int64 {
	var n int64
	for _, f := range s.files {
		n += int64(len(f.data))
	}
	return n
}

// snapshot takes a Pebble checkpoint of the current store inside its own
// MemFS (hard links, a copy of the log) and copies its files out.
func (w *world) snapshot() (*Snapshot, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	st := w.cur.Load()
	w.cpSeq++
	dir := fmt.Sprintf("checkpoint-%d", w.cpSeq)
	// Flushed and compacted first, so a Restore opens sstables, with no
	// log to replay and nothing left to compact.
	if err := st.eng.Flush(); err != nil {
		return nil, err
	}
	if err := st.eng.Compact(); err != nil {
		return nil, err
	}
	if err := st.db.Checkpoint(context.Background(), dir); err != nil {
		return nil, err
	}
	defer func() { _ = st.fs.RemoveAll(dir) }()
	names, err := st.fs.List(dir)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{files: make([]snapshotFile, 0, len(names))}
	for _, name := range names {
		if strings.HasSuffix(name, ".log") {
			// Every commit acknowledged before the Flush is in sstables;
			// the log holds only later ones (and, as Pebble recycles log
			// files, stale bytes a Restore would have to scan past).
			continue
		}
		data, err := readMemFile(st.fs, st.fs.PathJoin(dir, name))
		if err != nil {
			return nil, err
		}
		snap.files = append(snap.files, snapshotFile{name: name, data: data})
	}
	return snap, nil
}

func readMemFile(fs vfs.FS, path string) ([]byte, error) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// restore makes a copy of snap current. From the second Restore of one
// snapshot in a row on, the next copy is opened in the background, so a
// test restoring one snapshot again and again waits at most for the rest
// of that open.
func (w *world) restore(snap *Snapshot) error {
	if snap == nil {
		return fmt.Errorf("nil snapshot")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.replace(snap, w.last == snap)
}

// reset makes a copy of the baseline current (an empty store when
// there is none), and opens the next copy in the background, so a Reset
// costs a pointer swap once that copy is open.
func (w *world) reset() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.replace(w.baseline, true)
}

// setBaseline makes Reset return to snap (nil: an empty store).
func (w *world) setBaseline(snap *Snapshot) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.baseline = snap
}

// replace makes a copy of snap (nil: an empty store) current, taking the
// copy opened ahead when it is one, and with ahead opens the next. A
// current store that is still an untouched copy of snap stays: Resets
// back to back cost no open.
// REQUIRES: w.mu held.
func (w *world) replace(snap *Snapshot, ahead bool) error {
	w.last = snap
	if cur := w.cur.Load(); cur != nil && cur.pristine(snap) {
		if ahead && w.ahead == nil {
			w.ahead = w.openAhead(snap)
		}
		return nil
	}
	var st *state
	if p := w.ahead; p != nil {
		w.ahead = nil
		if p.snap == snap {
			if r := <-p.done; r.err == nil {
				st = r.st
			}
		} else {
			w.closing.Add(1)
			go func() {
				defer w.closing.Done()
				p.discard()
			}()
		}
	}
	if st == nil {
		var err error
		if st, err = w.openCopy(snap); err != nil {
			return err
		}
	}
	if ahead {
		w.ahead = newPending(snap)
	}
	w.swap(st, w.ahead)
	return nil
}

// openCopy opens a copy of snap, an empty store for nil.
func (w *world) openCopy(snap *Snapshot) (*state, error) {
	if snap == nil {
		return w.open(nil)
	}
	st, err := w.openSnapshot(snap)
	if err != nil {
		return nil, err
	}
	st.origin = snap
	return st, nil
}

// openSnapshot opens a store on a fresh MemFS holding snap's files.
func (w *world) openSnapshot(snap *Snapshot) (*state, error) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll(liveDir, 0o755); err != nil {
		return nil, err
	}
	for _, f := range snap.files {
		file, err := fs.Create(fs.PathJoin(liveDir, f.name), vfs.WriteCategoryUnspecified)
		if err != nil {
			return nil, err
		}
		// MemFS copies what it is given, so the snapshot is never shared.
		data := f.data
		if memFSScrambles {
			data = bytes.Clone(data)
		}
		_, err = file.Write(data)
		if err == nil {
			err = file.Sync()
		}
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
	}
	return w.open(fs)
}

// waitAhead waits until the store opened ahead is open (for
// benchmarks).
func (w *world) waitAhead() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if p := w.ahead; p != nil {
		r := <-p.done
		p.done <- r
	}
}
