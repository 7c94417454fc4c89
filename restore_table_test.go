package tablestore

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
)

// snapshotEntities reads every entity of table name in s, in key order.
func snapshotEntities(t *testing.T, tb *Table) []*Entity {
	t.Helper()
	var out []*Entity
	for e, err := range tb.Query(ctx, Query{}) {
		require.NoError(t, err)
		out = append(out, e)
	}
	return out
}

// requireSameEntities compares two lists entity by entity: keys,
// Timestamp, ETag, typed properties, and the full-metadata JSON.
func requireSameEntities(t *testing.T, want, got []*Entity) {
	t.Helper()
	require.Len(t, got, len(want))
	opts := &JSONOptions{Metadata: FullMetadata, Type: "account.T"}
	for i := range want {
		w, g := want[i], got[i]
		require.Equal(t, w.PartitionKey, g.PartitionKey)
		require.Equal(t, w.RowKey, g.RowKey)
		require.True(t, w.Timestamp.Equal(g.Timestamp), "(%s, %s) Timestamp %s, want %s", g.PartitionKey, g.RowKey, g.Timestamp, w.Timestamp)
		require.Equal(t, w.ETag, g.ETag, "(%s, %s)", g.PartitionKey, g.RowKey)
		require.Equal(t, w.Properties, g.Properties, "(%s, %s)", g.PartitionKey, g.RowKey)
		wj, err := AppendEntityJSON(nil, w, opts)
		require.NoError(t, err)
		gj, err := AppendEntityJSON(nil, g, opts)
		require.NoError(t, err)
		require.Equal(t, string(wj), string(gj))
	}
}

