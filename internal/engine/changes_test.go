package engine

import (
	"context"
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
)

func changeTestTable(t *testing.T, opts Options, images driver.ImageMode) (*Engine, *table) {
	t.Helper()
	ctx := context.Background()
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	db, err := OpenInMemory(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	require.NoError(t, db.CreateTable(ctx, "T"))
	tb := db.Table("T").(*table)
	require.NoError(t, tb.EnableChangeFeed(ctx, driver.ChangeFeedSettings{Retention: time.Hour, Images: images}))
	return db, tb
}

func upsertN(pk, rk string, n int64) driver.Action {
	return driver.Action{Type: driver.ActionUpsertReplace, PartitionKey: pk, RowKey: rk,
		Properties: []driver.Property{{Name: "N", Value: edm.Value{Type: edm.TypeInt64, Int: n}}}}
}

// readAll reads table tb's feed after pos to its end.
func readAll(t *testing.T, tb *table, after uint64) ([]driver.ChangeRecord, uint64) {
	t.Helper()
	var out []driver.ChangeRecord
	for {
		res, err := tb.ReadChanges(context.Background(), driver.ChangesRequest{After: after, Limit: 7}, func(r driver.ChangeRecord) error {
			out = append(out, r)
			return nil
		})
		require.NoError(t, err)
		after = res.Last
		if !res.More {
			return out, res.End
		}
	}
}

// TestChangeOrderUnderConcurrency runs writers on shared and own
// partitions (sync and NoSync) with a follower, and checks that the feed
// orders each entity's changes by Timestamp, holds every commit whole
// and once, and that the follower saw exactly the feed.
func TestChangeOrderUnderConcurrency(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprint("nosync=", noSync), func(t *testing.T) {
			ctx := context.Background()
			db, tb := changeTestTable(t, Options{NoSync: noSync, Parallelism: 1, PageScanLimit: 1000, PageTimeLimit: time.Second}, driver.ImagesNew)
			const writers, commits = 4, 60
			st, err := tb.ChangeFeed(ctx)
			require.NoError(t, err)
			start, _ := readAll(t, tb, st.Oldest)
			require.Empty(t, start)
			// The follower.
			fctx, cancel := context.WithCancel(ctx)
			var fmu sync.Mutex
			var followed []driver.ChangeRecord
			fdone := make(chan error, 1)
			go func() {
				after := st.End
				for {
					res, err := tb.ReadChanges(fctx, driver.ChangesRequest{Table: st.Table, After: after, Limit: 5}, func(r driver.ChangeRecord) error {
						fmu.Lock()
						followed = append(followed, r)
						fmu.Unlock()
						return nil
					})
					if err != nil {
						fdone <- err
						return
					}
					after = res.Last
					if res.More {
						continue
					}
					if err := tb.WaitChanges(fctx, res.End); err != nil {
						fdone <- nil
						return
					}
				}
			}()
			var wg sync.WaitGroup
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range commits {
						pk := "shared"
						if i%2 == 0 {
							pk = fmt.Sprint("own", w)
						}
						acts := []driver.Action{upsertN(pk, "a", int64(w*1000+i)), upsertN(pk, fmt.Sprint("b", w), int64(i))}
						if i%5 == 0 {
							acts = acts[:1]
						}
						_, err := tb.Commit(ctx, acts)
						require.NoError(t, err)
					}
				}()
			}
			wg.Wait()
			all, end := readAll(t, tb, st.End)
			require.NoError(t, tb.WaitChanges(ctx, end-1))
			require.Eventually(t, func() bool { fmu.Lock(); defer fmu.Unlock(); return len(followed) >= len(all) }, 5*time.Second, time.Millisecond)
			cancel()
			require.NoError(t, <-fdone)
			require.Equal(t, all, followed)
			want := writers * (commits*2 - commits/5)
			require.Len(t, all, want)
			lastTS := map[string]int64{}
			var prev uint64
			for i, r := range all {
				require.Greater(t, r.Seq, prev)
				prev = r.Seq
				key := r.PartitionKey + "/" + r.RowKey
				require.Greater(t, r.Timestamp, lastTS[key], "entity %s: feed order is not ETag order", key)
				lastTS[key] = r.Timestamp
				if r.Index > 0 {
					require.Equal(t, all[i-1].Seq+1, r.Seq, "a commit's records are consecutive")
					require.Equal(t, all[i-1].Timestamp, r.Timestamp)
				}
				ts, err := driver.Record(r.Record).Timestamp()
				require.NoError(t, err)
				require.Equal(t, r.Timestamp, ts)
			}
			_ = db
		})
	}
}

