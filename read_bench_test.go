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

// readAPI is one way of reading: a point get, a page, and a query through
// the iterator, the last two returning the entities read.
type readAPI struct {
	get  func(tbl *Table, rk string) error
	page func(tbl *Table, q Query) (int, error)
	iter func(tbl *Table, q Query) (int, error)
}

// benchRead runs a point get and each of readBenchQueries through api.
func benchRead(b *testing.B, api readAPI) {
	tbl := allocTable(b, 1000)
	rks := benchRowKeys(1000)
	b.Run("get", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if err := api.get(tbl, rks[i%len(rks)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range readBenchQueries {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			read := api.iter
			if c.page {
				read = api.page
			}
			for b.Loop() {
				if n, err := read(tbl, c.q); err != nil || n != c.n {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// BenchmarkReadMaps reads bench/'s entity shape as maps: a point get, and
// each of readBenchQueries through the iterator, as bench/ does.
func BenchmarkReadMaps(b *testing.B) {
	benchRead(b, readAPI{
		get: func(tbl *Table, rk string) error {
			_, err := tbl.Get(ctx, "p0000000", rk, nil)
			return err
		},
		page: func(tbl *Table, q Query) (int, error) {
			page, err := tbl.QueryPage(ctx, q)
			if err != nil {
				return 0, err
			}
			return len(page.Entities), nil
		},
		iter: func(tbl *Table, q Query) (int, error) {
			n := 0
			for e, err := range tbl.Query(ctx, q) {
				if err != nil {
					return n, err
				}
				if len(e.Properties) != 10 {
					return n, fmt.Errorf("%d properties, want 10", len(e.Properties))
				}
				n++
			}
			return n, nil
		},
	})
}

// BenchmarkReadTyped is BenchmarkReadMaps reading into structs.
func BenchmarkReadTyped(b *testing.B) {
	benchRead(b, readAPI{
		get: func(tbl *Table, rk string) error {
			_, err := GetStruct[allocRow](ctx, tbl, "p0000000", rk, nil)
			return err
		},
		page: func(tbl *Table, q Query) (int, error) {
			page, err := QueryStructPage[allocRow](ctx, tbl, q)
			if err != nil {
				return 0, err
			}
			return len(page.Entities), nil
		},
		iter: func(tbl *Table, q Query) (int, error) {
			n := 0
			for _, err := range QueryStructs[allocRow](ctx, tbl, q) {
				if err != nil {
					return n, err
				}
				n++
			}
			return n, nil
		},
	})
}

func benchRowKeys(n int) []string {
	rks := make([]string, n)
	for i := range rks {
		rks[i] = fmt.Sprintf("r%07d", i)
	}
	return rks
}

// BenchmarkTenEntryMap builds a ten-entry map[string]any as the map read
// path returns one per entity, with nothing else: Go's own floor under
// the map rows of bench/ (go test -run XXX -bench TenEntryMap -benchmem .).
func BenchmarkTenEntryMap(b *testing.B) {
	e := benchEntity(1)
	names := make([]string, 0, len(e.Properties))
	vals := make([]any, 0, len(e.Properties))
	for name, v := range e.Properties {
		names, vals = append(names, name), append(vals, v)
	}
	b.ReportAllocs()
	for b.Loop() {
		m := make(map[string]any, len(names))
		for i, name := range names {
			m[name] = vals[i]
		}
		tenEntryMapSink = m
	}
	if len(tenEntryMapSink) != len(names) {
		b.Fatal(len(tenEntryMapSink))
	}
}

// tenEntryMapSink keeps BenchmarkTenEntryMap's maps on the heap, as the
// entities a read returns are.
var tenEntryMapSink map[string]any