// TestRestoreTableKeepsRecords: a one-table restore holds the table
// exactly as a snapshot at that instant showed it, each entity with its
// Timestamp and ETag, under the new name and alone in the new store;
// entities expired at that instant are left out.
func TestRestoreTableKeepsRecords(t *testing.T) {
	var mu sync.Mutex
	now := time.Now().UTC()
	clock := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}
	advance := func(d time.Duration) {
		mu.Lock()
		now = now.Add(d)
		mu.Unlock()
	}
	dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	db, err := Open(dir, &Options{ContinuousBackup: &ContinuousBackup{Dir: bdir}, Clock: clock})
	require.NoError(t, err)
	orders, err := db.CreateTable(ctx, "Orders")
	require.NoError(t, err)
	other, err := db.CreateTable(ctx, "Other")
	require.NoError(t, err)
	temp, err := db.CreateTable(ctx, "Temp")
	require.NoError(t, err)
	require.NoError(t, temp.SetTTL(ctx, TTL{Default: time.Hour}))
	guid := edm.GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	for i := range 40 {
		e := &Entity{PartitionKey: []string{"a", "b", ""}[i%3], RowKey: fmt.Sprintf("r%02d", i), Properties: map[string]any{
			"s": "v", "i32": int32(i), "i64": int64(i) << 40, "f": float64(i) / 7, "b": i%2 == 0,
			"d": now.Add(-time.Duration(i) * time.Hour), "g": guid, "bin": []byte{byte(i), 0, 255},
		}}
		require.NoError(t, orders.Insert(ctx, e))
		require.NoError(t, other.Insert(ctx, &Entity{PartitionKey: "o", RowKey: e.RowKey}))
		advance(3 * time.Millisecond)
	}
	require.NoError(t, orders.SubmitTransaction(ctx, []TransactionAction{
		{Type: ActionUpsertMerge, Entity: &Entity{PartitionKey: "a", RowKey: "r00", Properties: map[string]any{"merged": true}}},
		{Type: ActionDelete, Entity: &Entity{PartitionKey: "a", RowKey: "r03"}, IfMatch: "*"},
	}))
	require.NoError(t, temp.Insert(ctx, &Entity{PartitionKey: "t", RowKey: "old"}))
	advance(50 * time.Minute)
	require.NoError(t, temp.Insert(ctx, &Entity{PartitionKey: "t", RowKey: "new"}))
	advance(20 * time.Minute) // "old" has expired, "new" has not

	snap, err := db.Snapshot(ctx)
	require.NoError(t, err)
	at := snap.Time()
	wantOrders := snapshotEntities(t, snap.Table("Orders"))
	wantTemp := snapshotEntities(t, snap.Table("Temp"))
	require.NoError(t, snap.Close())
	require.Len(t, wantTemp, 1)

	// Later: rewrites, a range deletion, a dropped table.
	advance(time.Second)
	for _, e := range wantOrders[:10] {
		require.NoError(t, orders.Upsert(ctx, &Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Properties: map[string]any{"s": "rewritten"}}, Replace))
	}
	require.NoError(t, orders.Partition("b").DeleteAll(ctx))
	require.NoError(t, db.DeleteTable(ctx, "Temp"))
	require.NoError(t, db.Close())

	into := filepath.Join(t.TempDir(), "one")
	res, err := RestoreTable(ctx, bdir, at, "orders", "OrdersBefore", into, nil)
	require.NoError(t, err)
	require.Equal(t, len(wantOrders), res.Entities)
	require.True(t, res.Time.Equal(at))
	into2 := filepath.Join(t.TempDir(), "temp")
	res, err = RestoreTable(ctx, bdir, at, "Temp", "", into2, nil)
	require.NoError(t, err)
	require.Equal(t, 1, res.Entities)
	ents, err := os.ReadDir(filepath.Dir(into))
	require.NoError(t, err)
	require.Len(t, ents, 1, "the whole store restored on the way is removed")

	rdb, err := Open(into, &Options{MustExist: true})
	require.NoError(t, err)
	require.Equal(t, []string{"OrdersBefore"}, listAll(t, rdb.TableNames))
	requireSameEntities(t, wantOrders, snapshotEntities(t, rdb.Table("OrdersBefore")))
	require.NoError(t, rdb.Close())

	rdb, err = Open(into2, &Options{MustExist: true})
	require.NoError(t, err)
	requireSameEntities(t, wantTemp, snapshotEntities(t, rdb.Table("Temp")))
	ttl, err := rdb.Table("Temp").TTL(ctx)
	require.NoError(t, err)
	require.Equal(t, TTL{}, ttl, "the table's settings are not copied")
	require.NoError(t, rdb.Close())

	// A table that did not exist then; a bad new name: nothing left behind.
	missing := filepath.Join(t.TempDir(), "missing")
	_, err = RestoreTable(ctx, bdir, at, "Later", "", missing, nil)
	requireCode(t, err, edm.CodeTableNotFound)
	require.ErrorIs(t, err, ErrTableNotFound)
	_, err = os.Stat(missing)
	require.True(t, os.IsNotExist(err), "stat: %v", err)
	ents, err = os.ReadDir(filepath.Dir(missing))
	require.NoError(t, err)
	require.Empty(t, ents)
	_, err = RestoreTable(ctx, bdir, at, "Orders", "bad name", missing, nil)
	require.Error(t, err)
	require.NotEqual(t, edm.CodeInternalError, ErrorCode(err))
}

// TestRestoreTableEncrypted: a one-table restore of an encrypted store
// needs its key and writes a store encrypted under it.
func TestRestoreTableEncrypted(t *testing.T) {
	enc := &Encryption{Key: bytes.Repeat([]byte{9}, EncryptionKeySize)}
	dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	db, err := Open(dir, &Options{ContinuousBackup: &ContinuousBackup{Dir: bdir}, Encryption: enc})
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Orders")
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: strconv.Itoa(i), Properties: map[string]any{"n": int32(i)}}))
	}
	want := snapshotEntities(t, tb)
	require.NoError(t, db.Close())

	_, err = RestoreTable(ctx, bdir, time.Time{}, "Orders", "", filepath.Join(t.TempDir(), "nokey"), nil)
	require.ErrorIs(t, err, ErrEncryptionKey)
	into := filepath.Join(t.TempDir(), "one")
	_, err = RestoreTable(ctx, bdir, time.Time{}, "Orders", "", into, &Options{Encryption: enc})
	require.NoError(t, err)
	_, err = Open(into, &Options{MustExist: true})
	require.ErrorIs(t, err, ErrEncryptionKey, "the result is encrypted")
	rdb, err := Open(into, &Options{MustExist: true, Encryption: enc})
	require.NoError(t, err)
	defer rdb.Close()
	requireSameEntities(t, want, snapshotEntities(t, rdb.Table("Orders")))
}
