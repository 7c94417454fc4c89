// Package engine is the embedded storage engine behind package tablestore:
// a driver.Conn on one Pebble instance. It owns the catalog and table IDs,
// the keyspace (internal/keys), the stored records (driver.Record, stored
// as they are), the partition locks, the durable clock behind Timestamps,
// transaction commit, and page reads of the key ranges a query request
// names with its residual filter evaluated on encoded bytes.
//
// It trusts its caller: every name, key, property, filter and transaction
// shape has been validated by package tablestore.
package engine

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/encfs"
)

// Options configure an Engine. Every field is used as given: package
// tablestore fills in its defaults.
type Options struct {
	NoSync    bool  // commits do not wait for the WAL to sync
	CacheSize int64 // block cache bytes, for a cache of the store's own
	// Cache, if set, is a block cache shared with other stores (Pebble
	// keeps the blocks of each apart), used instead of one of CacheSize
	// bytes: it saves a new store the cost of making its own. The caller
	// keeps its reference for as long as any store may use it. Each
	// store's block cache metrics are then the shared cache's.
	Cache           *pebble.Cache
	MemTableSize    uint64           // Pebble memtable bytes
	BloomBitsPerKey int              // bloom filter bits per key; <= 0 disables
	BlockSize       int              // sstable data block bytes; <= 0 is Pebble's default
	Clock           func() time.Time // source of Timestamps and page time budget
	PageScanLimit   int              // most entities a query page examines
	PageTimeLimit   time.Duration    // longest a query page runs
	Parallelism     int              // workers of a parallel scan; <= 1 reads serially
	// OnFault, if set, is called once, on its own goroutine, with the
	// first fault (see Health).
	OnFault func(error)
	// MustExist makes Open refuse a directory that would become a new
	// store (see missingStore); OpenInMemory ignores it.
	MustExist bool
	// SweepRate bounds how many expired entities per second the
	// background sweeper removes (see startExpirySweeper); <= 0 is
	// DefaultSweepRate, and at most MaxSweepRate.
	SweepRate int

	// DisableAutoCompactions keeps Pebble from compacting on its own, for
	// tests that need each flush to stay in its own file.
	DisableAutoCompactions bool

	// WriteTimeout bounds how long a write waits for storage that is not
	// accepting writes (a full disk, a write stall), and how long Close
	// waits for such writes; <= 0 waits as long as ctx allows. See
	// diskfull.go.
	WriteTimeout time.Duration

	// Keys, if set, encrypt every file of the store (see encryption.go).
	Keys encfs.KeyProvider
	// Backup, if set, keeps a continuous backup (see backup.go).
	Backup *BackupOptions

	readOnly bool // for CheckDir: Pebble read-only, no store marker written
	// encrypted is the FS CheckDir has wrapped already with Keys.
	encrypted *encfs.FS
}

// Engine is an open store: a set of tables in one Pebble instance. It is
// safe for concurrent use by many goroutines.
type Engine struct {
	opts Options
	fs   vfs.FS
	dir  string
	enc  *encfs.FS // nil for a store that is not encrypted
	// clockFile holds the clock's ceiling; clockLegacy says that the
	// old clock key is still to be deleted. Only writeClock uses them
	// after Open.
	clockFile   *clockFile
	clockLegacy bool
	pdb         *pebble.DB
	writeOpts   *pebble.WriteOptions
	closed      atomic.Bool
	// closeMu is held in read mode by every operation while it uses
	// Pebble, and in write mode by Close, so Close waits for operations in
	// flight and later ones see ErrClosed.
	closeMu sync.RWMutex
	// release is closeMu.RUnlock as a func value, made once so enter
	// does not allocate one per operation.
	release func()

	// catMu guards the catalog. Writes hold it in read mode from table
	// lookup to commit, so a table cannot be deleted under a write;
	// CreateTable and DeleteTable hold it in write mode.
	catMu  sync.RWMutex
	tables map[string]tableInfo // by lowercase name
	nextID uint64               // next table ID to assign
	// catVersion counts catalog changes, so table handles can cache their
	// lookup and revalidate it with one atomic load.
	catVersion atomic.Uint64

	locks partitionLocks
	clock timestampClock
	// changes holds the change feeds (see changes.go).
	changes changeFeeds
	// bg counts background work (see background) that Close waits for.
	bg sync.WaitGroup
	// ix holds the secondary indexes (see index.go).
	ix indexes
	// ttl holds the expiry settings and the sweeper (see ttl.go).
	ttl ttlState
	// space is the disk-full and write-stall state (see diskfull.go).
	space spaceGate

	// fault is the first fault (see fault.go); stopped says Pebble must
	// not be called again.
	fault   atomic.Pointer[error]
	faulted chan struct{} // closed when fault is set
	stopped atomic.Bool
	// pebbleClosed is done once Close has closed Pebble; Compact's
	// background call ends with it (see Compact).
	pebbleClosed context.Context
	closePebble  context.CancelFunc
	// names maps table IDs to names, for describing damaged key spans
	// without taking catMu.
	names atomic.Pointer[map[uint64]string]
	// views are the open snapshots (see view.go); backup is continuous
	// backup's state (see backup.go).
	views  views
	backup *backupLog

	// statsFlush is when a size estimate last flushed the memtables, in
	// Unix nanoseconds (flushForStats).
	statsFlush atomic.Int64
}

