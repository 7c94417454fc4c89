package engine

import (
	"context"
	"crypto/sha256"
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/keys"
	"github.com/tablestore/tablestore/internal/plan"
)

// TestParallelSplits runs testdata/parallel_splits: for each query it
// shows, page by page, where the serial start handed off and the
// segments the parallel read merged (bounds, stored entities in the
// plan's ranges, entities the page examined and emitted there, why the
// page ended) and the page, and checks the page is the one a serial read
// returns.
//
//	load n=<entities>            a flushed, compacted table "t" of n entities:
//	                             PartitionKey p%03d (100 rows each), RowKey
//	                             r%05d, B = i*7919 mod 100, a 200-byte S
//	query filter=<text> top=<n> scan=<n> [pages=<n>] [hint]
//	                             hint: each next page's request carries the
//	                             previous page's Examined, as package
//	                             tablestore's query iterator sends it
func TestParallelSplits(t *testing.T) {
	ctx := context.Background()
	shrinkParallel(t, 96<<10, 16<<10, 64<<10, 8<<10, 100)
	db := openParallelTest(t)
	datadriven.RunTest(t, "testdata/parallel_splits", func(t *testing.T, d *datadriven.TestData) string {
		switch d.Cmd {
		case "load":
			var n int
			d.ScanArgs(t, "n", &n)
			require.NoError(t, db.CreateTable(ctx, "t"))
			tb := db.Table("t")
			for i := 0; i < n; i += 100 {
				actions := make([]driver.Action, 0, 100)
				for k := i; k < min(i+100, n); k++ {
					sum := sha256.Sum256([]byte{byte(k), byte(k >> 8), byte(k >> 16)})
					actions = append(actions, driver.Action{Type: driver.ActionUpsertReplace,
						PartitionKey: fmt.Sprintf("p%03d", k/100), RowKey: fmt.Sprintf("r%05d", k),
						Properties: []driver.Property{
							{Name: "B", Value: edm.Value{Type: edm.TypeInt32, Int: int64(k * 7919 % 100)}},
							{Name: "S", Value: edm.Value{Type: edm.TypeString, Bytes: []byte(strings.Repeat(fmt.Sprintf("%x", sum), 4)[:200])}},
						}})
				}
				_, err := tb.Commit(ctx, actions)
				require.NoError(t, err)
			}
			require.NoError(t, db.Flush())
			require.NoError(t, db.Compact())
			return ""
		case "query":
			var src string
			var top, scan int
			pages := 1000
			d.ScanArgs(t, "filter", &src)
			d.ScanArgs(t, "top", &top)
			d.ScanArgs(t, "scan", &scan)
			if d.HasArg("pages") {
				d.ScanArgs(t, "pages", &pages)
			}
			return runParallelQuery(t, db, src, top, scan, pages, d.HasArg("hint"))
		}
		t.Fatalf("unknown command %q", d.Cmd)
		return ""
	})
}

// TestParallelWorkerPanic checks that a panic on a parallel read's
// worker goroutine is the page's error, as on the page's own goroutine,
// and does not end the process.
func TestParallelWorkerPanic(t *testing.T) {
	ctx := context.Background()
	tb, q := smallParallelTable(t, 500, "S eq 'y'", 1000)
	chunkHook = func() { panic("injected") }
	defer func() { chunkHook = nil }()
	before := ParallelPages()
	_, err := tb.QueryPage(ctx, q, func(driver.Row) error { return nil })
	require.Greater(t, ParallelPages(), before, "the page was not read in parallel")
	require.ErrorContains(t, err, "injected")
}

// TestParallelChunksReleased checks that a parallel page gives every
// chunk back for reuse, the one it ends in and those it never merged
// included: pages that stop at Top while chunks are in flight, read
// again and again, give back every chunk they took.
func TestParallelChunksReleased(t *testing.T) {
	ctx := context.Background()
	tb, q := smallParallelTable(t, 2000, "S ge '8'", 200)
	// free empties the free list and returns the chunks it held, then
	// puts them back.
	free := func() map[*chunk]bool {
		set := map[*chunk]bool{}
		for len(freeChunks) > 0 {
			set[<-freeChunks] = true
		}
		for c := range set {
			freeChunks <- c
		}
		return set
	}
	for len(freeChunks) > 0 {
		<-freeChunks
	}
	var first map[*chunk]bool
	for i := range 5 {
		before := ParallelPages()
		res, err := tb.QueryPage(ctx, q, func(driver.Row) error { return nil })
		require.NoError(t, err)
		require.Greater(t, ParallelPages(), before, "page %d was not read in parallel", i)
		require.True(t, res.More, "page %d read the whole table; it must stop at Top", i)
		if i == 0 {
			first = free()
			require.Greater(t, len(first), 1, "the first page released no chunk for reuse")
			continue
		}
		now := free()
		for c := range first {
			require.True(t, now[c], "page %d did not give back a chunk it took", i)
		}
	}
}

