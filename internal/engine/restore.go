package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/encfs"
)

// rangesText lists the stretches w restores, for an error message.
func rangesText(w driver.BackupWindow) string {
	parts := make([]string, len(w.Ranges))
	for i, r := range w.Ranges {
		parts[i] = fmt.Sprintf("[%s, %s]", r.From.Format(time.RFC3339Nano), r.To.Format(time.RFC3339Nano))
	}
	return strings.Join(parts, ", ")
}

// ErrOutsideWindow is matched by a restore's error for a time the
// backup cannot restore; the message names the window.
var ErrOutsideWindow = errors.New("tablestore: the time is outside the backup's window")

// ListBackup describes the continuous backup in dir, whose files are
// read under keys (nil: a plain backup). Errors: a directory without a
// whole base; a *driver.EncryptionKeyError when keys cannot read it.
func ListBackup(dir string, keys encfs.KeyProvider) (driver.BackupWindow, error) {
	inv, err := scanBackup(dir, keys, false)
	if err != nil {
		return driver.BackupWindow{}, err
	}
	return inv.window(dir)
}

// window describes the backup in dir that inv inventories.
func (inv *backupInventory) window(dir string) (driver.BackupWindow, error) {
	if len(inv.bases) == 0 {
		return driver.BackupWindow{}, fmt.Errorf("tablestore: %q holds no backup base", dir)
	}
	w := driver.BackupWindow{
		Oldest:   time.Unix(0, inv.bases[0].Time).UTC(),
		Newest:   time.Unix(0, inv.lastTime).UTC(),
		Segments: len(inv.segments),
		FirstSeq: inv.bases[0].Lo,
		LastSeq:  inv.lastSeq,
		Torn:     inv.tornAt,
		Damaged:  inv.damaged,
	}
	from := w.Oldest
	for i, b := range inv.bases {
		w.Bases = append(w.Bases, time.Unix(0, b.Time).UTC())
		if i == 0 || b.Gap == nil {
			continue // the oldest base's gap is before the window
		}
		h := driver.BackupHole{After: time.Unix(0, b.Gap.After).UTC(), Before: w.Bases[i], FirstSeq: b.Gap.From, LastSeq: b.Gap.To}
		w.Holes = append(w.Holes, h)
		w.Ranges = append(w.Ranges, driver.BackupRange{From: from, To: h.After})
		from = h.Before
	}
	w.Ranges = append(w.Ranges, driver.BackupRange{From: from, To: w.Newest})
	for _, s := range inv.segments {
		w.Bytes += s.size
	}
	return w, nil
}

// RestoreResult describes a finished restore: what the user reads, and
// where its time went.
type RestoreResult struct {
	driver.RestoreResult
	Phases RestorePhases
}

// RestorePhases splits a restore's time: Read reads and decodes the
// segments (replay less Apply), Apply applies the records, Flush writes
// the result's sstables, Check opens and checks the result.
type RestorePhases struct {
	Read, Apply, Flush, Check time.Duration
}

