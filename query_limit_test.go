package tablestore

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// topRecordingTable records the Top of every query page it is asked for.
type topRecordingTable struct {
	driver.Table
	tops *[]int
}

func (t topRecordingTable) QueryPage(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	*t.tops = append(*t.tops, q.Top)
	return t.Table.QueryPage(ctx, q, emit)
}

type limitRow struct {
	PartitionKey, RowKey string
	N                    int32
}

// TestQueryLimit: Top sizes pages and the iterators go past it; Limit
// stops Query, Partition.Query and QueryStructs after that many entities in
// all, trimming the last page read; 0 is no limit, negative InvalidInput.
func TestQueryLimit(t *testing.T) {
	ctx := context.Background()
	inner, err := OpenInMemory(nil)
	require.NoError(t, err)
	var tops []int
	db, err := OpenDriver(wrappingConn{Conn: inner.conn, wrap: func(d driver.Table) driver.Table { return topRecordingTable{d, &tops} }}, nil)
	require.NoError(t, err)
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Limits")
	require.NoError(t, err)
	for i := range 20 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: fmt.Sprint(i % 2), RowKey: fmt.Sprintf("%02d", i), Properties: map[string]any{"N": int32(i)}}))
	}
	count := func(seq func(func(*Entity, error) bool)) (keys []string) {
		for e, err := range seq {
			require.NoError(t, err)
			keys = append(keys, e.PartitionKey+"/"+e.RowKey)
		}
		return keys
	}

	tops = nil
	require.Len(t, count(tb.Query(ctx, Query{Top: 3})), 20, "Top is a page size, not a total")
	require.Len(t, tops, 7)

	tops = nil
	got := count(tb.Query(ctx, Query{Top: 3, Limit: 7}))
	require.Equal(t, []string{"0/00", "0/02", "0/04", "0/06", "0/08", "0/10", "0/12"}, got)
	require.Equal(t, []int{3, 3, 1}, tops, "the last page asks only for what is left")

	got = count(tb.Query(ctx, Query{Filter: "N ge 15", Limit: 2}))
	require.Equal(t, []string{"0/16", "0/18"}, got)
	require.Len(t, count(tb.Query(ctx, Query{Limit: 50})), 20, "a limit above the matches")
	require.Equal(t, []string{"1/01", "1/03"}, count(tb.Partition("1").Query(ctx, Query{Top: 1, Limit: 2})))

	tops = nil
	var ns []int32
	for r, err := range QueryStructs[limitRow](ctx, tb, Query{Top: 3, Limit: 4}) {
		require.NoError(t, err)
		ns = append(ns, r.N)
	}
	require.Equal(t, []int32{0, 2, 4, 6}, ns)
	require.Equal(t, []int{3, 1}, tops)

	// Stopping early is the caller's too: a break before the limit.
	for range tb.Query(ctx, Query{Limit: 5}) {
		break
	}

	for _, err := range tb.Query(ctx, Query{Limit: -1}) {
		requireCode(t, err, edm.CodeInvalidInput)
	}
	for _, err := range QueryStructs[limitRow](ctx, tb, Query{Limit: -1}) {
		requireCode(t, err, edm.CodeInvalidInput)
	}
}

// TestQueryLimitIndexOrder: the limit holds for reads in an index's
// order, over several pages, for Query and QueryStructs.
func TestQueryLimitIndexOrder(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)
	tb, err := db.CreateTable(ctx, "ByN")
	require.NoError(t, err)
	for i := range 20 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: fmt.Sprint(i % 3), RowKey: fmt.Sprintf("%02d", i), Properties: map[string]any{"N": int32(19 - i)}}))
	}
	require.NoError(t, tb.CreateIndex(ctx, IndexSpec{Name: "ByN", Properties: []string{"N"}}))
	var ns []int32
	for e, err := range tb.Query(ctx, Query{Index: "ByN", Top: 2, Limit: 5}) {
		require.NoError(t, err)
		ns = append(ns, e.Properties["N"].(int32))
	}
	require.Equal(t, []int32{0, 1, 2, 3, 4}, ns)
	ns = nil
	for r, err := range QueryStructs[limitRow](ctx, tb, Query{Index: "ByN", Filter: "N ge 10", Top: 2, Limit: 3}) {
		require.NoError(t, err)
		ns = append(ns, r.N)
	}
	require.Equal(t, []int32{10, 11, 12}, ns)
	ns = nil
	for r, err := range QueryStructs[limitRow](ctx, tb, Query{Index: "ByN", Top: 3}) {
		require.NoError(t, err)
		ns = append(ns, r.N)
	}
	require.Len(t, ns, 20, "QueryStructs reads every page in index order")
}

// TestQueryFinalPage: an iterator's page that its Limit ends is asked
// for as final, and the engine then ends it at Top without looking for
// a next entity; a page the limit does not end is not final.
func TestQueryFinalPage(t *testing.T) {
	tbl := allocTable(t, 50)
	for _, c := range []struct {
		top, limit, want int
		finals           []bool
	}{
		{top: 10, limit: 10, want: 10, finals: []bool{true}},
		{top: 10, limit: 25, want: 25, finals: []bool{false, false, true}},
		{top: 10, limit: 0, want: 50, finals: []bool{false, false, false, false, false}},
	} {
		var finals []bool
		orig := tbl.drv
		tbl.drv = finalRecordingTable{orig, &finals}
		n := 0
		for _, err := range tbl.Query(ctx, Query{Top: c.top, Limit: c.limit}) {
			require.NoError(t, err)
			n++
		}
		tbl.drv = orig
		require.Equal(t, c.finals, finals, "top %d limit %d", c.top, c.limit)
		require.Equal(t, c.want, n)
	}
	for _, final := range []bool{false, true} {
		req := driver.QueryRequest{Ranges: []driver.KeyRange{{Unbounded: true}}, Top: 10, Final: final}
		rows := 0
		res, err := tbl.drv.QueryPage(ctx, &req, func(driver.Row) error { rows++; return nil })
		require.NoError(t, err)
		require.Equal(t, 10, rows)
		require.Equal(t, !final, res.More)
	}
}

// finalRecordingTable records QueryRequest.Final of every page.
type finalRecordingTable struct {
	driver.Table
	finals *[]bool
}

func (t finalRecordingTable) QueryPage(ctx context.Context, q *driver.QueryRequest, emit func(driver.Row) error) (driver.PageResult, error) {
	*t.finals = append(*t.finals, q.Final)
	return t.Table.QueryPage(ctx, q, emit)
}
