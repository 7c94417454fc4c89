package engine

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/keys"
)

// The check scans a table in parts: the parts are ordered, cover the
// table's span, and every entity is counted exactly once, for any number
// of parts.
func TestCheckScanPartsCoverTable(t *testing.T) {
	opts := Options{CacheSize: 1 << 20, MemTableSize: 1 << 20, PageScanLimit: 1000, PageTimeLimit: time.Second, Clock: time.Now}
	db, err := open("db", vfs.NewMem(), opts)
	require.NoError(t, err)
	defer db.Close()
	ctx := context.Background()
	require.NoError(t, db.CreateTable(ctx, "T"))
	tb := db.Table("T").(*table)
	acts := bulkActions(3000, 30, true)
	for i := 0; i < len(acts); i += 500 {
		res, err := tb.CommitBulk(ctx, acts[i:i+500], driver.BulkCommitOptions{})
		require.NoError(t, err)
		require.Equal(t, 500, res.Applied)
	}
	var id uint64
	for k, v := range *db.names.Load() {
		if v == "T" {
			id = k
		}
	}
	lower, upper := keys.EntitySpan(id)
	for _, n := range []int{1, 2, 3, 7, 64} {
		c := checker{db: db, ctx: ctx}
		bounds, err := c.splitSpan(lower, upper, n)
		require.NoError(t, err)
		require.Equal(t, lower, bounds[0])
		require.Equal(t, upper, bounds[len(bounds)-1])
		if n > 1 {
			require.Len(t, bounds, n+1)
		}
		total := 0
		for i := 1; i < len(bounds); i++ {
			require.LessOrEqual(t, bytes.Compare(bounds[i-1], bounds[i]), 0)
			it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: bounds[i-1], UpperBound: bounds[i]})
			require.NoError(t, err)
			for v := it.First(); v; v = it.Next() {
				total++
			}
			require.NoError(t, it.Close())
		}
		require.Equal(t, len(acts), total, "parts %d", n)
	}
	rep, err := db.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
	require.Equal(t, len(acts), rep.Entities)
}
