package engine

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
)

// TestBlockSize checks that BlockSize reaches the sstables Pebble writes:
// the same 2,000 entities of some 300 bytes flush into about eight times
// fewer data blocks at 32 KiB than at the default.
func TestBlockSize(t *testing.T) {
	blocks := func(blockSize int) (n uint64) {
		ctx := context.Background()
		db, err := OpenInMemory(Options{CacheSize: 8 << 20, MemTableSize: 4 << 20, Clock: time.Now,
			PageScanLimit: 1000, PageTimeLimit: time.Hour, Parallelism: 1, BlockSize: blockSize})
		require.NoError(t, err)
		defer db.Close()
		require.NoError(t, db.CreateTable(ctx, "t"))
		tb := db.Table("t")
		for i := 0; i < 2000; i += 100 {
			actions := make([]driver.Action, 0, 100)
			for k := i; k < i+100; k++ {
				sum := sha256.Sum256([]byte{byte(k), byte(k >> 8)})
				actions = append(actions, driver.Action{Type: driver.ActionUpsertReplace,
					PartitionKey: "p", RowKey: fmt.Sprintf("r%05d", k),
					Properties: []codec.Property{{Name: "S", Value: filter.Value{Type: filter.TypeString,
						Bytes: fmt.Appendf(nil, "%x%x%x%x", sum, sum, sum, sum)}}}})
			}
			_, err := tb.Commit(ctx, actions)
			require.NoError(t, err)
		}
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
