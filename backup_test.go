package tablestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
)

// dumpTables is a canonical export of every table a lister shows: names
// in order, then each table's entities in key order with every property
// and type, Timestamp and ETag.
func dumpTables(t *testing.T, names func() []string, table func(string) *Table) string {
	t.Helper()
	var b strings.Builder
	for _, n := range names() {
		fmt.Fprintf(&b, "table %s\n", n)
		for e, err := range table(n).Query(ctx, Query{}) {
			require.NoError(t, err)
			keys := make([]string, 0, len(e.Properties))
			for k := range e.Properties {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			fmt.Fprintf(&b, "%q %q %s %s", e.PartitionKey, e.RowKey, e.Timestamp.Format(time.RFC3339Nano), e.ETag)
			for _, k := range keys {
				fmt.Fprintf(&b, " %s=%T:%v", k, e.Properties[k], e.Properties[k])
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func dumpSnapshot(t *testing.T, s *Snapshot) string {
	return dumpTables(t, func() []string { return listAll(t, s.TableNames) }, s.Table)
}

func dumpDB(t *testing.T, db *DB) string {
	return dumpTables(t, func() []string { return listAll(t, db.TableNames) }, db.Table)
}

func listAll(t *testing.T, names func(context.Context, string) iter.Seq2[string, error]) []string {
	t.Helper()
	var out []string
	for n, err := range names(ctx, "") {
		require.NoError(t, err)
		out = append(out, n)
	}
	return out
}

// backupWorkload runs a seeded mix of every kind of write on db: single
// writes, transactions, range deletions, table creations and drops. It
// calls mark between steps.
func backupWorkload(t *testing.T, db *DB, seed uint64, steps int, mark func(step int)) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	tables := []string{"Alpha", "Beta"}
	for _, n := range tables {
		_, err := db.CreateTable(ctx, n)
		require.NoError(t, err)
	}
	next := 0
	for step := range steps {
		name := tables[rng.IntN(len(tables))]
		tb := db.Table(name)
		pk := fmt.Sprintf("p%d", rng.IntN(4))
		switch k := rng.IntN(100); {
		case k < 50:
			err := tb.Upsert(ctx, &Entity{PartitionKey: pk, RowKey: fmt.Sprintf("r%03d", rng.IntN(50)), Properties: map[string]any{"n": int64(step), "s": strconv.Itoa(rng.IntN(1000))}}, Replace)
			require.NoError(t, err)
		case k < 75:
			acts := make([]TransactionAction, 1+rng.IntN(5))
			for i := range acts {
				acts[i] = TransactionAction{Type: ActionUpsertMerge, Entity: &Entity{PartitionKey: pk, RowKey: fmt.Sprintf("t%02d-%d", i, rng.IntN(3)), Properties: map[string]any{"step": int32(step)}}}
			}
			// Distinct RowKeys within one transaction.
			seen := map[string]bool{}
			var uniq []TransactionAction
			for _, a := range acts {
				if !seen[a.Entity.(*Entity).RowKey] {
					seen[a.Entity.(*Entity).RowKey] = true
					uniq = append(uniq, a)
				}
			}
			require.NoError(t, tb.SubmitTransaction(ctx, uniq))
		case k < 82:
			if err := tb.Delete(ctx, pk, fmt.Sprintf("r%03d", rng.IntN(50)), "*"); !errors.Is(err, ErrResourceNotFound) {
				require.NoError(t, err)
			}
		case k < 88:
			require.NoError(t, tb.Partition(pk).DeleteRange(ctx, "r010", "r030"))
		case k < 91:
			require.NoError(t, tb.Partition(pk).DeleteAll(ctx))
		case k < 96:
			// Drop a table and create another (sometimes the same name
			// again).
			require.NoError(t, db.DeleteTable(ctx, name))
			fresh := name
			if rng.IntN(2) == 0 {
				next++
				fresh = fmt.Sprintf("Tbl%d", next)
			}
			_, err := db.CreateTable(ctx, fresh)
			require.NoError(t, err)
			for i, n := range tables {
				if n == name {
					tables[i] = fresh
				}
			}
		default:
			require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "ins", RowKey: fmt.Sprintf("%06d", step), Properties: map[string]any{"b": []byte{byte(step)}, "f": float64(step) / 3}}))
		}
		mark(step)
	}
}

func TestRestoreEqualsSnapshot(t *testing.T) { restoreEqualsSnapshot(t, nil, 400) }

// TestRestoreEqualsSnapshotEncrypted: the same, smaller, with the store
// and so its backup encrypted; restores take the key.
func TestRestoreEqualsSnapshotEncrypted(t *testing.T) {
	restoreEqualsSnapshot(t, &Encryption{Key: bytes.Repeat([]byte{7}, EncryptionKeySize)}, 100)
}

// restoreEqualsSnapshot runs steps of backupWorkload on a store with
// encryption enc (nil: none) and continuous backup, taking snapshots,
// and checks that a restore to each snapshot's time equals it.
func restoreEqualsSnapshot(t *testing.T, enc *Encryption, steps int) {
	dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	opts := &Options{ContinuousBackup: &ContinuousBackup{Dir: bdir}, Encryption: enc}
	restoreOpts := &Options{Encryption: enc}
	db, err := Open(dir, opts)
	require.NoError(t, err)
	type point struct {
		at   time.Time
		dump string
	}
	var points []point
	take := func() {
		s, err := db.Snapshot(ctx)
		require.NoError(t, err)
		points = append(points, point{s.Time(), dumpSnapshot(t, s)})
		require.NoError(t, s.Close())
	}
	take()
	backupWorkload(t, db, 1, steps, func(step int) {
		if step%50 == 49 {
			take()
		}
	})
	// A restore while the store runs, from the backup in use.
	last := points[len(points)-1]
	into := filepath.Join(t.TempDir(), "live")
	_, err = Restore(ctx, bdir, last.at, into, restoreOpts)
	require.NoError(t, err)
	requireRestoredWith(t, into, last.dump, enc)

	// A reopen takes a new base; the workload goes on.
	require.NoError(t, db.Close())
	db, err = Open(dir, opts)
	require.NoError(t, err)
	backupWorkload2 := func() {
		tb, err := db.CreateTable(ctx, "Later")
		require.NoError(t, err)
		for i := range 30 {
			require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "x", RowKey: strconv.Itoa(i)}))
			if i%10 == 9 {
				take()
			}
		}
	}
	backupWorkload2()
	require.NoError(t, db.Close())

	w, err := ListBackups(bdir, restoreOpts)
	require.NoError(t, err)
	require.Len(t, w.Bases, 2)
	require.Empty(t, w.Torn)
	for i, p := range points {
		into := filepath.Join(t.TempDir(), fmt.Sprint(i))
		res, err := Restore(ctx, bdir, p.at, into, restoreOpts)
		require.NoError(t, err, "point %d", i)
		require.Equal(t, p.at.UTC(), res.Time)
		requireRestoredWith(t, into, p.dump, enc)
	}
}

