package tablestore

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/internal/engine"
)

// indexBenchN is the table size of the index benchmarks:
// TABLESTORE_INDEX_BENCH_N, 100,000 by default.
func indexBenchN(b *testing.B) int {
	if s := os.Getenv("TABLESTORE_INDEX_BENCH_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1000 {
			b.Fatalf("TABLESTORE_INDEX_BENCH_N=%q: want a number >= 1000", s)
		}
		return n
	}
	return 100_000
}

// indexBenchEntity is entity i of an index benchmark: 100 partitions,
// Tag shared by 10 entities, and two more properties.
func indexBenchEntity(i, n int) *Entity {
	return &Entity{PartitionKey: fmt.Sprintf("p%03d", i%100), RowKey: fmt.Sprintf("r%08d", i),
		Properties: map[string]any{"Tag": int64(i % (n / 10)), "Kind": fmt.Sprintf("k%d", i%7), "S": "some text of a few words", "F": 1.5}}
}

// openIndexBench opens a store on disk in a temporary directory.
func openIndexBench(b *testing.B, noSync bool) *DB {
	b.Helper()
	db, err := Open(b.TempDir(), &Options{NoSync: noSync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	return db
}

// loadIndexBench writes entities [from, to) in transactions of 100 (each
// inside one partition).
func loadIndexBench(b *testing.B, tbl *Table, from, to, n int) {
	b.Helper()
	for start := from; start < to; start += 100 * 100 {
		// 100 partitions × 100 entities: rows i with the same i%100.
		for p := range 100 {
			var acts []TransactionAction
			for i := start + p; i < min(start+100*100, to); i += 100 {
				acts = append(acts, TransactionAction{Type: ActionInsert, Entity: indexBenchEntity(i, n)})
			}
			if len(acts) == 0 {
				continue
			}
			if err := tbl.SubmitTransaction(ctx, acts); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkIndexQuery compares, on a table of N entities on disk, an
// equality matching 10 entities through an index, the same filter
// without one (a table scan, every page), and a RowKey range returning
// 10 entities.
//
//	go test -run '^$' -bench BenchmarkIndexQuery -benchtime 2s .
func BenchmarkIndexQuery(b *testing.B) {
	n := indexBenchN(b)
	db := openIndexBench(b, true)
	tbl, err := db.CreateTable(ctx, "Bench")
	if err != nil {
		b.Fatal(err)
	}
	loadIndexBench(b, tbl, 0, n, n)
	if err := tbl.CreateIndex(ctx, IndexSpec{Name: "ByTag", Properties: []string{"Tag"}}); err != nil {
		b.Fatal(err)
	}
	if err := db.conn.(*engine.Engine).Compact(); err != nil {
		b.Fatal(err)
	}
	count := func(b *testing.B, q Query) {
		got := 0
		for _, err := range tbl.Query(ctx, q) {
			if err != nil {
				b.Fatal(err)
			}
			got++
		}
		if got != 10 {
			b.Fatalf("%d entities, want 10", got)
		}
	}
	run := func(b *testing.B, q Query, wantIndex bool) {
		p, err := tbl.Plan(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		if (p.Index != "") != wantIndex {
			b.Fatalf("plan %s", p)
		}
		b.ReportAllocs()
		for b.Loop() {
			count(b, q)
		}
	}
	tag := n / 20
	indexed := Query{Filter: fmt.Sprintf("Tag eq %dL", tag)}
	rowRange := Query{Filter: "PartitionKey eq 'p050' and RowKey ge 'r00005050' and RowKey lt 'r00006050'"}
	b.Run("indexed-eq", func(b *testing.B) { run(b, indexed, true) })
	b.Run("indexed-eq-int32", func(b *testing.B) { run(b, Query{Filter: fmt.Sprintf("Tag eq %d", tag)}, true) })
	b.Run("scan-eq", func(b *testing.B) { run(b, Query{Filter: fmt.Sprintf("not (Tag ne %dL)", tag)}, false) })
	b.Run("rowkey-range", func(b *testing.B) { run(b, rowRange, false) })
	// Both sides in one loop, alternating, so that a machine whose speed
	// drifts slows both alike: ns/indexed over ns/range is the ratio.
	// Medians resist the bursts of a shared machine.
	// The floor of an indexed read: point gets of the entities it
	// returns, which lie in as many partitions as the table's layout puts
	// them (with N a multiple of 1,000, one; otherwise up to ten).
	var matches [][2]string
	for e, err := range tbl.Query(ctx, indexed) {
		if err != nil {
			b.Fatal(err)
		}
		matches = append(matches, [2]string{e.PartitionKey, e.RowKey})
	}
	gets := func(b *testing.B) {
		for _, k := range matches {
			if _, err := tbl.Get(ctx, k[0], k[1], nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("side-by-side", func(b *testing.B) {
		var ti, tr, tg []time.Duration
		for b.Loop() {
			t0 := time.Now()
			count(b, indexed)
			t1 := time.Now()
			count(b, rowRange)
			t2 := time.Now()
			gets(b)
			ti, tr, tg = append(ti, t1.Sub(t0)), append(tr, t2.Sub(t1)), append(tg, time.Since(t2))
		}
		mi, mr, mg := median(ti), median(tr), median(tg)
		b.ReportMetric(float64(mi.Nanoseconds()), "median-ns/indexed")
		b.ReportMetric(float64(mr.Nanoseconds()), "median-ns/range")
		b.ReportMetric(float64(mg.Nanoseconds()), "median-ns/ten-gets")
		b.ReportMetric(float64(mi)/float64(mr), "indexed/range")
		b.ReportMetric(float64(mi)/float64(mg), "indexed/ten-gets")
	})
}

// BenchmarkIndexInsertSynced measures single synced inserts into a table
// with no index and with one.
//
//	go test -run '^$' -bench BenchmarkIndexInsertSynced -benchtime 2000x .
func BenchmarkIndexInsertSynced(b *testing.B) {
	for _, indexes := range []int{0, 1} {
		b.Run(fmt.Sprintf("indexes=%d", indexes), func(b *testing.B) {
			db := openIndexBench(b, false)
			tbl, err := db.CreateTable(ctx, "Bench")
			if err != nil {
				b.Fatal(err)
			}
			if indexes > 0 {
				if err := tbl.CreateIndex(ctx, IndexSpec{Name: "ByTag", Properties: []string{"Tag"}}); err != nil {
					b.Fatal(err)
				}
			}
			i := 0
			for b.Loop() {
				if err := tbl.Insert(ctx, indexBenchEntity(i, 1_000_000)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	// Both stores in one loop, alternating; medians.
	b.Run("side-by-side", func(b *testing.B) {
		var tbls [2]*Table
		for k := range tbls {
			db := openIndexBench(b, false)
			tbl, err := db.CreateTable(ctx, "Bench")
			if err != nil {
				b.Fatal(err)
			}
			if k == 1 {
				if err := tbl.CreateIndex(ctx, IndexSpec{Name: "ByTag", Properties: []string{"Tag"}}); err != nil {
					b.Fatal(err)
				}
			}
			tbls[k] = tbl
		}
		var times [2][]time.Duration
		i := 0
		for b.Loop() {
			for k, tbl := range tbls {
				start := time.Now()
				if err := tbl.Insert(ctx, indexBenchEntity(i, 1_000_000)); err != nil {
					b.Fatal(err)
				}
				times[k] = append(times[k], time.Since(start))
			}
			i++
		}
		m0, m1 := median(times[0]), median(times[1])
		b.ReportMetric(float64(m0.Nanoseconds()), "median-ns/insert-0")
		b.ReportMetric(float64(m1.Nanoseconds()), "median-ns/insert-1")
		b.ReportMetric(float64(m1)/float64(m0), "1index/0index")
	})
}

// BenchmarkIndexLoad measures unsynced loads in transactions of 100
// entities into stores with 0, 1 and 2 indexes, and the build of an
// index over a loaded table against the load itself.
//
//	go test -run '^$' -bench BenchmarkIndexLoad -benchtime 1x .
//
// side-by-side loads the three stores in turn, one transaction each, and
// reports each store's median transaction time and total, and the
// throughput ratios (the store without index's time over the other's).
// build-vs-load loads a store, then builds an index over it, in rounds,
// and reports the best of each and their ratio.
func BenchmarkIndexLoad(b *testing.B) {
	n := indexBenchN(b)
	specs := []IndexSpec{{Name: "ByTag", Properties: []string{"Tag"}}, {Name: "ByKind", Properties: []string{"Kind", "Tag"}}}
	b.Run("side-by-side", func(b *testing.B) {
		for b.Loop() {
			var tbls [3]*Table
			var dbs [3]*DB
			for k := range tbls {
				db := openIndexBench(b, true)
				tbl, err := db.CreateTable(ctx, "Bench")
				if err != nil {
					b.Fatal(err)
				}
				for _, s := range specs[:k] {
					if err := tbl.CreateIndex(ctx, s); err != nil {
						b.Fatal(err)
					}
				}
				tbls[k], dbs[k] = tbl, db
			}
			var times [3][]time.Duration
			var totals [3]time.Duration
			for start := 0; start < n; start += 100 * 100 {
				for p := range 100 {
					var acts []TransactionAction
					for i := start + p; i < min(start+100*100, n); i += 100 {
						acts = append(acts, TransactionAction{Type: ActionInsert, Entity: indexBenchEntity(i, n)})
					}
					for k, tbl := range tbls {
						t0 := time.Now()
						if err := tbl.SubmitTransaction(ctx, acts); err != nil {
							b.Fatal(err)
						}
						d := time.Since(t0)
						times[k] = append(times[k], d)
						totals[k] += d
					}
				}
			}
			for k := range tbls {
				b.ReportMetric(float64(median(times[k]).Nanoseconds())/100, fmt.Sprintf("median-ns/entity-%didx", k))
				b.ReportMetric(float64(totals[k].Nanoseconds())/float64(n), fmt.Sprintf("total-ns/entity-%didx", k))
			}
			b.ReportMetric(float64(median(times[0]))/float64(median(times[1])), "throughput-1idx/0idx")
			b.ReportMetric(float64(median(times[0]))/float64(median(times[2])), "throughput-2idx/0idx")
			for _, db := range dbs {
				_ = db.Close()
			}
		}
	})
	b.Run("build-vs-load", func(b *testing.B) {
		bestLoad, bestBuild := time.Duration(1<<62), time.Duration(1<<62)
		for b.Loop() {
			db := openIndexBench(b, true)
			tbl, err := db.CreateTable(ctx, "Bench")
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			loadIndexBench(b, tbl, 0, n, n)
			bestLoad = min(bestLoad, time.Since(t0))
			t0 = time.Now()
			if err := tbl.CreateIndex(ctx, specs[0]); err != nil {
				b.Fatal(err)
			}
			bestBuild = min(bestBuild, time.Since(t0))
			_ = db.Close()
		}
		b.ReportMetric(float64(bestLoad.Nanoseconds())/float64(n), "best-load-ns/entity")
		b.ReportMetric(float64(bestBuild.Nanoseconds())/float64(n), "best-build-ns/entity")
		b.ReportMetric(float64(bestBuild)/float64(bestLoad), "build/load")
	})
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkIndexLoadFloor is side-by-side's floor: raw Pebble loading the
// same shape of data, in the same batches of 100 entities of one
// partition, each entity one existence read (a seek of one iterator per batch, as
// the engine reads) and one write of a
// 100-byte value, and with an index one more write of a key ordered by
// the Tag value (so the batch's extra keys land apart in the keyspace,
// as an index's entries do). The stores use tablestore's memtable and
// cache sizes. Its throughput ratio is what one index costs Pebble
// itself; side-by-side's is to be read against it.
//
//	go test -run '^$' -bench BenchmarkIndexLoadFloor -benchtime 1x .
func BenchmarkIndexLoadFloor(b *testing.B) {
	n := indexBenchN(b)
	value := make([]byte, 100)
	for b.Loop() {
		var dbs [2]*pebble.DB
		for k := range dbs {
			cache := pebble.NewCache(defaultCacheSize)
			db, err := pebble.Open(b.TempDir(), &pebble.Options{Cache: cache, MemTableSize: defaultMemTableSize, FormatMajorVersion: pebble.FormatNewest})
			cache.Unref()
			if err != nil {
				b.Fatal(err)
			}
			dbs[k] = db
		}
		var times [2][]time.Duration
		var key, ikey []byte
		for start := 0; start < n; start += 100 * 100 {
			for p := range 100 {
				for k, db := range dbs {
					t0 := time.Now()
					batch := db.NewBatch()
					lo := fmt.Appendf(nil, "e\x00p%03d\x00", p)
					it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: append(lo[:len(lo)-1:len(lo)-1], 1)})
					if err != nil {
						b.Fatal(err)
					}
					for i := start + p; i < min(start+100*100, n); i += 100 {
						key = fmt.Appendf(key[:0], "e\x00p%03d\x00r%08d", i%100, i)
						if it.SeekGE(key) && bytes.Equal(it.Key(), key) {
							b.Fatal("entity exists")
						}
						_ = batch.Set(key, value, nil)
						if k == 1 {
							ikey = fmt.Appendf(ikey[:0], "i\x00%016x\x00p%03d\x00r%08d", i%(n/10), i%100, i)
							_ = batch.Set(ikey, nil, nil)
						}
					}
					if err := it.Close(); err != nil {
						b.Fatal(err)
					}
					if err := batch.Commit(pebble.NoSync); err != nil {
						b.Fatal(err)
					}
					_ = batch.Close()
					times[k] = append(times[k], time.Since(t0))
				}
			}
		}
		b.ReportMetric(float64(median(times[0]).Nanoseconds())/100, "median-ns/entity-0idx")
		b.ReportMetric(float64(median(times[1]).Nanoseconds())/100, "median-ns/entity-1idx")
		b.ReportMetric(float64(median(times[0]))/float64(median(times[1])), "throughput-1idx/0idx")
		for _, db := range dbs {
			_ = db.Close()
		}
	}
}
