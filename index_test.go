package tablestore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/engine"
)

// collect runs q to its end, page by page, and returns the entities and
// the number of pages.
func collect(t *testing.T, tbl *Table, q Query) ([]*Entity, int) {
	t.Helper()
	var out []*Entity
	pages := 0
	for {
		page, err := tbl.QueryPage(ctx, q)
		require.NoError(t, err, "filter %s", q.Filter)
		pages++
		out = append(out, page.Entities...)
		if page.Continuation == "" {
			return out, pages
		}
		require.Less(t, pages, 10000, "too many pages")
		q.Continuation = page.Continuation
	}
}

func checkClean(t *testing.T, db *DB) {
	t.Helper()
	rep, err := db.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged, "check: %+v", rep.Damaged)
}

func TestIndexBasics(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "Items")
	require.NoError(t, err)
	colors := []string{"red", "green", "blue"}
	for i := range 60 {
		e := &Entity{PartitionKey: fmt.Sprintf("p%d", i%4), RowKey: fmt.Sprintf("r%02d", i),
			Properties: map[string]any{"Color": colors[i%3], "Size": int32(i % 5)}}
		if i%7 == 0 {
			delete(e.Properties, "Color")
		}
		require.NoError(t, tbl.Insert(ctx, e))
	}
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByColor", Properties: []string{"Color"}}))
	infos, err := tbl.Indexes(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 1)
	require.Equal(t, IndexReady, infos[0].State)
	require.Equal(t, int64(60), infos[0].Done)
	require.Equal(t, int64(60), infos[0].Total)

	q := Query{Filter: "Color eq 'red' and Size gt 1", Top: 3}
	p, err := tbl.Plan(ctx, q)
	require.NoError(t, err)
	require.Equal(t, "ByColor", p.Index)
	require.Equal(t, "Size gt 1", p.Residual)
	require.Equal(t, "plan: index ByColor (Color)\nvalues:\n  Color = 'red'\nranges:\n  all\nresidual: Size gt 1\n", p.String())
	got, _ := collect(t, tbl, q)
	require.NoError(t, tbl.DropIndex(ctx, "bycolor"))
	p, err = tbl.Plan(ctx, q)
	require.NoError(t, err)
	require.Equal(t, "", p.Index)
	want, _ := collect(t, tbl, q)
	require.NotEmpty(t, want)
	require.Equal(t, keysOf(want), keysOf(got))
	requireCode(t, tbl.DropIndex(ctx, "ByColor"), edm.CodeResourceNotFound)
	infos, err = tbl.Indexes(ctx)
	require.NoError(t, err)
	require.Empty(t, infos)
	checkClean(t, db)
}

func TestIndexSpecRules(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "Rules")
	require.NoError(t, err)
	for _, tc := range []struct {
		spec IndexSpec
		code Code
	}{
		{IndexSpec{Name: "", Properties: []string{"A"}}, edm.CodeInvalidInput},
		{IndexSpec{Name: "1a", Properties: []string{"A"}}, edm.CodeInvalidInput},
		{IndexSpec{Name: "a-b", Properties: []string{"A"}}, edm.CodeInvalidInput},
		{IndexSpec{Name: strings.Repeat("a", 64), Properties: []string{"A"}}, edm.CodeInvalidInput},
		{IndexSpec{Name: "a"}, edm.CodeInvalidInput},
		{IndexSpec{Name: "a", Properties: []string{"A", "B", "C", "D", "E"}}, edm.CodeInvalidInput},
		{IndexSpec{Name: "a", Properties: []string{"A", "A"}}, edm.CodeInvalidInput},
		{IndexSpec{Name: "a", Properties: []string{"PartitionKey"}}, edm.CodeInvalidInput},
		{IndexSpec{Name: "a", Properties: []string{"Timestamp"}}, edm.CodeInvalidInput},
		{IndexSpec{Name: "a", Properties: []string{"a-b"}}, edm.CodePropertyNameInvalid},
		{IndexSpec{Name: "a", Properties: []string{strings.Repeat("p", 256)}}, edm.CodePropertyNameTooLong},
	} {
		requireCode(t, tbl.CreateIndex(ctx, tc.spec), tc.code)
	}
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "A_1", Properties: []string{"A", "B", "C", "D"}}))
	requireCode(t, tbl.CreateIndex(ctx, IndexSpec{Name: "a_1", Properties: []string{"B"}}), edm.CodeInvalidInput)
	requireCode(t, db.Table("Missing").CreateIndex(ctx, IndexSpec{Name: "a", Properties: []string{"A"}}), edm.CodeTableNotFound)
	_, err = db.Table("Missing").Indexes(ctx)
	requireCode(t, err, edm.CodeTableNotFound)
	requireCode(t, db.Table("Missing").DropIndex(ctx, "a"), edm.CodeTableNotFound)
	_, err = tbl.QueryPage(ctx, Query{Index: "nope"})
	requireCode(t, err, edm.CodeResourceNotFound)
	_, err = tbl.QueryPage(ctx, Query{Index: "A_1", Reverse: true})
	requireCode(t, err, edm.CodeInvalidInput)
}

