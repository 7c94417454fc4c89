package engine

// Continuous backup: base checkpoints plus a log of every commit since.
//
// Every write of the store reaches Pebble through applyBatch. With
// backup on, applyBatch takes the commit order lock (changes.mu) for
// every batch, not only those with feed records, and after Pebble has
// applied the batch appends a record to the log's buffer: a sequence
// number (one per batch, in commit order), the batch's time on the
// store's clock (never decreasing), the clock's durable ceiling, and the
// batch itself, whole, as Pebble encodes it: full images of every entity
// written, every deletion and range deletion, catalog, index, expiry and
// feed entries alike. A record is one commit, so a restore replays whole
// commits only.
//
// Durability: a synced commit's record is written and fsynced before the
// commit returns; the fsync is grouped (one caller writes and syncs the
// buffer for every record appended so far, the others wait) and runs
// while Pebble syncs its own log, so the two syncs overlap. An unsynced
// commit's record is written by a background flush (every
// backupFlushInterval, or once the buffer holds backupFlushBytes), so it
// is as durable as the unsynced commit itself.
//
// Background sync (BackupOptions.BackgroundSync): a synced commit's
// record is written (write(2): it survives the process's death) before
// the commit returns, but synced by a background syncer within about
// backupLazySyncDelay, so the commit waits for one disk sync, the
// store's own. A power loss may then drop the last records of commits
// the store kept.
//
// The store's position: every batch also sets the store's backup
// position (backupPositionKey: the seq and time of the record it is
// written as), durable with the batch itself. At Open, a position past
// the directory's last whole record is a hole (a power loss in
// background sync mode, a kill -9 with commits in flight, a failed log
// write): its records are gone, the new base's BASE file says so (its
// Gap), record numbers go on after the position, and the window
// excludes the hole's times (see BackupWindow.Holes). Commit records
// past the position are commits the store lost: Open cuts them off
// (cutUncommitted).
//
// A failed write of the log stops it (stopLog): nothing is written
// after the failure point, so the next Open finds the log's end there.
//
// Directory layout (DIR is the backup directory):
//
//	DIR/base-<lo>/        a Pebble checkpoint and its BASE file: the
//	                      store with at least every record <= lo
//	                      applied, at most those at or before its time
//	DIR/seg-<first>.log   records first, first+1, ... in order
//
// A record is framed as
//
//	uvarint length | crc32c of body (4 bytes BE) | body
//	body = seq (8 BE) | time (8 BE, Unix ns) | ceiling (8 BE, ticks) | batch
//
// Encryption: with Options.Keys set, every file written into DIR goes
// through an encfs.FS under the store's keys (backupFS): segments, the
// bases' files (Pebble's checkpoint writes through the store's encrypted
// FS) and BASE files. Offsets in a segment, and the damage positions
// reported, are logical: past the file's encryption header. A directory
// is all encrypted or all plain; reading it with the other setting (or
// the wrong key) fails with a *driver.EncryptionKeyError.
//
// Replaying batches is idempotent: each sets keys to full images or
// deletes them, so a base taken while commits went on, holding every
// commit up to some k >= lo, plus the records after lo in order, is the
// store as of the last record replayed.

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/encfs"
	"github.com/tablestore/tablestore/internal/keys"
)

// BackupOptions turn continuous backup on (see Options.Backup).
type BackupOptions struct {
	// Dir holds the bases and segments; created if missing. It must be
	// used by this store only.
	Dir string
	// BaseInterval is how often a new base checkpoint is taken.
	BaseInterval time.Duration
	// Retention is how far back the restorable window reaches: bases
	// older than it (but the newest of those) and the segments only
	// they need are deleted.
	Retention time.Duration
	// SegmentBytes is the size past which a new segment file starts.
	SegmentBytes int64
	// BackgroundSync: a synced commit waits for its record's write but
	// not its sync (see the package comment on background sync).
	BackgroundSync bool
	// FS, if set, is what the log's segments and the BASE files are
	// written through instead of the OS's files (tests give one that
	// fails its writes); it must reach the same files.
	FS vfs.FS
}

// backupLazySyncDelay is how long the background syncer lets records
// gather after a write before it syncs them.
const backupLazySyncDelay = 25 * time.Millisecond

// backupPositionTag keys, in the meta table, the seq and time (8 bytes
// BE each) of the last record written in background sync mode.
const backupPositionTag = 'B'

func backupPositionKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), backupPositionTag)
}

// backupDirTag keys, in the meta table, the absolute paths of the
// store's directory and of its continuous backup's, a line each, so that
// Rekey finds the backup when the store is opened without it. A copy
// of the store elsewhere (a checkpoint) does not take it for its own,
// and a restore drops it.
const backupDirTag = 'D'

func backupDirKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), backupDirTag)
}

// BackupDir returns the directory of the store's continuous backup: the
// one it keeps, else the one it last kept; "" for none.
func (db *Engine) BackupDir() (string, error) {
	release, err := db.enter(context.Background())
	if err != nil {
		return "", err
	}
	defer release()
	return db.backupDir()
}

func (db *Engine) backupDir() (string, error) {
	if db.backup != nil {
		return filepath.Abs(db.backup.opts.Dir)
	}
	v, closer, err := db.pdb.Get(backupDirKey())
	if errors.Is(err, pebble.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("tablestore: read the continuous backup's directory: %w", err)
	}
	defer closer.Close()
	store, dir, ok := strings.Cut(string(v), "\n")
	if here, err := filepath.Abs(db.dir); !ok || err != nil || here != store {
		return "", nil
	}
	return dir, nil
}

