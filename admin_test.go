package tablestore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// TestCheckpointWhileWriting takes checkpoints while writers commit
// transactions, and checks that each copy opens and holds whole
// transactions only, and every transaction acknowledged before the
// checkpoint began.
func TestCheckpointWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(filepath.Join(dir, "live"), &Options{NoSync: true, MemTableSize: 1 << 20})
	require.NoError(t, err)
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "Events")
	require.NoError(t, err)

	// Each writer commits transactions of 10 entities in its own
	// partition; acked[w] counts its acknowledged transactions.
	const writers, perTx = 3, 10
	var acked [writers]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 100_000; n++ {
				select {
				case <-stop:
					return
				default:
				}
				b := tbl.NewBatch()
				for i := range perTx {
					b.Insert(&Entity{PartitionKey: fmt.Sprint("w", w), RowKey: fmt.Sprintf("%06d-%02d", n, i),
						Properties: map[string]any{"N": int32(n)}})
				}
				if err := b.Submit(ctx); err != nil {
					t.Error(err)
					return
				}
				acked[w].Add(1)
			}
		}()
	}
	for c := range 3 {
		var before [writers]int64
		for w := range writers {
			before[w] = acked[w].Load()
		}
		cp := filepath.Join(dir, fmt.Sprint("copy", c))
		require.NoError(t, db.Checkpoint(ctx, cp))
		copyDB, err := Open(cp, nil)
		require.NoError(t, err)
		for w := range writers {
			n := 0
			for e, err := range copyDB.Table("Events").Query(ctx, Query{Filter: fmt.Sprintf("PartitionKey eq 'w%d'", w)}) {
				require.NoError(t, err)
				require.Equal(t, int32(n/perTx), e.Properties["N"], "transactions are whole and in order")
				n++
			}
			require.Zero(t, n%perTx, "a partial transaction in the copy")
			require.GreaterOrEqual(t, int64(n/perTx), before[w], "an acknowledged transaction is missing")
		}
		require.NoError(t, copyDB.Close())
	}
	close(stop)
	wg.Wait()
	require.Error(t, db.Checkpoint(ctx, filepath.Join(dir, "copy0")), "the directory exists")
}

func TestTableStats(t *testing.T) {
	ctx := context.Background()
	db, err := Open(t.TempDir(), &Options{NoSync: true, MemTableSize: 1 << 20})
	require.NoError(t, err)
	defer db.Close()
	big, err := db.CreateTable(ctx, "Big")
	require.NoError(t, err)
	small, err := db.CreateTable(ctx, "Small")
	require.NoError(t, err)
	for p := range 50 {
		b := big.NewBatch()
		for r := range 100 {
			b.Insert(&Entity{PartitionKey: fmt.Sprint(p), RowKey: fmt.Sprint(r), Properties: map[string]any{"S": "some text to take space"}})
		}
		require.NoError(t, b.Submit(ctx))
	}
	require.NoError(t, small.Insert(ctx, &Entity{PartitionKey: "a", RowKey: "b"}))
	require.NoError(t, db.conn.(interface{ Flush() error }).Flush())

	st, err := big.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(5000), st.Entities)
	require.Greater(t, st.Bytes, int64(10_000))
	require.False(t, st.Unflushed, "everything was flushed")
	st2, err := small.Stats(ctx)
	require.NoError(t, err)
	// A small table is counted, even in a file shared with another.
	require.Equal(t, int64(1), st2.Entities)
	require.Less(t, st2.Bytes, st.Bytes/10)

	_, err = db.Table("Nope").Stats(ctx)
	require.ErrorIs(t, err, ErrTableNotFound)
	require.NoError(t, db.Close())
	_, err = big.Stats(ctx)
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, db.Checkpoint(ctx, t.TempDir()+"/x"), ErrClosed)
}