func TestIndexUnique(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "Users")
	require.NoError(t, err)
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByEmail", Properties: []string{"Email"}, Unique: true}))
	ins := func(pk, rk string, props map[string]any) error {
		return tbl.Insert(ctx, &Entity{PartitionKey: pk, RowKey: rk, Properties: props})
	}
	require.NoError(t, ins("a", "1", map[string]any{"Email": "x@y"}))
	err = ins("b", "2", map[string]any{"Email": "x@y"})
	requireCode(t, err, edm.CodeEntityAlreadyExists)
	require.Contains(t, err.Error(), `unique index "ByEmail"`)
	require.Contains(t, err.Error(), `("a", "1")`)
	// Types differ: another value. Absent: exempt.
	require.NoError(t, ins("b", "2", map[string]any{"Email": int32(5)}))
	require.NoError(t, ins("b", "3", map[string]any{"Email": int64(5)}))
	require.NoError(t, ins("b", "4", nil))
	require.NoError(t, ins("b", "5", nil))
	// An update onto a held value fails; the entity keeps its own.
	e, err := tbl.Get(ctx, "b", "2", nil)
	require.NoError(t, err)
	e.Properties["Email"] = "x@y"
	requireCode(t, tbl.Update(ctx, e, Merge, ETagAny), edm.CodeEntityAlreadyExists)
	e.Properties["Email"] = int32(5)
	e.Properties["Other"] = true
	require.NoError(t, tbl.Update(ctx, e, Merge, ETagAny))
	// In a transaction: a swap through a third value works in order, a
	// clash reports its action.
	err = tbl.SubmitTransaction(ctx, []TransactionAction{
		{Type: ActionUpsertMerge, Entity: &Entity{PartitionKey: "a", RowKey: "1", Properties: map[string]any{"Email": "tmp"}}},
		{Type: ActionUpsertReplace, Entity: &Entity{PartitionKey: "a", RowKey: "9", Properties: map[string]any{"Email": "x@y"}}},
	})
	require.NoError(t, err)
	err = tbl.SubmitTransaction(ctx, []TransactionAction{
		{Type: ActionInsert, Entity: &Entity{PartitionKey: "a", RowKey: "10", Properties: map[string]any{"Email": "new"}}},
		{Type: ActionInsert, Entity: &Entity{PartitionKey: "a", RowKey: "11", Properties: map[string]any{"Email": "new"}}},
	})
	var be *BatchError
	require.True(t, errors.As(err, &be), "%v", err)
	require.Equal(t, 1, be.Index)
	requireCode(t, err, edm.CodeEntityAlreadyExists)
	// The first failing action wins: a missing entity at 0 before a
	// clash at 1, a clash at 0 before a missing entity at 1.
	err = tbl.SubmitTransaction(ctx, []TransactionAction{
		{Type: ActionDelete, Entity: &Entity{PartitionKey: "a", RowKey: "zz"}, IfMatch: ETagAny},
		{Type: ActionInsert, Entity: &Entity{PartitionKey: "a", RowKey: "12", Properties: map[string]any{"Email": "tmp"}}},
	})
	require.True(t, errors.As(err, &be))
	require.Equal(t, 0, be.Index)
	requireCode(t, err, edm.CodeResourceNotFound)
	err = tbl.SubmitTransaction(ctx, []TransactionAction{
		{Type: ActionInsert, Entity: &Entity{PartitionKey: "a", RowKey: "12", Properties: map[string]any{"Email": "tmp"}}},
		{Type: ActionDelete, Entity: &Entity{PartitionKey: "a", RowKey: "zz"}, IfMatch: ETagAny},
	})
	require.True(t, errors.As(err, &be))
	require.Equal(t, 0, be.Index)
	requireCode(t, err, edm.CodeEntityAlreadyExists)
	// Deleting the holder frees the value; a range deletion too.
	require.NoError(t, tbl.Delete(ctx, "a", "9", ETagAny))
	require.NoError(t, ins("c", "1", map[string]any{"Email": "x@y"}))
	require.NoError(t, tbl.Partition("c").DeleteAll(ctx))
	require.NoError(t, ins("d", "1", map[string]any{"Email": "x@y"}))
	checkClean(t, db)

	// A unique build over duplicates fails and leaves nothing.
	require.NoError(t, ins("e", "1", map[string]any{"Tag": "same"}))
	require.NoError(t, ins("f", "1", map[string]any{"Tag": "same"}))
	err = tbl.CreateIndex(ctx, IndexSpec{Name: "ByTag", Properties: []string{"Tag"}, Unique: true})
	requireCode(t, err, edm.CodeEntityAlreadyExists)
	require.Contains(t, err.Error(), `"ByTag"`)
	infos, err := tbl.Indexes(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 1)
	// Partitioned unique: unique within each partition.
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "LocalTag", Properties: []string{"Tag"}, Unique: true, Partitioned: true}))
	require.NoError(t, ins("e", "2", map[string]any{"Tag": "other"}))
	requireCode(t, ins("e", "3", map[string]any{"Tag": "same"}), edm.CodeEntityAlreadyExists)
	checkClean(t, db)
}

