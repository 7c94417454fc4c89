package tablestore

import (
	"fmt"
	"testing"
)

// BenchmarkReadMaps reads bench/'s entity shape as maps: a point get, a
// range of 100 rows and a page of 1,000 (divide allocs/op by the rows for
// allocations per entity).
func BenchmarkReadMaps(b *testing.B) {
	tbl := allocTable(b, 1000)
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := tbl.Get(ctx, "p0000000", fmt.Sprintf("r%07d", i%1000), nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name string
		q    Query
		n    int
	}{
		{"range100", Query{Filter: "PartitionKey eq 'p0000000' and RowKey ge 'r0000100' and RowKey lt 'r0000200'"}, 100},
		{"page1000", Query{Top: 1000}, 1000},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				page, err := tbl.QueryPage(ctx, c.q)
				if err != nil || len(page.Entities) != c.n {
					b.Fatal(err, len(page.Entities))
				}
			}
		})
	}
}
