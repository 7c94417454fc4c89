package tablestore

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPartitionDeleteRange(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		left     []string // RowKeys of partition b left, as a compact list
	}{
		{"", "", nil},
		{"r02", "", []string{"r00", "r01"}},
		{"", "r02", []string{"r02", "r03", "r04"}},
		{"r01", "r03", []string{"r00", "r03", "r04"}},
		{"r01", "r01", []string{"r00", "r01", "r02", "r03", "r04"}},
		{"r015", "r025", []string{"r00", "r01", "r03", "r04"}},
		{"s", "", []string{"r00", "r01", "r02", "r03", "r04"}},
	} {
		t.Run(tc.from+"-"+tc.to, func(t *testing.T) {
			tb := partitionTable(t, 5)
			require.NoError(t, tb.Partition("b").DeleteRange(ctx, tc.from, tc.to))
			var got []string
			for e, err := range tb.Query(ctx, Query{}) {
				require.NoError(t, err)
				if e.PartitionKey == "b" {
					got = append(got, e.RowKey)
				}
			}
			require.Equal(t, tc.left, got)
			// Neighbouring partitions are untouched.
			for _, pk := range []string{"a", "c"} {
				page, err := tb.Partition(pk).QueryPage(ctx, Query{})
				require.NoError(t, err)
				require.Len(t, page.Entities, 5, pk)
			}
		})
	}
	tb := partitionTable(t, 1)
	p := tb.Partition("b")
	requireCode(t, p.DeleteRange(ctx, "r2", "r1"), CodeInvalidInput)
	requireCode(t, p.DeleteRange(ctx, "a/b", ""), CodeOutOfRangeInput)
	requireCode(t, p.DeleteRange(ctx, "", "a#b"), CodeOutOfRangeInput)
	requireCode(t, tb.Partition("a?b").DeleteAll(ctx), CodeOutOfRangeInput)
	_, err := p.Get(ctx, "r00", nil)
	require.NoError(t, err, "rejected deletions change nothing")
	requireCode(t, tb.db.Table("missing").Partition("b").DeleteAll(ctx), CodeTableNotFound)
	requireCode(t, tb.db.Table("missing").Partition("b").DeleteRange(ctx, "x", "x"), CodeTableNotFound)
	require.NoError(t, tb.db.Close())
	require.ErrorIs(t, p.DeleteAll(ctx), ErrClosed)
}

// TestPartitionDeleteAtomic runs transactions that each write a pair of
// entities and readers that read the whole partition in one page while
// the partition is dropped: a pair is never split, and a page sees the
// preloaded entities all or none.
func TestPartitionDeleteAtomic(t *testing.T) {
	const preload = 300
	db := openTestDB(t, nil)
	tb, err := db.CreateTable(ctx, "atomic")
	require.NoError(t, err)
	p := tb.Partition("p")
	for i := 0; i < preload; i += 100 {
		b := p.NewBatch()
		for j := i; j < i+100; j++ {
			b.Insert(&Entity{RowKey: fmt.Sprintf("pre%04d", j)})
		}
		require.NoError(t, b.Submit(ctx))
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			err := p.NewBatch().Upsert(&Entity{RowKey: fmt.Sprintf("x%05d", i)}, Replace).
				Upsert(&Entity{RowKey: fmt.Sprintf("y%05d", i)}, Replace).Submit(ctx)
			if err != nil {
				t.Error(err)
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			page, err := p.QueryPage(ctx, Query{Filter: "RowKey lt 'x'"})
			if err != nil {
				t.Error(err)
				return
			}
			if n := len(page.Entities); n != 0 && n != preload {
				t.Errorf("a page saw %d of the %d preloaded entities", n, preload)
				return
			}
		}
	}()
	for range 20 {
		require.NoError(t, p.DeleteAll(ctx))
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	seen := map[string]int{}
	for e, err := range p.Query(ctx, Query{}) {
		require.NoError(t, err)
		seen[e.RowKey[1:]]++
	}
	for k, n := range seen {
		require.Equal(t, 2, n, "pair %s split by a range deletion", k)
	}
}

// TestDeleteLargePartition loads one partition on disk and drops it with
// DeleteAll on a NoSync store. It logs how long the drop took; it asserts
// behaviour, not time. TABLESTORE_DELETE_ENTITIES sets the size (default
// 20,000; TABLESTORE_DELETE_ENTITIES=1000000 go test -run
// DeleteLargePartition -v . gives the README's figure).
func TestDeleteLargePartition(t *testing.T) {
	n := 20_000
	if s := os.Getenv("TABLESTORE_DELETE_ENTITIES"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	db, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "Big")
	require.NoError(t, err)
	big := tbl.Partition("big")
	for _, pk := range []string{"bif", "bigg"} { // neighbours on both sides
		require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: pk, RowKey: "r"}))
	}
	for i := 0; i < n; i += 100 {
		b := big.NewBatch()
		for j := i; j < i+100 && j < n; j++ {
			b.Upsert(&Entity{RowKey: fmt.Sprintf("r%08d", j), Properties: map[string]any{"V": int64(j), "S": "some text of moderate length"}}, Replace)
		}
		require.NoError(t, b.Submit(ctx))
	}
	require.NoError(t, flush(db))

	start := time.Now()
	require.NoError(t, big.DeleteAll(ctx))
	took := time.Since(start)
	t.Logf("DeleteAll of a partition of %d entities took %v", n, took)

	page, err := big.QueryPage(ctx, Query{})
	require.NoError(t, err)
	require.Empty(t, page.Entities)
	require.Empty(t, page.Continuation)
	page, err = tbl.QueryPage(ctx, Query{})
	require.NoError(t, err)
	require.Equal(t, []string{"bif/r", "bigg/r"}, keysOf(page.Entities))
}