// TestIndexRangeDeletes checks that entries left by range deletions are
// never returned, pass Check while pending, and are swept.
func TestIndexRangeDeletes(t *testing.T) {
	db := openTestDB(t, &Options{PageScanLimit: 3})
	tbl, err := db.CreateTable(ctx, "Logs")
	require.NoError(t, err)
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByLevel", Properties: []string{"Level"}}))
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "LocalLevel", Properties: []string{"Level"}, Partitioned: true}))
	for p := range 3 {
		for r := range 10 {
			require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: fmt.Sprintf("p%d", p), RowKey: fmt.Sprintf("r%d", r),
				Properties: map[string]any{"Level": []string{"info", "warn"}[r%2]}}))
		}
	}
	require.NoError(t, tbl.Partition("p0").DeleteAll(ctx))
	require.NoError(t, tbl.Partition("p1").DeleteRange(ctx, "r2", "r6"))
	// Insert again with other values into the deleted range.
	require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: "p1", RowKey: "r3", Properties: map[string]any{"Level": "info"}}))
	checkClean(t, db)
	got, _ := collect(t, tbl, Query{Filter: "Level eq 'warn'", Top: 2})
	require.Equal(t, []string{"p1/r1", "p1/r7", "p1/r9", "p2/r1", "p2/r3", "p2/r5", "p2/r7", "p2/r9"}, keysOf(got))
	got, _ = collect(t, tbl, Query{Filter: "PartitionKey eq 'p1' and Level eq 'info'", Top: 2})
	require.Equal(t, []string{"p1/r0", "p1/r3", "p1/r6", "p1/r8"}, keysOf(got))
	got, _ = collect(t, tbl, Query{Index: "ByLevel", Top: 4})
	require.Len(t, got, 6+1+10) // p1 keeps 6 and gains r3 again; p2 keeps 10
	e := db.conn.(*engine.Engine)
	require.NoError(t, e.SweepIndexes(ctx))
	checkClean(t, db)
	got, _ = collect(t, tbl, Query{Index: "ByLevel", Filter: "Level ge 'j'"})
	require.Equal(t, []string{"p1/r1", "p1/r7", "p1/r9", "p2/r1", "p2/r3", "p2/r5", "p2/r7", "p2/r9"}, keysOf(got))
}