var _ driver.Conn = (*Engine)(nil)

// Open opens (creating if needed) the store in directory dir.
func Open(dir string, opts Options) (*Engine, error) {
	return open(dir, vfs.Default, opts)
}

// OpenInMemory opens an empty store on Pebble's in-memory filesystem; its
// contents are gone after Close.
func OpenInMemory(opts Options) (*Engine, error) {
	return open("", vfs.NewMem(), opts)
}

// OpenFS opens (creating if needed) the store in directory dir of fs,
// such as a vfs.MemFS the caller keeps (tablestoretest's snapshots).
func OpenFS(dir string, fs vfs.FS, opts Options) (*Engine, error) {
	return open(dir, fs, opts)
}

func open(dir string, fs vfs.FS, o Options) (db *Engine, err error) {
	db = &Engine{opts: o, fs: fs, dir: dir, writeOpts: pebble.Sync, faulted: make(chan struct{})}
	db.pebbleClosed, db.closePebble = context.WithCancel(context.Background())
	db.release = db.closeMu.RUnlock
	db.names.Store(&map[uint64]string{})
	closePebble := db.closePebble
	defer func() {
		if err != nil {
			closePebble() // ends the disk-full monitor, if started
			db = nil
		}
	}()
	defer db.recoverStop("open", &err)
	if o.encrypted == nil {
		fs, db.enc, err = storeFS(fs, dir, o.Keys)
		if err != nil {
			return nil, err
		}
	} else {
		fs, db.enc = o.encrypted, o.encrypted
	}
	db.fs = fs
	if !o.readOnly {
		fs = &spaceFS{FS: fs, db: db}
		db.fs = fs
	}
	fresh := true
	if dir != "" {
		if fresh, err = inspectDir(fs, dir); err != nil {
			return nil, err
		}
		if fresh && o.MustExist {
			return nil, missingStore(fs, dir)
		}
	}
	cache := o.Cache
	if cache == nil {
		cache = pebble.NewCache(o.CacheSize)
		defer cache.Unref() // Pebble holds its own reference
	}
	popts := &pebble.Options{
		Cache:              cache,
		FS:                 fs,
		MemTableSize:       o.MemTableSize,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             pebbleLogger{db},
		EventListener:      db.eventListener(),
		ErrorIfNotExists:   !fresh,
		ReadOnly:           o.readOnly,
	}
	popts.DisableAutomaticCompactions = o.DisableAutoCompactions
	// MinLZ where Pebble finds it faster than Snappy (all but arm64):
	// flushes and compactions compress every block they write.
	popts.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionFastest })
	for i := range popts.Levels {
		if o.BloomBitsPerKey > 0 {
			popts.Levels[i].FilterPolicy = bloom.FilterPolicy(o.BloomBitsPerKey)
		}
		if o.BlockSize > 0 {
			popts.Levels[i].BlockSize = o.BlockSize
		}
	}
	pdb, err := pebble.Open(dir, popts)
	if err != nil {
		return nil, openError(dir, err)
	}
	db.pdb = pdb
	db.locks.seed = maphash.MakeSeed()
	if o.NoSync {
		db.writeOpts = pebble.NoSync
	}
	err = errors.Join(db.loadCatalog(), db.loadClock())
	if err == nil {
		err = db.loadIndexes()
	}
	if err == nil {
		err = db.loadChanges()
	}
	if err == nil {
		err = db.loadTTL()
	}
	if err == nil && !o.readOnly {
		err = db.checkStoreMarker(fresh)
	}
	if err == nil && o.Backup != nil && !o.readOnly {
		err = db.startBackup()
	} else if err == nil && !o.readOnly {
		err = db.markUnbacked()
	}
	if err != nil {
		db.stopChanges()
		_ = db.clockFile.close()
		_ = pdb.Close()
		db.closePebble()
		return nil, err
	}
	return db, nil
}

// openError describes a failed pebble.Open.
func openError(dir string, err error) error {
	var ke *driver.EncryptionKeyError
	switch {
	case errors.As(err, &ke):
		return ke
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK):
		return fmt.Errorf("tablestore: open %q: the store is in use by another process, which holds its lock: %w", dir, err)
	case strings.Contains(err.Error(), "lock held by current process"):
		return fmt.Errorf("tablestore: open %q: the store is already open in this process: %w", dir, err)
	case errors.Is(err, pebble.ErrDBDoesNotExist):
		return fmt.Errorf("%w: %q holds files but no store", driver.ErrNotStore, dir)
	case pebble.IsCorruptionError(err):
		ce := &driver.CorruptError{Op: "open", Err: err}
		if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
			ce.File, ce.Err = info.Path, info.Details
		}
		return ce
	}
	return fmt.Errorf("tablestore: open %q: %w", dir, err)
}

