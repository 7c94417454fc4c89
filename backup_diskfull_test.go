package tablestore

import (
	"fmt"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
)

// fullFS writes through the OS's files until it is given a budget:
// then writes take that many more bytes in all, a write that does not
// fit writes what does and fails with ENOSPC, as a file system that
// runs out of space does.
type fullFS struct {
	vfs.FS
	budget atomic.Int64 // < 0: unlimited
}

func newFullFS() *fullFS {
	f := &fullFS{FS: vfs.Default}
	f.budget.Store(-1)
	return f
}

func (f *fullFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	file, err := f.FS.Create(name, c)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: file, fs: f}, nil
}

type fullFile struct {
	vfs.File
	fs *fullFS
}

// take returns how many of n bytes fit.
func (f *fullFile) take(n int) int {
	for {
		b := f.fs.budget.Load()
		if b < 0 {
			return n
		}
		k := min(int64(n), b)
		if f.fs.budget.CompareAndSwap(b, b-k) {
			return int(k)
		}
	}
}

func (f *fullFile) Write(p []byte) (int, error) {
	k := f.take(len(p))
	n, err := f.File.Write(p[:k])
	if err == nil && k < len(p) {
		err = syscall.ENOSPC
	}
	return n, err
}

func (f *fullFile) WriteAt(p []byte, off int64) (int, error) {
	k := f.take(len(p))
	n, err := f.File.WriteAt(p[:k], off)
	if err == nil && k < len(p) {
		err = syscall.ENOSPC
	}
	return n, err
}

// TestBackupDiskFull: the backup's disk fills up as the log starts a
// segment, or in the middle of one. The write that meets it is applied
// and says so (ErrAppliedBackupStopped, not a retryable ServerBusy), and
// shows in the change feed; later writes are refused; nothing is written
// to the log after the failure point, even once space returns. The store
// then reopens without a hand step, the lost stretch is a hole in
// ListBackups that Restore refuses, and every instant outside it
// restores exactly.
func TestBackupDiskFull(t *testing.T) {
	for _, c := range []struct {
		name         string
		segmentBytes int64
		budget       int64
	}{
		{"segment start", 1, 0}, // every flush starts a segment
		{"mid segment", 64 << 20, 100},
	} {
		t.Run(c.name, func(t *testing.T) {
			fs := newFullFS()
			dir, bdir, opts, db, tb := openBackedUp(t, ContinuousBackup{SegmentBytes: c.segmentBytes, fs: fs})
			require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{}))
			row := func(i int) *Entity {
				return &Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%04d", i), Properties: map[string]any{"N": int64(i)}}
			}
			snap := func() (time.Time, string) {
				s, err := db.Snapshot(ctx)
				require.NoError(t, err)
				defer s.Close()
				return s.Time(), dumpSnapshot(t, s)
			}
			for i := range 20 {
				require.NoError(t, tb.Insert(ctx, row(i)))
			}
			beforeAt, beforeDump := snap()

			fs.budget.Store(c.budget)
			var err error
			i := 20
			for ; i < 1000; i++ {
				if err = tb.Insert(ctx, row(i)); err != nil {
					break
				}
			}
			require.ErrorIs(t, err, ErrAppliedBackupStopped, "insert %d", i)
			require.ErrorIs(t, err, ErrBackupStopped)
			require.NotErrorIs(t, err, ErrNoSpace, "an applied write must not invite a retry")
			require.NotEqual(t, edm.CodeServerBusy, ErrorCode(err))
			_, err = tb.Get(ctx, "p", row(i).RowKey, nil)
			require.NoError(t, err, "the write is applied")
			var fed bool
			for ch, err := range tb.Changes(ctx, ChangesQuery{}) {
				require.NoError(t, err)
				fed = fed || ch.RowKey == row(i).RowKey
			}
			require.True(t, fed, "the applied write is in the change feed")
			failedAt := time.Now()
			err = tb.Insert(ctx, row(i+1))
			require.ErrorIs(t, err, ErrBackupStopped)
			require.NotErrorIs(t, err, ErrAppliedBackupStopped)
			_, err = tb.Get(ctx, "p", row(i+1).RowKey, nil)
			require.ErrorIs(t, err, ErrResourceNotFound, "a refused write is not applied")
			require.ErrorIs(t, db.Health(), ErrBackupStopped)

			// Space returns before the store closes: the close must not
			// write past the failure point either.
			fs.budget.Store(-1)
			_ = db.Close()

			db, err = Open(dir, opts)
			require.NoError(t, err, "the store reopens once space returns")
			require.NoError(t, db.Health())
			tb = db.Table("Alpha")
			for j := i + 1; j < i+6; j++ {
				require.NoError(t, tb.Insert(ctx, row(j)))
			}
			afterAt, afterDump := snap()
			require.NoError(t, db.Close())

			w, err := ListBackups(bdir, nil)
			require.NoError(t, err)
			require.Nil(t, w.Damaged)
			require.Len(t, w.Holes, 1, "the lost stretch is a hole: %+v", w)
			h := w.Holes[0]
			require.True(t, h.After.Before(failedAt) && failedAt.Before(h.Before), "hole %+v, failure at %s", h, failedAt)
			_, err = Restore(ctx, bdir, failedAt, filepath.Join(t.TempDir(), "hole"), nil)
			require.ErrorIs(t, err, ErrOutsideWindow)
			require.Contains(t, err.Error(), fmt.Sprintf("records %d to %d", h.FirstSeq, h.LastSeq))
			for k, p := range []struct {
				at   time.Time
				dump string
			}{{beforeAt, beforeDump}, {afterAt, afterDump}, {time.Time{}, afterDump}} {
				into := filepath.Join(t.TempDir(), fmt.Sprint(k))
				_, err := Restore(ctx, bdir, p.at, into, nil)
				require.NoError(t, err, "point %d", k)
				requireRestored(t, into, p.dump)
			}
			// The hole starts at the last record kept: every write before
			// the failing one restores.
			res, err := Restore(ctx, bdir, h.After, filepath.Join(t.TempDir(), "edge"), nil)
			require.NoError(t, err)
			require.Equal(t, i, res.Entities)
		})
	}
}
