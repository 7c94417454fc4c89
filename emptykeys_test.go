package tablestore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/edm"
)

// emptyKeyPairs are the keys TestEmptyKeys writes, in key order.
var emptyKeyPairs = [][2]string{{"", ""}, {"", "r"}, {"p", ""}, {"p", "r"}}

// pairsOf lists the keys of es as pairs.
func pairsOf(es []*Entity) [][2]string {
	out := [][2]string{}
	for _, e := range es {
		out = append(out, [2]string{e.PartitionKey, e.RowKey})
	}
	return out
}

// TestEmptyKeys writes, reads, queries, pages, indexes and deletes
// entities whose PartitionKey or RowKey is "", which Azure allows.
func TestEmptyKeys(t *testing.T) {
	db, err := OpenInMemory(nil)
	require.NoError(t, err)
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Empty")
	require.NoError(t, err)
	require.NoError(t, tb.CreateIndex(ctx, IndexSpec{Name: "ByV", Properties: []string{"V"}}))
	require.NoError(t, tb.CreateIndex(ctx, IndexSpec{Name: "ByW", Properties: []string{"W"}, Partitioned: true}))
	for i, k := range emptyKeyPairs {
		require.NoError(t, tb.Insert(ctx, ent(k[0], k[1], map[string]any{"V": int32(1), "W": int32(i)})))
	}
	requireCode(t, tb.Insert(ctx, ent("", "", nil)), edm.CodeEntityAlreadyExists)
	got, err := tb.Get(ctx, "", "", nil)
	require.NoError(t, err)
	require.Equal(t, int32(0), got.Properties["W"])
	require.NoError(t, tb.Update(ctx, ent("", "", map[string]any{"X": "x"}), Merge, got.ETag))
	got, err = tb.Get(ctx, "", "", nil)
	require.NoError(t, err)
	require.Equal(t, "x", got.Properties["X"])

	type row struct {
		PartitionKey, RowKey string
		V                    int32
	}
	require.NoError(t, tb.UpsertStruct(ctx, row{V: 1}, Merge))
	r, err := GetStruct[row](ctx, tb, "", "", nil)
	require.NoError(t, err)
	require.Equal(t, row{V: 1}, r)

	all := func(q Query) [][2]string {
		var es []*Entity
		cont := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 20, "the query does not end")
			q.Continuation = cont
			page, err := tb.QueryPage(ctx, q)
			require.NoError(t, err)
			es = append(es, page.Entities...)
			if cont = page.Continuation; cont == "" {
				return pairsOf(es)
			}
		}
	}
	reversed := [][2]string{emptyKeyPairs[3], emptyKeyPairs[2], emptyKeyPairs[1], emptyKeyPairs[0]}
	for _, top := range []int{1, 2, 1000} {
		require.Equal(t, emptyKeyPairs, all(Query{Top: top}), "top %d", top)
		// A reverse read's last page resumes at ('', ''), the first key.
		require.Equal(t, reversed, all(Query{Top: top, Reverse: true}), "top %d reverse", top)
		require.Equal(t, emptyKeyPairs, all(Query{Top: top, Filter: "V eq 1"}), "top %d by index", top)
	}
	for filter, want := range map[string][][2]string{
		"PartitionKey eq ''":                              emptyKeyPairs[:2],
		"PartitionKey eq '' and RowKey eq ''":             emptyKeyPairs[:1],
		"PartitionKey eq 'p' and RowKey eq ''":            emptyKeyPairs[2:3],
		"RowKey eq ''":                                    {emptyKeyPairs[0], emptyKeyPairs[2]},
		"PartitionKey gt ''":                              emptyKeyPairs[2:],
		"PartitionKey eq '' and W ge 0":                   emptyKeyPairs[:2],
		"PartitionKey eq '' and RowKey lt 'r' and V eq 1": emptyKeyPairs[:1],
	} {
		require.Equal(t, want, all(Query{Filter: filter}), filter)
	}
	plan, err := explainText(tb, Query{Filter: "PartitionKey eq '' and RowKey eq ''"})
	require.NoError(t, err)
	require.Contains(t, plan, "plan: point")
	plan, err = explainText(tb, Query{Filter: "PartitionKey eq ''"})
	require.NoError(t, err)
	require.Contains(t, plan, "plan: partition scan")

	page, err := tb.Partition("").QueryPage(ctx, Query{Filter: "W ge 0"})
	require.NoError(t, err)
	require.Equal(t, emptyKeyPairs[:2], pairsOf(page.Entities))

	tok, err := ContinuationFromNext("", "r")
	require.NoError(t, err)
	page, err = tb.QueryPage(ctx, Query{Continuation: tok})
	require.NoError(t, err)
	require.Equal(t, emptyKeyPairs[1:], pairsOf(page.Entities))

	require.NoError(t, tb.Partition("").DeleteRange(ctx, "", "a"))
	require.Equal(t, emptyKeyPairs[1:], all(Query{}))
	require.Equal(t, emptyKeyPairs[1:], all(Query{Filter: "V eq 1"}))
	require.NoError(t, tb.Delete(ctx, "p", "", ETagAny))
	require.NoError(t, tb.NewBatch().Delete("", "r", ETagAny).Submit(ctx))
	require.Equal(t, emptyKeyPairs[3:], all(Query{Filter: "V eq 1"}))
	rep, err := db.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
}

// TestEmptyKeysFeedAndTTL checks that the change feed records writes of
// entities with empty keys and that they expire and are swept.
func TestEmptyKeysFeedAndTTL(t *testing.T) {
	clk := newFakeClock()
	db, err := Open(t.TempDir(), &Options{Clock: clk.now})
	require.NoError(t, err)
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Empty")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{Images: ImagesNew}))
	require.NoError(t, tb.SetTTL(ctx, TTL{Default: time.Hour}))
	require.NoError(t, tb.Insert(ctx, ent("", "", map[string]any{"V": int32(1)})))
	require.NoError(t, tb.Insert(ctx, ent("", "r", nil)))
	require.NoError(t, tb.Delete(ctx, "", "r", ETagAny))
	var seen []string
	for c, err := range tb.Changes(ctx, ChangesQuery{}) {
		require.NoError(t, err)
		seen = append(seen, c.Op.String()+" "+c.PartitionKey+"/"+c.RowKey)
		if c.Op == ChangeInsert && c.RowKey == "" {
			require.Equal(t, int32(1), c.Entity.Properties["V"])
		}
	}
	require.Equal(t, []string{"insert /", "insert /r", "delete /r"}, seen)

	clk.add(2 * time.Hour)
	_, err = tb.Get(ctx, "", "", nil)
	requireCode(t, err, edm.CodeResourceNotFound)
	require.Eventually(t, func() bool { return ttlEngine(db).Swept() == 1 }, 10*time.Second, time.Millisecond)
	n, err := tb.ExpiredCount(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}