func TestAccessPolicies(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(dir, nil)
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Acl")
	require.NoError(t, err)

	got, err := tb.accessPolicies(ctx)
	require.NoError(t, err)
	require.Empty(t, got)

	start := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	in := []driver.AccessPolicy{
		{ID: "readers", Start: start, Expiry: start.Add(time.Hour), Permission: "r"},
		{ID: "all", Permission: "raud"},
		{ID: "none"},
	}
	require.NoError(t, tb.setAccessPolicies(ctx, in))

	// Persisted: visible after reopening, in order, UTC, 100 ns precision.
	require.NoError(t, db.Close())
	db, err = Open(dir, nil)
	require.NoError(t, err)
	defer db.Close()
	got, err = db.Table("acl").accessPolicies(ctx)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, "readers", got[0].ID)
	require.True(t, got[0].Start.Equal(start.Truncate(100*time.Nanosecond)))
	require.Equal(t, time.UTC, got[0].Start.Location())
	require.Equal(t, "raud", got[1].Permission)
	require.True(t, got[2].Start.IsZero() && got[2].Expiry.IsZero() && got[2].Permission == "")

	for _, bad := range [][]driver.AccessPolicy{
		{{ID: "1"}, {ID: "2"}, {ID: "3"}, {ID: "4"}, {ID: "5"}, {ID: "6"}},
		{{ID: ""}},
		{{ID: strings.Repeat("x", 65)}},
		{{ID: "a"}, {ID: "a"}},
		{{ID: "a", Permission: "dr"}},
		{{ID: "a", Permission: "rr"}},
		{{ID: "a", Permission: "w"}},
	} {
		err := db.Table("acl").setAccessPolicies(ctx, bad)
		require.ErrorIs(t, err, ErrInvalidInput, "%+v", bad)
	}
	got, _ = db.Table("acl").accessPolicies(ctx)
	require.Len(t, got, 3, "a refused set changed the policies")

	// Removing, and deletion with the table.
	require.NoError(t, db.Table("acl").setAccessPolicies(ctx, nil))
	got, _ = db.Table("acl").accessPolicies(ctx)
	require.Empty(t, got)
	require.NoError(t, db.Table("acl").setAccessPolicies(ctx, in[:1]))
	require.NoError(t, db.DeleteTable(ctx, "acl"))
	_, err = db.Table("acl").accessPolicies(ctx)
	require.ErrorIs(t, err, ErrTableNotFound)
	require.ErrorIs(t, db.Table("acl").setAccessPolicies(ctx, in[:1]), ErrTableNotFound)
	_, err = db.CreateTable(ctx, "acl")
	require.NoError(t, err)
	got, err = db.Table("acl").accessPolicies(ctx)
	require.NoError(t, err)
	require.Empty(t, got, "a re-created table inherited policies")
}

func TestAccessPoliciesNotImplemented(t *testing.T) {
	db, err := OpenDriver(failingConn{nil}, nil)
	require.NoError(t, err)
	_, err = db.Table("anything").accessPolicies(context.Background())
	require.ErrorIs(t, err, ErrNotImplemented)
}

func TestEngineMetrics(t *testing.T) {
	ctx := context.Background()
	db, err := OpenInMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Metered")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: string(rune('a' + i))}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := db.EngineMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tables != 1 || db.Health() != nil || m.DiskBytes == 0 || m.WALSync.Count == 0 || len(m.WALSync.Buckets) == 0 {
		t.Fatalf("%+v", m)
	}
	last := m.WALSync.Buckets[len(m.WALSync.Buckets)-1]
	if last.Count > m.WALSync.Count {
		t.Fatalf("bucket count %d over total %d", last.Count, m.WALSync.Count)
	}
	db.Close()
	if _, err := db.EngineMetrics(ctx); err == nil {
		t.Fatal("metrics of a closed store")
	}
}

func TestServicePropertiesPersist(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "s")
	db, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if doc, err := db.serviceProperties(ctx); err != nil || doc != nil {
		t.Fatalf("fresh store: %q %v", doc, err)
	}
	if err := db.setServiceProperties(ctx, []byte("<doc/>")); err != nil {
		t.Fatal(err)
	}
	if err := db.setServiceProperties(ctx, make([]byte, maxServicePropertiesSize+1)); ErrorCode(err) != edm.CodeInvalidInput {
		t.Fatalf("oversized: %v", err)
	}
	// Service properties are not a table.
	if tables, err := db.ListTables(ctx, nil); err != nil || len(tables.Names) != 0 {
		t.Fatalf("%+v %v", tables, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if doc, err := db.serviceProperties(ctx); err != nil || string(doc) != "<doc/>" {
		t.Fatalf("reopened: %q %v", doc, err)
	}
	if err := db.setServiceProperties(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if doc, err := db.serviceProperties(ctx); err != nil || doc != nil {
		t.Fatalf("removed: %q %v", doc, err)
	}
}
