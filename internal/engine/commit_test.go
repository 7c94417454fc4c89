package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

func TestMergeProperties(t *testing.T) {
	p := func(name string, n int64) driver.Property {
		return driver.Property{Name: name, Value: edm.Value{Type: edm.TypeInt64, Int: n}}
	}
	tests := []struct {
		name      string
		old, upd  []driver.Property
		wantNames string
		wantSum   int64
	}{
		{"both empty", nil, nil, "", 0},
		{"only old", []driver.Property{p("A", 1), p("C", 3)}, nil, "A C", 4},
		{"only upd", nil, []driver.Property{p("B", 2)}, "B", 2},
		{"interleaved", []driver.Property{p("A", 1), p("C", 3)}, []driver.Property{p("B", 20), p("D", 40)}, "A B C D", 64},
		{"replace", []driver.Property{p("A", 1), p("B", 2), p("C", 3)}, []driver.Property{p("B", 200)}, "A B C", 204},
		{"replace all", []driver.Property{p("A", 1)}, []driver.Property{p("A", 100), p("Z", 5)}, "A Z", 105},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := mergeProperties(tc.old, tc.upd)
			var names []string
			var sum int64
			for _, q := range got {
				names = append(names, q.Name)
				sum += q.Value.Int
			}
			require.Equal(t, tc.wantNames, strings.Join(names, " "))
			require.Equal(t, tc.wantSum, sum)
		})
	}
}

// TestCommitReportsFirstFailureInActionOrder checks that reading the
// stored entities in key order does not change which failing action is
// reported: the first in action order, even when a later action's key
// sorts first. It also checks that records and property lists are stored
// alike and that nothing is written on failure.
func TestCommitReportsFirstFailureInActionOrder(t *testing.T) {
	ctx := context.Background()
	db := openFaultTest(t, nil)
	t.Cleanup(func() { _ = db.Close() })
	tbl := db.Table("T")
	n := func(v int64) []driver.Property {
		return []driver.Property{{Name: "N", Value: edm.Value{Type: edm.TypeInt64, Int: v}}}
	}
	rec := func(v int64) []byte { return mustEncode(nil, 0, n(v)) }
	_, err := tbl.Commit(ctx, []driver.Action{
		{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "a", Properties: n(1)},
		{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "c", Record: rec(3)},
	})
	require.NoError(t, err)

	tests := []struct {
		name    string
		actions []driver.Action
		code    edm.Code
		index   int
	}{
		{"later key fails first", []driver.Action{
			{Type: driver.ActionUpsertReplace, PartitionKey: "p", RowKey: "z", Record: rec(9)},
			{Type: driver.ActionUpdateMerge, PartitionKey: "p", RowKey: "d", IfMatch: "*", Record: rec(4)},
			{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "a", Record: rec(5)},
		}, "ResourceNotFound", 1},
		{"earlier key fails first", []driver.Action{
			{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "c", Record: rec(5)},
			{Type: driver.ActionDelete, PartitionKey: "p", RowKey: "b", IfMatch: "*"},
		}, "EntityAlreadyExists", 0},
		{"etag mismatch after a good merge", []driver.Action{
			{Type: driver.ActionUpsertMerge, PartitionKey: "p", RowKey: "c", Record: rec(6)},
			{Type: driver.ActionUpdateReplace, PartitionKey: "p", RowKey: "a", IfMatch: `W/"datetime'2001-01-01T00%3A00%3A00Z'"`, Properties: n(7)},
			{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "0", Record: rec(8)},
		}, "UpdateConditionNotSatisfied", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tbl.Commit(ctx, tc.actions)
			var de *driver.Error
			require.ErrorAs(t, err, &de)
			require.Equal(t, tc.code, de.Code)
			require.Equal(t, tc.index, de.Index)
		})
	}
	// Nothing of the failed transactions was written.
	for _, rk := range []string{"z", "d", "b", "0"} {
		_, err := tbl.Get(ctx, "p", rk, nil)
		var de *driver.Error
		require.ErrorAs(t, err, &de, rk)
		require.Equal(t, edm.CodeResourceNotFound, de.Code)
	}

	// A transaction that reads several entities out of key order merges
	// into what is stored, whether the update comes as a record or as
	// properties.
	_, err = tbl.Commit(ctx, []driver.Action{
		{Type: driver.ActionUpsertMerge, PartitionKey: "p", RowKey: "c",
			Record: mustEncode(nil, 0, []driver.Property{{Name: "M", Value: edm.Value{Type: edm.TypeBoolean, Int: 1}}})},
		{Type: driver.ActionUpdateMerge, PartitionKey: "p", RowKey: "a", IfMatch: "*",
			Properties: []driver.Property{{Name: "M", Value: edm.Value{Type: edm.TypeBoolean}}}},
		{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "b", Record: rec(2)},
	})
	require.NoError(t, err)
	for rk, want := range map[string]string{"a": "M=0 N=1", "b": "N=2", "c": "M=1 N=3"} {
		row, err := tbl.Get(ctx, "p", rk, nil)
		require.NoError(t, err)
		props, err := row.Record.Properties()
		require.NoError(t, err)
		var got []string
		for _, p := range props {
			got = append(got, fmt.Sprintf("%s=%d", p.Name, p.Value.Int))
		}
		require.Equal(t, want, strings.Join(got, " "), rk)
	}
}

// mustEncode is driver.Encode for properties a test made valid; it panics
// on an error.
func mustEncode(dst []byte, timestamp int64, props []driver.Property) []byte {
	out, err := driver.Encode(dst, timestamp, props)
	if err != nil {
		panic(err)
	}
	return out
}

// Properties the record format refuses fail the commit with an error that
// names them; nothing is written and the engine keeps serving.
func TestCommitRefusesInvalidProperties(t *testing.T) {
	ctx := context.Background()
	db := openFaultTest(t, nil)
	t.Cleanup(func() { _ = db.Close() })
	tbl := db.Table("T")
	bad := []driver.Property{{Name: "B", Value: edm.Value{Type: edm.TypeGuid, Bytes: []byte{1}}}}
	_, err := tbl.Commit(ctx, []driver.Action{{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "a", Properties: bad}})
	require.ErrorContains(t, err, `the properties of ("p", "a") to write`)
	_, err = tbl.(driver.BulkCommitter).CommitBulk(ctx, []driver.Action{{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "b", Properties: bad}}, driver.BulkCommitOptions{})
	require.ErrorContains(t, err, `the properties of ("p", "b") to write`)
	for _, rk := range []string{"a", "b"} {
		_, err = tbl.Get(ctx, "p", rk, nil)
		var de *driver.Error
		require.ErrorAs(t, err, &de, rk)
		require.Equal(t, edm.CodeResourceNotFound, de.Code)
	}
	good := []driver.Property{{Name: "N", Value: edm.Value{Type: edm.TypeInt64, Int: 1}}}
	_, err = tbl.Commit(ctx, []driver.Action{{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "a", Properties: good}})
	require.NoError(t, err)
}