// requireRestored opens the store in dir and compares its export with
// want.
func requireRestored(t *testing.T, dir, want string) {
	t.Helper()
	requireRestoredWith(t, dir, want, nil)
}

// requireRestoredWith is requireRestored for a store encrypted with enc:
// it opens with enc only.
func requireRestoredWith(t *testing.T, dir, want string, enc *Encryption) {
	t.Helper()
	if enc != nil {
		_, err := Open(dir, &Options{MustExist: true})
		require.ErrorIs(t, err, ErrEncryptionKey, "the restored store opens without the key")
	}
	db, err := Open(dir, &Options{MustExist: true, Encryption: enc})
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, want, dumpDB(t, db))
}

func TestRestoreRefusesBadInput(t *testing.T) {
	dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	db, err := Open(dir, &Options{ContinuousBackup: &ContinuousBackup{Dir: bdir}})
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Alpha")
	require.NoError(t, err)
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "r"}))
	require.NoError(t, db.Close())
	w, err := ListBackups(bdir, nil)
	require.NoError(t, err)

	// Before the window, and after it.
	for _, at := range []time.Time{w.Oldest.Add(-time.Second), w.Newest.Add(time.Hour)} {
		_, err = Restore(ctx, bdir, at, filepath.Join(t.TempDir(), "x"), nil)
		requireCode(t, err, edm.CodeOutOfRangeInput)
		require.ErrorIs(t, err, ErrOutsideWindow)
		require.Contains(t, err.Error(), w.Oldest.Format(time.RFC3339Nano))
		require.Contains(t, err.Error(), w.Newest.Format(time.RFC3339Nano))
	}
	// A non-empty target.
	full := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(full, "keep"), []byte("x"), 0o644))
	_, err = Restore(ctx, bdir, time.Time{}, full, nil)
	requireCode(t, err, edm.CodeInvalidInput)
	data, err := os.ReadFile(filepath.Join(full, "keep"))
	require.NoError(t, err)
	require.Equal(t, "x", string(data))
	// Not a backup.
	_, err = ListBackups(t.TempDir(), nil)
	requireCode(t, err, edm.CodeInvalidInput)
	// In memory.
	_, err = OpenInMemory(&Options{ContinuousBackup: &ContinuousBackup{Dir: bdir}})
	requireCode(t, err, edm.CodeInvalidInput)
}

