package tablestore

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// partitionTable returns a table with partitions "a", "b" and "c" of n
// entities each, RowKeys r00, r01, ... and N the entity's index.
func partitionTable(t *testing.T, n int) *Table {
	t.Helper()
	db := openTestDB(t, nil)
	tb, err := db.CreateTable(ctx, "parts")
	require.NoError(t, err)
	for _, pk := range []string{"a", "b", "c"} {
		for i := range n {
			require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: pk, RowKey: fmt.Sprintf("r%02d", i),
				Properties: map[string]any{"N": int32(i)}}))
		}
	}
	return tb
}

func keysOf(es []*Entity) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.PartitionKey+"/"+e.RowKey)
	}
	return out
}

func TestPartitionWrites(t *testing.T) {
	tb := partitionTable(t, 0)
	p := tb.Partition("b")
	require.Equal(t, "b", p.Key())

	e := &Entity{RowKey: "r1", Properties: map[string]any{"X": int32(1)}}
	require.NoError(t, p.Insert(ctx, e))
	require.Equal(t, "b", e.PartitionKey, "an empty PartitionKey takes the partition's")
	require.NotEmpty(t, e.ETag)
	got, err := p.Get(ctx, "r1", nil)
	require.NoError(t, err)
	require.Equal(t, int32(1), got.Properties["X"])

	requireCode(t, p.Insert(ctx, &Entity{RowKey: "r1"}), CodeEntityAlreadyExists)
	require.NoError(t, p.Update(ctx, &Entity{RowKey: "r1", Properties: map[string]any{"Y": int32(2)}}, Merge, e.ETag))
	require.NoError(t, p.Upsert(ctx, &Entity{RowKey: "r2"}, Replace))
	requireCode(t, p.Delete(ctx, "r1", e.ETag), CodeUpdateConditionNotSatisfied)
	require.NoError(t, p.Delete(ctx, "r1", ETagAny))
	requireCode(t, p.Delete(ctx, "r1", ETagAny), CodeResourceNotFound)

	// Another partition's entity is rejected before anything is written.
	other := &Entity{PartitionKey: "a", RowKey: "r9"}
	requireCode(t, p.Insert(ctx, other), CodeInvalidInput)
	requireCode(t, p.Upsert(ctx, other, Merge), CodeInvalidInput)
	requireCode(t, p.Update(ctx, other, Merge, ETagAny), CodeInvalidInput)
	_, err = tb.Get(ctx, "a", "r9", nil)
	requireCode(t, err, CodeResourceNotFound)

	// An invalid partition key fails every operation with the key codes.
	bad := tb.Partition("a/b")
	requireCode(t, bad.Insert(ctx, &Entity{RowKey: "r"}), CodeOutOfRangeInput)
	_, err = bad.Get(ctx, "r", nil)
	requireCode(t, err, CodeOutOfRangeInput)
	_, err = bad.QueryPage(ctx, Query{})
	requireCode(t, err, CodeOutOfRangeInput)

	// The empty partition key is a partition like any other.
	empty := tb.Partition("")
	require.NoError(t, empty.Insert(ctx, &Entity{RowKey: ""}))
	require.NoError(t, empty.Insert(ctx, &Entity{RowKey: "r"}))
	got, err = empty.Get(ctx, "", nil)
	require.NoError(t, err)
	require.Equal(t, [2]string{"", ""}, [2]string{got.PartitionKey, got.RowKey})
	page, err := empty.QueryPage(ctx, Query{})
	require.NoError(t, err)
	require.Len(t, page.Entities, 2)
	require.Equal(t, "", page.Entities[0].RowKey)
	require.Equal(t, "r", page.Entities[1].RowKey)
}

func TestPartitionBatch(t *testing.T) {
	tb := partitionTable(t, 0)
	p := tb.Partition("b")
	require.NoError(t, p.NewBatch().Insert(&Entity{RowKey: "r1"}).Insert(&Entity{PartitionKey: "b", RowKey: "r2"}).Submit(ctx))
	require.NoError(t, p.NewBatch().Delete("", "r1", ETagAny).Upsert(&Entity{RowKey: "r3"}, Merge).Submit(ctx))

	err := p.NewBatch().Insert(&Entity{RowKey: "r4"}).Insert(&Entity{PartitionKey: "a", RowKey: "r5"}).Submit(ctx)
	var be *BatchError
	require.True(t, errors.As(err, &be), "%v", err)
	require.Equal(t, 1, be.Index)
	requireCode(t, err, CodeCommandsInBatchActOnDifferentPartitions)
	err = p.NewBatch().Delete("c", "r1", ETagAny).Submit(ctx)
	requireCode(t, err, CodeCommandsInBatchActOnDifferentPartitions)

	var all []*Entity
	for e, err := range tb.Query(ctx, Query{}) {
		require.NoError(t, err)
		all = append(all, e)
	}
	require.Equal(t, []string{"b/r2", "b/r3"}, keysOf(all))
}

func TestPartitionQuery(t *testing.T) {
	tb := partitionTable(t, 20)
	p := tb.Partition("b")
	for _, tc := range []struct {
		filter string
		kind   PlanKind
		want   int
	}{
		{"", PlanPartitionScan, 20},
		{"N ge 15", PlanPartitionScan, 5},
		{"RowKey ge 'r05' and RowKey lt 'r08'", PlanRange, 3},
		{"RowKey eq 'r07'", PlanPoint, 1},
		{"PartitionKey eq 'a'", PlanEmpty, 0},
		{"PartitionKey ge 'a'", PlanPartitionScan, 20},
		{"N lt 3 or PartitionKey eq 'c'", PlanPartitionScan, 3},
	} {
		t.Run(tc.filter, func(t *testing.T) {
			q := Query{Filter: tc.filter, Top: 4}
			plan, err := p.Plan(ctx, q)
			require.NoError(t, err)
			require.Equal(t, tc.kind, plan.Kind, "%s", plan)
			var got []*Entity
			for e, err := range p.Query(ctx, q) {
				require.NoError(t, err)
				require.Equal(t, "b", e.PartitionKey)
				got = append(got, e)
			}
			require.Len(t, got, tc.want)
			// The pages agree with the iterator.
			var paged []*Entity
			for {
				page, err := p.QueryPage(ctx, q)
				require.NoError(t, err)
				paged = append(paged, page.Entities...)
				if page.Continuation == "" {
					break
				}
				q.Continuation = page.Continuation
			}
			require.Equal(t, keysOf(got), keysOf(paged))
		})
	}
	text, err := p.Explain(Query{Filter: "N gt 3"})
	require.NoError(t, err)
	require.Equal(t, "plan: partition scan\nranges:\n  PartitionKey = 'b'\nresidual: N gt 3\n", text)
	// A token from elsewhere in the table only moves within the partition.
	page, err := tb.QueryPage(ctx, Query{Filter: "PartitionKey eq 'c'", Top: 1})
	require.NoError(t, err)
	page, err = p.QueryPage(ctx, Query{Continuation: page.Continuation})
	require.NoError(t, err)
	require.Empty(t, page.Entities)
	// Filter errors are the user's filter's.
	_, err = p.QueryPage(ctx, Query{Filter: "N eq"})
	requireCode(t, err, CodeInvalidInput)
}
