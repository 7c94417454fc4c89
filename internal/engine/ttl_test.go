package engine

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

type ttlClock struct{ ns atomic.Int64 }

func (c *ttlClock) now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// newTTLEngine opens an in-memory engine on a test clock at the start
// of 2026, sweeping at rate (see ttlOpts).
func newTTLEngine(t *testing.T, rate int) (*Engine, *ttlClock) {
	t.Helper()
	clk := &ttlClock{}
	clk.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	db, err := OpenInMemory(ttlOpts(clk, rate))
	require.NoError(t, err)
	return db, clk
}

func ttlOpts(c *ttlClock, rate int) Options {
	return Options{CacheSize: 8 << 20, MemTableSize: 4 << 20, PageScanLimit: 1000, PageTimeLimit: time.Second,
		Clock: c.now, NoSync: true, SweepRate: rate}
}

func ttlRec(v int32) []byte {
	return mustEncode(nil, 0, []driver.Property{{Name: "V", Value: edm.Value{Type: edm.TypeInt32, Int: int64(v)}}})
}

// countExpiryEntries counts table name's expiry index entries, expired
// or not.
func countExpiryEntries(t *testing.T, db *Engine, name string) int {
	info, err := db.lookupTable(name)
	require.NoError(t, err)
	lo, hi, _ := expirySpan(info.id)
	it, err := db.pdb.NewIter(nil)
	require.NoError(t, err)
	defer it.Close()
	n := 0
	for it.SeekGE(lo); it.Valid() && string(it.Key()) < string(hi); it.Next() {
		n++
	}
	return n
}

// TestTTLEngineWritePathsAndSweep writes through commit, bulk and range
// deletion, concurrently with the sweeper, and checks the expiry index
// stays exact and the sweeper leaves nothing live removed.
func TestTTLEngineWritePathsAndSweep(t *testing.T) {
	ctx := context.Background()
	db, clk := newTTLEngine(t, MaxSweepRate)
	require.NoError(t, db.CreateTable(ctx, "tt"))
	tb := db.Table("tt")
	require.NoError(t, tb.(driver.TTLTable).SetTTL(ctx, driver.TTL{Default: time.Minute}))

	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				pk := fmt.Sprintf("p%d", i%4)
				rk := fmt.Sprintf("w%d-%03d", w, i)
				_, err := tb.Commit(ctx, []driver.Action{{Type: driver.ActionUpsertReplace, PartitionKey: pk, RowKey: rk, Record: ttlRec(int32(i))}})
				require.NoError(t, err)
			}
		}()
	}
	acts := make([]driver.Action, 100)
	for i := range acts {
		acts[i] = driver.Action{Type: driver.ActionInsert, PartitionKey: fmt.Sprintf("p%d", i%4), RowKey: fmt.Sprintf("b%03d", i), Record: ttlRec(1)}
	}
	res, err := tb.(driver.BulkCommitter).CommitBulk(ctx, acts, driver.BulkCommitOptions{})
	require.NoError(t, err)
	require.Equal(t, 100, res.Applied)
	wg.Wait()
	require.Equal(t, 500, countExpiryEntries(t, db, "tt"))
	// Nothing has expired: the sweeper removes nothing.
	n, err := db.SweepExpired(1000)
	require.NoError(t, err)
	require.Zero(t, n)
	require.Zero(t, db.Swept())

	// A range deletion leaves stale entries; the sweeper drops them
	// without touching live entities.
	_, err = tb.(driver.RangeDeleter).DeleteRange(ctx, "p0", "", "")
	require.NoError(t, err)
	// Expire everything, then insert over one expired entity (bulk):
	// absent for the precondition.
	clk.ns.Add(int64(2 * time.Minute))
	acts = acts[1:2] // p1 b001
	res, err = tb.(driver.BulkCommitter).CommitBulk(ctx, acts, driver.BulkCommitOptions{})
	require.NoError(t, err)
	require.Equal(t, 1, res.Applied)
	require.Empty(t, res.Failures)
	_, err = tb.Get(ctx, "p1", "w0-001", nil)
	require.Equal(t, edm.CodeResourceNotFound, err.(*driver.Error).Code)
	for {
		k, err := db.SweepExpired(64)
		require.NoError(t, err)
		if k == 0 {
			break
		}
	}
	require.EqualValues(t, 500-125-1, db.Swept()) // p0 was range-deleted; b001 is live
	require.Equal(t, 1, countExpiryEntries(t, db, "tt"))
	row, err := tb.Get(ctx, "p1", "b001", nil)
	require.NoError(t, err)
	require.Equal(t, "b001", row.RowKey)
	require.NoError(t, db.Close())
}