// backupUnbackedTag keys, in the meta table, a mark that the store was
// opened without the continuous backup it keeps (backupDirTag): it may
// have changed unseen, so the next Open with the backup takes a base.
const backupUnbackedTag = 'U'

func backupUnbackedKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), backupUnbackedTag)
}

// markUnbacked sets the unbacked mark when the store has kept a backup
// but is opened without it.
func (db *Engine) markUnbacked() error {
	// The key, wherever the store was then: a store moved since is
	// still one that kept a backup.
	kept, err := db.hasKey(backupDirKey())
	if err != nil || !kept {
		return err
	}
	if marked, err := db.hasKey(backupUnbackedKey()); err != nil || marked {
		return err
	}
	return db.setKey(backupUnbackedKey(), nil, pebble.Sync)
}

func (db *Engine) hasKey(key []byte) (bool, error) {
	_, closer, err := db.pdb.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, closer.Close()
}

// recordBackupDir records the backup's directory in the store unless it
// is recorded already.
func (db *Engine) recordBackupDir(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("tablestore: continuous backup: %w", err)
	}
	if cur, err := db.backupDir(); err != nil || cur == abs {
		return err
	}
	store, err := filepath.Abs(db.dir)
	if err != nil {
		return fmt.Errorf("tablestore: continuous backup: %w", err)
	}
	return db.setKey(backupDirKey(), []byte(store+"\n"+abs), pebble.Sync)
}

const (
	backupFlushInterval = 50 * time.Millisecond
	backupFlushBytes    = 1 << 20
	// backupHeartbeat: an idle store marks the log this often, so the
	// window's end follows the clock.
	backupHeartbeat    = time.Second
	backupZeroStep     = 4 << 20
	backupRecordHeader = 24
	baseFileName       = "BASE"
)

var backupCRC = crc32.MakeTable(crc32.Castagnoli)

// backupLog is continuous backup's state; nil when it is off.
type backupLog struct {
	opts BackupOptions
	fs   vfs.FS // the backup directory's files, encrypted with the store
	// Under db.changes.mu: the last record's seq, and the time of the
	// last record or instant handed out, in Unix nanoseconds.
	seq  uint64
	last int64

	// baseMu is held while a base is taken and pruned, and while Rekey
	// goes through the backup's files.
	baseMu sync.Mutex

	mu      sync.Mutex
	cond    sync.Cond // on mu: a flush ended
	buf     []byte    // framed records not yet written
	spare   []byte
	bufLast uint64 // seq of the last record in buf (or written)
	// bufFirst is the seq of the first record in buf, 0 when empty.
	bufFirst uint64
	durable  uint64 // records up to it are written and synced
	written  uint64 // records up to it are written
	// appended is the wall time of the last append, for heartbeats.
	appended time.Time
	flushing bool  // a flush holds the file
	rotate   bool  // start a new segment at the next flush
	err      error // the first write error; the log stops
	f        vfs.File
	fpath    string
	fsize    int64 // the end of the records written
	zeroEnd  int64 // the end of the file, zeros past fsize

	kick     chan struct{} // the buffer is due for a write
	syncKick chan struct{} // background sync: records await a sync
	// syncMu, in background sync mode, keeps f from being replaced
	// during the syncer's sync; startSegment takes it too.
	syncMu sync.Mutex
	// gap is the hole startBackup found, for the base it takes.
	gap      *backupGap
	stop     chan struct{}
	stopOnce sync.Once
	done     sync.WaitGroup
}

// backupInstant returns the current instant on the store's clock, for a
// view: with continuous backup on, it is no earlier than any record's
// time so far, and every later record's time is after it.
// REQUIRES: db.changes.mu held.
func (db *Engine) backupInstant() time.Time {
	now := db.opts.Clock()
	if db.backup == nil {
		return now
	}
	t := max(now.UnixNano(), db.backup.last)
	db.backup.last = t
	return time.Unix(0, t).UTC()
}

