package tablestore

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

func TestReverseQuery(t *testing.T) {
	tb := partitionTable(t, 7)
	for _, tc := range []struct {
		filter string
		plan   string
	}{
		{"", "plan: table scan, reverse\nranges:\n  all\nresidual: none\n"},
		{"N ge 2 and N lt 5", "plan: table scan, reverse\nranges:\n  all\nresidual: N ge 2 and N lt 5\n"},
		{"PartitionKey eq 'a' or PartitionKey eq 'c'", "plan: partition scan, reverse\nranges:\n  PartitionKey = 'c'\n  PartitionKey = 'a'\nresidual: none\n"},
		{"(PartitionKey eq 'b' and RowKey eq 'r01') or (PartitionKey eq 'c' and RowKey eq 'r03')", "plan: point, reverse\nranges:\n  PartitionKey = 'c', RowKey = 'r03'\n  PartitionKey = 'b', RowKey = 'r01'\nresidual: none\n"},
		{"PartitionKey eq 'b' and RowKey gt 'r02'", "plan: range, reverse\nranges:\n  PartitionKey = 'b', RowKey > 'r02'\nresidual: none\n"},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			var forward []string
			for e, err := range tb.Query(ctx, Query{Filter: tc.filter}) {
				require.NoError(t, err)
				forward = append(forward, e.PartitionKey+"/"+e.RowKey)
			}
			slices.Reverse(forward)
			for _, top := range []int{1, 2, 3, 1000} {
				q := Query{Filter: tc.filter, Top: top, Reverse: true}
				var paged []*Entity
				for {
					page, err := tb.QueryPage(ctx, q)
					require.NoError(t, err)
					require.LessOrEqual(t, len(page.Entities), top)
					paged = append(paged, page.Entities...)
					if page.Continuation == "" {
						break
					}
					q.Continuation = page.Continuation
				}
				require.Equal(t, forward, keysOf(paged), "top %d", top)
			}
			text, err := explainText(tb, Query{Filter: tc.filter, Reverse: true})
			require.NoError(t, err)
			require.Equal(t, tc.plan, text)
		})
	}
	// A reverse token resumes downwards, and only in a reverse query.
	page, err := tb.QueryPage(ctx, Query{Top: 2, Reverse: true})
	require.NoError(t, err)
	require.Equal(t, []string{"c/r06", "c/r05"}, keysOf(page.Entities))
	require.Equal(t, "c", page.NextPartitionKey())
	require.Equal(t, "r04", page.NextRowKey())
	plan, err := tb.Plan(ctx, Query{Reverse: true, Continuation: page.Continuation})
	require.NoError(t, err)
	require.True(t, plan.Reverse)
	require.Equal(t, []string{"(PartitionKey, RowKey) <= ('c', 'r04')"}, plan.Ranges)
	_, err = tb.QueryPage(ctx, Query{Continuation: page.Continuation})
	requireCode(t, err, edm.CodeInvalidInput)
	fwd, err := tb.QueryPage(ctx, Query{Top: 1})
	require.NoError(t, err)
	_, err = tb.QueryPage(ctx, Query{Continuation: fwd.Continuation, Reverse: true})
	requireCode(t, err, edm.CodeInvalidInput)
	// Through a partition, by the iterator.
	var got []string
	for e, err := range tb.Partition("b").Query(ctx, Query{Filter: "N lt 3", Top: 1, Reverse: true}) {
		require.NoError(t, err)
		got = append(got, e.RowKey)
	}
	require.Equal(t, []string{"r02", "r01", "r00"}, got)
}

// TestOptionalDriverFeatures checks that a driver without the optional
// interfaces gets NotImplemented, not a forward read or a silent no-op.
func TestOptionalDriverFeatures(t *testing.T) {
	db, err := OpenDriver(failingConn{&driver.Error{Code: edm.CodeInternalError, Message: "unused"}}, nil)
	require.NoError(t, err)
	tb := db.Table("t")
	_, err = tb.QueryPage(ctx, Query{Reverse: true})
	requireCode(t, err, edm.CodeNotImplemented)
	_, err = explainText(tb, Query{Reverse: true})
	requireCode(t, err, edm.CodeNotImplemented)
	requireCode(t, tb.Partition("p").DeleteAll(ctx), edm.CodeNotImplemented)
	requireCode(t, tb.Partition("p").DeleteRange(ctx, "a", "b"), edm.CodeNotImplemented)
}
