package engine

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
)

// TestBlockSize checks that BlockSize reaches the sstables Pebble writes:
// the same 2,000 entities of some 270 bytes flush into about eight times
// fewer data blocks at 32 KiB than at the default.
func TestBlockSize(t *testing.T) {
	blocks := func(blockSize int) (n uint64) {
		db, err := OpenInMemory(Options{CacheSize: 8 << 20, MemTableSize: 4 << 20, Clock: time.Now,
			PageScanLimit: 1000, PageTimeLimit: time.Hour, Parallelism: 1, BlockSize: blockSize})
		require.NoError(t, err)
		defer db.Close()
		loadHashed(t, db, 2000)
		require.NoError(t, db.Flush())
		levels, err := db.pdb.SSTables(pebble.WithProperties())
		require.NoError(t, err)
		for _, level := range levels {
			for _, f := range level {
				n += f.Properties.NumDataBlocks
			}
		}
		return n
	}
	small, large := blocks(0), blocks(32<<10)
	require.Greater(t, small, uint64(100), "default block size")
	require.Less(t, large*6, small, "32 KiB blocks: %d, default: %d", large, small)
}

// TestSharedCache checks that stores given one Cache use it and leave the
// caller's reference alone: it outlives a store's Close, serves the next
// store, and holds the blocks both read.
func TestSharedCache(t *testing.T) {
	c := pebble.NewCache(1 << 20)
	defer c.Unref()
	opts := Options{Cache: c, MemTableSize: 1 << 20, Clock: time.Now,
		PageScanLimit: 1000, PageTimeLimit: time.Hour, Parallelism: 1}
	for range 2 {
		db, err := OpenInMemory(opts)
		require.NoError(t, err)
		loadHashed(t, db, 200)
		require.NoError(t, db.Flush())
		before := c.Metrics().Size
		it, err := db.pdb.NewIter(nil)
		require.NoError(t, err)
		for it.First(); it.Valid(); it.Next() {
		}
		require.NoError(t, it.Close())
		require.Greater(t, c.Metrics().Size, before, "the store's blocks are in the shared cache")
		require.NoError(t, db.Close())
	}
}
