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
	// spare is an empty store opened ahead of the next Reset, once a
	// first Reset has shown the test uses them; nil until then.
	spare chan spareResult
	// restored is the snapshot the last Restore used; once a snapshot is
	// restored a second time, restoreSpare is a copy of it opened ahead
	// of the next Restore of it (nil when none).
	restored     *Snapshot
	restoreSpare *pendingStore
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
}

type spareResult struct {
	st  *state
	err error
}

// pendingStore is a copy of snap being opened in the background; its
// channel holds the result once the open ends.
type pendingStore struct {
	snap *Snapshot
	done chan spareResult
}

// openAhead opens a copy of snap in the background.
func (w *world) openAhead(snap *Snapshot) *pendingStore {
	p := &pendingStore{snap: snap, done: make(chan spareResult, 1)}
	go func() {
		st, err := w.openSnapshot(snap)
		p.done <- spareResult{st, err}
	}()
	return p
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
	st := &state{fs: fs, eng: e, db: db}
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

// swap makes st current and closes the store it replaces in the
// background (requests still running on it finish first).
func (w *world) swap(st *state) {
	old := w.cur.Swap(st)
	if old == nil {
		return
	}
	w.closing.Add(1)
	go func() {
		defer w.closing.Done()
		_ = old.db.Close()
	}()
}

// close closes the current store and any spare, after the replaced ones.
func (w *world) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var err error
	if st := w.cur.Swap(nil); st != nil {
		err = st.db.Close()
	}
	if w.spare != nil {
		if r := <-w.spare; r.st != nil {
			_ = r.st.db.Close()
		}
		w.spare = nil
	}
	if w.restoreSpare != nil {
		w.restoreSpare.discard()
		w.restoreSpare = nil
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

// restore makes a copy of snap current. The first two Restores of a
// snapshot open their copy; from the second on, the next copy is opened
// in the background, so a test restoring one snapshot again and again
// waits at most for the rest of that open.
func (w *world) restore(snap *Snapshot) error {
	if snap == nil {
		return fmt.Errorf("nil snapshot")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var st *state
	if p := w.restoreSpare; p != nil {
		w.restoreSpare = nil
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
		if st, err = w.openSnapshot(snap); err != nil {
			return err
		}
	}
	w.swap(st)
	if w.restored == snap {
		w.restoreSpare = w.openAhead(snap)
	}
	w.restored = snap
	return nil
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

// reset makes an empty store current: the spare opened in the
// background, so Reset costs a pointer swap once a spare is ready.
func (w *world) reset() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	var st *state
	if w.spare == nil {
		w.spare = make(chan spareResult, 1)
		var err error
		if st, err = w.open(nil); err != nil {
			return err
		}
	} else {
		r := <-w.spare
		if r.err != nil {
			w.spare = nil
			return r.err
		}
		st = r.st
	}
	w.swap(st)
	go func() {
		st, err := w.open(nil)
		w.spare <- spareResult{st, err}
	}()
	return nil
}

// waitSpare waits until the stores opened ahead are open (for
// benchmarks).
func (w *world) waitSpare() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.spare != nil {
		r := <-w.spare
		w.spare <- r
	}
	if p := w.restoreSpare; p != nil {
		r := <-p.done
		p.done <- r
	}
}
