package tablestore

import (
	"fmt"
	"testing"
)

// benchTable fills a table with partitions × rows entities of three
// properties.
func benchTable(b *testing.B, partitions, rows int) *Table {
	b.Helper()
	db, err := OpenInMemory(&Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	tbl, err := db.CreateTable(ctx, "Bench")
	if err != nil {
		b.Fatal(err)
	}
	for p := range partitions {
		for r := range rows {
			e := &Entity{
				PartitionKey: fmt.Sprintf("p%03d", p),
				RowKey:       fmt.Sprintf("r%05d", r),
				Properties:   map[string]any{"N": int32(r), "S": "some text", "F": 1.5},
			}
			if err := tbl.Insert(ctx, e); err != nil {
				b.Fatal(err)
			}
		}
	}
	return tbl
}

func runQueryBench(b *testing.B, tbl *Table, q Query, want int) {
	b.Helper()
	b.ReportAllocs()
	for b.Loop() {
		page, err := tbl.QueryPage(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		if len(page.Entities) != want {
			b.Fatalf("got %d entities, want %d", len(page.Entities), want)
		}
	}
}

// BenchmarkQueryPoint compares the two ways to read one entity: a point
// plan, served by Pebble's Get (with bloom filters), and a one-entity range
// plan, served by a bounded iterator; in the memtable and, after a flush,
// in sstables.
func BenchmarkQueryPoint(b *testing.B) {
	for _, onDisk := range []bool{false, true} {
		tbl := benchTable(b, 10, 1000)
		name := "memtable"
		if onDisk {
			name = "sstable"
			if err := flush(tbl.db); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(name, func(b *testing.B) { benchPointReads(b, tbl) })
	}
}

func benchPointReads(b *testing.B, tbl *Table) {
	b.Run("get", func(b *testing.B) {
		runQueryBench(b, tbl, Query{Filter: "PartitionKey eq 'p005' and RowKey eq 'r00500'"}, 1)
	})
	b.Run("iterator", func(b *testing.B) {
		runQueryBench(b, tbl, Query{Filter: "PartitionKey eq 'p005' and RowKey ge 'r00500' and RowKey lt 'r00500!'"}, 1)
	})
	b.Run("get-missing", func(b *testing.B) {
		runQueryBench(b, tbl, Query{Filter: "PartitionKey eq 'p005' and RowKey eq 'r99999'"}, 0)
	})
	b.Run("iterator-missing", func(b *testing.B) {
		runQueryBench(b, tbl, Query{Filter: "PartitionKey eq 'p005' and RowKey ge 'r99999' and RowKey lt 'r99999!'"}, 0)
	})
}

// BenchmarkQueryPartitionScan scans one partition of 1000 entities with a
// residual that rejects all but 10, so it measures the cost of examining
// an entity on its encoded bytes.
func BenchmarkQueryPartitionScan(b *testing.B) {
	tbl := benchTable(b, 10, 1000)
	runQueryBench(b, tbl, Query{Filter: "PartitionKey eq 'p005' and N lt 10"}, 10)
}