// Close releases the store. Synced commits are already durable; with
// NoSync, Close syncs the write-ahead log first. Close also stores the
// clock's exact last value, so the next Open resumes from it (see
// timestampClock). Close waits for
// operations in flight to finish; operations that start later return
// ErrClosed, and so does a second Close. After a stop (see fault.go)
// Close releases nothing of Pebble's and returns the fault.
//
// While writes are held up by a full disk, Close waits at most
// Options.WriteTimeout for them, then returns an error matching
// driver.ErrNoSpace and finishes closing in the background once space
// returns; the store stays locked in this process until then.
func (db *Engine) Close() error {
	if db.closed.Swap(true) {
		return driver.ErrClosed
	}
	done := make(chan error, 1)
	go func() { done <- db.close() }()
	return db.waitBounded(context.Background(), done, func() error {
		return fmt.Errorf("%w: close: writes are held up by the full disk; the store finishes closing once space is freed, and synced writes are durable", driver.ErrNoSpace)
	})
}

func (db *Engine) close() (err error) {
	db.stopChanges()
	db.stopExpirySweeper()
	db.stopBackupWorker()
	db.closeMu.Lock()
	defer db.closeMu.Unlock()
	if db.stopped.Load() {
		return db.Health()
	}
	db.bg.Wait()
	defer db.recoverStop("close", &err)
	db.closeViews()
	errs := []error{db.stopBackup(), db.closeClock()}
	errs = append(errs, db.clockFile.close())
	if db.opts.NoSync {
		errs = append(errs, db.pdb.LogData(nil, pebble.Sync))
	}
	errs = append(errs, db.pdb.Close())
	db.closePebble()
	return db.storageErr("close", errors.Join(errs...))
}

// Flush flushes the memtable to sstables, for tests and benchmarks that
// need data on disk.
func (db *Engine) Flush() (err error) {
	release, err := db.enter(context.Background())
	if err != nil {
		return err
	}
	defer release()
	defer db.recoverStop("flush", &err)
	// A move of the clock's ceiling in flight is a write made before the
	// call: it is flushed too.
	db.clock.settle()
	return db.storageErr("flush", db.pdb.Flush())
}

// Compact compacts the whole keyspace, for tests that need compactions
// to read every file. On a damaged store it returns the fault: Pebble
// retries a failing compaction, so one waiting for it could wait forever;
// for the same reason a fault recorded meanwhile ends the wait. Pebble's
// call then goes on in the background until its compactions end or Close
// has closed Pebble: cancelling it earlier drops its queued compactions
// while Pebble's scheduler may hold one of them picked, and the
// scheduler panics when it runs that pick.
func (db *Engine) Compact() (err error) {
	release, err := db.enterWrite(context.Background())
	if err != nil {
		return err
	}
	defer release()
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() { done <- err }()
		defer db.recoverStop("compaction", &err)
		err = db.pdb.Compact(db.pebbleClosed, []byte{0}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, true)
	}()
	select {
	case err = <-done:
	case <-db.faulted:
	}
	if werr := db.writable(); werr != nil {
		return werr
	}
	return db.storageErr("compaction", err)
}

// checkContext returns ctx's error, or ErrClosed if db is closed.
func (db *Engine) checkContext(ctx context.Context) error {
	if db.closed.Load() {
		return driver.ErrClosed
	}
	return ctx.Err()
}

// enter admits an operation that will use Pebble: it fails with ctx's
// error or ErrClosed, or returns the function that ends the operation.
// Close waits for every admitted operation to end.
func (db *Engine) enter(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if db.closed.Load() {
		// Before RLock, which would wait behind Close's Lock.
		return nil, driver.ErrClosed
	}
	db.closeMu.RLock()
	if db.closed.Load() {
		db.closeMu.RUnlock()
		return nil, driver.ErrClosed
	}
	if db.stopped.Load() {
		db.closeMu.RUnlock()
		return nil, db.Health()
	}
	return db.release, nil
}

// enterWrite is enter for an operation that writes: it also fails,
// admitting nothing, when the store refuses writes (see writable).
func (db *Engine) enterWrite(ctx context.Context) (release func(), err error) {
	if release, err = db.enter(ctx); err != nil {
		return nil, err
	}
	if err := db.writable(); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// errorf returns a *driver.Error with Azure's code.
func errorf(code edm.Code, format string, args ...any) *driver.Error {
	return &driver.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

var errBadClock = errors.New("bad clock ceiling")

// errReadOnly is a write's error in a store opened read-only.
var errReadOnly = errors.New("tablestore: the store is open read-only")

func corruptRecord(key []byte, err error) error {
	return &driver.CorruptError{Op: fmt.Sprintf("decode of the record at key %q", key), Err: err}
}
