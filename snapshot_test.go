package tablestore

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
)

// snapshotRows reads every entity of a table through q, page by page,
// as "pk/rk=n".
func snapshotRows(t *testing.T, tb *Table, q Query) []string {
	t.Helper()
	var out []string
	for {
		page, err := tb.QueryPage(ctx, q)
		require.NoError(t, err)
		for _, e := range page.Entities {
			out = append(out, fmt.Sprintf("%s/%s=%v", e.PartitionKey, e.RowKey, e.Properties["n"]))
		}
		if page.Continuation == "" {
			return out
		}
		q.Continuation = page.Continuation
	}
}

func TestSnapshotShowsOneInstant(t *testing.T) {
	db := openTestDB(t, nil)
	a, err := db.CreateTable(ctx, "Alpha")
	require.NoError(t, err)
	gone, err := db.CreateTable(ctx, "Gone")
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, a.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: map[string]any{"n": int32(i)}}))
	}
	require.NoError(t, gone.Insert(ctx, &Entity{PartitionKey: "g", RowKey: "1", Properties: map[string]any{"n": int32(7)}}))

	snap, err := db.Snapshot(ctx)
	require.NoError(t, err)
	defer snap.Close()

	// Everything after the snapshot: a rewrite, a delete, a range
	// deletion, a dropped table and a new one.
	require.NoError(t, a.Upsert(ctx, &Entity{PartitionKey: "p", RowKey: "0", Properties: map[string]any{"n": int32(100)}}, Replace))
	require.NoError(t, a.Delete(ctx, "p", "1", "*"))
	require.NoError(t, a.Partition("p").DeleteRange(ctx, "3", ""))
	require.NoError(t, db.DeleteTable(ctx, "Gone"))
	_, err = db.CreateTable(ctx, "Later")
	require.NoError(t, err)

	st := snap.Table("Alpha")
	want := []string{"p/0=0", "p/1=1", "p/2=2", "p/3=3", "p/4=4"}
	require.Equal(t, want, snapshotRows(t, st, Query{Top: 2}), "paged query")
	require.Equal(t, []string{"p/4=4", "p/3=3", "p/2=2", "p/1=1", "p/0=0"}, snapshotRows(t, st, Query{Top: 3, Reverse: true}), "reverse query")
	require.Equal(t, []string{"p/1=1"}, snapshotRows(t, st, Query{Filter: "RowKey eq '1'"}), "point read")
	require.Equal(t, []string{"p/2=2", "p/3=3"}, snapshotRows(t, st, Query{Filter: "n ge 2 and n lt 4"}), "filtered scan")
	var n int
	for e, err := range st.Query(ctx, Query{}) {
		require.NoError(t, err)
		require.Equal(t, want[n], fmt.Sprintf("%s/%s=%v", e.PartitionKey, e.RowKey, e.Properties["n"]))
		n++
	}
	require.Equal(t, len(want), n)
	e, err := st.Get(ctx, "p", "0", nil)
	require.NoError(t, err)
	require.Equal(t, int32(0), e.Properties["n"])

	// The catalog as of the instant.
	require.Equal(t, []string{"Alpha", "Gone"}, collectNames(t, snap))
	g, err := snap.Table("gone").Get(ctx, "g", "1", nil)
	require.NoError(t, err, "a table dropped after the snapshot is in it")
	require.Equal(t, int32(7), g.Properties["n"])
	_, err = snap.Table("Later").Get(ctx, "x", "y", nil)
	requireCode(t, err, edm.CodeTableNotFound)
	ok, err := snap.TableExists(ctx, "Later")
	require.NoError(t, err)
	require.False(t, ok)

	// The live store moved on.
	require.Equal(t, []string{"p/0=100", "p/2=2"}, snapshotRows(t, a, Query{}))
}

func collectNames(t *testing.T, s *Snapshot) []string {
	t.Helper()
	var names []string
	for n, err := range s.TableNames(ctx, "") {
		require.NoError(t, err)
		names = append(names, n)
	}
	return names
}