// TestIndexOrderRead checks Query.Index: index order, ranges, tokens.
func TestIndexOrderRead(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "Scores")
	require.NoError(t, err)
	for i := range 30 {
		require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: fmt.Sprintf("p%d", i%3), RowKey: fmt.Sprintf("r%02d", i),
			Properties: map[string]any{"Score": int64((i * 7) % 10), "Team": []string{"a", "b"}[i%2]}}))
	}
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByTeamScore", Properties: []string{"Team", "Score"}}))
	q := Query{Index: "ByTeamScore", Filter: "Team eq 'a' and Score ge 3L and Score lt 7", Top: 2}
	p, err := tbl.Plan(ctx, q)
	require.NoError(t, err)
	require.Equal(t, "ByTeamScore", p.Index)
	require.Equal(t, []string{"Team = 'a', 3L <= Score < 7L", "Team = 'a', 3.0 <= Score < 7.0"}, p.Ranges)
	require.Equal(t, "", p.Residual)
	got, pages := collect(t, tbl, q)
	require.Greater(t, pages, 2)
	var prev int64 = -1
	for _, e := range got {
		s := e.Properties["Score"].(int64)
		require.Equal(t, "a", e.Properties["Team"])
		require.True(t, s >= 3 && s < 7 && s >= prev, "score %d after %d", s, prev)
		prev = s
	}
	require.Len(t, got, 6)
	// Iterating gives the same; a plain token is refused, and an index
	// token by a plain query.
	var it []*Entity
	for e, err := range tbl.Query(ctx, q) {
		require.NoError(t, err)
		it = append(it, e)
	}
	require.Equal(t, keysOf(got), keysOf(it))
	page, err := tbl.QueryPage(ctx, Query{Top: 1})
	require.NoError(t, err)
	_, err = tbl.QueryPage(ctx, Query{Index: "ByTeamScore", Continuation: page.Continuation})
	requireCode(t, err, edm.CodeInvalidInput)
	page, err = tbl.QueryPage(ctx, q)
	require.NoError(t, err)
	require.NotEmpty(t, page.Continuation)
	_, err = tbl.QueryPage(ctx, Query{Continuation: page.Continuation})
	requireCode(t, err, edm.CodeInvalidInput)
	// A dropped index fails a query in index order.
	require.NoError(t, tbl.DropIndex(ctx, "ByTeamScore"))
	q.Continuation = page.Continuation
	_, err = tbl.QueryPage(ctx, q)
	requireCode(t, err, edm.CodeResourceNotFound)
}

// TestIndexTokensCrossover checks that key-order reads through an index
// and plain reads share tokens: a query resumed after its index is
// created or dropped goes on where it was.
func TestIndexTokensCrossover(t *testing.T) {
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "Cross")
	require.NoError(t, err)
	for i := range 40 {
		require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: fmt.Sprintf("p%d", i%5), RowKey: fmt.Sprintf("r%02d", i),
			Properties: map[string]any{"K": int32(i % 3)}}))
	}
	q := Query{Filter: "K eq 1", Top: 3}
	want, _ := collect(t, tbl, q)
	page, err := tbl.QueryPage(ctx, q)
	require.NoError(t, err)
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByK", Properties: []string{"K"}}))
	p, err := tbl.Plan(ctx, q)
	require.NoError(t, err)
	require.Equal(t, "ByK", p.Index)
	got := page.Entities
	q2 := q
	q2.Continuation = page.Continuation
	for i := 0; ; i++ {
		page, err := tbl.QueryPage(ctx, q2)
		require.NoError(t, err)
		require.LessOrEqual(t, len(page.Entities), 3)
		got = append(got, page.Entities...)
		if page.Continuation == "" {
			break
		}
		q2.Continuation = page.Continuation
		if i == 1 {
			require.NoError(t, tbl.DropIndex(ctx, "ByK"))
		}
	}
	require.Equal(t, keysOf(want), keysOf(got))
}

// TestIndexUniqueConcurrent races writers in different partitions for
// the same values of a unique index: for each value exactly one wins.
// Run it with -race.
func TestIndexUniqueConcurrent(t *testing.T) {
	db := openTestDB(t, &Options{NoSync: true})
	tbl, err := db.CreateTable(ctx, "Race")
	require.NoError(t, err)
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "U", Properties: []string{"V"}, Unique: true}))
	const writers, values = 8, 50
	wins := make([][]int, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for v := range values {
				var err error
				if v%2 == 0 {
					err = tbl.Insert(ctx, &Entity{PartitionKey: fmt.Sprintf("w%d", w), RowKey: fmt.Sprintf("%03d", v),
						Properties: map[string]any{"V": int64(v)}})
				} else {
					err = tbl.SubmitTransaction(ctx, []TransactionAction{
						{Type: ActionUpsertReplace, Entity: &Entity{PartitionKey: fmt.Sprintf("w%d", w), RowKey: fmt.Sprintf("%03d", v),
							Properties: map[string]any{"V": int64(v)}}},
						{Type: ActionUpsertMerge, Entity: &Entity{PartitionKey: fmt.Sprintf("w%d", w), RowKey: fmt.Sprintf("x%03d", v),
							Properties: map[string]any{"Other": int64(v)}}},
					})
				}
				switch {
				case err == nil:
					wins[w] = append(wins[w], v)
				case !errors.Is(err, ErrEntityAlreadyExists):
					t.Errorf("writer %d value %d: %v", w, v, err)
				}
			}
		}()
	}
	wg.Wait()
	count := make([]int, values)
	for _, ws := range wins {
		for _, v := range ws {
			count[v]++
		}
	}
	for v, n := range count {
		require.Equal(t, 1, n, "value %d won %d times", v, n)
	}
	all, _ := collect(t, tbl, Query{Filter: "V ge 0L"})
	require.Len(t, all, values)
	checkClean(t, db)
}

