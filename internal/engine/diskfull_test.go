package engine

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// QuotaFS is a vfs.FS whose writes fail with ENOSPC once the files of its
// directory hold Quota bytes; raising Quota frees space.
type QuotaFS struct {
	vfs.FS
	Dir   string
	Quota atomic.Int64
}

// NewQuotaFS returns an in-memory QuotaFS for the store directory dir.
func NewQuotaFS(dir string, quota int64) *QuotaFS {
	q := &QuotaFS{FS: vfs.NewMem(), Dir: dir}
	q.Quota.Store(quota)
	return q
}

// Used returns the bytes the directory's files hold.
func (q *QuotaFS) Used() int64 {
	names, err := q.FS.List(q.Dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, name := range names {
		if fi, err := q.FS.Stat(q.FS.PathJoin(q.Dir, name)); err == nil && !fi.IsDir() {
			n += fi.Size()
		}
	}
	return n
}

func (q *QuotaFS) Unwrap() vfs.FS { return q.FS }

func (q *QuotaFS) GetDiskUsage(string) (vfs.DiskUsage, error) {
	used, quota := q.Used(), q.Quota.Load()
	avail := max(quota-used, 0)
	return vfs.DiskUsage{AvailBytes: uint64(avail), TotalBytes: uint64(quota), UsedBytes: uint64(used)}, nil
}

func (q *QuotaFS) file(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &quotaFile{File: f, q: q}, nil
}

func (q *QuotaFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return q.file(q.FS.Create(name, c))
}

func (q *QuotaFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return q.file(q.FS.OpenReadWrite(name, c, opts...))
}

func (q *QuotaFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return q.file(q.FS.ReuseForWrite(oldname, newname, c))
}

type quotaFile struct {
	vfs.File
	q   *QuotaFS
	off int64 // where Write writes
}

// room returns how many of n bytes written at off fit under the quota.
func (f *quotaFile) room(off int64, n int) int {
	fi, err := f.File.Stat()
	if err != nil {
		return n
	}
	grow := max(off+int64(n)-fi.Size(), 0)
	free := f.q.Quota.Load() - f.q.Used()
	if grow <= free {
		return n
	}
	return max(n-int(grow-max(free, 0)), 0)
}

var errNoSpaceForTest = &os.PathError{Op: "write", Path: "quota", Err: syscall.ENOSPC}

func (f *quotaFile) Write(p []byte) (int, error) {
	if n := f.room(f.off, len(p)); n < len(p) {
		w, _ := f.File.Write(p[:n])
		f.off += int64(w)
		return w, errNoSpaceForTest
	}
	w, err := f.File.Write(p)
	f.off += int64(w)
	return w, err
}

func (f *quotaFile) WriteAt(p []byte, off int64) (int, error) {
	if n := f.room(off, len(p)); n < len(p) {
		w, _ := f.File.WriteAt(p[:n], off)
		return w, errNoSpaceForTest
	}
	return f.File.WriteAt(p, off)
}

func openQuota(t *testing.T, q *QuotaFS, timeout time.Duration) *Engine {
	t.Helper()
	db, err := open(q.Dir, q, Options{CacheSize: 1 << 20, MemTableSize: 256 << 10, PageScanLimit: 1000,
		PageTimeLimit: time.Second, Clock: time.Now, WriteTimeout: timeout})
	require.NoError(t, err)
	return db
}

// filler is incompressible, so the quota fills as fast as writes come.
var filler = func() []byte {
	b := make([]byte, 1000)
	_, _ = rand.Read(b)
	return b
}()

func fillerRow(i int) driver.Action {
	return driver.Action{Type: driver.ActionInsert, PartitionKey: fmt.Sprintf("p%02d", i%16), RowKey: fmt.Sprintf("r%08d", i),
		Properties: []driver.Property{
			{Name: "N", Value: edm.Value{Type: edm.TypeInt64, Int: int64(i)}},
			{Name: "S", Value: edm.Value{Type: edm.TypeBinary, Bytes: filler}},
		}}
}

// A full disk refuses writes with ErrNoSpace within the write timeout,
// keeps reads, shows in Health, lifts by itself once space is freed, and
// loses no acknowledged write.
func TestDiskFullRefusesWritesAndResumes(t *testing.T) {
	const timeout = time.Second
	q := NewQuotaFS("db", 64<<20)
	db := openQuota(t, q, timeout)
	ctx := context.Background()
	require.NoError(t, db.CreateTable(ctx, "T"))
	tbl := db.Table("T").(*table)
	require.NoError(t, tbl.CreateIndex(ctx, driver.IndexSpec{Name: "ByN", Properties: []string{"N"}, Unique: true}))
	require.NoError(t, tbl.EnableChangeFeed(ctx, driver.ChangeFeedSettings{}))
	q.Quota.Store(q.Used() + 6<<20)
	tb := db.Table("T")

	var acked, refused []int // refused: not applied, by their errors
	write := func(i int, ctx context.Context) error {
		err := within(t, timeout+3*time.Second, "a write", func() error {
			_, err := tb.Commit(ctx, []driver.Action{fillerRow(i)})
			return err
		})
		if err == nil {
			acked = append(acked, i)
		} else if !strings.Contains(err.Error(), "may still be applied") {
			refused = append(refused, i)
		}
		return err
	}
	i := 0
	var err error
	for ; i < 50_000 && err == nil; i++ {
		err = write(i, ctx)
	}
	require.ErrorIs(t, err, driver.ErrNoSpace, "after %d writes", i)
	require.NotEmpty(t, acked)
	require.ErrorIs(t, db.Health(), driver.ErrNoSpace)

	// Refused at once, or within a short context.
	for range 3 {
		i++
		require.ErrorIs(t, write(i, ctx), driver.ErrNoSpace)
	}
	sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	i++
	require.Error(t, write(i, sctx))
	cancel()

	// Reads go on.
	last := fillerRow(acked[len(acked)-1])
	row, err := tb.Get(ctx, last.PartitionKey, last.RowKey, nil)
	require.NoError(t, err)
	require.NotNil(t, row.Record)

	// Free space: writes resume without a reopen.
	q.Quota.Store(1 << 40)
	freed := time.Now()
	require.Eventually(t, func() bool { return db.Health() == nil }, 10*time.Second, 20*time.Millisecond)
	for i++; ; i++ {
		if err = write(i, ctx); err == nil {
			break
		}
		require.ErrorIs(t, err, driver.ErrNoSpace)
		require.Less(t, time.Since(freed), 10*time.Second, "writes did not resume")
	}
	t.Logf("%d acknowledged writes; resumed %v after space was freed", len(acked), time.Since(freed))
	require.NoError(t, db.Close())

	db = openQuota(t, q, timeout)
	defer db.Close()
	for _, n := range acked {
		a := fillerRow(n)
		_, err := db.Table("T").Get(ctx, a.PartitionKey, a.RowKey, nil)
		require.NoError(t, err, "acknowledged write %d lost", n)
	}
	for _, n := range refused {
		a := fillerRow(n)
		_, err := db.Table("T").Get(ctx, a.PartitionKey, a.RowKey, nil)
		var de *driver.Error
		require.ErrorAs(t, err, &de, "refused write %d was applied", n)
		require.Equal(t, edm.CodeResourceNotFound, de.Code)
	}
}

// within runs fn, failing the test if it does not return within d.
func within(t *testing.T, d time.Duration, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
		return nil
	}
}

