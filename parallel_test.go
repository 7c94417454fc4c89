package tablestore

import (
	"crypto/sha512"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/internal/engine"
)

// TestParallelScanPages reads the same queries with Parallelism 1 and 3
// over a table large enough to be split, and demands identical pages:
// entities, sizes and continuation tokens, with Top and PageScanLimit
// ending pages at every kind of place.
func TestParallelScanPages(t *testing.T) {
	dir := t.TempDir()
	const n = 40_000
	db, err := Open(dir, &Options{NoSync: true, MemTableSize: 1 << 20})
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "big")
	require.NoError(t, err)
	for i := 0; i < n; i += 100 {
		b := tb.NewBatch()
		for j := i; j < i+100; j++ {
			b.Insert(&Entity{PartitionKey: fmt.Sprintf("p%03d", j/1000), RowKey: fmt.Sprintf("r%05d", j),
				Properties: map[string]any{"B": int32(j * 7919 % 100), "S": fmt.Sprintf("%x", sha512.Sum512([]byte{byte(j), byte(j >> 8)}))}})
		}
		require.NoError(t, b.Submit(ctx))
	}
	require.NoError(t, flush(db))
	require.NoError(t, db.Close())

	type pageSig struct {
		keys []string
		cont string
	}
	read := func(par, scanLimit int, q Query) []pageSig {
		db, err := Open(dir, &Options{Parallelism: par, PageScanLimit: scanLimit})
		require.NoError(t, err)
		defer db.Close()
		var out []pageSig
		for {
			page, err := db.Table("big").QueryPage(ctx, q)
			require.NoError(t, err)
			out = append(out, pageSig{keysOf(page.Entities), page.Continuation})
			if page.Continuation == "" {
				return out
			}
			q.Continuation = page.Continuation
			require.Less(t, len(out), 10_000)
		}
	}
	for _, tc := range []struct {
		filter    string
		top       int
		scanLimit int
		serial    bool // pages end before examining the entities a page reads serially first
	}{
		{"B eq 42", 1000, 100_000, false},
		{"B eq 42", 7, 100_000, true},
		{"B eq 42", 15, 100_000, false},
		{"B lt 50", 1000, 100_000, false},
		{"B eq 42", 1000, 3_000, false},
		{"B lt 3", 50, 5_000, false},
		{"B eq 42 and PartitionKey ge 'p005' and PartitionKey lt 'p031'", 100, 2_500, false},
		{"B eq 101", 1000, 100_000, false},
	} {
		t.Run(fmt.Sprintf("%s/top%d/scan%d", tc.filter, tc.top, tc.scanLimit), func(t *testing.T) {
			q := Query{Filter: tc.filter, Top: tc.top}
			serial := read(1, tc.scanLimit, q)
			before := engine.ParallelPages()
			parallel := read(3, tc.scanLimit, q)
			if tc.serial {
				require.Equal(t, before, engine.ParallelPages(), "a page was read in parallel")
			} else {
				require.Greater(t, engine.ParallelPages(), before, "no page was read in parallel")
			}
			for i := range min(len(serial), len(parallel)) {
				require.Equal(t, serial[i], parallel[i], "page %d", i)
			}
			require.Equal(t, len(serial), len(parallel), "page counts")
		})
	}
}