func TestRestoreStopsAtDamage(t *testing.T) {
	dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	db, err := Open(dir, &Options{ContinuousBackup: &ContinuousBackup{Dir: bdir, SegmentBytes: 4 << 10}})
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Alpha")
	require.NoError(t, err)
	var mid time.Time
	var midDump string
	for i := range 80 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i), Properties: map[string]any{"v": strings.Repeat("x", 100)}}))
		if i == 9 {
			s, err := db.Snapshot(ctx)
			require.NoError(t, err)
			mid, midDump = s.Time(), dumpSnapshot(t, s)
			require.NoError(t, s.Close())
		}
	}
	require.NoError(t, db.Close())
	segs, err := filepath.Glob(filepath.Join(bdir, "seg-*.log"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(segs), 3)
	// records returns a segment's bytes and where its records end (the
	// file runs on in zeros past them).
	records := func(path string) ([]byte, int) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		end := len(data)
		for end > 0 && data[end-1] == 0 {
			end--
		}
		return data, end
	}

	// Damage a byte three quarters into the records of the segment
	// before the last: well after mid, which is in the first.
	victim := segs[len(segs)-2]
	data, end := records(victim)
	pos := end * 3 / 4
	data[pos] ^= 0xff
	require.NoError(t, os.WriteFile(victim, data, 0o644))

	all := filepath.Join(t.TempDir(), "all")
	_, err = Restore(ctx, bdir, time.Time{}, all, nil)
	requireCode(t, err, edm.CodeInternalError)
	var damaged *DamagedBackupError
	require.True(t, errors.As(err, &damaged), "error: %v", err)
	require.Equal(t, victim, damaged.File)
	require.LessOrEqual(t, damaged.Offset, int64(pos))
	require.Greater(t, damaged.Offset, int64(pos)-400)
	_, serr := os.Stat(all)
	require.True(t, os.IsNotExist(serr), "a failed restore leaves no partial store")

	// Up to a time before the damage, the restore holds.
	into := filepath.Join(t.TempDir(), "mid")
	_, err = Restore(ctx, bdir, mid, into, nil)
	require.NoError(t, err)
	requireRestored(t, into, midDump)

	// In the last segment, a record's length zeroed would end the
	// records early: it is damage too, not the end of the log, and
	// backups list reports it.
	data[pos] ^= 0xff
	require.NoError(t, os.WriteFile(victim, data, 0o644))
	last := segs[len(segs)-1]
	data, _ = records(last)
	off := 0
	for range 2 { // the start of the third record
		n, k := binary.Uvarint(data[off:])
		require.Positive(t, k)
		off += k + 4 + int(n)
	}
	orig := data[off]
	data[off] = 0
	require.NoError(t, os.WriteFile(last, data, 0o644))
	w, err := ListBackups(bdir, nil)
	require.NoError(t, err)
	require.NotNil(t, w.Damaged)
	require.Equal(t, int64(off), w.Damaged.Offset)
	_, err = Restore(ctx, bdir, time.Time{}, filepath.Join(t.TempDir(), "zeroed"), nil)
	require.True(t, errors.As(err, &damaged), "error: %v", err)
	require.Equal(t, int64(off), damaged.Offset)

	// A length damaged so that the record runs over the later ones is
	// damage too, never a crash's torn tail: the restore to now fails
	// rather than end quietly before the commits that follow.
	data[off] = orig
	n, k := binary.Uvarint(data[off:])
	require.Equal(t, 2, k, "a record of %d bytes", n)
	copy(data[off:], []byte{0xff, 0x7f}) // 16383
	require.NoError(t, os.WriteFile(last, data, 0o644))
	w, err = ListBackups(bdir, nil)
	require.NoError(t, err)
	require.Empty(t, w.Torn)
	require.NotNil(t, w.Damaged)
	require.Equal(t, int64(off), w.Damaged.Offset)
	_, err = Restore(ctx, bdir, time.Time{}, filepath.Join(t.TempDir(), "long"), nil)
	require.True(t, errors.As(err, &damaged), "error: %v", err)
	require.Equal(t, int64(off), damaged.Offset)
}

