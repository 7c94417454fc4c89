package tablestore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/edm"
)

// TestDiskFullTmpfs fills a real, small file system: set
// TABLESTORE_TMPFS_DIR to an empty directory on it, for instance
//
//	mount -t tmpfs -o size=20m tmpfs /mnt/x
//	TABLESTORE_TMPFS_DIR=/mnt/x go test -run TestDiskFullTmpfs -v .
//
// A ballast file takes 4 MiB first; inserts (unique index, change feed
// on, synced) run until the disk is full, then the ballast is removed.
// It reports how long writes took to answer, how long after the removal
// writes resumed, and checks after a reopen that no acknowledged insert
// is lost. It runs twice: the store alone, and with a continuous backup
// on the same file system (segments of 256 KiB), whose log stops at the
// first write that fails; that store is reopened once the ballast is
// gone, and its backup must list no damage and restore every
// acknowledged insert. (On a 20 MiB tmpfs the store's own disk-full
// refusal has come first in every run so far; TestBackupDiskFull fails
// the log's writes first through a quota filesystem.)
func TestDiskFullTmpfs(t *testing.T) {
	root := os.Getenv("TABLESTORE_TMPFS_DIR")
	if root == "" {
		t.Skip("TABLESTORE_TMPFS_DIR not set")
	}
	for _, backup := range []bool{false, true} {
		t.Run(fmt.Sprint("backup=", backup), func(t *testing.T) {
			sub := filepath.Join(root, fmt.Sprint("backup-", backup))
			require.NoError(t, os.Mkdir(sub, 0o755))
			defer os.RemoveAll(sub)
			diskFullTmpfs(t, sub, backup)
		})
	}
}

func diskFullTmpfs(t *testing.T, root string, backup bool) {
	ctx := context.Background()
	ballast := filepath.Join(root, "ballast")
	require.NoError(t, os.WriteFile(ballast, make([]byte, 4<<20), 0o600))
	dir := filepath.Join(root, "store")
	var opts *Options
	if backup {
		opts = &Options{ContinuousBackup: &ContinuousBackup{Dir: filepath.Join(root, "backup"), SegmentBytes: 256 << 10}}
	}
	db, err := Open(dir, opts)
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Fill")
	require.NoError(t, err)
	require.NoError(t, tb.CreateIndex(ctx, IndexSpec{Name: "ByEmail", Properties: []string{"Email"}, Unique: true}))
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{}))

	blob := make([]byte, 200)
	_, _ = rand.Read(blob)
	row := func(i int) *Entity {
		return &Entity{PartitionKey: fmt.Sprintf("p%03d", i%100), RowKey: fmt.Sprintf("r%09d", i),
			Properties: map[string]any{"Email": fmt.Sprintf("u%d@example.com", i), "Blob": blob}}
	}
	var acked []int
	var slowest time.Duration
	insert := func(i int) error {
		start := time.Now()
		err := tb.Insert(ctx, row(i))
		slowest = max(slowest, time.Since(start))
		require.Less(t, time.Since(start), 7*time.Second, "insert %d", i)
		if err == nil {
			acked = append(acked, i)
		}
		return err
	}
	i := 0
	for ; i < 2_000_000; i++ {
		if err = insert(i); err != nil {
			break
		}
	}
	t.Logf("full after %d acknowledged inserts: %v", len(acked), err)
	if backup {
		// Whichever met the full disk first, the store or its backup's
		// log, the store reopens once space returns. A write the
		// backup failed is applied.
		require.True(t, errors.Is(err, ErrNoSpace) || errors.Is(err, ErrAppliedBackupStopped), "%v", err)
		if errors.Is(err, ErrAppliedBackupStopped) {
			acked = append(acked, i)
		}
		require.NoError(t, os.Remove(ballast))
		_ = db.Close()
		db, err = Open(dir, opts)
		require.NoError(t, err, "the store reopens once space returns")
		require.NoError(t, db.Table("Fill").Insert(ctx, row(i+1)))
		acked = append(acked, i+1)
		require.NoError(t, db.Close())
		checkTmpfsStore(t, dir, opts, acked, row)
		return
	}
	require.ErrorIs(t, err, ErrNoSpace, "after %d inserts", i)
	require.Equal(t, edm.CodeServerBusy, ErrorCode(err))
	require.ErrorIs(t, db.Health(), ErrNoSpace)
	refusedAt := i
	for range 20 {
		i++
		require.Error(t, insert(i))
	}
	// Reads go on.
	_, err = tb.Get(ctx, row(acked[len(acked)-1]).PartitionKey, row(acked[len(acked)-1]).RowKey, nil)
	require.NoError(t, err)

	require.NoError(t, os.Remove(ballast))
	freed := time.Now()
	for {
		i++
		if err = insert(i); err == nil {
			break
		}
		require.ErrorIs(t, err, ErrNoSpace)
		require.Less(t, time.Since(freed), 30*time.Second, "writes did not resume")
	}
	resumed := time.Since(freed)
	healthy := db.Health() == nil
	t.Logf("writes answered within %v (slowest); resumed %v after the ballast was removed; healthy: %v; %d refused writes after the first",
		slowest.Round(time.Millisecond), resumed.Round(time.Millisecond), healthy, i-refusedAt)
	require.NoError(t, db.Close())
	checkTmpfsStore(t, dir, opts, acked, row)
}

// checkTmpfsStore reopens the store and checks that every acknowledged
// insert is there and, with a backup, that the backup lists no damage and
// a restore to now holds them all.
func checkTmpfsStore(t *testing.T, dir string, opts *Options, acked []int, row func(int) *Entity) {
	ctx := context.Background()
	db, err := Open(dir, opts)
	require.NoError(t, err)
	defer db.Close()
	if opts != nil {
		bdir := opts.ContinuousBackup.Dir
		w, err := ListBackups(bdir, nil)
		require.NoError(t, err)
		require.Nil(t, w.Damaged)
		t.Logf("backup: %d holes, %d segments, %d bytes", len(w.Holes), w.Segments, w.Bytes)
		into := filepath.Join(filepath.Dir(dir), "restored")
		res, err := Restore(ctx, bdir, time.Time{}, into, nil)
		require.NoError(t, err)
		require.GreaterOrEqual(t, res.Entities, len(acked))
		require.NoError(t, os.RemoveAll(into))
	}
	lost := 0
	for _, n := range acked {
		r := row(n)
		if _, err := db.Table("Fill").Get(ctx, r.PartitionKey, r.RowKey, nil); err != nil {
			require.True(t, errors.Is(err, ErrResourceNotFound), "%v", err)
			lost++
		}
	}
	t.Logf("acknowledged inserts lost after reopen: %d of %d", lost, len(acked))
	require.Zero(t, lost)
}
