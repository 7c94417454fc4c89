package tablestore

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

func TestSegments(t *testing.T) {
	tb := partitionTable(t, 50)
	for _, n := range []int{1, 2, 3, 8, 200} {
		segs, err := tb.Segments(ctx, n)
		require.NoError(t, err)
		require.Len(t, segs, n)
		pk, rk := segs[0].Start()
		require.Equal(t, [2]string{"", ""}, [2]string{pk, rk})
		_, _, bounded := segs[n-1].End()
		require.False(t, bounded)
		// Each segment on its own goroutine; together every entity once.
		got := make([][]string, n)
		var wg sync.WaitGroup
		for i, s := range segs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for e, err := range tb.Query(ctx, Query{Segment: s, Top: 7, Filter: "N ge 10"}) {
					if err != nil {
						t.Error(err)
						return
					}
					got[i] = append(got[i], e.PartitionKey+"/"+e.RowKey)
				}
			}()
		}
		wg.Wait()
		var all []string
		sizes := make([]int, n)
		for i, g := range got {
			all = append(all, g...)
			sizes[i] = len(g)
		}
		var want []string
		for e, err := range tb.Query(ctx, Query{Filter: "N ge 10"}) {
			require.NoError(t, err)
			want = append(want, e.PartitionKey+"/"+e.RowKey)
		}
		require.Equal(t, want, all, "n %d", n)
		if n <= 8 {
			lo, hi := len(want), 0
			for _, s := range sizes {
				lo, hi = min(lo, s), max(hi, s)
			}
			require.LessOrEqual(t, hi-lo, 2*50/n+1, "n %d: sizes %v", n, sizes)
		}
	}
	segs, err := tb.Segments(ctx, 2)
	require.NoError(t, err)
	plan, err := tb.Plan(ctx, Query{Segment: segs[1], Filter: "PartitionKey eq 'c'"})
	require.NoError(t, err)
	require.Equal(t, PlanPartitionScan, plan.Kind)
	text, err := tb.Explain(Query{Segment: segs[0]})
	require.NoError(t, err)
	require.Equal(t, "plan: table scan\nranges:\n  (PartitionKey, RowKey) < ('b', 'r25')\nresidual: none\n", text)
	for _, n := range []int{0, -1, MaxSegments + 1} {
		_, err := tb.Segments(ctx, n)
		requireCode(t, err, CodeInvalidInput)
	}
	other, err := tb.db.CreateTable(ctx, "other")
	require.NoError(t, err)
	_, err = other.QueryPage(ctx, Query{Segment: segs[0]})
	requireCode(t, err, CodeInvalidInput)
	_, err = tb.db.Table("missing").Segments(ctx, 2)
	requireCode(t, err, CodeTableNotFound)
	empty, err := other.Segments(ctx, 3)
	require.NoError(t, err)
	for _, s := range empty {
		page, err := other.QueryPage(ctx, Query{Segment: s})
		require.NoError(t, err)
		require.Empty(t, page.Entities)
	}

	db, err := OpenDriver(failingConn{&driver.Error{Code: edm.CodeInternalError, Message: "unused"}}, nil)
	require.NoError(t, err)
	_, err = db.Table("t").Segments(ctx, 2)
	requireCode(t, err, CodeNotImplemented)
}