func TestBackupRetention(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	opts := &Options{Clock: clock, ContinuousBackup: &ContinuousBackup{Dir: bdir, Retention: 2 * time.Hour, SegmentBytes: 1 << 10}}
	// Every open takes a base; one an hour.
	for round := range 5 {
		db, err := Open(dir, opts)
		require.NoError(t, err)
		tb, err := db.CreateTableIfNotExists(ctx, "Alpha")
		require.NoError(t, err)
		for i := range 20 {
			require.NoError(t, tb.Upsert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: map[string]any{"round": int32(round), "pad": strings.Repeat("y", 60)}}, Replace))
		}
		require.NoError(t, db.Close())
		advance(time.Hour)
	}
	w, err := ListBackups(bdir, nil)
	require.NoError(t, err)
	// The bases of the last two hours and the newest one before them.
	require.Len(t, w.Bases, 3, "bases: %v", w.Bases)
	require.Equal(t, w.Bases[0], w.Oldest)
	require.True(t, w.Oldest.Before(now.Add(-2*time.Hour)))
	segs, err := filepath.Glob(filepath.Join(bdir, "seg-*.log"))
	require.NoError(t, err)
	// Every segment kept is needed: its records come after the oldest
	// base's position.
	require.NotEmpty(t, segs)
	require.Less(t, len(segs), 5*3, "old segments are gone")
	into := filepath.Join(t.TempDir(), "r")
	_, err = Restore(ctx, bdir, w.Oldest, into, nil)
	require.NoError(t, err)
	db, err := Open(into, nil)
	require.NoError(t, err)
	defer db.Close()
	e, err := db.Table("Alpha").Get(ctx, "p", "3", nil)
	require.NoError(t, err)
	require.Equal(t, int32(1), e.Properties["round"], "the oldest base kept is the third open's, after the second round")
}