func TestSnapshotRefusesWrites(t *testing.T) {
	db := openTestDB(t, nil)
	_, err := db.CreateTable(ctx, "Alpha")
	require.NoError(t, err)
	snap, err := db.Snapshot(ctx)
	require.NoError(t, err)
	defer snap.Close()
	st := snap.Table("Alpha")
	requireCode(t, st.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "r"}), edm.CodeOperationNotAllowedOnCurrentTarget)
	requireCode(t, st.Delete(ctx, "p", "r", "*"), edm.CodeOperationNotAllowedOnCurrentTarget)
	requireCode(t, st.SubmitTransaction(ctx, []TransactionAction{{Type: ActionInsert, Entity: &Entity{PartitionKey: "p", RowKey: "r"}}}), edm.CodeOperationNotAllowedOnCurrentTarget)
	_, err = snap.db.CreateTable(ctx, "Other")
	requireCode(t, err, edm.CodeOperationNotAllowedOnCurrentTarget)
	require.Error(t, st.Partition("p").DeleteAll(ctx), "range deletion through a snapshot")
	_, err = st.QueryPage(ctx, Query{Index: "ByName"})
	requireCode(t, err, edm.CodeNotImplemented)
	// Nothing reached the store.
	_, err = db.Table("Alpha").Get(ctx, "p", "r", nil)
	requireCode(t, err, edm.CodeResourceNotFound)
	ok, err := db.TableExists(ctx, "Other")
	require.NoError(t, err)
	require.False(t, ok)
}

func TestSnapshotCloseAndStats(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	db := openTestDB(t, &Options{Clock: clock})
	tb, err := db.CreateTable(ctx, "Alpha")
	require.NoError(t, err)
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "r"}))
	m, err := db.EngineMetrics(ctx)
	require.NoError(t, err)
	require.Zero(t, m.Snapshots)

	s1, err := db.Snapshot(ctx)
	require.NoError(t, err)
	s2, err := db.Snapshot(ctx)
	require.NoError(t, err)
	require.False(t, s2.Time().Before(s1.Time()), "instants in order")
	mu.Lock()
	now = now.Add(90 * time.Second)
	mu.Unlock()
	m, err = db.EngineMetrics(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, m.Snapshots)
	require.Equal(t, 90*time.Second, m.OldestSnapshotAge)

	require.NoError(t, s1.Close())
	require.ErrorIs(t, s1.Close(), ErrClosed)
	_, err = s1.Table("Alpha").Get(ctx, "p", "r", nil)
	require.ErrorIs(t, err, ErrClosed)
	m, err = db.EngineMetrics(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, m.Snapshots)

	// DB.Close releases the snapshot still open, without error, and its
	// reads then fail.
	require.NoError(t, db.Close())
	_, err = s2.Table("Alpha").Get(ctx, "p", "r", nil)
	require.ErrorIs(t, err, ErrClosed)
}

func TestSnapshotTransactionsWhole(t *testing.T) {
	db := openTestDB(t, nil)
	tb, err := db.CreateTable(ctx, "Alpha")
	require.NoError(t, err)
	const rounds = 200
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range rounds {
			// Each transaction writes the same n to three entities.
			acts := make([]TransactionAction, 3)
			for j := range acts {
				acts[j] = TransactionAction{Type: ActionUpsertReplace, Entity: &Entity{PartitionKey: "p", RowKey: fmt.Sprint(j), Properties: map[string]any{"n": int32(i)}}}
			}
			if err := tb.SubmitTransaction(ctx, acts); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 50 {
		snap, err := db.Snapshot(ctx)
		require.NoError(t, err)
		rows := snapshotRows(t, snap.Table("Alpha"), Query{Top: 1})
		require.NoError(t, snap.Close())
		if len(rows) == 0 {
			continue
		}
		require.Len(t, rows, 3)
		for j, r := range rows {
			require.Equal(t, fmt.Sprintf("p/%d=%s", j, rows[0][len("p/0="):]), r, "a transaction seen in part: %v", rows)
		}
	}
	wg.Wait()
}
