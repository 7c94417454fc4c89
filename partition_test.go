package tablestore

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/edm"
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

	requireCode(t, p.Insert(ctx, &Entity{RowKey: "r1"}), edm.CodeEntityAlreadyExists)
	require.NoError(t, p.Update(ctx, &Entity{RowKey: "r1", Properties: map[string]any{"Y": int32(2)}}, Merge, e.ETag))
	require.NoError(t, p.Upsert(ctx, &Entity{RowKey: "r2"}, Replace))
	requireCode(t, p.Delete(ctx, "r1", e.ETag), edm.CodeUpdateConditionNotSatisfied)
	require.NoError(t, p.Delete(ctx, "r1", ETagAny))
	requireCode(t, p.Delete(ctx, "r1", ETagAny), edm.CodeResourceNotFound)

	// Another partition's entity is rejected before anything is written.
	other := &Entity{PartitionKey: "a", RowKey: "r9"}
	requireCode(t, p.Insert(ctx, other), edm.CodeInvalidInput)
	requireCode(t, p.Upsert(ctx, other, Merge), edm.CodeInvalidInput)
	requireCode(t, p.Update(ctx, other, Merge, ETagAny), edm.CodeInvalidInput)
	_, err = tb.Get(ctx, "a", "r9", nil)
	requireCode(t, err, edm.CodeResourceNotFound)

	// An invalid partition key fails every operation with the key codes.
	bad := tb.Partition("a/b")
	requireCode(t, bad.Insert(ctx, &Entity{RowKey: "r"}), edm.CodeOutOfRangeInput)
	_, err = bad.Get(ctx, "r", nil)
	requireCode(t, err, edm.CodeOutOfRangeInput)
	_, err = bad.QueryPage(ctx, Query{})
	requireCode(t, err, edm.CodeOutOfRangeInput)

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
	requireCode(t, err, edm.CodeCommandsInBatchActOnDifferentPartitions)
	err = p.NewBatch().Delete("c", "r1", ETagAny).Submit(ctx)
	requireCode(t, err, edm.CodeCommandsInBatchActOnDifferentPartitions)

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
	text, err := explainText(p, Query{Filter: "N gt 3"})
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
	requireCode(t, err, edm.CodeInvalidInput)
}

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
	requireCode(t, p.DeleteRange(ctx, "r2", "r1"), edm.CodeInvalidInput)
	requireCode(t, p.DeleteRange(ctx, "a/b", ""), edm.CodeOutOfRangeInput)
	requireCode(t, p.DeleteRange(ctx, "", "a#b"), edm.CodeOutOfRangeInput)
	requireCode(t, tb.Partition("a?b").DeleteAll(ctx), edm.CodeOutOfRangeInput)
	_, err := p.Get(ctx, "r00", nil)
	require.NoError(t, err, "rejected deletions change nothing")
	requireCode(t, tb.db.Table("missing").Partition("b").DeleteAll(ctx), edm.CodeTableNotFound)
	requireCode(t, tb.db.Table("missing").Partition("b").DeleteRange(ctx, "x", "x"), edm.CodeTableNotFound)
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
		time.Sleep(time.Millisecond) // sleep: the readers run between the deletes
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
	n := deleteEntities(t)
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

// TestPartitionWritesEveryForm: a partition's writes take each form of
// ActionEntity, fill an empty PartitionKey in each (a struct's by
// pointer; one passed by value is not changed), and refuse another
// partition's entity in each with InvalidInput before writing it.
func TestPartitionWritesEveryForm(t *testing.T) {
	tb := partitionTable(t, 0)
	p := tb.Partition("b")
	raw := func(pk, rk string) *RawEntity {
		var r RawEntity
		require.NoError(t, r.UnmarshalJSON([]byte(`{"PartitionKey":"`+pk+`","RowKey":"`+rk+`","N":1}`)))
		return &r
	}
	type row struct {
		PartitionKey, RowKey string
		ETag                 ETag
		N                    int32
	}

	r := raw("", "raw")
	require.NoError(t, p.Insert(ctx, r))
	require.Equal(t, "b", r.PartitionKey)
	require.NotEmpty(t, r.ETag, "a raw entity gets its ETag")
	s := &row{RowKey: "ptr", N: 2}
	require.NoError(t, p.Insert(ctx, StructEntity(s)))
	require.Equal(t, "b", s.PartitionKey)
	require.NotEmpty(t, s.ETag, "a struct by pointer gets its ETag")
	byValue := row{RowKey: "val", N: 3}
	require.NoError(t, p.Upsert(ctx, StructEntity(byValue), Replace))
	require.Empty(t, byValue.PartitionKey, "a struct passed by value is not changed")
	require.NoError(t, p.Update(ctx, StructEntity(&row{RowKey: "ptr", N: 4}), Merge, s.ETag))
	require.NoError(t, p.Update(ctx, raw("", "raw"), Replace, ETagAny))
	for _, rk := range []string{"raw", "ptr", "val"} {
		_, err := p.Get(ctx, rk, nil)
		require.NoError(t, err, rk)
	}
	got, err := GetStruct[row](ctx, tb, "b", "ptr", nil)
	require.NoError(t, err)
	require.Equal(t, int32(4), got.N)

	for name, e := range map[string]ActionEntity{
		"entity": &Entity{PartitionKey: "a", RowKey: "x"},
		"raw":    raw("a", "x"),
		"struct": StructEntity(row{PartitionKey: "a", RowKey: "x"}),
	} {
		requireCode(t, p.Insert(ctx, e), edm.CodeInvalidInput)
		requireCode(t, p.Upsert(ctx, e, Merge), edm.CodeInvalidInput)
		requireCode(t, p.Update(ctx, e, Merge, ETagAny), edm.CodeInvalidInput)
		_, err := tb.Get(ctx, "a", "x", nil)
		requireCode(t, err, edm.CodeResourceNotFound)
		err = p.NewBatch().Insert(&Entity{RowKey: "y"}).Insert(e).Submit(ctx)
		var be *BatchError
		require.ErrorAs(t, err, &be, name)
		require.Equal(t, 1, be.Index, name)
		requireCode(t, err, edm.CodeCommandsInBatchActOnDifferentPartitions)
	}

	// No entity, or a value that is no struct: the write's own errors.
	requireCode(t, p.Insert(ctx, nil), edm.CodeInvalidInput)
	requireCode(t, p.Insert(ctx, (*RawEntity)(nil)), edm.CodeInvalidInput)
	requireCode(t, p.Insert(ctx, StructEntity(nil)), edm.CodeInvalidInput)
	requireCode(t, p.Insert(ctx, StructEntity(7)), edm.CodeInvalidValueType)
	requireCode(t, p.Update(ctx, StructEntity(s), UpdateMode(9), ETagAny), edm.CodeInvalidInput)
}