// TestRestoreManyGroups replays more records than one apply group holds,
// each under Pebble's batch-reuse size, while another Pebble store in the
// process writes: a record's bytes adopted by a pooled batch rather than
// copied let later batches write into the segment reader's buffer (seen
// as a damaged segment or as lost entities).
func TestRestoreManyGroups(t *testing.T) {
	dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	db, err := Open(dir, &Options{ContinuousBackup: &ContinuousBackup{Dir: bdir}})
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Wide")
	require.NoError(t, err)
	pad := strings.Repeat("w", 1500)
	for txn := range 120 { // about 120 records of 150 KB: several 4 MiB groups
		acts := make([]TransactionAction, 100)
		for i := range acts {
			acts[i] = TransactionAction{Type: ActionUpsertReplace, Entity: &Entity{
				PartitionKey: fmt.Sprintf("p%03d", txn), RowKey: fmt.Sprintf("r%03d", i),
				Properties: map[string]any{"Pad": pad, "N": int32(txn*100 + i)}}}
		}
		require.NoError(t, tb.SubmitTransaction(ctx, acts))
	}
	s, err := db.Snapshot(ctx)
	require.NoError(t, err)
	at, want := s.Time(), dumpSnapshot(t, s)
	require.NoError(t, s.Close())
	require.NoError(t, db.Close())

	// Pebble's batch pool is shared by the process: a writer elsewhere
	// checks that no batch it takes carries bytes the restore still uses.
	other, err := pebble.Open("", &pebble.Options{FS: vfs.NewMem()})
	require.NoError(t, err)
	defer other.Close()
	stop, churnErr := make(chan struct{}), make(chan error, 1)
	go func() { churnErr <- churnBatches(other, stop) }()
	for i := range 3 {
		into := filepath.Join(t.TempDir(), fmt.Sprint("restored", i))
		res, err := Restore(ctx, bdir, at, into, nil)
		require.NoError(t, err)
		require.EqualValues(t, 12000, res.Entities)
		requireRestored(t, into, want)
	}
	close(stop)
	require.NoError(t, <-churnErr)
}

// churnBatches writes small batches into db until stop is closed and
// reads each back, failing when a batch's bytes changed under it.
func churnBatches(db *pebble.DB, stop <-chan struct{}) error {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return nil
		default:
		}
		key, val := []byte(fmt.Sprintf("k%08d", n)), []byte(fmt.Sprintf("v%08d", n))
		b := db.NewBatch()
		if err := b.Set(key, val, nil); err != nil {
			return err
		}
		if err := db.Apply(b, pebble.NoSync); err != nil {
			return err
		}
		_ = b.Close()
		got, closer, err := db.Get(key)
		if err != nil {
			return fmt.Errorf("batch %d: %w", n, err)
		}
		same := string(got) == string(val)
		_ = closer.Close()
		if !same {
			return fmt.Errorf("batch %d: read %q, wrote %q", n, got, val)
		}
	}
}

// TestBackupResumesAfterEmptySegment: a crash right after a segment was
// created leaves it without a whole record; the next open resumes the
// log at the record that segment's name holds, so it must not collide
// with it. The record the crash lost ("b") is in the store, so the
// base that open takes must hold it, though no record came after the
// older base: a restore gets every entity.
func TestBackupResumesAfterEmptySegment(t *testing.T) {
	dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	opts := &Options{ContinuousBackup: &ContinuousBackup{Dir: bdir}}
	insert := func(rows ...string) {
		t.Helper()
		db, err := Open(dir, opts)
		require.NoError(t, err)
		tb, err := db.CreateTableIfNotExists(ctx, "Alpha")
		require.NoError(t, err)
		for _, rk := range rows {
			require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: rk}))
		}
		require.NoError(t, db.Close())
	}
	insert("a")
	before, err := filepath.Glob(filepath.Join(bdir, "seg-*.log"))
	require.NoError(t, err)
	insert("b")
	after, err := filepath.Glob(filepath.Join(bdir, "seg-*.log"))
	require.NoError(t, err)
	require.Len(t, after, len(before)+1, "each open starts a segment")
	// The second open's segment as a crash just after its creation
	// leaves it: pre-filled with zeros, no record.
	newest := after[len(after)-1]
	fi, err := os.Stat(newest)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(newest, make([]byte, fi.Size()), 0o644))

	insert("c") // failed at its first append or at Close: "exists already"
	into := filepath.Join(t.TempDir(), "restored")
	_, err = Restore(ctx, bdir, time.Time{}, into, nil)
	require.NoError(t, err)
	db, err := Open(into, &Options{MustExist: true})
	require.NoError(t, err)
	defer db.Close()
	tb := db.Table("Alpha")
	for _, rk := range []string{"a", "b", "c"} {
		_, err := tb.Get(ctx, "p", rk, nil)
		require.NoError(t, err, "row %s", rk)
	}
}