// TestChangeSequenceRecovery: the counter resumes past every seq handed
// out, also when retention deleted every record.
func TestChangeSequenceRecovery(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var now time.Time = time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	opts := Options{Clock: clock, Parallelism: 1, PageScanLimit: 1000, PageTimeLimit: time.Second}
	db, err := Open(dir, opts)
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(ctx, "T"))
	tb := db.Table("T").(*table)
	require.NoError(t, tb.EnableChangeFeed(ctx, driver.ChangeFeedSettings{Retention: time.Minute}))
	for i := range 5 {
		_, err := tb.Commit(ctx, []driver.Action{upsertN("p", fmt.Sprint(i), 1)})
		require.NoError(t, err)
	}
	st0, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	recs, end := readAll(t, tb, st0.Oldest)
	require.Len(t, recs, 5)
	require.Nil(t, recs[0].Record, "keys only")
	// Retention passes: every record goes.
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	rounds := db.changes.rounds.Load()
	db.changes.kick <- struct{}{}
	require.Eventually(t, func() bool { return db.changes.rounds.Load() > rounds }, 5*time.Second, time.Millisecond)
	st, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.Equal(t, end, st.Oldest)
	got, _ := readAll(t, tb, st.Oldest)
	require.Empty(t, got)
	_, err = tb.ReadChanges(ctx, driver.ChangesRequest{After: recs[0].Seq, Limit: 1}, func(driver.ChangeRecord) error { return nil })
	require.ErrorIs(t, err, driver.ErrCursorExpired)
	require.NoError(t, db.Close())

	db, err = Open(dir, opts)
	require.NoError(t, err)
	defer db.Close()
	tb = db.Table("T").(*table)
	_, err = tb.Commit(ctx, []driver.Action{upsertN("p", "x", 1)})
	require.NoError(t, err)
	got, _ = readAll(t, tb, end)
	require.Len(t, got, 1)
	require.Greater(t, got[0].Seq, end)
	// A position ahead of the feed is refused.
	_, err = tb.ReadChanges(ctx, driver.ChangesRequest{After: got[0].Seq + 10, Limit: 1}, func(driver.ChangeRecord) error { return nil })
	require.ErrorIs(t, err, driver.ErrCursorStale)
}

// TestChangeRecordDecodeNeverPanics feeds truncated and altered records
// to decodeChange.
func TestChangeRecordDecodeNeverPanics(t *testing.T) {
	v := encodeChange(nil, driver.ChangeDeleteRange, driver.CommitRangeDelete, 2, 3, 12345, "pk", "a", "z", nil)
	r, err := decodeChange(9, v)
	require.NoError(t, err)
	require.Equal(t, driver.ChangeRecord{Seq: 9, Op: driver.ChangeDeleteRange, Kind: driver.CommitRangeDelete, Index: 2, Count: 3, Timestamp: 12345, PartitionKey: "pk", RowKey: "a", ToRowKey: "z"}, r)
	for i := range len(v) {
		_, _ = decodeChange(1, v[:i])
		w := append([]byte(nil), v...)
		w[i] ^= 0xff
		_, _ = decodeChange(1, w)
	}
	_, err = decodeChange(1, append(v, 1, 2, 3))
	require.Error(t, err, "a bad image")

	v = encodeExpire(nil, driver.CommitSweep, 1, 2, 500, "pk", "r", -3, 400)
	r, err = decodeChange(9, v)
	require.NoError(t, err)
	require.Equal(t, driver.ChangeRecord{Seq: 9, Op: driver.ChangeExpire, Kind: driver.CommitSweep, Index: 1, Count: 2, Timestamp: 500, PartitionKey: "pk", RowKey: "r", Removed: -3, Expiry: 400}, r)
	for i := range len(v) {
		_, err := decodeChange(1, v[:i])
		require.Error(t, err, "cut at %d", i)
		w := append([]byte(nil), v...)
		w[i] ^= 0xff
		_, _ = decodeChange(1, w)
	}
	_, err = decodeChange(1, append(v, 0))
	require.Error(t, err, "trailing bytes")
}