// appendRecord frames batch repr as the next record into the buffer and
// returns its seq. at is the record's time (0: the next on the clock).
// REQUIRES: db.changes.mu held.
func (db *Engine) appendRecord(repr []byte, at int64) uint64 {
	l := db.backup
	l.seq++
	if at == 0 {
		at = db.nextRecordTime()
	}
	l.last = at
	var head [backupRecordHeader]byte
	binary.BigEndian.PutUint64(head[0:], l.seq)
	binary.BigEndian.PutUint64(head[8:], uint64(l.last))
	binary.BigEndian.PutUint64(head[16:], uint64(db.clock.durableCeiling()))
	crc := crc32.Update(crc32.Checksum(head[:], backupCRC), backupCRC, repr)
	l.mu.Lock()
	if l.err != nil {
		// The log stopped at its failure point: nothing is written
		// after it.
		l.mu.Unlock()
		return l.seq
	}
	if l.bufFirst == 0 {
		l.bufFirst = l.seq
	}
	l.buf = binary.AppendUvarint(l.buf, uint64(backupRecordHeader+len(repr)))
	l.buf = binary.BigEndian.AppendUint32(l.buf, crc)
	l.buf = append(l.buf, head[:]...)
	l.buf = append(l.buf, repr...)
	l.bufLast = l.seq
	l.appended = time.Now()
	full := len(l.buf) >= backupFlushBytes
	l.mu.Unlock()
	if full {
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
	return l.seq
}

// nextRecordTime is the time the next record gets.
// REQUIRES: db.changes.mu held.
func (db *Engine) nextRecordTime() int64 {
	return max(db.opts.Clock().UnixNano(), db.backup.last+1)
}

// backupMark appends a record without a batch: it extends the window to
// now, and returns its time. Views, Close and an idle store's heartbeat
// write one.
// REQUIRES: db.changes.mu held.
func (db *Engine) backupMark() (uint64, time.Time) {
	seq := db.appendRecord(nil, 0)
	return seq, time.Unix(0, db.backup.last).UTC()
}

// applyBatch hands b to Pebble with the records of cb (none when nil)
// under the sequence lock, and with continuous backup on appends b's
// record; see the keyspace comment in changes.go.
func (db *Engine) applyBatch(b *pebble.Batch, cb *changeBatch, opts *pebble.WriteOptions) error {
	l := db.backup
	feed := cb != nil && len(cb.values) > 0
	if !feed && l == nil {
		return b.Commit(opts)
	}
	c := &db.changes
	var last, rec uint64
	c.mu.Lock()
	if feed {
		var kb [changeKeyLen]byte
		first := c.seq + 1
		for i, v := range cb.values {
			_ = b.Set(changeKey(kb[:0], cb.table, first+uint64(i)), v, nil)
		}
		last = first + uint64(len(cb.values)) - 1
		c.seq = last
	}
	var at int64
	if l != nil {
		// The store keeps, with the batch, the record it becomes.
		at = db.nextRecordTime()
		var pos [16]byte
		binary.BigEndian.PutUint64(pos[:], l.seq+1)
		binary.BigEndian.PutUint64(pos[8:], uint64(at))
		_ = b.Set(backupPositionKey(), pos[:], nil)
	}
	var err error
	if opts.Sync {
		err = db.pdb.ApplyNoSyncWait(b, opts)
	} else {
		err = b.Commit(opts)
	}
	if err == nil && l != nil {
		rec = db.appendRecord(b.Repr(), at)
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	if opts.Sync {
		var berr error
		switch {
		case l != nil && l.opts.BackgroundSync:
			berr = db.backupWrite(rec, false)
			select {
			case l.syncKick <- struct{}{}:
			default:
			}
		case l != nil:
			// Pebble syncs its log meanwhile, on its own goroutine.
			berr = db.backupSync(rec)
		}
		if err := b.SyncWait(); err != nil {
			return err
		}
		if berr != nil {
			err = berr
		}
	}
	// The feed shows every applied commit, backed up or not.
	if last > 0 {
		c.publish(last)
	}
	return err
}

// commitBatch commits a batch that writes no feed records.
func (db *Engine) commitBatch(b *pebble.Batch, opts *pebble.WriteOptions) error {
	return db.applyBatch(b, nil, opts)
}

// setKey and deleteKey write one key through commitBatch.
func (db *Engine) setKey(key, value []byte, opts *pebble.WriteOptions) error {
	b := db.pdb.NewBatch()
	defer b.Close()
	_ = b.Set(key, value, nil)
	return db.commitBatch(b, opts)
}

func (db *Engine) deleteKey(key []byte, opts *pebble.WriteOptions) error {
	b := db.pdb.NewBatch()
	defer b.Close()
	_ = b.Delete(key, nil)
	return db.commitBatch(b, opts)
}

// backupSync returns once record seq is written and synced. A write
// error stops the log and faults the store: the commit is applied, but
// its backup is not (driver.ErrAppliedBackupStopped), and later writes
// are refused (driver.ErrBackupStopped) until the store is reopened.
func (db *Engine) backupSync(seq uint64) error { return db.backupWrite(seq, true) }

// backupWrite returns once record seq is written, and synced if sync.
func (db *Engine) backupWrite(seq uint64, sync bool) error {
	l := db.backup
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.err == nil && (l.written < seq || sync && l.durable < seq) {
		if l.flushing {
			l.cond.Wait()
			continue
		}
		l.flushLocked(db, sync)
	}
	if l.err != nil {
		return fmt.Errorf("%w: writing into %q failed: %w", driver.ErrAppliedBackupStopped, l.opts.Dir, l.err)
	}
	return nil
}

// stopLog records err as the log's failure: nothing more is written,
// and the store refuses writes until it is reopened.
// REQUIRES: l.mu held.
func (l *backupLog) stopLog(db *Engine, err error) {
	if l.err != nil {
		return
	}
	l.err = err
	db.setFault(fmt.Errorf("%w: writing into %q failed, so writes are refused until the store is reopened: %w", driver.ErrBackupStopped, l.opts.Dir, err))
}

// flushLocked writes the buffer to the current segment, synced when
// sync, starting a new segment first when one is due.
// REQUIRES: l.mu held and no flush in progress; l.mu is released
// during the I/O.
func (l *backupLog) flushLocked(db *Engine, sync bool) {
	if l.err != nil {
		// Once a write failed, nothing more is written: the file ends
		// at the failure point, where the next Open finds its end.
		l.buf, l.bufFirst = l.buf[:0], 0
		return
	}
	l.flushing = true
	buf, first, upto := l.buf, l.bufFirst, l.bufLast
	rotate := l.rotate || l.f == nil || l.fsize >= l.opts.SegmentBytes
	l.buf, l.spare, l.bufFirst, l.rotate = l.spare[:0], nil, 0, false
	l.mu.Unlock()
	var err error
	if rotate && len(buf) > 0 {
		err = l.startSegment(first)
	}
	if err == nil && len(buf) > 0 {
		err = l.write(buf)
	}
	if err == nil && sync && l.f != nil {
		err = l.f.SyncData()
	}
	l.mu.Lock()
	if err != nil {
		l.stopLog(db, err)
	}
	if rotate && len(buf) == 0 {
		l.rotate = true // still due, for the next record
	}
	l.spare = buf
	if err == nil {
		l.written = upto
		if sync {
			l.durable = upto
		}
	}
	l.flushing = false
	l.cond.Broadcast()
}

// write writes buf at the end of the segment's records. The file runs
// ahead of them in zeros, written and synced backupZeroStep at a time,
// so a record's sync rewrites blocks already allocated and needs no
// metadata of the file's: a data sync (fdatasync) suffices, which costs
// a fraction of a sync that grows the file.
func (l *backupLog) write(buf []byte) error {
	end := l.fsize + int64(len(buf))
	if end > l.zeroEnd {
		step := max(min(backupZeroStep, l.opts.SegmentBytes), 1)
		grow := (end/step+1)*step - l.zeroEnd
		zeros := make([]byte, min(grow, step))
		for off := l.zeroEnd; off < l.zeroEnd+grow; off += int64(len(zeros)) {
			if _, err := l.f.WriteAt(zeros, off); err != nil {
				return err
			}
		}
		if err := l.f.Sync(); err != nil {
			return err
		}
		l.zeroEnd += grow
	}
	if _, err := l.f.WriteAt(buf, l.fsize); err != nil {
		return err
	}
	l.fsize = end
	return nil
}

// startSegment syncs and closes the current segment and creates the
// one whose first record is first.
func (l *backupLog) startSegment(first uint64) error {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	if err := l.closeSegment(); err != nil {
		return err
	}
	path := filepath.Join(l.opts.Dir, segmentName(first))
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("backup segment %s exists already (%v)", path, err)
	}
	f, err := l.fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	l.f, l.fpath, l.fsize, l.zeroEnd = f, path, 0, 0
	return syncOSDir(l.opts.Dir)
}

// closeSegment syncs and closes the current segment, cutting off the
// zeros past its records: a closed segment takes what its records take.
func (l *backupLog) closeSegment() error {
	if l.f == nil {
		return nil
	}
	err := errors.Join(l.f.Sync(), l.f.Close())
	l.f = nil
	if err != nil {
		return err
	}
	size := l.fsize
	if _, ok := l.fs.(*encfs.FS); ok {
		size += encfs.HeaderSize
	}
	if err := os.Truncate(l.fpath, size); err != nil {
		return err
	}
	return syncOSFile(l.fpath)
}

func segmentName(first uint64) string { return fmt.Sprintf("seg-%020d.log", first) }
func baseName(lo uint64) string       { return fmt.Sprintf("base-%020d", lo) }

// backupFS returns the FS a backup directory's files are read and
// written through: encrypted under keys, or plain when keys is nil.
func backupFS(base vfs.FS, keys encfs.KeyProvider) vfs.FS {
	if base == nil {
		base = vfs.Default
	}
	if keys == nil {
		return base
	}
	return encfs.New(base, keys)
}

// checkBackupFile fails with a *driver.EncryptionKeyError when the file
// at path is encrypted and keys is nil, or plain (and not empty) and
// keys is set; with keys set, a wrong key fails when the file is opened.
func checkBackupFile(path string, keys encfs.KeyProvider) error {
	keyID, encrypted, err := encfs.ProbeFile(vfs.Default, path)
	switch {
	case err != nil:
		return err
	case keys == nil && encrypted:
		return &driver.EncryptionKeyError{KeyID: keyID, File: path}
	case keys != nil && !encrypted:
		if st, err := os.Stat(path); err == nil && st.Size() == 0 {
			return nil
		}
		return &driver.EncryptionKeyError{File: path}
	}
	return nil
}

// readBackupFile reads the whole file at path through fs, checking its
// encryption against keys first.
func readBackupFile(fs vfs.FS, keys encfs.KeyProvider, path string) ([]byte, error) {
	if err := checkBackupFile(path, keys); err != nil {
		return nil, err
	}
	f, err := fs.Open(path)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(f)
	return data, errors.Join(err, f.Close())
}

// rewrap rewraps the backup's files (its segments, and the files of
// its whole bases) under the current key, as Rekey does the store's, or
// re-encrypts them (rewrite), and returns how many it rewrote; files
// removed meanwhile are skipped. No base is taken or pruned meanwhile.
func (l *backupLog) rewrap(ctx context.Context, rewrite bool) (int, error) {
	enc, ok := l.fs.(*encfs.FS)
	if !ok {
		return 0, nil
	}
	l.baseMu.Lock()
	defer l.baseMu.Unlock()
	pass := enc.RewrapDir
	if rewrite {
		pass = enc.ReencryptDir
	}
	n, err := pass(ctx, l.opts.Dir)
	if err != nil {
		return n, err
	}
	ents, err := os.ReadDir(l.opts.Dir)
	if err != nil {
		return n, err
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "base-") {
			continue
		}
		m, err := pass(ctx, filepath.Join(l.opts.Dir, e.Name()))
		n += m
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return n, err
		}
	}
	return n, nil
}