// TestIndexOnlineBuild builds an index while writers change the table,
// then checks it against the table.
func TestIndexOnlineBuild(t *testing.T) {
	db := openTestDB(t, &Options{NoSync: true})
	tbl, err := db.CreateTable(ctx, "Online")
	require.NoError(t, err)
	for i := range 3000 {
		require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: fmt.Sprintf("p%d", i%50), RowKey: fmt.Sprintf("r%04d", i),
			Properties: map[string]any{"N": int32(i % 17)}}))
	}
	ctx2, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var progress []int64
	var writes atomic.Int64
	wg.Add(2)
	go func() {
		defer wg.Done()
		for i := 0; ctx2.Err() == nil; i++ {
			writes.Add(1)
			pk := fmt.Sprintf("p%d", i%50)
			rk := fmt.Sprintf("r%04d", (i*37)%3500)
			switch i % 4 {
			case 0:
				_ = tbl.Upsert(ctx, &Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"N": int32(i % 13)}}, Replace)
			case 1:
				_ = tbl.Delete(ctx, pk, rk, ETagAny)
			case 2:
				_ = tbl.Upsert(ctx, &Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"M": true}}, Merge)
			case 3:
				if i%40 == 3 {
					_ = tbl.Partition(pk).DeleteRange(ctx, "r1", "r12")
				}
			}
		}
	}()
	go func() {
		defer wg.Done()
		for ctx2.Err() == nil {
			infos, err := tbl.Indexes(ctx)
			if err == nil && len(infos) == 1 {
				progress = append(progress, infos[0].Done)
			}
		}
	}()
	restore := engine.SetBuildChunk(64)
	defer restore()
	// Each step of the build waits for a few writes.
	defer engine.SetBuildHook(func(int64) {
		for w := writes.Load(); writes.Load() < w+3 && ctx2.Err() == nil; {
			runtime.Gosched()
		}
	})()
	before := writes.Load()
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByN", Properties: []string{"N"}}))
	during := writes.Load() - before
	cancel()
	wg.Wait()
	require.True(t, slices.IsSorted(progress), "progress goes forward")
	require.Greater(t, during, int64(10), "writes went on during the build")
	t.Logf("%d writes during the build", during)
	checkClean(t, db)
	all, _ := collect(t, tbl, Query{})
	for n := range int32(17) {
		want := 0
		for _, e := range all {
			if v, ok := e.Properties["N"].(int32); ok && v == n {
				want++
			}
		}
		got, _ := collect(t, tbl, Query{Filter: fmt.Sprintf("N eq %d", n)})
		require.Len(t, got, want, "N eq %d", n)
	}
}