// Restore writes into directory into (missing or empty) the store as
// it was at instant to (zero: the newest the backup holds), from the
// continuous backup in from: the newest base at or before to, then every
// commit after it up to to, whole, in commit order. The result is
// opened and checked (see Check) before Restore returns; opts configure
// that open.
//
// Errors: ErrOutsideWindow (wrapped, naming the window), a
// *driver.DamagedBackupError for a damaged record or a gap in the
// records the restore needs, an error for a non-empty into, and damage
// Check finds.
func Restore(ctx context.Context, from string, to time.Time, into string, opts Options) (_ RestoreResult, err error) {
	if err := emptyTarget(into); err != nil {
		return RestoreResult{}, err
	}
	defer leaveAsFound(into, &err)()
	inv, err := scanBackup(from, opts.Keys, false)
	if err != nil {
		return RestoreResult{}, err
	}
	w, err := inv.window(from)
	if err != nil {
		return RestoreResult{}, err
	}
	if w.Damaged != nil && (to.IsZero() || to.After(w.Newest)) {
		return RestoreResult{}, w.Damaged
	}
	if to.IsZero() {
		to = w.Newest
	}
	if to.Before(w.Oldest) || to.After(w.Newest) {
		return RestoreResult{}, fmt.Errorf("%w: %s is not in %s", ErrOutsideWindow, to.UTC().Format(time.RFC3339Nano), rangesText(w))
	}
	// Before a hole, the replay stops at its first lost record; inside
	// one, there is nothing to restore.
	upto := uint64(math.MaxUint64)
	for _, h := range w.Holes {
		if to.After(h.After) && to.Before(h.Before) {
			return RestoreResult{}, fmt.Errorf("%w: %s is in a stretch whose commits the backup lost (records %d to %d); the backup restores %s", ErrOutsideWindow, to.UTC().Format(time.RFC3339Nano), h.FirstSeq, h.LastSeq, rangesText(w))
		}
		if !to.After(h.After) {
			upto = min(upto, h.FirstSeq-1)
		}
	}
	limit := to.UnixNano()
	base := inv.bases[0]
	for _, b := range inv.bases {
		if b.Time <= limit {
			base = b
		}
	}
	res := RestoreResult{RestoreResult: driver.RestoreResult{Base: time.Unix(0, base.Time).UTC(), Time: to.UTC()}}
	if err := os.MkdirAll(into, 0o755); err != nil {
		return res, fmt.Errorf("tablestore: restore: %w", err)
	}
	if err := copyDir(filepath.Join(from, baseName(base.Lo)), into); err != nil {
		return res, fmt.Errorf("tablestore: restore: copy the base: %w", err)
	}
	// No WAL while replaying: the result is flushed whole at the end,
	// and a failed restore leaves nothing to recover.
	fs := backupFS(nil, opts.Keys)
	pdb, err := pebble.Open(into, &pebble.Options{FS: fs, FormatMajorVersion: pebble.FormatNewest, ErrorIfNotExists: true,
		Logger: quietLogger{}, DisableWAL: true, MemTableSize: restoreMemTableBytes})
	if err != nil {
		return res, fmt.Errorf("tablestore: restore: open the base: %w", err)
	}
	ceiling := base.Ceiling
	// Records are applied in groups of about restoreGroupBytes: one
	// Pebble commit per group.
	group := pdb.NewBatch()
	apply := func() error {
		if group.Empty() {
			return nil
		}
		err := pdb.Apply(group, pebble.NoSync)
		_ = group.Close()
		group = pdb.NewBatch()
		return err
	}
	replayStart := time.Now()
	replayErr := replay(ctx, fs, opts.Keys, from, inv, base.Lo, upto, limit, func(r backupRecord) error {
		if len(r.batch) == 0 {
			return nil // a mark
		}
		applyStart := time.Now()
		defer func() { res.Phases.Apply += time.Since(applyStart) }()
		// SetRepr adopts its slice, and Close hands a small one to
		// Pebble's batch pool (shared by the process) for later batches
		// to append to: r.batch is the reader's buffer, so the batch
		// gets a copy of its own.
		b := pdb.NewBatch()
		defer b.Close()
		if err := b.SetRepr(append([]byte(nil), r.batch...)); err != nil {
			return err
		}
		if err := group.Apply(b, nil); err != nil {
			return err
		}
		ceiling = max(ceiling, int64(r.ceiling))
		res.Records++
		if group.Len() >= restoreGroupBytes {
			return apply()
		}
		return nil
	})
	if replayErr == nil {
		applyStart := time.Now()
		// The result is a store of its own: the source's backup is not
		// its backup.
		_ = group.Delete(backupDirKey(), nil)
		replayErr = apply()
		res.Phases.Apply += time.Since(applyStart)
	}
	res.Phases.Read = time.Since(replayStart) - res.Phases.Apply
	_ = group.Close()
	flushStart := time.Now()
	if replayErr == nil {
		replayErr = pdb.Flush()
	}
	err = errors.Join(replayErr, pdb.Close())
	res.Phases.Flush = time.Since(flushStart)
	if err != nil {
		return res, fmt.Errorf("tablestore: restore: %w", err)
	}
	if err := createClockFile(fs, into, ceiling); err != nil {
		return res, err
	}
	opts.Backup, opts.MustExist = nil, true
	checkStart := time.Now()
	db, err := Open(into, opts)
	if err != nil {
		return res, fmt.Errorf("tablestore: restore: open the result: %w", err)
	}
	rep, err := db.Check(ctx)
	err = errors.Join(err, db.Close())
	if err != nil {
		return res, fmt.Errorf("tablestore: restore: check the result: %w", err)
	}
	if len(rep.Damaged) > 0 {
		d := rep.Damaged[0]
		return res, fmt.Errorf("tablestore: restore: the result fails its check: %s %s: %w", d.Kind, d.Path, d.Err)
	}
	res.Entities = rep.Entities
	res.Phases.Check = time.Since(checkStart)
	return res, nil
}