// checkKeys opens every file of the backup (its segments and its
// bases' files) under its keys, so that a rotation fails before it
// changes anything when one cannot be read.
func (l *backupLog) checkKeys(keys encfs.KeyProvider) error {
	enc, ok := l.fs.(*encfs.FS)
	if !ok {
		return nil
	}
	dirs := []string{l.opts.Dir}
	for i := 0; i < len(dirs); i++ {
		ents, err := os.ReadDir(dirs[i])
		if err != nil {
			return err
		}
		for _, e := range ents {
			path := filepath.Join(dirs[i], e.Name())
			switch {
			case e.IsDir() && i == 0 && strings.HasPrefix(e.Name(), "base-"):
				dirs = append(dirs, path)
			case e.Type().IsRegular() && e.Name() != "LOCK":
				if fi, err := e.Info(); err != nil || fi.Size() == 0 {
					continue // removed meanwhile, or empty
				}
				if err := checkBackupFile(path, keys); err != nil {
					return err
				}
				f, err := enc.Open(path)
				if errors.Is(err, os.ErrNotExist) {
					continue
				}
				if err != nil {
					return err
				}
				_ = f.Close()
			}
		}
	}
	return nil
}

func syncOSFile(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

func syncOSDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// baseInfo is a base's BASE file.
type baseInfo struct {
	// Lo is the seq every record at or below which the base holds.
	Lo uint64 `json:"lo"`
	// Time (Unix ns) is no earlier than any record the base may hold.
	Time int64 `json:"time"`
	// Ceiling is the clock's durable ceiling when it was taken.
	Ceiling int64 `json:"ceiling"`
	// Gap, when set, says records From to To were lost before this
	// base (a power loss in background sync mode): the store held them,
	// the directory does not.
	Gap *backupGap `json:"gap,omitempty"`
}

// backupGap is a stretch of lost records. After (Unix ns) is the
// newest instant the directory held before them: every lost record's
// time is after it and before the base that records the gap.
type backupGap struct {
	From  uint64 `json:"from"`
	To    uint64 `json:"to"`
	After int64  `json:"after"`
}

// startBackup opens continuous backup at Open: it resumes the record
// sequence after the directory's last record, takes a base at once (the
// store may hold commits a crash kept from the log), and starts the
// background flusher and base taker.
func (db *Engine) startBackup() error {
	o := *db.opts.Backup
	if db.dir == "" {
		return errors.New("tablestore: continuous backup needs a store on disk")
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return fmt.Errorf("tablestore: continuous backup: %w", err)
	}
	inv, err := scanBackup(o.Dir, db.opts.Keys, true)
	if err != nil {
		return err
	}
	pos, err := db.backupPosition()
	if err != nil {
		return err
	}
	// Only the store that wrote the log, where it wrote it, is held to
	// its records: a restored or moved store given the directory gets
	// a base, and the log it did not write is left as it is.
	recorded, err := db.backupDir()
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(o.Dir)
	if err != nil {
		return fmt.Errorf("tablestore: continuous backup: %w", err)
	}
	owner := recorded == abs
	if owner && pos.seq > 0 && inv.lastSeq > pos.seq {
		// The log may hold commits the store lost (in flight at a
		// crash): they are cut off, so no restore holds them and their
		// numbers go to the store's next commits.
		cut, err := cutUncommitted(o.Dir, db.opts.Keys, inv, pos.seq)
		if err != nil {
			return err
		}
		if cut {
			if inv, err = scanBackup(o.Dir, db.opts.Keys, false); err != nil {
				return err
			}
		}
	}
	if err := dropEmptyLastSegment(o.Dir, inv); err != nil {
		return err
	}
	if err := db.recordBackupDir(o.Dir); err != nil {
		return err
	}
	l := &backupLog{opts: o, fs: backupFS(o.FS, db.opts.Keys), stop: make(chan struct{}), kick: make(chan struct{}, 1), syncKick: make(chan struct{}, 1)}
	l.cond.L = &l.mu
	l.seq, l.last = inv.lastSeq, inv.lastTime
	// A position past the last whole record: records the store holds
	// were lost.
	if pos.seq > l.seq {
		if len(inv.bases) > 0 {
			l.gap = &backupGap{From: l.seq + 1, To: pos.seq, After: inv.lastTime}
		}
		l.seq = pos.seq
	}
	l.last = max(l.last, pos.time)
	l.durable, l.written, l.bufLast = l.seq, l.seq, l.seq
	l.rotate = true // never append to a segment a crash may have torn
	db.backup = l
	// A crash may have left commits in the store whose records the log
	// lost: a mark gives this open's base a position of its own, so it
	// never yields to an older base at the same position.
	db.changes.mu.Lock()
	db.backupMark()
	db.changes.mu.Unlock()
	// A base only when the store may differ from the newest one: a
	// commit after it, a hole, or writes while the backup was off.
	unbacked, err := db.hasKey(backupUnbackedKey())
	if err != nil {
		db.backup = nil
		return err
	}
	if !owner || unbacked || l.gap != nil || len(inv.bases) == 0 || pos.seq == 0 || pos.seq > inv.bases[len(inv.bases)-1].Lo {
		if err := db.takeBase(); err != nil {
			db.backup = nil
			return err
		}
	}
	if unbacked {
		if err := db.deleteKey(backupUnbackedKey(), pebble.Sync); err != nil {
			db.backup = nil
			return err
		}
	}
	l.done.Add(1)
	go db.runBackup()
	if o.BackgroundSync {
		l.done.Add(1)
		go db.runBackupSyncer()
	}
	return nil
}

// cutUncommitted removes from the log in dir every record from the
// first commit after record pos on: the store, whose last commit is pos,
// does not hold it. Marks before it stay. It reports whether it cut.
func cutUncommitted(dir string, keys encfs.KeyProvider, inv *backupInventory, pos uint64) (bool, error) {
	fs := backupFS(nil, keys)
	errFound := errors.New("found")
	for i, s := range inv.segments {
		if i+1 < len(inv.segments) && inv.segments[i+1].first <= pos+1 {
			continue // every record of s is at or below pos
		}
		var at int64 = -1
		var seq uint64
		err := readSegment(fs, keys, dir, s.first, func(r backupRecord) error {
			if r.seq > pos && len(r.batch) > 0 {
				at, seq = r.off, r.seq
				return errFound
			}
			return nil
		})
		if at < 0 {
			var torn *tornError
			if err != nil && !errors.As(err, &torn) {
				return false, err
			}
			continue
		}
		size := at
		if keys != nil {
			size += encfs.HeaderSize
		}
		path := filepath.Join(dir, segmentName(s.first))
		if err := os.Truncate(path, size); err != nil {
			return false, fmt.Errorf("tablestore: continuous backup: cut the commits the store lost: %w", err)
		}
		errs := []error{syncOSFile(path)}
		for _, later := range inv.segments[i+1:] {
			errs = append(errs, os.Remove(filepath.Join(dir, segmentName(later.first))))
		}
		for _, b := range inv.bases {
			if b.Lo >= seq { // it would hold what the store lost
				errs = append(errs, os.RemoveAll(filepath.Join(dir, baseName(b.Lo))))
			}
		}
		errs = append(errs, syncOSDir(dir))
		if err := errors.Join(errs...); err != nil {
			return false, fmt.Errorf("tablestore: continuous backup: cut the commits the store lost: %w", err)
		}
		return true, nil
	}
	return false, nil
}

// dropEmptyLastSegment removes the last segment when it holds no whole
// record: a crash right after its creation, or within its first
// record, left it (zeros, or a torn record that was never synced). The
// log resumes at the record its name holds, so it would be in the way.
// A damaged first record is not removed: it fails Open with its
// position, since replacing it would hide the damage.
func dropEmptyLastSegment(dir string, inv *backupInventory) error {
	n := len(inv.segments)
	if n == 0 || inv.segments[n-1].first <= inv.lastSeq {
		return nil
	}
	if inv.damaged != nil {
		return fmt.Errorf("%w (move the segment aside to go on, or give the store a new backup directory)", inv.damaged)
	}
	if err := os.Remove(filepath.Join(dir, segmentName(inv.segments[n-1].first))); err != nil {
		return fmt.Errorf("tablestore: continuous backup: %w", err)
	}
	inv.segments, inv.tornAt = inv.segments[:n-1], ""
	return syncOSDir(dir)
}

type backupPos struct {
	seq  uint64
	time int64
}

// backupPosition reads the store's backup position (zero if none).
func (db *Engine) backupPosition() (backupPos, error) {
	v, closer, err := db.pdb.Get(backupPositionKey())
	if errors.Is(err, pebble.ErrNotFound) {
		return backupPos{}, nil
	}
	if err != nil {
		return backupPos{}, fmt.Errorf("tablestore: continuous backup: read the store's position: %w", err)
	}
	defer closer.Close()
	if len(v) != 16 {
		return backupPos{}, fmt.Errorf("tablestore: continuous backup: the store's position is %d bytes, want 16", len(v))
	}
	return backupPos{seq: binary.BigEndian.Uint64(v), time: int64(binary.BigEndian.Uint64(v[8:]))}, nil
}

// runBackupSyncer syncs written records in background sync mode: after
// a commit's write, within backupLazySyncDelay.
func (db *Engine) runBackupSyncer() {
	l := db.backup
	defer l.done.Done()
	delay := time.NewTimer(time.Hour)
	delay.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.syncKick:
		}
		delay.Reset(backupLazySyncDelay)
		select {
		case <-l.stop:
			return
		case <-delay.C:
		}
		l.syncWritten(db)
	}
}

