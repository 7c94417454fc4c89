package engine

import (
	"context"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
)

// roMedia is a vfs.FS on read-only media: everything that would write,
// the lock file included, fails with EROFS.
type roMedia struct{ vfs.FS }

func erofs(op, name string) error { return &os.PathError{Op: op, Path: name, Err: syscall.EROFS} }

func (roMedia) Create(name string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, erofs("create", name)
}
func (roMedia) OpenReadWrite(name string, _ vfs.DiskWriteCategory, _ ...vfs.OpenOption) (vfs.File, error) {
	return nil, erofs("open", name)
}
func (roMedia) ReuseForWrite(_, name string, _ vfs.DiskWriteCategory) (vfs.File, error) {
	return nil, erofs("reuse", name)
}
func (roMedia) Link(_, name string) error                 { return erofs("link", name) }
func (roMedia) Remove(name string) error                  { return erofs("remove", name) }
func (roMedia) RemoveAll(name string) error               { return erofs("remove", name) }
func (roMedia) Rename(_, name string) error               { return erofs("rename", name) }
func (roMedia) MkdirAll(name string, _ os.FileMode) error { return erofs("mkdir", name) }
func (roMedia) Lock(name string) (io.Closer, error)       { return nil, erofs("lock", name) }

// A store on read-only media can be checked: the check takes no lock it
// cannot take, and writes nothing.
func TestCheckDirOnReadOnlyMedia(t *testing.T) {
	mem := vfs.NewMem()
	opts := Options{CacheSize: 1 << 20, MemTableSize: 1 << 20, PageScanLimit: 1000, PageTimeLimit: time.Second, Clock: time.Now}
	db, err := open("db", mem, opts)
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, db.CreateTable(ctx, "T"))
	_, err = db.Table("T").Commit(ctx, []driver.Action{fillerRow(1)})
	require.NoError(t, err)
	require.NoError(t, db.Close())

	rep, err := checkDir(ctx, roMedia{mem}, "db", opts)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
	require.Equal(t, 1, rep.Entities)
}
