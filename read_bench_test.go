package tablestore

import (
	"fmt"
	"testing"
)

// readBenchQueries are bench/'s read shapes over allocTable's partition of
// 1,000 entities: a range of 100 rows, the whole partition, and a page of
// Top 1000 (divide allocs/op by the rows for allocations per entity). As
// in bench/, the page is read with QueryPage, the others with the
// iterator.
var readBenchQueries = []struct {
	name string
	q    Query
	n    int
	page bool
}{
	{"range100", Query{Filter: "PartitionKey eq 'p0000000' and RowKey ge 'r0000100' and RowKey lt 'r0000200'"}, 100, false},
	{"partition1000", Query{Filter: "PartitionKey eq 'p0000000'"}, 1000, false},
	{"page1000", Query{Top: 1000}, 1000, true},
}

// BenchmarkReadMaps reads bench/'s entity shape as maps: a point get, and
// each of readBenchQueries through the iterator, as bench/ does.
func BenchmarkReadMaps(b *testing.B) {
	tbl := allocTable(b, 1000)
	rks := benchRowKeys(1000)
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := tbl.Get(ctx, "p0000000", rks[i%len(rks)], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range readBenchQueries {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if c.page {
					page, err := tbl.QueryPage(ctx, c.q)
					if err != nil || len(page.Entities) != c.n {
						b.Fatal(err)
					}
					continue
				}
				n := 0
				for e, err := range tbl.Query(ctx, c.q) {
					if err != nil {
						b.Fatal(err)
					}
					if len(e.Properties) != 10 {
						b.Fatal(e.Properties)
					}
					n++
				}
				if n != c.n {
					b.Fatal(n)
				}
			}
		})
	}
}

// BenchmarkReadTyped is BenchmarkReadMaps reading into structs.
func BenchmarkReadTyped(b *testing.B) {
	tbl := allocTable(b, 1000)
	rks := benchRowKeys(1000)
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := GetAs[allocRow](ctx, tbl, "p0000000", rks[i%len(rks)], nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range readBenchQueries {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if c.page {
					page, err := QueryPageAs[allocRow](ctx, tbl, c.q)
					if err != nil || len(page.Entities) != c.n {
						b.Fatal(err)
					}
					continue
				}
				n := 0
				for _, err := range QueryAs[allocRow](ctx, tbl, c.q) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != c.n {
					b.Fatal(n)
				}
			}
		})
	}
}

func benchRowKeys(n int) []string {
	rks := make([]string, n)
	for i := range rks {
		rks[i] = fmt.Sprintf("r%07d", i)
	}
	return rks
}