// restoreGroupBytes is the size of the groups of records a restore
// applies at once.
const restoreGroupBytes = 4 << 20

// restoreMemTableBytes is the memtable size of a replay. Measured again
// after the replay began copying each record (see the comment at
// SetRepr), 256 MiB restored every entity but was no faster: its apply
// gained what its final flush lost (docs/backup.md).
const restoreMemTableBytes = 64 << 20

// replay calls apply with every record after lo up to record upto and
// time limit, in order, across segments, and fails on a gap or damage.
func replay(ctx context.Context, fs vfs.FS, keys encfs.KeyProvider, dir string, inv *backupInventory, lo, upto uint64, limit int64, apply func(backupRecord) error) error {
	errStop := errors.New("stop")
	next := lo + 1
	for i, s := range inv.segments {
		if next > upto {
			return nil
		}
		if i+1 < len(inv.segments) && inv.segments[i+1].first <= next {
			continue // every record of s is at or below lo
		}
		if s.first > next {
			return &driver.DamagedBackupError{File: filepath.Join(dir, segmentName(s.first)), Offset: 0, Reason: fmt.Sprintf("records %d to %d are missing", next, s.first-1)}
		}
		err := readSegment(fs, keys, dir, s.first, func(r backupRecord) error {
			if r.seq < next {
				return nil
			}
			if r.time > limit || r.seq > upto {
				return errStop
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			next = r.seq + 1
			return apply(r)
		})
		var torn *tornError
		switch {
		case errors.Is(err, errStop):
			return nil
		case errors.As(err, &torn):
			// A crash tore the append; a later segment goes on from the
			// last whole record, or the backup ends here.
			if next > upto {
				return nil
			}
			if i+1 < len(inv.segments) && inv.segments[i+1].first != next {
				return &torn.DamagedBackupError
			}
		case err != nil:
			return err
		}
	}
	return nil
}

// leaveAsFound returns a function that, when *err is not nil, empties
// directory into, or removes it if it did not exist when leaveAsFound
// was called: a failed restore leaves its target as it found it.
func leaveAsFound(into string, err *error) func() {
	_, statErr := os.Stat(into)
	existed := statErr == nil
	return func() {
		if *err == nil {
			return
		}
		if !existed {
			_ = os.RemoveAll(into)
		} else if ents, rerr := os.ReadDir(into); rerr == nil {
			for _, e := range ents {
				_ = os.RemoveAll(filepath.Join(into, e.Name()))
			}
		}
	}
}

// emptyTarget refuses a target that exists and is not an empty
// directory.
func emptyTarget(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("tablestore: restore into %q: %w", dir, err)
	case len(ents) > 0:
		return fmt.Errorf("%w: restore into %q: the directory is not empty", driver.ErrNotStore, dir)
	}
	return nil
}

// copyDir copies the files of base into dir, but its BASE file.
func copyDir(base, dir string) error {
	ents, err := os.ReadDir(base)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() || e.Name() == baseFileName {
			continue
		}
		if err := copyOSFile(filepath.Join(base, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return syncOSDir(dir)
}

// copyOSFile copies src to dst, a new file, synced.
func copyOSFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Sync(), out.Close())
}

// quietLogger drops Pebble's messages during a restore; a fatal
// condition surfaces as the error of the call that met it (see
// pebbleLogger).
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)  {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Fatalf(string, ...any) {}