// TestTTLEngineCloseWhileSweepingAndResume closes the store while the
// background sweeper works through a backlog, and checks it resumes after
// the restart and finishes.
func TestTTLEngineCloseWhileSweepingAndResume(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := &ttlClock{}
	clk.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	db, err := Open(dir, ttlOpts(clk, 2000))
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(ctx, "tt"))
	tb := db.Table("tt")
	const n = 3000
	acts := make([]driver.Action, n)
	for i := range acts {
		acts[i] = driver.Action{Type: driver.ActionInsert, PartitionKey: fmt.Sprintf("p%d", i%10), RowKey: fmt.Sprintf("r%05d", i), Record: ttlRec(1)}
	}
	_, err = tb.(driver.BulkCommitter).CommitBulk(ctx, acts, driver.BulkCommitOptions{})
	require.NoError(t, err)
	// Settings on a table with data build its expiry index.
	require.NoError(t, tb.(driver.TTLTable).SetTTL(ctx, driver.TTL{Default: time.Second}))
	require.Equal(t, n, countExpiryEntries(t, db, "tt"))
	all := &driver.QueryRequest{Ranges: []driver.KeyRange{{Unbounded: true}}, Top: 1000}
	var rows int
	_, err = tb.QueryPage(ctx, all, func(driver.Row) error { rows++; return nil })
	require.NoError(t, err)
	require.Equal(t, 1000, rows)
	clk.ns.Add(int64(time.Hour))
	require.Eventually(t, func() bool { return db.Swept() > 0 }, 10*time.Second, time.Millisecond)
	start := time.Now()
	require.NoError(t, db.Close())
	require.Less(t, time.Since(start), 2*time.Second, "Close waits for the sweeper's batch only")

	clk.ns.Add(-int64(2 * time.Hour)) // a step back across the restart
	db, err = Open(dir, ttlOpts(clk, MaxSweepRate))
	require.NoError(t, err)
	tb = db.Table("tt")
	rows = 0
	_, err = tb.QueryPage(ctx, all, func(driver.Row) error { rows++; return nil })
	require.NoError(t, err)
	require.Zero(t, rows, "expired entities came back after a restart with the clock stepped back")
	require.Eventually(t, func() bool { return countExpiryEntries(t, db, "tt") == 0 }, 20*time.Second, 5*time.Millisecond)
	left, err := tb.(driver.ExpiryStats).Expired(ctx)
	require.NoError(t, err)
	require.Zero(t, left)
	require.NoError(t, db.Close())
}

// TestTTLExpiryRecords checks the feed's expiry records: the sweeper's,
// one per removed entity in its commit, and those of writes (a single
// write, a transaction, a bulk commit) over an expired entity the sweeper
// has not removed, each just before the write's own record in the
// write's commit; a table with the feed off gets none.
func TestTTLExpiryRecords(t *testing.T) {
	for _, images := range []driver.ImageMode{driver.ImagesKeysOnly, driver.ImagesNew} {
		t.Run(fmt.Sprint("images=", images), func(t *testing.T) { testTTLExpiryRecords(t, images) })
	}
}