// syncWritten syncs the records written so far, without holding up
// the writes meanwhile.
func (l *backupLog) syncWritten(db *Engine) {
	l.syncMu.Lock()
	l.mu.Lock()
	upto, durable := l.written, l.durable
	l.mu.Unlock()
	var err error
	if upto > durable && l.f != nil {
		// Records written to earlier segments were synced when the
		// segment was closed.
		err = l.f.SyncData()
	}
	l.syncMu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.stopLog(db, err)
		return
	}
	l.durable = max(l.durable, upto)
	l.cond.Broadcast()
}

// runBackup flushes unsynced records and takes bases until stopBackup.
func (db *Engine) runBackup() {
	l := db.backup
	defer l.done.Done()
	flush := time.NewTicker(backupFlushInterval)
	defer flush.Stop()
	base := time.NewTicker(l.opts.BaseInterval)
	defer base.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.kick:
			l.mu.Lock()
			if !l.flushing && len(l.buf) > 0 {
				l.flushLocked(db, false)
			}
			l.mu.Unlock()
		case <-flush.C:
			l.mu.Lock()
			idle := time.Since(l.appended) >= backupHeartbeat
			l.mu.Unlock()
			if idle {
				db.changes.mu.Lock()
				db.backupMark()
				db.changes.mu.Unlock()
			}
			l.mu.Lock()
			if !l.flushing && len(l.buf) > 0 {
				l.flushLocked(db, false)
			}
			l.mu.Unlock()
		case <-base.C:
			if release, err := db.enter(context.Background()); err == nil {
				_ = db.takeBase() // a failure leaves the older bases
				release()
			}
		}
	}
}

