package engine

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/keys"
)

// How faults are contained.
//
// Pebble reports damage it detects three ways: as an error marked with
// pebble.ErrCorruption returned by the call that read the damaged block
// (Get, an iterator, a batch commit's reads), through the event listener
// (DataCorruption for every damaged file it reads, in the foreground or in
// a compaction; BackgroundError for a failed flush or compaction), and, for
// conditions it considers unrecoverable (a failed MANIFEST or WAL write, a
// broken invariant), through Logger.Fatalf, which by default ends the
// process.
//
// The engine installs its own listener and logger. A corruption, wherever
// seen, records a fault: from then on every write (Commit, CreateTable,
// DeleteTable) fails with an error matching driver.ErrCorrupt, reads go on
// (those reaching damaged blocks fail with ErrCorrupt), and Health reports
// the first fault. A Fatalf stops the engine: it records the fault and
// every later operation but Health fails with it, without calling Pebble
// again; Close then leaves the Pebble instance open (its directory lock is
// released when the process exits), since Pebble's state is unknown. When
// Fatalf is called on the caller's goroutine, under an engine operation,
// the logger panics and the operation's deferred recoverStop turns the
// panic into the operation's error. When it is called on one of Pebble's
// own goroutines, a panic would end the process, so the logger returns
// instead and Pebble goes on with the error it was handling (every Fatalf
// site in Pebble v2.1.7 that a disk fault can reach returns an error or
// ends its background job after the call).

// fatalStop is the panic value of a Fatalf on an operation's goroutine.
type fatalStop struct{ err error }

// Health implements driver.HealthReporter: nil, the first fault, or
// while the disk is full an error matching driver.ErrNoSpace (which is
// not a fault: it clears when space returns).
func (db *Engine) Health() error {
	if p := db.fault.Load(); p != nil {
		return *p
	}
	return db.spaceHealth()
}

// setFault records err as the store's fault unless one is recorded, and
// calls Options.OnFault with it on a new goroutine (so the callback can
// neither block Pebble nor deadlock on the engine).
func (db *Engine) setFault(err error) {
	if !db.fault.CompareAndSwap(nil, &err) {
		return
	}
	close(db.faulted)
	if db.opts.OnFault != nil {
		go db.opts.OnFault(err)
	}
}

// stop records a fault after which Pebble must not be called again.
func (db *Engine) stop(err error) {
	db.setFault(err)
	db.stopped.Store(true)
}

// writable returns nil when writes are allowed, else why not.
func (db *Engine) writable() error {
	err := db.Health()
	if err == nil {
		return nil
	}
	var ce *driver.CorruptError
	if db.stopped.Load() || !errors.As(err, &ce) {
		return err
	}
	return &driver.CorruptError{File: ce.File, Op: "a write, refused since the " + ce.Op, Err: ce.Err}
}

// storageErr turns an error Pebble returned during op into the engine's:
// a corruption becomes a *driver.CorruptError naming the file when Pebble
// knows it, and records the fault; other errors (I/O) keep their cause.
func (db *Engine) storageErr(op string, err error) error {
	if err == nil {
		return nil
	}
	var ce *driver.CorruptError
	var de *driver.Error
	if errors.As(err, &ce) || errors.As(err, &de) || errors.Is(err, driver.ErrClosed) || errors.Is(err, driver.ErrNoSpace) || errors.Is(err, driver.ErrBackupStopped) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if pebble.IsCorruptionError(err) {
		ce = &driver.CorruptError{Op: op, Err: err}
		if info := pebble.ExtractDataCorruptionInfo(err); info != nil {
			// Details is err without Pebble's detail carrier, whose text
			// would end the message with a line of its own.
			ce.File, ce.Err = info.Path, info.Details
		}
		db.setFault(ce)
		return ce
	}
	if isNoSpace(err) {
		db.markFull()
		return fmt.Errorf("%w: %s: %w", driver.ErrNoSpace, op, err)
	}
	return fmt.Errorf("tablestore: %s: %w", op, err)
}

// recoverStop is deferred by every operation that calls Pebble: it turns
// a panic raised on the operation's goroutine (a Fatalf, or a panic inside
// Pebble) into the operation's error and records the fault.
func (db *Engine) recoverStop(op string, errp *error) {
	if r := recover(); r != nil {
		db.recovered(r, op, errp)
	}
}