func testTTLExpiryRecords(t *testing.T, images driver.ImageMode) {
	ctx := context.Background()
	clk := &ttlClock{}
	clk.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	db, tb := changeTestTable(t, ttlOpts(clk, MaxSweepRate), images)
	db.stopExpirySweeper() // sweeps happen when the test says
	// Records outlive the clock's moves.
	require.NoError(t, tb.EnableChangeFeed(ctx, driver.ChangeFeedSettings{Retention: 100 * time.Hour, Images: images}))
	require.NoError(t, tb.SetTTL(ctx, driver.TTL{Default: time.Hour}))
	require.NoError(t, db.CreateTable(ctx, "Off"))
	off := db.Table("Off").(*table)
	require.NoError(t, off.SetTTL(ctx, driver.TTL{Default: time.Hour}))

	write := func(tb *table, a ...driver.Action) driver.CommitResult {
		t.Helper()
		res, err := tb.Commit(ctx, a)
		require.NoError(t, err)
		return res
	}
	ins := func(pk, rk string) driver.Action {
		return driver.Action{Type: driver.ActionInsert, PartitionKey: pk, RowKey: rk, Record: ttlRec(1)}
	}
	stamps := map[string]int64{}
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		stamps[k] = edm.TicksFromTime(write(tb, ins("p", k)).Timestamp)
		clk.ns.Add(int64(time.Second))
	}
	write(off, ins("p", "x"))
	st, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	first, mark := readAll(t, tb, st.Oldest)
	require.Len(t, first, 5)
	hour := int64(time.Hour / 100)

	// Everything has expired; none is swept yet.
	clk.ns.Add(int64(2 * time.Hour))
	// A single insert over "a".
	res := write(tb, ins("p", "a"))
	// A transaction: an upsert over "b", an insert of a new row.
	write(tb, upsertN("p", "b", 7), ins("p", "new"))
	// A bulk commit over "c" and of a new row.
	_, err = tb.CommitBulk(ctx, []driver.Action{ins("q", "bulk"), {Type: driver.ActionUpsertMerge, PartitionKey: "p", RowKey: "c", Record: ttlRec(2)}}, driver.BulkCommitOptions{})
	require.NoError(t, err)
	// A failed write (an update of the expired "d") records nothing.
	_, err = tb.Commit(ctx, []driver.Action{{Type: driver.ActionUpdateMerge, PartitionKey: "p", RowKey: "d", IfMatch: "*", Record: ttlRec(3)}})
	require.Error(t, err)
	recs, end := readAll(t, tb, mark)
	require.Len(t, recs, 8)
	type rec struct {
		op            driver.ChangeOp
		kind          driver.CommitKind
		index, count  int
		pk, rk        string
		removed, exp  int64
		sameTimestamp bool
	}
	view := func(r driver.ChangeRecord, first driver.ChangeRecord) rec {
		return rec{r.Op, r.Kind, r.Index, r.Count, r.PartitionKey, r.RowKey, r.Removed, r.Expiry, r.Timestamp == first.Timestamp}
	}
	want := []rec{
		{driver.ChangeExpire, driver.CommitSingle, 0, 2, "p", "a", stamps["a"], stamps["a"] + hour, true},
		{driver.ChangeOp(driver.ActionInsert), driver.CommitSingle, 1, 2, "p", "a", 0, 0, true},
		{driver.ChangeExpire, driver.CommitSingle, 0, 3, "p", "b", stamps["b"], stamps["b"] + hour, true},
		{driver.ChangeOp(driver.ActionUpsertReplace), driver.CommitSingle, 1, 3, "p", "b", 0, 0, true},
		{driver.ChangeOp(driver.ActionInsert), driver.CommitSingle, 2, 3, "p", "new", 0, 0, true},
		{driver.ChangeOp(driver.ActionInsert), driver.CommitBulk, 0, 3, "q", "bulk", 0, 0, true},
		{driver.ChangeExpire, driver.CommitBulk, 1, 3, "p", "c", stamps["c"], stamps["c"] + hour, true},
		{driver.ChangeOp(driver.ActionUpsertMerge), driver.CommitBulk, 2, 3, "p", "c", 0, 0, true},
	}
	commitStart := 0
	for i, r := range recs {
		if r.Index == 0 {
			commitStart = i
		}
		require.Equal(t, want[i], view(r, recs[commitStart]), "record %d", i)
		require.Equal(t, recs[commitStart].Seq+uint64(r.Index), r.Seq)
	}
	require.Equal(t, edm.TicksFromTime(res.Timestamp), recs[0].Timestamp)
	if images == driver.ImagesNew {
		require.Nil(t, recs[0].Record, "an expiry has no image")
		require.NotNil(t, recs[1].Record)
	}

	// The sweep removes "d" and "e" in one commit of its own, with a
	// Timestamp past their expiry; the table with the feed off records
	// nothing, and the store-wide sequence does not move for it.
	before := db.changes.end.Load()
	n, err := db.SweepExpired(1000)
	require.NoError(t, err)
	require.Equal(t, 3, n, "d, e and x")
	swept, _ := readAll(t, tb, end)
	require.Len(t, swept, 2)
	for i, r := range swept {
		k := []string{"d", "e"}[i]
		require.Equal(t, rec{driver.ChangeExpire, driver.CommitSweep, i, 2, "p", k, stamps[k], stamps[k] + hour, true}, view(r, swept[0]))
		require.Greater(t, r.Timestamp, r.Expiry)
		require.Nil(t, r.Record)
	}
	require.Equal(t, before+2, db.changes.end.Load(), "sweeping the table with the feed off took no sequence number")
	require.Greater(t, swept[0].Timestamp, recs[len(recs)-1].Timestamp)
	// Nothing is left to sweep, and nothing else is recorded.
	n, err = db.SweepExpired(1000)
	require.NoError(t, err)
	require.Zero(t, n)
	all, _ := readAll(t, tb, st.Oldest)
	require.Len(t, all, 5+8+2)
}