// TestBackupEmptySegmentAfterRotation: a crash right after the log
// started a new segment mid-run leaves it without a record, while the
// segment before holds records newer than any base. Those records stay
// in the window: the backup lists them, a restore replays them, and the
// next open records no hole for them, encrypted or not.
func TestBackupEmptySegmentAfterRotation(t *testing.T) {
	for _, encrypted := range []bool{false, true} {
		t.Run(fmt.Sprintf("encrypted=%v", encrypted), func(t *testing.T) {
			dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
			opts := &Options{ContinuousBackup: &ContinuousBackup{Dir: bdir, SegmentBytes: 1 << 10}}
			if encrypted {
				opts.Encryption = &Encryption{Key: bytes.Repeat([]byte{7}, EncryptionKeySize)}
			}
			db, err := Open(dir, opts)
			require.NoError(t, err)
			tb, err := db.CreateTable(ctx, "Alpha")
			require.NoError(t, err)
			const rows = 40
			for i := range rows {
				require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprintf("r%03d", i),
					Properties: map[string]any{"Pad": strings.Repeat("x", 100)}}))
			}
			require.NoError(t, db.Close())
			before, err := ListBackups(bdir, opts)
			require.NoError(t, err)
			require.GreaterOrEqual(t, before.Segments, 2, "the log rotated")
			require.Len(t, before.Bases, 1)

			// The next segment as a crash right after its creation leaves
			// it: empty, or an encryption header alone.
			segs, err := filepath.Glob(filepath.Join(bdir, "seg-*.log"))
			require.NoError(t, err)
			var empty []byte
			if encrypted {
				head, err := os.ReadFile(segs[len(segs)-1])
				require.NoError(t, err)
				empty = head[:4096]
			}
			require.NoError(t, os.WriteFile(filepath.Join(bdir, fmt.Sprintf("seg-%020d.log", before.LastSeq+1)), empty, 0o644))

			w, err := ListBackups(bdir, opts)
			require.NoError(t, err)
			require.Equal(t, before.LastSeq, w.LastSeq, "the last whole record is in the segment before the empty one")
			require.Equal(t, before.Newest, w.Newest)
			restored := func(what string) {
				t.Helper()
				into := filepath.Join(t.TempDir(), "restored")
				_, err := Restore(ctx, bdir, time.Time{}, into, opts)
				require.NoError(t, err, what)
				o := *opts
				o.ContinuousBackup, o.MustExist = nil, true
				db, err := Open(into, &o)
				require.NoError(t, err, what)
				defer db.Close()
				n := 0
				for _, err := range db.Table("Alpha").Query(ctx, Query{}) {
					require.NoError(t, err, what)
					n++
				}
				require.Equal(t, rows, n, "%s: the restore holds every row", what)
			}
			restored("after the crash")

			// The next open resumes the log without a hole.
			db, err = Open(dir, opts)
			require.NoError(t, err)
			require.NoError(t, db.Close())
			w, err = ListBackups(bdir, opts)
			require.NoError(t, err)
			require.Empty(t, w.Holes, "no commit was lost")
			restored("after the next open")
		})
	}
}