// TestIndexUniqueBuildRace builds a unique index while writers in many
// partitions write values that may clash: either the build fails with
// EntityAlreadyExists and leaves nothing, or it succeeds and no two
// entities hold one value, then or after more writes. Run it with -race.
func TestIndexUniqueBuildRace(t *testing.T) {
	defer engine.SetBuildChunk(16)()
	for round := range 6 {
		db := openTestDB(t, &Options{NoSync: true})
		tbl, err := db.CreateTable(ctx, "Race")
		require.NoError(t, err)
		// Distinct values to start with, so the build can succeed.
		for i := range 200 {
			require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: fmt.Sprintf("p%d", i%20), RowKey: fmt.Sprintf("r%03d", i),
				Properties: map[string]any{"V": int64(i)}}))
		}
		stop := make(chan struct{})
		wrote := make(chan struct{}) // a write was done, if the test is waiting for one
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					// Values 200..259 clash among writers; once the index is
					// ready, the unique check refuses clashes.
					e := &Entity{PartitionKey: fmt.Sprintf("w%d-%d", w, i%5), RowKey: fmt.Sprintf("%d", i),
						Properties: map[string]any{"V": int64(200 + (i*7+w*13)%60)}}
					if err := tbl.Upsert(ctx, e, Replace); err != nil && !errors.Is(err, ErrEntityAlreadyExists) {
						t.Errorf("upsert: %v", err)
						return
					}
					select {
					case wrote <- struct{}{}:
					default:
					}
				}
			}()
		}
		buildErr := tbl.CreateIndex(ctx, IndexSpec{Name: "U", Properties: []string{"V"}, Unique: true})
		// Writes after the build: of 20 writes signalled from now, at
		// most one a writer was done before.
		for range 20 {
			select {
			case <-wrote:
			case <-time.After(10 * time.Second):
				t.Fatal("no writes after the build")
			}
		}
		close(stop)
		wg.Wait()
		infos, err := tbl.Indexes(ctx)
		require.NoError(t, err)
		if buildErr != nil {
			requireCode(t, buildErr, edm.CodeEntityAlreadyExists)
			require.Empty(t, infos)
		} else {
			require.Len(t, infos, 1)
			all, _ := collect(t, tbl, Query{})
			seen := map[int64]string{}
			for _, e := range all {
				v := e.Properties["V"].(int64)
				if o, ok := seen[v]; ok {
					t.Fatalf("round %d: value %d held by %s and %s/%s", round, v, o, e.PartitionKey, e.RowKey)
				}
				seen[v] = e.PartitionKey + "/" + e.RowKey
			}
		}
		t.Logf("round %d: build %v", round, buildErr)
		checkClean(t, db)
	}
}

// TestIndexesNotImplemented checks a driver without driver.Indexer (as
// the remote Azure driver): index management is NotImplemented, queries
// plan without indexes, and Query.Index is NotImplemented.
func TestIndexesNotImplemented(t *testing.T) {
	db, err := OpenDriver(failingConn{nil}, nil)
	require.NoError(t, err)
	tb := db.Table("items")
	requireCode(t, tb.CreateIndex(ctx, IndexSpec{Name: "a", Properties: []string{"A"}}), edm.CodeNotImplemented)
	requireCode(t, tb.DropIndex(ctx, "a"), edm.CodeNotImplemented)
	_, err = tb.Indexes(ctx)
	requireCode(t, err, edm.CodeNotImplemented)
	p, err := tb.Plan(ctx, Query{Filter: "A eq 1"})
	require.NoError(t, err)
	require.Equal(t, "", p.Index)
	_, err = tb.QueryPage(ctx, Query{Index: "a"})
	requireCode(t, err, edm.CodeNotImplemented)
}

func TestIndexSizes(t *testing.T) {
	db := openTestDB(t, &Options{NoSync: true, MemTableSize: 1 << 20})
	tbl, err := db.CreateTable(ctx, "Sized")
	require.NoError(t, err)
	for p := range 40 {
		b := tbl.NewBatch()
		for r := range 100 {
			b.Insert(&Entity{PartitionKey: fmt.Sprint(p), RowKey: fmt.Sprint(r),
				Properties: map[string]any{"Email": fmt.Sprintf("user%d.%d@example.com", p, r), "Team": fmt.Sprint(r % 3)}})
		}
		require.NoError(t, b.Submit(ctx))
	}
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByEmail", Properties: []string{"Email"}}))
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByTeam", Properties: []string{"Team"}, Partitioned: true}))
	// Estimates come from the files' metadata: compacted, every file
	// holds one table's or one index's keys and the figures are steady.
	require.NoError(t, db.conn.(interface{ Flush() error }).Flush())
	require.NoError(t, db.conn.(interface{ Compact() error }).Compact())

	infos, err := tbl.Indexes(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 2)
	st, err := tbl.Stats(ctx)
	require.NoError(t, err)
	for _, in := range infos {
		// A small index is counted entry by entry.
		require.Equal(t, int64(4000), in.Entries, in.Name)
		require.Greater(t, in.Bytes, int64(10_000), in.Name)
		// Entries are smaller than the entities they index.
		require.Less(t, in.Bytes, st.Bytes, in.Name)
	}
	// The longer values take more space.
	require.Greater(t, infos[0].Bytes, infos[1].Bytes)

	require.NoError(t, tbl.DropIndex(ctx, "ByEmail"))
	infos, err = tbl.Indexes(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 1)
	require.Equal(t, "ByTeam", infos[0].Name)
	require.Greater(t, infos[0].Entries, int64(0))
}