// TestChangeReadDuringDrop reads the feed from its end while a deletion
// of the table is built but not committed: the read finds nothing yet
// (not a deleted table), and the next read returns the final record.
func TestChangeReadDuringDrop(t *testing.T) {
	ctx := context.Background()
	db, tb := changeTestTable(t, Options{}, driver.ImagesKeysOnly)
	_, err := tb.Commit(ctx, []driver.Action{upsertN("p", "r", 1)})
	require.NoError(t, err)
	st, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	_, end := readAll(t, tb, st.Oldest)
	var during error
	ran := false
	dropCommitHook = func() {
		ran = true
		_, during = tb.ReadChanges(ctx, driver.ChangesRequest{Table: st.Table, After: end, Limit: 10}, func(r driver.ChangeRecord) error {
			return fmt.Errorf("record %d before the deletion committed", r.Seq)
		})
	}
	defer func() { dropCommitHook = nil }()
	require.NoError(t, db.DeleteTable(ctx, "T"))
	require.True(t, ran)
	require.NoError(t, during, "a read at the end while the deletion is in flight")
	var got []driver.ChangeRecord
	res, err := tb.ReadChanges(ctx, driver.ChangesRequest{Table: st.Table, After: end, Limit: 10}, func(r driver.ChangeRecord) error {
		got = append(got, r)
		return nil
	})
	require.NoError(t, err)
	require.True(t, res.Dropped)
	require.Len(t, got, 1)
	require.Equal(t, driver.ChangeDropTable, got[0].Op)
	// Past the final record the cursor is stale.
	_, err = tb.ReadChanges(ctx, driver.ChangesRequest{Table: st.Table, After: got[0].Seq, Limit: 10}, func(driver.ChangeRecord) error { return nil })
	require.ErrorIs(t, err, driver.ErrCursorStale)
}

// TestChangeFeedAfterRefusedDrop refuses a table's deletion at its
// commit (the disk fills once the batch is built) and checks that the
// feed stays as it was: enabled, readable at its end, and recording the
// next write.
func TestChangeFeedAfterRefusedDrop(t *testing.T) {
	ctx := context.Background()
	db, tb := changeTestTable(t, Options{}, driver.ImagesKeysOnly)
	st, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	dropCommitHook = func() { db.space.full.Store(true) }
	defer func() { dropCommitHook = nil }()
	require.ErrorIs(t, db.DeleteTable(ctx, "T"), driver.ErrNoSpace)
	db.space.full.Store(false)
	after, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.True(t, after.Enabled)
	_, err = tb.ReadChanges(ctx, driver.ChangesRequest{Table: st.Table, After: after.End, Limit: 10}, func(r driver.ChangeRecord) error {
		return fmt.Errorf("record %d of a deletion that was refused", r.Seq)
	})
	require.NoError(t, err)
	_, err = tb.Commit(ctx, []driver.Action{upsertN("p", "r", 1)})
	require.NoError(t, err)
	recs, _ := readAll(t, tb, after.End)
	require.Len(t, recs, 1)
	require.Equal(t, "r", recs[0].RowKey)
}