// stopBackupWorker ends the background work; Close calls it first.
func (db *Engine) stopBackupWorker() {
	if l := db.backup; l != nil {
		l.stopOnce.Do(func() { close(l.stop) })
		l.done.Wait()
	}
}

// stopBackup writes and syncs every record and closes the segment;
// Close calls it once no operation is in flight.
func (db *Engine) stopBackup() error {
	l := db.backup
	if l == nil {
		return nil
	}
	db.stopBackupWorker()
	db.changes.mu.Lock()
	db.backupMark()
	db.changes.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.flushing {
		l.cond.Wait()
	}
	if l.err == nil && (len(l.buf) > 0 || l.durable < l.bufLast) {
		l.flushLocked(db, true)
	}
	if l.err != nil {
		// The file ends at the failure point, as it is.
		if l.f != nil {
			_ = l.f.Close()
			l.f = nil
		}
		return l.err
	}
	return l.closeSegment()
}

// takeBase writes a new base checkpoint and prunes what retention lets
// go.
func (db *Engine) takeBase() error {
	l := db.backup
	l.baseMu.Lock()
	defer l.baseMu.Unlock()
	c := &db.changes
	c.mu.Lock()
	lo := l.seq
	c.mu.Unlock()
	tmp := filepath.Join(l.opts.Dir, fmt.Sprintf("tmp-base-%d", time.Now().UnixNano()))
	if err := db.pdb.Checkpoint(tmp, pebble.WithFlushedWAL()); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("tablestore: continuous backup: base checkpoint: %w", err)
	}
	c.mu.Lock()
	info := baseInfo{Lo: lo, Time: db.backupInstant().UnixNano(), Ceiling: db.clock.durableCeiling()}
	if l.gap != nil && l.gap.To <= lo {
		info.Gap = l.gap
	}
	c.mu.Unlock()
	err := createClockFile(db.fs, tmp, info.Ceiling)
	if err == nil {
		err = writeFileSynced(l.fs, filepath.Join(tmp, baseFileName), mustJSON(info))
	}
	final := filepath.Join(l.opts.Dir, baseName(lo))
	if err == nil {
		if _, serr := os.Stat(final); serr == nil {
			// A base at the same position already: nothing was
			// committed since.
			return os.RemoveAll(tmp)
		}
		err = os.Rename(tmp, final)
	}
	if err == nil {
		err = syncOSDir(l.opts.Dir)
	}
	if err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("tablestore: continuous backup: base: %w", err)
	}
	c.mu.Lock()
	if info.Gap != nil {
		l.gap = nil // recorded
	}
	c.mu.Unlock()
	l.mu.Lock()
	l.rotate = true
	l.mu.Unlock()
	return l.prune(db.opts.Clock(), db.opts.Keys)
}

