package tablestore

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// openBackedUp opens a new store with continuous backup cb (its Dir
// set to a new directory) and creates table Alpha in it.
func openBackedUp(t *testing.T, cb ContinuousBackup) (dir, bdir string, opts *Options, db *DB, tb *Table) {
	t.Helper()
	dir, cb.Dir = t.TempDir(), filepath.Join(t.TempDir(), "backup")
	opts = &Options{ContinuousBackup: &cb}
	db, err := Open(dir, opts)
	require.NoError(t, err)
	tb, err = db.CreateTable(ctx, "Alpha")
	require.NoError(t, err)
	return dir, cb.Dir, opts, db, tb
}

// dirBytes is the size of the regular files under dir.
func dirBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	require.NoError(t, filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return err
	}))
	return n
}

// TestBackupGrowthAcrossOpens: a 100-entity store opened ten times keeps
// a continuous backup under 2 MB: an open takes a base only when the
// store changed since the newest one, and a closed segment takes what
// its records take.
func TestBackupGrowthAcrossOpens(t *testing.T) {
	dir, bdir, opts, db, tb := openBackedUp(t, ContinuousBackup{})
	for i := range 100 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i), Properties: map[string]any{"V": strings.Repeat("v", 100)}}))
	}
	require.NoError(t, db.Close())
	var err error
	for range 10 {
		db, err = Open(dir, opts)
		require.NoError(t, err)
		require.NoError(t, db.Close())
	}
	w, err := ListBackups(bdir, nil)
	require.NoError(t, err)
	size := dirBytes(t, bdir)
	t.Logf("backup after 11 opens: %d bytes, %d bases, %d segments", size, len(w.Bases), w.Segments)
	require.Less(t, size, int64(2e6))

	// A write while the backup is off: the next open with it takes a
	// base, so the newest instant restores that write.
	db, err = Open(dir, nil)
	require.NoError(t, err)
	require.NoError(t, db.Table("Alpha").Insert(ctx, &Entity{PartitionKey: "p", RowKey: "unbacked"}))
	require.NoError(t, db.Close())
	db, err = Open(dir, opts)
	require.NoError(t, err)
	want := dumpDB(t, db)
	require.NoError(t, db.Close())
	into := filepath.Join(t.TempDir(), "r")
	_, err = Restore(ctx, bdir, time.Time{}, into, nil)
	require.NoError(t, err)
	requireRestored(t, into, want)
}

// TestBackupLogSize: the log for N bytes of records takes less than 2N
// plus one segment, while the store is open and after it closes.
func TestBackupLogSize(t *testing.T) {
	const segmentBytes = 64 << 10
	_, bdir, _, db, tb := openBackedUp(t, ContinuousBackup{SegmentBytes: segmentBytes})
	for i := range 2000 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%05d", i), Properties: map[string]any{"V": strings.Repeat("v", 100)}}))
	}
	check := func(when string) {
		segs, err := filepath.Glob(filepath.Join(bdir, "seg-*.log"))
		require.NoError(t, err)
		var records, files int64
		for _, s := range segs {
			data, err := os.ReadFile(s)
			require.NoError(t, err)
			files += int64(len(data))
			for off := 0; off < len(data); {
				n, k := binary.Uvarint(data[off:])
				if k <= 0 || n == 0 {
					break
				}
				off += k + 4 + int(n)
				records += int64(k + 4 + int(n))
			}
		}
		t.Logf("%s: %d bytes of records in %d bytes of %d segments", when, records, files, len(segs))
		require.Less(t, files, 2*records+segmentBytes, when)
	}
	check("open")
	require.NoError(t, db.Close())
	check("closed")
}