// smallParallelTable shrinks the parallel scan's sizes, loads n entities
// (see loadHashed) into a compacted in-memory store with Parallelism 2,
// and returns the table and a page request for filter src with top.
func smallParallelTable(t *testing.T, n int, src string, top int) (driver.Table, *driver.QueryRequest) {
	shrinkParallel(t, 16<<10, 4<<10, 16<<10, 2<<10, 10)
	db := openParallelTest(t)
	tb := loadHashed(t, db, n)
	require.NoError(t, db.Flush())
	require.NoError(t, db.Compact())
	f, err := filter.Compile(src, nil)
	require.NoError(t, err)
	return tb, plannedRequest(f.Root, top)
}

// shrinkParallel sets the parallel scan's sizes (see parallel.go) for
// the test, restoring them when it ends.
func shrinkParallel(t *testing.T, minBytes, first, chunk, minChunk uint64, after int) {
	a, b, c, d, e := parallelMinBytes, firstChunkBytes, parallelChunkBytes, minChunkBytes, parallelAfter
	t.Cleanup(func() {
		parallelMinBytes, firstChunkBytes, parallelChunkBytes, minChunkBytes, parallelAfter = a, b, c, d, e
	})
	parallelMinBytes, firstChunkBytes, parallelChunkBytes, minChunkBytes, parallelAfter = minBytes, first, chunk, minChunk, after
}

