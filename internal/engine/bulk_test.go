package engine

import (
	"context"
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
)

// bulkActions returns n insert actions over parts partitions, interleaved
// or in key order, each with a 200-byte record.
func bulkActions(n, parts int, interleave bool) []driver.Action {
	rec := mustEncode(nil, 0, []driver.Property{{Name: "S", Value: edm.Value{Type: edm.TypeString, Bytes: make([]byte, 200)}}})
	acts := make([]driver.Action, n)
	per := n / parts
	for j := range acts {
		i := j
		if interleave {
			i = (j%parts)*per + j/parts
		}
		acts[j] = driver.Action{Type: driver.ActionInsert, PartitionKey: fmt.Sprintf("p%04d", i/per), RowKey: fmt.Sprintf("r%06d", i%per), Record: rec}
	}
	return acts
}

func BenchmarkCommitBulkInsert(b *testing.B) {
	for _, interleave := range []bool{false, true} {
		b.Run(fmt.Sprintf("interleaved=%v", interleave), func(b *testing.B) {
			const n, batch = 100_000, 1000
			acts := bulkActions(n, 100, interleave)
			for b.Loop() {
				b.StopTimer()
				db, err := OpenInMemory(Options{CacheSize: 64 << 20, MemTableSize: 4 << 20, PageScanLimit: 1000,
					PageTimeLimit: time.Second, Clock: time.Now, NoSync: true, BloomBitsPerKey: 10})
				require.NoError(b, err)
				require.NoError(b, db.CreateTable(context.Background(), "T"))
				tb := db.Table("T").(*table)
				b.StartTimer()
				for i := 0; i < n; i += batch {
					res, err := tb.CommitBulk(context.Background(), acts[i:i+batch], driver.BulkCommitOptions{})
					if err != nil || res.Applied != batch {
						b.Fatal(err, res)
					}
				}
				b.StopTimer()
				require.NoError(b, db.Close())
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}
