package tablestore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	ts "github.com/tablestore/tablestore"
)

// TestTimestampsStayOnWallClockAcrossOpens is a shell loop of puts: 100
// times open, write one entity, close. Each Open resumes from the exact
// last Timestamp, so the last one is within 50 ms of the wall clock, and
// Timestamps still strictly increase.
func TestTimestampsStayOnWallClockAcrossOpens(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var prev time.Time
	for i := range 100 {
		db, err := ts.Open(dir, nil)
		require.NoError(t, err)
		if i == 0 {
			_, err = db.CreateTable(ctx, "Loop")
			require.NoError(t, err)
		}
		e := &ts.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"I": int32(i)}}
		require.NoError(t, db.Table("Loop").Upsert(ctx, e, ts.Replace))
		require.NoError(t, db.Close())
		require.True(t, e.Timestamp.After(prev), "open %d: %v not after %v", i, e.Timestamp, prev)
		prev = e.Timestamp
	}
	ahead := time.Until(prev)
	t.Logf("after 100 opens, the last Timestamp is %v ahead of the wall clock", ahead)
	require.Less(t, ahead, 50*time.Millisecond, "the last Timestamp is %v ahead of the wall clock", ahead)
}
