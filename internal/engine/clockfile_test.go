package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// clockSlots reads the two slots of dir's CLOCK file.
func clockSlots(t *testing.T, dir string) (slots [2]clockSlot, valid [2]bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, clockFileName))
	require.NoError(t, err)
	require.Len(t, b, 2*clockSlotSize)
	for i := range 2 {
		slots[i], valid[i] = decodeClockSlot(b[i*clockSlotSize:])
	}
	return slots, valid
}

// writtenClockStore returns the directory of a closed store with table T
// holding one entity.
func writtenClockStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db := openClockTest(t, dir, false)
	require.NoError(t, db.CreateTable(context.Background(), "T"))
	upsertOne(t, db, "a")
	require.NoError(t, db.Close())
	return dir
}

// TestClockFileSlots checks that the ceiling's writes alternate between
// the slots with rising generations, that a torn write of the newest
// slot leaves the one before it, and that a file with no intact slot
// fails Open with ErrCorrupt naming it.
func TestClockFileSlots(t *testing.T) {
	dir := writtenClockStore(t)
	slots, valid := clockSlots(t, dir)
	require.Equal(t, [2]bool{true, true}, valid, "created with one slot, moved at least once")
	newest := 0
	if slots[1].gen > slots[0].gen {
		newest = 1
	}
	require.Equal(t, slots[1-newest].gen+1, slots[newest].gen)

	// Tear the newest slot: the older one holds the ceiling.
	path := filepath.Join(dir, clockFileName)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte{0xff, 0xff, 0xff}, int64(newest*clockSlotSize+14))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	db := openClockTest(t, dir, false)
	require.Equal(t, slots[1-newest].ceiling, db.clock.durableCeiling())
	ts := upsertOne(t, db, "b")
	require.Greater(t, ts, slots[1-newest].ceiling-1)
	require.NoError(t, db.Close())

	// No intact slot.
	require.NoError(t, os.WriteFile(path, make([]byte, 2*clockSlotSize), 0o644))
	_, err = Open(dir, clockTestOptions(false))
	require.ErrorIs(t, err, driver.ErrCorrupt)
	require.ErrorContains(t, err, clockFileName)
}

// TestClockFileLegacyKey opens a store that kept its ceiling under the
// catalog's clock key, as stores made before the CLOCK file did: the
// ceiling is kept (the greater of key and file), and the first move
// writes it to the file and deletes the key.
func TestClockFileLegacyKey(t *testing.T) {
	dir := writtenClockStore(t)
	setLegacy := func(ceiling int64) {
		db := openClockTest(t, dir, false)
		require.NoError(t, db.pdb.Set(clockKey(), binary.BigEndian.AppendUint64(nil, uint64(ceiling)), pebble.Sync))
		require.NoError(t, db.Close())
	}
	hasLegacy := func(db *Engine) bool {
		_, closer, err := db.pdb.Get(clockKey())
		if err == pebble.ErrNotFound {
			return false
		}
		require.NoError(t, err)
		closer.Close()
		return true
	}
	// The key alone (the file removed), then the key ahead of the file.
	for i, ahead := range []int64{
		edm.TicksFromTime(time.Now().Add(time.Hour)),
		edm.TicksFromTime(time.Now().Add(2 * time.Hour)),
	} {
		setLegacy(ahead)
		if i == 0 {
			require.NoError(t, os.Remove(filepath.Join(dir, clockFileName)))
		}
		db := openClockTest(t, dir, false)
		require.Equal(t, ahead, db.clock.durableCeiling(), "case %d", i)
		require.True(t, hasLegacy(db), "Open writes nothing")
		require.GreaterOrEqual(t, upsertOne(t, db, fmt.Sprint("r", i)), ahead)
		require.False(t, hasLegacy(db), "the first move deletes the key")
		require.NoError(t, db.Close())
		slots, valid := clockSlots(t, dir)
		for k := range 2 {
			if valid[k] {
				require.Greater(t, slots[k].ceiling, ahead-1, "case %d", i)
			}
		}
	}
}

// TestClockFileCheckpoint checks that a checkpoint carries a ceiling above
// every Timestamp in it, so a store opened from it never reissues one,
// and that writes leave no clock key among the entities' in the keyspace.
func TestClockFileCheckpoint(t *testing.T) {
	dir := t.TempDir()
	db := openClockTest(t, dir, true)
	defer db.Close()
	require.NoError(t, db.CreateTable(context.Background(), "T"))
	var last int64
	for _, rk := range []string{"a", "b", "c"} {
		last = upsertOne(t, db, rk)
	}
	_, closer, err := db.pdb.Get(clockKey())
	require.ErrorIs(t, err, pebble.ErrNotFound)
	if closer != nil {
		closer.Close()
	}
	cp := filepath.Join(t.TempDir(), "cp")
	require.NoError(t, db.Checkpoint(context.Background(), cp))
	restored := openClockTest(t, cp, false)
	defer restored.Close()
	require.Greater(t, restored.clock.durableCeiling(), last)
	require.Greater(t, upsertOne(t, restored, "d"), last)
}

// TestClockFileCheckDir checks that CheckDir reports a CLOCK file with no
// intact slot, which Open refuses, as a damaged file of kind "clock".
func TestClockFileCheckDir(t *testing.T) {
	dir := writtenClockStore(t)
	opts := clockTestOptions(false)
	rep, err := CheckDir(context.Background(), dir, opts)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)

	path := filepath.Join(dir, clockFileName)
	require.NoError(t, os.WriteFile(path, []byte("not a clock"), 0o644))
	rep, err = CheckDir(context.Background(), dir, opts)
	require.NoError(t, err)
	require.Len(t, rep.Damaged, 1)
	require.Equal(t, "clock", rep.Damaged[0].Kind)
	require.Equal(t, path, rep.Damaged[0].Path)
}