// TestSetTTLBlocksOnlyItsTable holds a SetTTL inside its rebuild and
// checks that writes to another table, and reads of its own, go on,
// while a write to the table, and a second SetTTL of it, wait for it and
// then see the new settings; a waiting write gives up with its context.
func TestSetTTLBlocksOnlyItsTable(t *testing.T) {
	ctx := context.Background()
	db, _ := newTTLEngine(t, MaxSweepRate)
	defer db.Close()
	for _, name := range []string{"Slow", "Other"} {
		require.NoError(t, db.CreateTable(ctx, name))
	}
	slow, other := db.Table("Slow").(*table), db.Table("Other").(*table)
	put := func(tb *table, ctx context.Context, rk string) error {
		_, err := tb.Commit(ctx, []driver.Action{{Type: driver.ActionUpsertReplace, PartitionKey: "p", RowKey: rk, Record: ttlRec(1)}})
		return err
	}
	for i := range 50 {
		require.NoError(t, put(slow, ctx, fmt.Sprint("old", i)))
	}
	slowID := db.tables["slow"].id
	entered, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	ttlRebuildHook = func(id uint64) {
		if id == slowID {
			once.Do(func() { close(entered); <-resume })
		}
	}
	defer func() { ttlRebuildHook = nil }()
	setDone := make(chan error, 1)
	go func() { setDone <- slow.SetTTL(ctx, driver.TTL{Default: time.Hour}) }()
	<-entered

	// Another table takes writes, single and bulk; the table reads.
	otherDone := make(chan error, 1)
	go func() {
		for i := range 20 {
			if err := put(other, ctx, fmt.Sprint(i)); err != nil {
				otherDone <- err
				return
			}
		}
		_, err := other.CommitBulk(ctx, []driver.Action{upsertN("q", "b", 1)}, driver.BulkCommitOptions{})
		if err == nil {
			_, err = slow.Get(ctx, "p", "old0", nil)
		}
		otherDone <- err
	}()
	select {
	case err := <-otherDone:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		close(resume)
		t.Fatal("writes to another table waited for the SetTTL")
	}

	// A write to the table waits; one with a context that ends gives up.
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, put(slow, short, "late"), context.DeadlineExceeded)
	writeDone := make(chan error, 1)
	go func() { writeDone <- put(slow, ctx, "new") }()
	set2Done := make(chan error, 1)
	go func() { set2Done <- slow.SetTTL(ctx, driver.TTL{Default: 2 * time.Hour}) }()
	select {
	case err := <-writeDone:
		t.Fatalf("a write to the table went on during its SetTTL: %v", err)
	case err := <-set2Done:
		t.Fatalf("a second SetTTL went on during the first: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	// With the second SetTTL waiting too, the catalog changes and other
	// tables read: the scan holds no lock a catalog change waits for.
	catalogDone := make(chan error, 1)
	go func() {
		err := db.CreateTable(ctx, "Third")
		if err == nil {
			_, err = other.Get(ctx, "p", "0", nil)
		}
		catalogDone <- err
	}()
	select {
	case err := <-catalogDone:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		close(resume)
		t.Fatal("a catalog change waited for the SetTTL's scan")
	}
	close(resume)
	require.NoError(t, <-setDone)
	require.NoError(t, <-writeDone)
	require.NoError(t, <-set2Done)
	// Every entity, the waiting write's too, is in the rebuilt index.
	require.Equal(t, 51, countExpiryEntries(t, db, "Slow"))
	s, err := slow.TTL(ctx)
	require.NoError(t, err)
	require.Equal(t, driver.TTL{Default: 2 * time.Hour}, s)
	require.Nil(t, db.ttl.gates.Load(), "the gates are gone")
}

// TestTTLAfterRefusedDrop checks that a table's deletion refused at its
// commit keeps the table's expiry: an expired entity stays invisible
// during the deletion and after it was refused.
func TestTTLAfterRefusedDrop(t *testing.T) {
	ctx := context.Background()
	db, clk := newTTLEngine(t, MaxSweepRate)
	defer db.Close()
	db.stopExpirySweeper() // the expired entity stays stored
	require.NoError(t, db.CreateTable(ctx, "tt"))
	tb := db.Table("tt")
	_, err := tb.Commit(ctx, []driver.Action{{Type: driver.ActionInsert, PartitionKey: "p", RowKey: "r", Record: ttlRec(1)}})
	require.NoError(t, err)
	require.NoError(t, tb.(driver.TTLTable).SetTTL(ctx, driver.TTL{Default: time.Minute}))
	clk.ns.Add(int64(time.Hour))
	visible := func() int {
		rows := 0
		_, err := tb.QueryPage(ctx, &driver.QueryRequest{Ranges: []driver.KeyRange{{Unbounded: true}}, Top: 10}, func(driver.Row) error { rows++; return nil })
		require.NoError(t, err)
		return rows
	}
	require.Zero(t, visible())
	during := -1
	dropCommitHook = func() {
		during = visible()
		db.space.full.Store(true)
	}
	defer func() { dropCommitHook = nil }()
	require.ErrorIs(t, db.DeleteTable(ctx, "tt"), driver.ErrNoSpace)
	db.space.full.Store(false)
	require.Zero(t, during, "the expired entity while the deletion was in flight")
	require.Zero(t, visible(), "the expired entity after the deletion was refused")
}
