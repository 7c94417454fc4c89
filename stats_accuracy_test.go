package tablestore

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/internal/engine"
)

// statsLoadSize is how many entities TestStatsAccuracy loads: 20,000, or
// TABLESTORE_STATS_ENTITIES (100000 for the figure the docs quote).
func statsLoadSize(t *testing.T) int {
	if s := os.Getenv("TABLESTORE_STATS_ENTITIES"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		return n
	}
	return 20_000
}

// TestStatsAccuracy loads a table with an index, in random key order,
// next to two other tables, with the default memtable, a small one (most
// data in L0 files) and a large one (nothing flushed), and checks that
// the table's and the index's estimated counts are within 10 % right
// after the load and after a compaction, with the default counting
// budget (an exact count at 20,000, an extrapolation at 100,000) and
// with a quarter of the entities counted and the rest extrapolated.
// Right after the load, background flushes and compactions are still
// changing the LSM the estimate reads: in seven runs under the race
// detector (21 loads over the three memtables) the index read from 3 %
// low to 1.4 % high.
func TestStatsAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a table")
	}
	n := statsLoadSize(t)
	for _, mem := range []uint64{0, 1 << 20, 64 << 20} {
		t.Run(fmt.Sprintf("memtable=%d", mem), func(t *testing.T) {
			db, err := Open(t.TempDir(), &Options{NoSync: true, MemTableSize: mem})
			require.NoError(t, err)
			defer db.Close()
			before, err := db.CreateTable(ctx, "Aaa")
			require.NoError(t, err)
			tb, err := db.CreateTable(ctx, "Orders")
			require.NoError(t, err)
			after, err := db.CreateTable(ctx, "Zzz")
			require.NoError(t, err)
			require.NoError(t, tb.CreateIndex(ctx, IndexSpec{Name: "ByCustomer", Properties: []string{"Customer"}}))
			for _, other := range []*Table{before, after} {
				for i := range 3 {
					require.NoError(t, other.Insert(ctx, ent("p", fmt.Sprint(i), map[string]any{"Customer": "c"})))
				}
			}
			rng := rand.New(rand.NewPCG(1, 2))
			order := rng.Perm(n)
			for i := 0; i < n; i += 100 {
				for p, group := range groupByPartition(order[i:min(i+100, n)]) {
					b := tb.NewBatch()
					for _, k := range group {
						b.Insert(ent(p, fmt.Sprintf("r%07d", k), map[string]any{
							"Customer": fmt.Sprintf("customer-%05d", k%9973),
							"Total":    float64(k) / 7, "Note": "an order of some goods"}))
					}
					require.NoError(t, b.Submit(ctx))
				}
			}
			check := func(when string) {
				requireEstimates(t, tb, n, when, func(budget int) {
					small, err := before.Stats(ctx)
					require.NoError(t, err)
					require.InDelta(t, 3, small.Entities, 1, "%s, budget %d: small table", when, budget)
				})
			}
			check("after the load")
			require.NoError(t, ttlEngine(db).Compact())
			check("after a compaction")
		})
	}
}

// requireEstimates checks the estimated entities of tb and the entries of
// its first index are within 10 % of n, with the default counting budget
// and with a quarter of n counted; also, when not nil, checks more under
// each budget.
func requireEstimates(t *testing.T, tb *Table, n int, when string, also func(budget int)) {
	t.Helper()
	for _, budget := range []int{0, n / 4} {
		if budget > 0 {
			defer engine.SetStatsCountBudget(budget)()
		}
		st, err := tb.Stats(ctx)
		require.NoError(t, err)
		infos, err := tb.Indexes(ctx)
		require.NoError(t, err)
		t.Logf("%s, budget %d: table %d, index %d", when, budget, st.Entities, infos[0].Entries)
		require.InEpsilon(t, n, st.Entities, 0.1, "%s, budget %d: table", when, budget)
		require.InEpsilon(t, n, infos[0].Entries, 0.1, "%s, budget %d: index", when, budget)
		if also != nil {
			also(budget)
		}
	}
}

// groupByPartition groups keys by partition: ten partitions by the key's
// last digit.
func groupByPartition(ks []int) map[string][]int {
	out := map[string][]int{}
	for _, k := range ks {
		p := "p" + strconv.Itoa(k%10)
		out[p] = append(out[p], k)
	}
	return out
}

// TestStatsAccuracyUneven loads a table as a new user's import would
// (RowKeys numbered without padding, in order) with an index on a
// property only one entity in four has, so that the index's first
// entries (those of the entities without it, with the shortest keys) are
// several times denser on disk than the rest, and checks both estimates
// within 10 % after the load and after a compaction: with a quarter of
// the entities counted and, at TABLESTORE_STATS_ENTITIES=100000, with the
// default budget. Estimating the rest at the first keys' density read the
// index 37 % high here (20,000 entities, after the compaction), 20 % low
// at 100,000 right after the load, and 77 % high in a store so loaded by
// the tablestore command (import, then index create).
func TestStatsAccuracyUneven(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a table")
	}
	n := statsLoadSize(t)
	db, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	tb, err := db.CreateTable(ctx, "People")
	require.NoError(t, err)
	w, err := tb.NewBulkWriter(nil)
	require.NoError(t, err)
	for i := range n {
		props := map[string]any{"Name": fmt.Sprintf("user %d", i), "Age": int32(i % 90)}
		if i%4 == 0 {
			props["Nickname"] = fmt.Sprintf("nick-%s-%d", strings.Repeat(string(rune('a'+i%10)), 8), i)
		}
		require.NoError(t, w.Add(ctx, ent(fmt.Sprintf("pk%05d", i/100), strconv.Itoa(i), props)))
	}
	require.NoError(t, w.Flush(ctx))
	require.NoError(t, tb.CreateIndex(ctx, IndexSpec{Name: "ByNick", Properties: []string{"Nickname"}}))
	check := func(when string) { requireEstimates(t, tb, n, when, nil) }
	check("after the load")
	require.NoError(t, ttlEngine(db).Compact())
	check("after a compaction")

	// While writes go on, one a millisecond: replacing entities keeps
	// their number.
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i = (i + 7919) % n {
			select {
			case <-stop:
				done <- nil
				return
			case <-tick.C:
			}
			props := map[string]any{"Name": fmt.Sprintf("user %d", i), "Age": int32(i % 90)}
			if i%4 == 0 {
				props["Nickname"] = fmt.Sprintf("nick-%s-%d", strings.Repeat(string(rune('a'+i%10)), 8), i)
			}
			if err := tb.Upsert(ctx, ent(fmt.Sprintf("pk%05d", i/100), strconv.Itoa(i), props), Replace); err != nil {
				done <- err
				return
			}
		}
	}()
	check("while writes go on")
	close(stop)
	require.NoError(t, <-done)
}
