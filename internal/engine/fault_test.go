package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
)

func openFaultTest(t *testing.T, onFault func(error)) *Engine {
	t.Helper()
	db, err := OpenInMemory(Options{CacheSize: 1 << 20, MemTableSize: 1 << 20, PageScanLimit: 1000,
		PageTimeLimit: time.Second, Clock: time.Now, OnFault: onFault})
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(context.Background(), "T"))
	return db
}

// A Fatalf on an operation's goroutine becomes that operation's error.
func TestFatalfOnOperationGoroutine(t *testing.T) {
	db := openFaultTest(t, nil)
	op := func() (err error) {
		defer db.recoverStop("test operation", &err)
		pebbleLogger{db}.Fatalf("MANIFEST sync failed: %s", "disk gone")
		return nil
	}
	err := op()
	require.ErrorContains(t, err, "MANIFEST sync failed: disk gone")
	require.Equal(t, err, db.Health())
	_, err = db.Table("T").Get(context.Background(), "p", "r", nil)
	require.Equal(t, db.Health(), err, "operations after a stop fail with the fault")
	require.Equal(t, db.Health(), db.Close())
}

// A Fatalf on one of Pebble's goroutines (no engine frame on the stack)
// returns instead of ending the process, and stops the engine.
func TestFatalfOnBackgroundGoroutine(t *testing.T) {
	got := make(chan error, 1)
	db := openFaultTest(t, func(err error) { got <- err })
	go pebbleLogger{db}.Fatalf("could not update state for compaction: %d", 7)
	select {
	case err := <-got:
		require.ErrorContains(t, err, "could not update state for compaction: 7")
	case <-time.After(10 * time.Second):
		t.Fatal("no fault reported")
	}
	_, err := db.Table("T").Commit(context.Background(), []driver.Action{{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "r"}})
	require.Error(t, err)
	require.True(t, errors.Is(err, db.Health()) || err == db.Health())
}

// A corruption fault refuses writes but keeps reads.
func TestCorruptionFaultRefusesWritesOnly(t *testing.T) {
	db := openFaultTest(t, nil)
	ctx := context.Background()
	_, err := db.Table("T").Commit(ctx, []driver.Action{{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "r"}})
	require.NoError(t, err)
	db.setFault(&driver.CorruptError{File: "000007.sst", Op: "test", Err: errors.New("checksum mismatch")})
	_, err = db.Table("T").Commit(ctx, []driver.Action{{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "s"}})
	require.ErrorIs(t, err, driver.ErrCorrupt)
	require.ErrorContains(t, err, "000007.sst")
	require.ErrorIs(t, db.CreateTable(ctx, "U"), driver.ErrCorrupt)
	require.ErrorIs(t, db.DeleteTable(ctx, "T"), driver.ErrCorrupt)
	row, err := db.Table("T").Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, "r", row.RowKey)
	require.NoError(t, db.Close())
}