// prune deletes the bases older than the retention but the newest of
// those, and the segments whose records are all at or below the oldest
// base kept.
func (l *backupLog) prune(now time.Time, keys encfs.KeyProvider) error {
	inv, err := scanBackup(l.opts.Dir, keys, false)
	if err != nil {
		return err
	}
	cutoff := now.Add(-l.opts.Retention).UnixNano()
	keep := 0 // index of the oldest base kept
	for i, b := range inv.bases {
		if b.Time <= cutoff {
			keep = i
		}
	}
	var errs []error
	for _, b := range inv.bases[:keep] {
		errs = append(errs, os.RemoveAll(filepath.Join(l.opts.Dir, baseName(b.Lo))))
	}
	if len(inv.bases) > 0 {
		lo := inv.bases[keep].Lo
		for i, s := range inv.segments {
			// Segment i holds records up to the next one's first.
			if i+1 < len(inv.segments) && inv.segments[i+1].first <= lo+1 {
				errs = append(errs, os.Remove(filepath.Join(l.opts.Dir, segmentName(s.first))))
			}
		}
	}
	return errors.Join(errs...)
}

func writeFileSynced(fs vfs.FS, path string, data []byte) error {
	f, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Sync(), f.Close())
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// backupInventory is what a backup directory holds.
type backupInventory struct {
	bases    []baseInfo    // by Lo
	segments []segmentInfo // by first
	lastSeq  uint64        // of the last whole record (or newest base)
	lastTime int64
	// tornAt, when not "", says the last segment ends in a partial
	// record there (a crash during its append); damaged is a damaged
	// record in the last segment, after lastSeq.
	tornAt  string
	damaged *driver.DamagedBackupError
}

type segmentInfo struct {
	first uint64
	size  int64
}

// scanBackup lists dir's bases and segments and reads the last
// segment to its last whole record; clean removes a base a crash left
// unfinished (only the store that writes dir may). Its files are read
// under keys (nil: plain); a file the keys cannot read fails the scan
// with a *driver.EncryptionKeyError.
func scanBackup(dir string, keys encfs.KeyProvider, clean bool) (*backupInventory, error) {
	fs := backupFS(nil, keys)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("tablestore: read the backup directory: %w", err)
	}
	inv := &backupInventory{}
	for _, e := range ents {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, "base-") && e.IsDir():
			data, err := readBackupFile(fs, keys, filepath.Join(dir, name, baseFileName))
			if errors.Is(err, os.ErrNotExist) {
				continue // not a whole base
			}
			if err != nil {
				return nil, err
			}
			var b baseInfo
			if json.Unmarshal(data, &b) != nil {
				return nil, fmt.Errorf("tablestore: backup base %s: malformed %s file", name, baseFileName)
			}
			inv.bases = append(inv.bases, b)
			if b.Lo >= inv.lastSeq {
				inv.lastSeq = b.Lo
			}
			inv.lastTime = max(inv.lastTime, b.Time)
		case strings.HasPrefix(name, "seg-") && strings.HasSuffix(name, ".log"):
			first, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, "seg-"), ".log"), 10, 64)
			if err != nil {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				return nil, err
			}
			inv.segments = append(inv.segments, segmentInfo{first: first, size: fi.Size()})
		case clean && strings.HasPrefix(name, "tmp-base-"):
			_ = os.RemoveAll(filepath.Join(dir, name)) // a base a crash left unfinished
		}
	}
	sort.Slice(inv.bases, func(i, j int) bool { return inv.bases[i].Lo < inv.bases[j].Lo })
	sort.Slice(inv.segments, func(i, j int) bool { return inv.segments[i].first < inv.segments[j].first })
	// The last whole record is in the last segment, unless a crash came
	// right after that segment was started (it holds no whole record):
	// then it is in the one before, which may hold records newer than
	// every base.
	for i := len(inv.segments) - 1; i >= 0; i-- {
		last, found := i == len(inv.segments)-1, false
		err := readSegment(fs, keys, dir, inv.segments[i].first, func(r backupRecord) error {
			found = true
			inv.lastSeq, inv.lastTime = max(inv.lastSeq, r.seq), max(inv.lastTime, r.time)
			return nil
		})
		var torn *tornError
		var damaged *driver.DamagedBackupError
		switch {
		case errors.As(err, &torn):
			if last {
				inv.tornAt = torn.Error()
			}
		case errors.As(err, &damaged):
			// Damage before the last segment is the restore's to report,
			// when it replays that far.
			if last {
				inv.damaged = damaged
			}
		case err != nil:
			return nil, err
		}
		if found {
			break
		}
	}
	return inv, nil
}

