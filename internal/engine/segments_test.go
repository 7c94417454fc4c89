package engine

import (
	"context"
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/plan"
)

// TestSegmentsByVolume splits a flushed table by Pebble's size estimates
// and by counting, and checks both cover every entity once, in order,
// with segments of comparable size. Under compactions running meanwhile
// the segments still cover every entity once, but their sizes follow the
// estimates of the moment, so the test compacts first.
func TestSegmentsByVolume(t *testing.T) {
	ctx := context.Background()
	db, err := OpenInMemory(Options{CacheSize: 8 << 20, MemTableSize: 256 << 10, BloomBitsPerKey: 10,
		Clock: time.Now, PageScanLimit: 1 << 30, PageTimeLimit: time.Hour})
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.CreateTable(ctx, "seg"))
	tb := db.Table("seg")
	const n = 20_000
	pad := driver.Property{Name: "S", Value: edm.Value{Type: edm.TypeString, Bytes: []byte(strings.Repeat("x", 200))}}
	for i := 0; i < n; i += 100 {
		actions := make([]driver.Action, 100)
		for j := range actions {
			k := i + j
			actions[j] = driver.Action{Type: driver.ActionUpsertReplace, PartitionKey: fmt.Sprintf("p%03d", k/100),
				RowKey: fmt.Sprintf("r%05d", k), Properties: []driver.Property{pad}}
		}
		_, err := tb.Commit(ctx, actions)
		require.NoError(t, err)
	}
	require.NoError(t, db.Flush())
	// Settle the LSM: background compactions move data between levels and
	// change the estimates between one bisection step and the next.
	require.NoError(t, db.Compact())
	for _, bytes := range []uint64{0, 1 << 40} { // volume, then count
		countSplitBytes = bytes
		splits, err := tb.(*table).Segments(ctx, 8)
		require.NoError(t, err)
		require.Len(t, splits, 7)
		counts := make([]int, 8)
		seg := 0
		for i := range n {
			k := plan.Key{PartitionKey: fmt.Sprintf("p%03d", i/100), RowKey: fmt.Sprintf("r%05d", i)}
			for seg < 7 && plan.Compare(k, splits[seg]) >= 0 {
				seg++
			}
			counts[seg]++
		}
		lo, hi := n, 0
		for _, c := range counts {
			lo, hi = min(lo, c), max(hi, c)
		}
		t.Logf("split bytes %d: segment sizes %v", bytes, counts)
		require.Positive(t, lo, "an empty segment: %v", counts)
		require.LessOrEqual(t, float64(hi)/float64(lo), 2.0, "unbalanced: %v", counts)
	}
	countSplitBytes = 16 << 20
}