// recovered is recoverStop's work on a recovered value r, for callers
// that recover themselves so they need not build op until a panic.
func (db *Engine) recovered(r any, op string, errp *error) {
	if fs, ok := r.(fatalStop); ok {
		*errp = fs.err
		return
	}
	if err, ok := r.(error); ok && pebble.IsCorruptionError(err) {
		*errp = db.storageErr(op, err)
		return
	}
	err := fmt.Errorf("tablestore: storage engine failed during %s: %v", op, r)
	db.stop(err)
	*errp = err
}

// eventListener returns the listener that records Pebble's reports of
// damage. DataCorruption runs synchronously in read paths, so it only
// records.
func (db *Engine) eventListener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			// Other background errors are retried by Pebble and leave
			// the store consistent; a full disk refuses writes until
			// space returns (see diskfull.go).
			if isNoSpace(err) {
				db.markFull()
			}
			if pebble.IsCorruptionError(err) {
				_ = db.storageErr("background flush or compaction", err)
			}
		},
		WriteStallBegin: func(pebble.WriteStallBeginInfo) { db.stallBegin() },
		WriteStallEnd:   db.stallEnd,
		DataCorruption: func(info pebble.DataCorruptionInfo) {
			db.setFault(&driver.CorruptError{
				File: info.Path,
				Op:   "read of " + db.describeSpan(info.Bounds.Start, info.Bounds.End.Key),
				Err:  info.Details,
			})
		},
	}
}

// describeSpan names the tables whose keys fall in [start, end].
func (db *Engine) describeSpan(start, end []byte) string {
	names := db.tablesInSpan(start, end)
	if len(names) == 0 {
		return "unknown keys"
	}
	return "keys of " + strings.Join(names, ", ")
}

// tablesInSpan lists the tables (names as created, "#id" when absent from
// the catalog, "(catalog)" for metadata) with IDs between the table IDs
// of start and end. It takes no lock: it reads the published ID map.
func (db *Engine) tablesInSpan(start, end []byte) []string {
	lo, hi := tableIDOf(start), tableIDOf(end)
	if hi < lo {
		lo, hi = hi, lo
	}
	names := *db.names.Load()
	var out []string
	if lo == keys.MetaTableID {
		out = append(out, "(catalog)")
	}
	var found []uint64
	for id := range names {
		if id >= lo && id <= hi {
			found = append(found, id)
		}
	}
	if hi-lo < 16 && hi >= 1 {
		for id := max(lo, 1); ; id++ {
			if _, ok := names[id]; !ok {
				found = append(found, id)
			}
			if id >= hi {
				break
			}
		}
	}
	slices.Sort(found)
	for _, id := range found {
		if name, ok := names[id]; ok {
			out = append(out, name)
		} else {
			out = append(out, fmt.Sprintf("#%d", id))
		}
	}
	return out
}

// tableIDOf returns the table ID a key's first 8 bytes hold, padding a
// shorter key with zeros.
func tableIDOf(k []byte) uint64 {
	var b [8]byte
	copy(b[:], k)
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}

// publishNames stores the catalog's ID -> name map for tablesInSpan.
// REQUIRES: db.catMu held (either mode) by a caller that changed tables.
func (db *Engine) publishNames() {
	m := make(map[uint64]string, len(db.tables))
	for _, info := range db.tables {
		m[info.id] = info.name
	}
	db.names.Store(&m)
}

// pebbleLogger keeps Pebble quiet (a library must not write to the user's
// stderr) and turns Fatalf into a stop of the engine (see the comment at
// the top of this file).
type pebbleLogger struct{ db *Engine }

func (pebbleLogger) Infof(string, ...any)  {}
func (pebbleLogger) Errorf(string, ...any) {}

func (l pebbleLogger) Fatalf(format string, args ...any) {
	err := errors.New("tablestore: storage engine stopped: " + fmt.Sprintf(format, args...))
	l.db.stop(err)
	if onOperationGoroutine() {
		panic(fatalStop{err})
	}
}

var enginePrefix = reflect.TypeFor[Engine]().PkgPath() + "."

// onOperationGoroutine reports whether the caller runs under an engine
// operation (whose deferred recoverStop catches a panic) rather than on
// one of Pebble's background goroutines, whose stacks hold no engine
// frame but the logger's and listener's.
func onOperationGoroutine() bool {
	pcs := make([]uintptr, 512)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, enginePrefix) && !strings.Contains(f.Function, "pebbleLogger") &&
			!strings.Contains(f.Function, "eventListener") {
			return true
		}
		if !more {
			return false
		}
	}
}
