package tablestore

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
)

// TestBackupHoleAfterPowerLoss: with BackgroundSync, a power loss that
// drops the log's last records of commits the store kept (simulated by
// cutting the segment short after a clean Close) leaves a hole: the
// next Open records it, ListBackups reports it with the ranges around
// it, a restore into it is refused, and restores before and after it
// equal the snapshots of those instants.
func TestBackupHoleAfterPowerLoss(t *testing.T) {
	dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	opts := &Options{ContinuousBackup: &ContinuousBackup{Dir: bdir, BackgroundSync: true}}
	db, err := Open(dir, opts)
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Alpha")
	require.NoError(t, err)
	insert := func(from, to int) {
		for i := from; i < to; i++ {
			require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i), Properties: map[string]any{"N": int64(i)}}))
		}
	}
	snap := func() (time.Time, string) {
		s, err := db.Snapshot(ctx)
		require.NoError(t, err)
		defer s.Close()
		return s.Time(), dumpSnapshot(t, s)
	}
	insert(0, 10)
	beforeAt, beforeDump := snap()
	insert(10, 20)
	inAt, inDump := snap()
	insert(20, 30)
	require.NoError(t, db.Close())

	segs, err := filepath.Glob(filepath.Join(bdir, "seg-*.log"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	data, err := os.ReadFile(segs[0])
	require.NoError(t, err)
	cut := 0
	for off := 0; off < len(data); {
		n, k := binary.Uvarint(data[off:])
		if k <= 0 || n == 0 {
			break
		}
		body := data[off+k+4:]
		if int64(binary.BigEndian.Uint64(body[8:])) > beforeAt.UnixNano() {
			break
		}
		off += k + 4 + int(n)
		cut = off
	}
	require.Positive(t, cut)
	require.Less(t, cut, len(data))
	require.NoError(t, os.Truncate(segs[0], int64(cut)))

	db, err = Open(dir, opts)
	require.NoError(t, err)
	tb = db.Table("Alpha")
	insert(30, 40)
	afterAt, afterDump := snap()
	require.NotEqual(t, inDump, afterDump)
	require.NoError(t, db.Close())

	w, err := ListBackups(bdir, nil)
	require.NoError(t, err)
	require.Len(t, w.Holes, 1, "window: %+v", w)
	h := w.Holes[0]
	require.False(t, h.After.Before(beforeAt), "the hole starts after the last record kept")
	require.True(t, h.After.Before(inAt) && inAt.Before(h.Before), "hole %+v, lost instant %s", h, inAt)
	require.False(t, afterAt.Before(h.Before))
	require.LessOrEqual(t, h.FirstSeq, h.LastSeq)
	require.Equal(t, []BackupRange{{From: w.Oldest, To: h.After}, {From: h.Before, To: w.Newest}}, w.Ranges)

	_, err = Restore(ctx, bdir, inAt, filepath.Join(t.TempDir(), "hole"), nil)
	requireCode(t, err, edm.CodeOutOfRangeInput)
	require.ErrorIs(t, err, ErrOutsideWindow)
	for _, r := range w.Ranges {
		require.Contains(t, err.Error(), r.From.Format(time.RFC3339Nano))
		require.Contains(t, err.Error(), r.To.Format(time.RFC3339Nano))
	}

	for i, p := range []struct {
		at   time.Time
		dump string
	}{{beforeAt, beforeDump}, {h.After, beforeDump}, {afterAt, afterDump}, {time.Time{}, afterDump}} {
		into := filepath.Join(t.TempDir(), fmt.Sprint(i))
		_, err := Restore(ctx, bdir, p.at, into, nil)
		require.NoError(t, err, "point %d", i)
		requireRestored(t, into, p.dump)
	}
}

// TestBackupCutsCommitsTheStoreLost: a commit can reach the log but not
// the store (in flight at a kill -9; simulated by putting back a copy of
// the store taken before it). The next Open cuts it from the log: no
// restore holds it, and the store's next commits, numbered as the lost
// one was, restore as the store holds them, change feed sequence
// numbers included.
func TestBackupCutsCommitsTheStoreLost(t *testing.T) {
	dir, bdir, opts, db, tb := openBackedUp(t, ContinuousBackup{})
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{}))
	row := func(k string) *Entity { return &Entity{PartitionKey: "p", RowKey: k} }
	for i := range 5 {
		require.NoError(t, tb.Insert(ctx, row(fmt.Sprint(i))))
	}
	require.NoError(t, db.Close())
	before := t.TempDir()
	copyDir(t, dir, before)

	db, err := Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, db.Table("Alpha").Insert(ctx, row("lost")))
	require.NoError(t, db.Close())
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.Mkdir(dir, 0o755))
	copyDir(t, before, dir)

	db, err = Open(dir, opts)
	require.NoError(t, err)
	tb = db.Table("Alpha")
	require.NoError(t, tb.Insert(ctx, row("next")))
	var feed []string
	for ch, err := range tb.Changes(ctx, ChangesQuery{}) {
		require.NoError(t, err)
		feed = append(feed, fmt.Sprint(ch.Seq, ch.RowKey))
	}
	want := dumpDB(t, db)
	require.NoError(t, db.Close())
	require.NotContains(t, want, `"lost"`)

	into := filepath.Join(t.TempDir(), "r")
	_, err = Restore(ctx, bdir, time.Time{}, into, nil)
	require.NoError(t, err)
	requireRestored(t, into, want)
	rdb, err := Open(into, nil)
	require.NoError(t, err)
	defer rdb.Close()
	var rfeed []string
	for ch, err := range rdb.Table("Alpha").Changes(ctx, ChangesQuery{}) {
		require.NoError(t, err)
		rfeed = append(rfeed, fmt.Sprint(ch.Seq, ch.RowKey))
	}
	require.Equal(t, feed, rfeed, "a sequence number means the same change in the store and the restore")
}

// TestBackupKeptByRestoredStore: a store restored to an earlier instant
// and then given the original's backup directory (the store swapped
// for its restore) leaves the log it did not write as it is, so every
// instant before the swap still restores, and takes a base, so now
// restores the restored store.
func TestBackupKeptByRestoredStore(t *testing.T) {
	dir, bdir, opts, db, tb := openBackedUp(t, ContinuousBackup{})
	for i := range 5 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}))
	}
	s, err := db.Snapshot(ctx)
	require.NoError(t, err)
	early := s.Time()
	require.NoError(t, s.Close())
	for i := 5; i < 10; i++ {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}))
	}
	late := dumpDB(t, db)
	s, err = db.Snapshot(ctx)
	require.NoError(t, err)
	lateAt := s.Time()
	require.NoError(t, s.Close())
	require.NoError(t, db.Close())

	swapped := filepath.Join(t.TempDir(), "swapped")
	_, err = Restore(ctx, bdir, early, swapped, nil)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(dir))
	require.NoError(t, os.Rename(swapped, dir))
	db, err = Open(dir, opts)
	require.NoError(t, err)
	now := dumpDB(t, db)
	require.NoError(t, db.Close())

	into := filepath.Join(t.TempDir(), "late")
	_, err = Restore(ctx, bdir, lateAt, into, nil)
	require.NoError(t, err)
	requireRestored(t, into, late)
	into = filepath.Join(t.TempDir(), "now")
	_, err = Restore(ctx, bdir, time.Time{}, into, nil)
	require.NoError(t, err)
	requireRestored(t, into, now)
}