// fillWAL commits until the quota refuses a WAL write; every commit must
// return within bound.
func fillWAL(t *testing.T, db *Engine, q *QuotaFS, from int, bound time.Duration) error {
	t.Helper()
	q.Quota.Store(q.Used() + 8<<10) // room for a few more WAL records
	var err error
	for i := from; i < from+100 && err == nil; i++ {
		err = within(t, bound, "a write on a full disk", func() error {
			_, err := db.Table("T").Commit(context.Background(), []driver.Action{fillerRow(i)})
			return err
		})
	}
	return err
}

// A write whose batch is stuck in Pebble (its WAL write waits for space)
// returns within the timeout, saying it may yet be applied; nothing stops
// for good: writes resume once space is freed, without a reopen, and
// Close while the disk is full returns within the timeout.
func TestDiskFullWALWriteIsBounded(t *testing.T) {
	const timeout = 500 * time.Millisecond
	bound := timeout + 3*time.Second
	q := NewQuotaFS("db", 64<<20)
	db := openQuota(t, q, timeout)
	ctx := context.Background()
	require.NoError(t, db.CreateTable(ctx, "T"))
	_, err := db.Table("T").Commit(ctx, []driver.Action{fillerRow(-1)})
	require.NoError(t, err)

	err = fillWAL(t, db, q, 0, bound)
	require.ErrorIs(t, err, driver.ErrNoSpace)
	t.Logf("first refused write: %v", err)
	require.ErrorIs(t, db.Health(), driver.ErrNoSpace)
	_, err = db.Table("T").Get(ctx, fillerRow(-1).PartitionKey, fillerRow(-1).RowKey, nil)
	require.NoError(t, err, "reads go on")

	q.Quota.Store(1 << 40)
	require.Eventually(t, func() bool { return db.Health() == nil }, 10*time.Second, 20*time.Millisecond)
	_, err = db.Table("T").Commit(ctx, []driver.Action{fillerRow(1000)})
	require.NoError(t, err, "writes resume without a reopen")

	err = fillWAL(t, db, q, 2000, bound)
	require.ErrorIs(t, err, driver.ErrNoSpace)
	err = within(t, bound, "Close on a full disk", db.Close)
	if err != nil {
		require.ErrorIs(t, err, driver.ErrNoSpace)
	}
	// Space returns: the close finishes in the background, and the store
	// opens again with the acknowledged writes.
	q.Quota.Store(1 << 40)
	var db2 *Engine
	require.Eventually(t, func() bool {
		db2, err = open(q.Dir, q, Options{CacheSize: 1 << 20, MemTableSize: 256 << 10, PageScanLimit: 1000,
			PageTimeLimit: time.Second, Clock: time.Now})
		return err == nil
	}, 10*time.Second, 50*time.Millisecond)
	defer db2.Close()
	_, err = db2.Table("T").Get(ctx, fillerRow(1000).PartitionKey, fillerRow(1000).RowKey, nil)
	require.NoError(t, err)
}