// openParallelTest opens an in-memory store with Parallelism 2 and a
// small memtable, closed when the test ends.
func openParallelTest(t *testing.T) *Engine {
	db, err := OpenInMemory(Options{CacheSize: 8 << 20, MemTableSize: 256 << 10, Clock: time.Now,
		PageScanLimit: 100_000, PageTimeLimit: time.Hour, Parallelism: 2})
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// loadHashed creates table "t" in db holding n entities in partition
// "p", RowKey r%05d, each with a 256-character property S of hex digits
// that compresses little, and returns it.
func loadHashed(t *testing.T, db *Engine, n int) driver.Table {
	ctx := context.Background()
	require.NoError(t, db.CreateTable(ctx, "t"))
	tb := db.Table("t")
	for i := 0; i < n; i += 100 {
		actions := make([]driver.Action, 0, 100)
		for k := i; k < min(i+100, n); k++ {
			sum := sha256.Sum256([]byte{byte(k), byte(k >> 8)})
			actions = append(actions, driver.Action{Type: driver.ActionUpsertReplace,
				PartitionKey: "p", RowKey: fmt.Sprintf("r%05d", k),
				Properties: []driver.Property{{Name: "S", Value: edm.Value{Type: edm.TypeString,
					Bytes: []byte(strings.Repeat(fmt.Sprintf("%x", sum), 4))}}}})
		}
		_, err := tb.Commit(ctx, actions)
		require.NoError(t, err)
	}
	return tb
}

// plannedRequest returns the request of a query page for root, planned
// as package tablestore plans it.
func plannedRequest(root filter.Node, top int) *driver.QueryRequest {
	p := plan.New(root)
	return &driver.QueryRequest{Filter: root, Ranges: p.Ranges, Residual: p.Residual, Top: top}
}

// runParallelQuery reads up to pages pages of a query with Parallelism 2
// and 1 and describes the parallel ones; with hint, each page's request
// carries the previous page's Examined.
func runParallelQuery(t *testing.T, db *Engine, src string, top, scan, pages int, hint bool) string {
	ctx := context.Background()
	f, err := filter.Compile(src, nil)
	require.NoError(t, err)
	p := plan.New(f.Root)
	tb := db.Table("t").(*table)
	info, err := tb.resolve()
	require.NoError(t, err)
	db.opts.PageScanLimit = scan
	defer func() { db.opts.PageScanLimit, db.opts.Parallelism = 100_000, 2 }()
	var out strings.Builder
	fmt.Fprintf(&out, "%s\n", p)
	type page struct {
		rows []string
		res  driver.PageResult
	}
	read := func(par int, q *driver.QueryRequest) page {
		db.opts.Parallelism = par
		var pg page
		res, err := tb.QueryPage(ctx, q, func(r driver.Row) error {
			pg.rows = append(pg.rows, r.PartitionKey+"/"+r.RowKey)
			return nil
		})
		require.NoError(t, err)
		pg.res = res
		return pg
	}
	q := &driver.QueryRequest{Filter: f.Root, FilterText: src, Ranges: p.Ranges, Residual: p.Residual, Top: top}
	for n := 1; n <= pages; n++ {
		ranges := p.Ranges
		if q.NextPartitionKey != "" || q.NextRowKey != "" {
			ranges = p.From(plan.Key{PartitionKey: q.NextPartitionKey, RowKey: q.NextRowKey})
		}
		spans := rawSpans(info.id, ranges)
		var segs []string
		parallelTrace = func(lo, hi []byte, examined, emitted int, end string) {
			if lo == nil {
				segs = append(segs, fmt.Sprintf("  serial up to %s: examined %d, emitted %d", showKey(hi), examined, emitted))
				return
			}
			s := fmt.Sprintf("  segment [%s, %s) entities %d, examined %d, emitted %d", showKey(lo), showKey(hi),
				countEntities(t, db, clip(spans, lo, hi)), examined, emitted)
			if end != "" {
				s += ", ends the page: " + end
			}
			segs = append(segs, s)
		}
		before := ParallelPages()
		got := read(2, q)
		parallelTrace = nil
		want := read(1, q)
		require.Equal(t, want, got, "page %d differs from the serial read", n)
		how := "serial"
		if ParallelPages() > before {
			how = fmt.Sprintf("parallel, %d segments", len(segs)-1)
		}
		fmt.Fprintf(&out, "page %d (%s)\n", n, how)
		for _, s := range segs {
			out.WriteString(s + "\n")
		}
		fmt.Fprintf(&out, "  emitted %d", len(got.rows))
		if len(got.rows) > 0 {
			fmt.Fprintf(&out, ": %s ... %s", got.rows[0], got.rows[len(got.rows)-1])
		}
		out.WriteString("\n")
		if !got.res.More {
			out.WriteString("  no more\n")
			break
		}
		fmt.Fprintf(&out, "  resume %s/%s\n", got.res.NextPartitionKey, got.res.NextRowKey)
		q.NextPartitionKey, q.NextRowKey = got.res.NextPartitionKey, got.res.NextRowKey
		if hint {
			q.PreviousExamined = got.res.Examined
		}
	}
	return out.String()
}

// showKey prints a stored key as PartitionKey/RowKey, or "end" for a
// table's end.
func showKey(k []byte) string {
	_, pk, rk, err := keys.Split(k)
	if err != nil {
		return "end"
	}
	return fmt.Sprintf("%s/%s", pk, rk)
}

// countEntities counts the stored entities in spans.
func countEntities(t *testing.T, db *Engine, spans []span) int {
	n := 0
	for _, s := range spans {
		it, err := db.pdb.NewIter(nil)
		require.NoError(t, err)
		it.SetBounds(s.lo, s.hi)
		for valid := it.First(); valid; valid = it.Next() {
			n++
		}
		require.NoError(t, it.Close())
	}
	return n
}

// BenchmarkSmallScan reads a filtered scan of a small flushed table with
// Parallelism 1 and 2: below parallelMinBytes both read serially, and the
// default (GOMAXPROCS) must cost no more than 1.
//
//	go test -run '^$' -bench SmallScan -benchmem ./internal/engine
func BenchmarkSmallScan(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{100, 5000} {
		db, err := OpenInMemory(Options{CacheSize: 8 << 20, MemTableSize: 1 << 20, Clock: time.Now,
			PageScanLimit: 100_000, PageTimeLimit: time.Hour, Parallelism: 1})
		require.NoError(b, err)
		require.NoError(b, db.CreateTable(ctx, "t"))
		tb := db.Table("t")
		for i := 0; i < n; i += 100 {
			actions := make([]driver.Action, 0, 100)
			for k := i; k < min(i+100, n); k++ {
				actions = append(actions, driver.Action{Type: driver.ActionUpsertReplace,
					PartitionKey: fmt.Sprintf("p%03d", k/100), RowKey: fmt.Sprintf("r%05d", k),
					Properties: []driver.Property{{Name: "B", Value: edm.Value{Type: edm.TypeInt32, Int: int64(k % 100)}}}})
			}
			_, err := tb.Commit(ctx, actions)
			require.NoError(b, err)
		}
		require.NoError(b, db.Flush())
		f, err := filter.Compile("B eq 42", nil)
		require.NoError(b, err)
		q := plannedRequest(f.Root, 1000)
		for _, par := range []int{1, 2} {
			b.Run(fmt.Sprintf("entities%d/parallelism%d", n, par), func(b *testing.B) {
				db.opts.Parallelism = par
				before := ParallelPages()
				for b.Loop() {
					if _, err := tb.QueryPage(ctx, q, func(driver.Row) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}
				if ParallelPages() != before {
					b.Fatal("a small scan was read in parallel")
				}
			})
		}
		require.NoError(b, db.Close())
	}
}