// backupRecord is one decoded record; batch aliases the reader's buffer.
type backupRecord struct {
	off          int64 // in its segment
	seq, ceiling uint64
	time         int64
	batch        []byte
}

// tornError is a segment that ends in a partial record.
type tornError struct{ driver.DamagedBackupError }

// readSegment calls fn with each record of segment first, in order. A
// partial record at the end is a *tornError; a damaged one a
// *driver.DamagedBackupError; records must run on from first without
// gaps. Offsets are logical (past an encryption header).
func readSegment(fs vfs.FS, keys encfs.KeyProvider, dir string, first uint64, fn func(backupRecord) error) error {
	path := filepath.Join(dir, segmentName(first))
	if err := checkBackupFile(path, keys); err != nil {
		return fmt.Errorf("tablestore: open backup segment: %w", err)
	}
	f, err := fs.Open(path)
	if err != nil {
		return fmt.Errorf("tablestore: open backup segment: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var off int64
	var buf []byte
	want := first
	damaged := func(reason string) *driver.DamagedBackupError {
		return &driver.DamagedBackupError{File: path, Offset: off, Reason: reason}
	}
	for {
		n, err := binary.ReadUvarint(r)
		if err == io.EOF {
			return nil
		}
		if err == nil && n == 0 {
			// The zeros past the last record, or damage: the zeros
			// must run to the end.
			if zerosToEnd(r) {
				return nil
			}
			return damaged("a zero record length before the end of the records")
		}
		if err == io.ErrUnexpectedEOF {
			return &tornError{*damaged("partial record at the end")}
		}
		if err != nil {
			return damaged("bad record length")
		}
		if n < backupRecordHeader || n > 1<<30 {
			return damaged(fmt.Sprintf("record length %d out of bounds", n))
		}
		if cap(buf) < int(n)+4 {
			buf = make([]byte, n+4)
		}
		buf = buf[:n+4]
		if m, err := io.ReadFull(r, buf); err != nil {
			if err != io.ErrUnexpectedEOF && err != io.EOF {
				return err
			}
			if recordWithin(buf[:m], want+1) {
				return damaged(fmt.Sprintf("record length %d runs past the end of the segment, over later records", n))
			}
			return &tornError{*damaged("partial record at the end")}
		}
		body := buf[4:]
		if crc32.Checksum(body, backupCRC) != binary.BigEndian.Uint32(buf) {
			switch {
			case !zerosToEnd(r):
				return damaged("checksum mismatch")
			case recordWithin(buf, want+1):
				// A whole later record inside this one: its length
				// is damaged, it was not torn.
				return damaged(fmt.Sprintf("checksum mismatch; record length %d runs over later records", n))
			}
			// The last record, partly written when the writer stopped:
			// its tail is still the file's zeros.
			return &tornError{*damaged("partial record at the end")}
		}
		rec := backupRecord{off: off, seq: binary.BigEndian.Uint64(body), time: int64(binary.BigEndian.Uint64(body[8:])), ceiling: binary.BigEndian.Uint64(body[16:]), batch: body[backupRecordHeader:]}
		if rec.seq != want {
			return damaged(fmt.Sprintf("record %d where %d was due", rec.seq, want))
		}
		want++
		if err := fn(rec); err != nil {
			return err
		}
		off += int64(uvarintLen(n)) + int64(n) + 4
	}
}

// recordWithin reports whether a whole, valid record numbered seq
// starts anywhere in buf past its first byte: a torn record's bytes are
// a prefix of it followed by zeros, never a later record.
func recordWithin(buf []byte, seq uint64) bool {
	for p := 1; p < len(buf); p++ {
		n, k := binary.Uvarint(buf[p:])
		if k <= 0 || n < backupRecordHeader || p+k+4 > len(buf) || uint64(len(buf)-p-k-4) < n {
			continue
		}
		frame := buf[p+k:]
		body := frame[4 : 4+n]
		if binary.BigEndian.Uint64(body) == seq && crc32.Checksum(body, backupCRC) == binary.BigEndian.Uint32(frame) {
			return true
		}
	}
	return false
}

// zerosToEnd reports whether r holds only zeros to its end.
func zerosToEnd(r *bufio.Reader) bool {
	for {
		b, err := r.ReadByte()
		if err == io.EOF {
			return true
		}
		if err != nil || b != 0 {
			return false
		}
	}
}

func uvarintLen(n uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], n)
}
