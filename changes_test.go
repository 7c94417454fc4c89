package tablestore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/engine"
)

// feedState is a table's contents as the feed's replay sees them: by
// "pk\x00rk", the properties and the ETag.
type feedState map[string]feedEntity

type feedEntity struct {
	props map[string]any
	etag  ETag
}

func (s feedState) clone() feedState { return maps.Clone(s) }

// applyChange replays one change onto s, as a replicator would.
func (s feedState) applyChange(t *testing.T, c Change) {
	t.Helper()
	key := c.PartitionKey + "\x00" + c.RowKey
	switch c.Op {
	case ChangeInsert, ChangeUpdateMerge, ChangeUpdateReplace, ChangeUpsertMerge, ChangeUpsertReplace:
		require.NotNil(t, c.Entity, "change %d (%s) has no image", c.Seq, c.Op.String())
		require.Equal(t, c.ETag, c.Entity.ETag)
		s[key] = feedEntity{props: c.Entity.Properties, etag: c.ETag}
	case ChangeDelete, ChangeExpire:
		delete(s, key)
	case ChangeDeleteRange:
		for k := range s {
			pk, rk, _ := cutKey(k)
			if pk == c.PartitionKey && (c.RowKey == "" || rk >= c.RowKey) && (c.ToRowKey == "" || rk < c.ToRowKey) {
				delete(s, k)
			}
		}
	case ChangeDropTable:
		clear(s)
	default:
		t.Fatalf("change %d: unknown op %d", c.Seq, c.Op)
	}
}

func cutKey(k string) (string, string, bool) {
	for i := 0; i < len(k); i++ {
		if k[i] == 0 {
			return k[:i], k[i+1:], true
		}
	}
	return k, "", false
}

// tableState reads the table into a feedState.
func tableState(t *testing.T, tb *Table) feedState {
	t.Helper()
	s := feedState{}
	for e, err := range tb.Query(ctx, Query{}) {
		require.NoError(t, err)
		s[e.PartitionKey+"\x00"+e.RowKey] = feedEntity{props: e.Properties, etag: e.ETag}
	}
	return s
}

// readChanges reads the feed from c to its end.
func readChanges(t *testing.T, tb *Table, q ChangesQuery) []Change {
	t.Helper()
	var out []Change
	for c, err := range tb.Changes(ctx, q) {
		require.NoError(t, err)
		out = append(out, c)
	}
	return out
}

// TestChangesModel runs random writes through every write path on a
// table with a feed (new images) and checks that replaying the feed from
// the beginning onto an empty state, and from random cursors onto the
// state at that cursor, always gives the table. With TTL, entities carry
// expiries, the clock moves, the sweeper runs in the background and on
// demand, and the replayed state, with what is past its expiry hidden as
// reads hide it, gives the table.
func TestChangesModel(t *testing.T) {
	for _, ttl := range []bool{false, true} {
		t.Run(fmt.Sprint("ttl=", ttl), func(t *testing.T) { runChangesModel(t, ttl) })
	}
}

func runChangesModel(t *testing.T, ttl bool) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	clk := newFakeClock()
	db := openTestDB(t, &Options{NoSync: true, Clock: clk.now, SweepRate: 1_000_000})
	tb, err := db.CreateTable(ctx, "feed")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{Images: ImagesNew}))
	if ttl {
		require.NoError(t, tb.SetTTL(ctx, TTL{Property: "Exp"}))
	}
	// live hides the entities past their expiry at the clock (always half
	// a second off an expiry), as reads do.
	live := func(s feedState) feedState {
		for k, e := range s {
			if exp, ok := e.props["Exp"].(time.Time); ok && ttl && !exp.After(clk.now()) {
				delete(s, k)
			}
		}
		return s
	}

	pks := []string{"a", "b", "c"}
	rk := func() string { return fmt.Sprintf("r%02d", rng.IntN(12)) }
	ent := func(pk, rk string) *Entity {
		p := map[string]any{"N": int32(rng.IntN(100))}
		if rng.IntN(2) == 0 {
			p[fmt.Sprintf("P%d", rng.IntN(4))] = fmt.Sprint(rng.IntN(1000))
		}
		if ttl && rng.IntN(2) == 0 {
			p["Exp"] = clk.now().Add(time.Duration(rng.IntN(6))*time.Second - 1500*time.Millisecond)
		}
		return &Entity{PartitionKey: pk, RowKey: rk, Properties: p}
	}
	type mark struct {
		cursor Cursor
		state  feedState
	}
	var marks []mark
	ops := 0
	for step := 0; step < 400; step++ {
		pk := pks[rng.IntN(len(pks))]
		cur := tableState(t, tb)
		etagOf := func(pk, rk string) ETag {
			if e, ok := cur[pk+"\x00"+rk]; ok && rng.IntN(4) > 0 {
				return e.etag
			}
			if rng.IntN(2) == 0 {
				return ETagAny
			}
			return ETag(etagFor(time.Unix(1, 0)))
		}
		kinds := 10
		if ttl {
			kinds = 12
		}
		switch rng.IntN(kinds) {
		case 0:
			_ = tb.Insert(ctx, ent(pk, rk()))
		case 1:
			r := rk()
			_ = tb.Update(ctx, ent(pk, r), Merge, etagOf(pk, r))
		case 2:
			r := rk()
			_ = tb.Update(ctx, ent(pk, r), Replace, etagOf(pk, r))
		case 3:
			_ = tb.Upsert(ctx, ent(pk, rk()), Merge)
		case 4:
			_ = tb.Upsert(ctx, ent(pk, rk()), Replace)
		case 5:
			r := rk()
			_ = tb.Delete(ctx, pk, r, etagOf(pk, r))
		case 6: // a transaction
			b := tb.NewBatch()
			used := map[string]bool{}
			for range 1 + rng.IntN(5) {
				r := rk()
				if used[r] {
					continue
				}
				used[r] = true
				switch rng.IntN(4) {
				case 0:
					b.Insert(ent(pk, r))
				case 1:
					b.Upsert(ent(pk, r), Merge)
				case 2:
					b.Update(ent(pk, r), Replace, etagOf(pk, r))
				default:
					b.Delete(pk, r, etagOf(pk, r))
				}
			}
			_ = b.Submit(ctx)
		case 7: // a bulk writer over every partition
			w, err := tb.NewBulkWriter(&BulkOptions{Action: []ActionType{ActionInsert, ActionUpsertMerge, ActionUpsertReplace}[rng.IntN(3)], ContinueOnError: true, BatchEntities: 1 + rng.IntN(8)})
			require.NoError(t, err)
			seen := map[string]bool{}
			for range rng.IntN(12) {
				p, r := pks[rng.IntN(len(pks))], rk()
				if seen[p+r] {
					continue
				}
				seen[p+r] = true
				require.NoError(t, w.Add(ctx, ent(p, r)))
			}
			require.NoError(t, w.Flush(ctx))
		case 8:
			from, to := "", ""
			if rng.IntN(3) > 0 {
				from = rk()
			}
			if rng.IntN(3) > 0 {
				to = rk()
			}
			if from != "" && to != "" && from > to {
				from, to = to, from
			}
			require.NoError(t, tb.Partition(pk).DeleteRange(ctx, from, to))
		case 9:
			if rng.IntN(4) == 0 {
				require.NoError(t, tb.Partition(pk).DeleteAll(ctx))
			}
		case 10, 11:
			clk.add(time.Second)
			if rng.IntN(2) == 0 {
				_, err := ttlEngine(db).SweepExpired(1 + rng.IntN(4))
				require.NoError(t, err)
			}
		}
		ops++
		if rng.IntN(8) == 0 {
			st, err := tb.ChangeFeed(ctx)
			require.NoError(t, err)
			marks = append(marks, mark{st.Latest, tableState(t, tb)})
		}
		if step%50 == 49 {
			want := tableState(t, tb)
			got := feedState{}
			prev := uint64(0)
			for _, c := range readChanges(t, tb, ChangesQuery{}) {
				require.Greater(t, c.Seq, prev, "changes out of order")
				prev = c.Seq
				got.applyChange(t, c)
			}
			requireSameState(t, want, live(got), "replay from the beginning after step %d (seed %d)", step, seed)
			for _, m := range marks {
				got := m.state.clone()
				for _, c := range readChanges(t, tb, ChangesQuery{From: m.cursor}) {
					got.applyChange(t, c)
				}
				requireSameState(t, want, live(got), "replay from %v after step %d (seed %d)", m.cursor, step, seed)
			}
		}
	}
	// A partition's changes alone rebuild the partition.
	for _, pk := range pks {
		got := feedState{}
		for _, c := range readChanges(t, tb, ChangesQuery{PartitionKey: pk}) {
			require.Equal(t, pk, c.PartitionKey)
			got.applyChange(t, c)
		}
		want := feedState{}
		for k, v := range tableState(t, tb) {
			if p, _, _ := cutKey(k); p == pk {
				want[k] = v
			}
		}
		requireSameState(t, want, live(got), "partition %s", pk)
	}
	if !ttl {
		return
	}
	// With nothing left to sweep, the replay is the table: every removal
	// is in the feed.
	for {
		n, err := ttlEngine(db).SweepExpired(1000)
		require.NoError(t, err)
		if n == 0 {
			break
		}
	}
	got, expiries := feedState{}, 0
	for _, c := range readChanges(t, tb, ChangesQuery{}) {
		if c.Op == ChangeExpire {
			_, ok := got[c.PartitionKey+"\x00"+c.RowKey]
			require.True(t, ok, "change %d: an expiry of an absent entity", c.Seq)
			expiries++
		}
		got.applyChange(t, c)
	}
	requireSameState(t, tableState(t, tb), got, "replay after a full sweep (seed %d)", seed)
	require.NotZero(t, expiries)
	t.Logf("%d expiries", expiries)
}

func requireSameState(t *testing.T, want, got feedState, msg string, args ...any) {
	t.Helper()
	m := fmt.Sprintf(msg, args...)
	require.Equal(t, slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(got)), m)
	for k, w := range want {
		require.Equal(t, w.props, got[k].props, "%q: %s", k, m)
		require.Equal(t, w.etag, got[k].etag, "%q: %s", k, m)
	}
}

func TestChangesRecordsEachAction(t *testing.T) {
	db := openTestDB(t, nil)
	tb, err := db.CreateTable(ctx, "tbl")
	require.NoError(t, err)
	st, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.False(t, st.Enabled)
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "before"}))
	requireCode(t, firstErr(tb.Changes(ctx, ChangesQuery{})), edm.CodeResourceNotFound)

	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{Images: ImagesKeysOnly}))
	st, err = tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.True(t, st.Enabled)
	require.Equal(t, ChangeFeedOptions{Retention: DefaultChangeRetention, Images: ImagesKeysOnly}, st.Options)

	e := &Entity{PartitionKey: "p", RowKey: "1", Properties: map[string]any{"A": int32(1)}}
	require.NoError(t, tb.Insert(ctx, e))
	require.NoError(t, tb.NewBatch().
		Insert(&Entity{PartitionKey: "p", RowKey: "2"}).
		Upsert(&Entity{PartitionKey: "p", RowKey: "3"}, Replace).
		Delete("p", "before", ETagAny).Submit(ctx))
	require.NoError(t, tb.Partition("p").DeleteRange(ctx, "2", "3"))
	cs := readChanges(t, tb, ChangesQuery{})
	require.Len(t, cs, 5)
	require.Equal(t, ChangeInsert, cs[0].Op)
	require.Equal(t, e.ETag, cs[0].ETag)
	require.Equal(t, e.Timestamp, cs[0].Timestamp)
	require.Nil(t, cs[0].Entity, "keys only")
	for i, op := range []ChangeOp{ChangeInsert, ChangeUpsertReplace, ChangeDelete} {
		c := cs[1+i]
		require.Equal(t, op, c.Op)
		require.Equal(t, cs[1].Seq, c.Commit)
		require.Equal(t, i, c.Index)
		require.Equal(t, 3, c.Count)
	}
	require.Equal(t, ETag(""), cs[3].ETag)
	require.Equal(t, Change{Op: ChangeDeleteRange, PartitionKey: "p", RowKey: "2", ToRowKey: "3", Kind: CommitRangeDelete, Count: 1},
		Change{Op: cs[4].Op, PartitionKey: cs[4].PartitionKey, RowKey: cs[4].RowKey, ToRowKey: cs[4].ToRowKey, Kind: cs[4].Kind, Count: cs[4].Count})

	// Resuming from each change's cursor (through its text) yields the rest.
	for i, c := range cs {
		cur, err := ParseCursor(c.Cursor.String())
		require.NoError(t, err)
		require.Equal(t, c.Seq, cur.Seq(), "a change's cursor is after its Seq")
		rest := readChanges(t, tb, ChangesQuery{From: cur})
		require.Len(t, rest, len(cs)-i-1)
		if len(rest) > 0 {
			require.Equal(t, cs[i+1].Seq, rest[0].Seq)
		}
	}
	st, err = tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.Equal(t, cs[4].Seq, st.Latest.Seq(), "the feed's end is after its last change")
	require.Zero(t, CursorNow().Seq())
	require.Zero(t, CursorAt(cs[1].Timestamp).Seq())
	// Now: nothing yet; a time: from that time on.
	require.Empty(t, readChanges(t, tb, ChangesQuery{From: CursorNow()}))
	require.Len(t, readChanges(t, tb, ChangesQuery{From: CursorAt(cs[1].Timestamp)}), 4)

	// A failed write records nothing.
	requireCode(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "1"}), edm.CodeEntityAlreadyExists)
	require.Len(t, readChanges(t, tb, ChangesQuery{}), 5)

	// Drop: a final change; the old cursor fails clearly on the new table.
	last := cs[4].Cursor
	require.NoError(t, db.DeleteTable(ctx, "tbl"))
	final := readChanges(t, tb, ChangesQuery{From: last})
	require.Len(t, final, 1)
	require.Equal(t, ChangeDropTable, final[0].Op)
	err = firstErr(tb.Changes(ctx, ChangesQuery{From: final[0].Cursor}))
	require.ErrorIs(t, err, ErrCursorStale)
	tb, err = db.CreateTable(ctx, "tbl")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{}))
	err = firstErr(tb.Changes(ctx, ChangesQuery{From: last}))
	requireCode(t, err, edm.CodeInvalidInput)
	require.ErrorIs(t, err, ErrCursorStale)

	// Disable deletes the records; cursors then fail.
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "1"}))
	cs = readChanges(t, tb, ChangesQuery{})
	require.Len(t, cs, 1)
	require.NoError(t, tb.DisableChangeFeed(ctx))
	require.NoError(t, tb.DisableChangeFeed(ctx))
	requireCode(t, firstErr(tb.Changes(ctx, ChangesQuery{From: cs[0].Cursor})), edm.CodeResourceNotFound)
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{}))
	err = firstErr(tb.Changes(ctx, ChangesQuery{From: cs[0].Cursor}))
	requireCode(t, err, edm.CodeOutOfRangeInput)
	require.ErrorIs(t, err, ErrCursorExpired)

	// Bad input.
	requireCode(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{Retention: -1}), edm.CodeInvalidInput)
	requireCode(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{Images: 9}), edm.CodeInvalidInput)
	for _, s := range []string{"x", "1.", ".1", "0.5", "1.2.3", "+1.2", "1.-2", "-1.2", "18446744073709551616.1"} {
		_, err := ParseCursor(s)
		requireCode(t, err, edm.CodeInvalidInput)
	}
}

// firstErr returns the first error an iteration yields.
func firstErr(seq func(func(Change, error) bool)) error {
	var out error
	for _, err := range seq {
		if err != nil {
			out = err
			break
		}
	}
	return out
}

func TestChangesRetention(t *testing.T) {
	db := openTestDB(t, nil)
	tb, err := db.CreateTable(ctx, "tbl")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{Retention: 100 * time.Millisecond}))
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "1"}))
	first := readChanges(t, tb, ChangesQuery{})
	require.Len(t, first, 1)
	// Pruned in the background: the beginning moves past it, and a
	// cursor before it expires.
	require.Eventually(t, func() bool { return len(readChanges(t, tb, ChangesQuery{})) == 0 }, 5*time.Second, 5*time.Millisecond)
	st, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.Equal(t, first[0].Cursor, st.Oldest)
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "2"}))
	require.Len(t, readChanges(t, tb, ChangesQuery{From: first[0].Cursor}), 1)
	old := Cursor{kind: cursorAt, table: first[0].Cursor.table, seq: first[0].Seq - 1}
	err = firstErr(tb.Changes(ctx, ChangesQuery{From: old}))
	requireCode(t, err, edm.CodeOutOfRangeInput)
	require.ErrorIs(t, err, ErrCursorExpired)
	requireCode(t, firstErr(tb.Changes(ctx, ChangesQuery{From: CursorAt(time.Now().Add(-time.Hour))})), edm.CodeOutOfRangeInput)
}

func TestChangesFollow(t *testing.T) {
	db := openTestDB(t, nil)
	tb, err := db.CreateTable(ctx, "tbl")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{Images: ImagesNew}))
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan Change, 100)
	errc := make(chan error, 1)
	st, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	go func() {
		defer close(got)
		for c, err := range tb.Changes(fctx, ChangesQuery{From: st.Latest, Follow: true}) {
			if err != nil {
				errc <- err
				return
			}
			got <- c
		}
	}()
	for i := range 20 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}))
		select {
		case c := <-got:
			require.Equal(t, fmt.Sprint(i), c.RowKey)
		case err := <-errc:
			t.Fatal(err)
		case <-time.After(5 * time.Second):
			t.Fatal("the follower did not see the commit")
		}
	}
	cancel()
	for range got {
	}
	select {
	case err := <-errc:
		t.Fatalf("cancel: %v", err)
	default:
	}

	// The drop ends a follower after its final change; Close ends one too.
	// The follower is known to be following once it has seen an insert
	// made after it started.
	var wg sync.WaitGroup
	wg.Add(1)
	var last Change
	following := make(chan struct{})
	st, err = tb.ChangeFeed(ctx)
	require.NoError(t, err)
	go func() {
		defer wg.Done()
		for c, err := range tb.Changes(ctx, ChangesQuery{From: st.Latest, Follow: true}) {
			if err != nil {
				return
			}
			if c.RowKey == "ready" { // the one insert
				close(following)
			}
			last = c
		}
	}()
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "ready"}))
	select {
	case <-following:
	case <-time.After(5 * time.Second):
		t.Fatal("the follower did not see the insert")
	}
	require.NoError(t, db.DeleteTable(ctx, "tbl"))
	wg.Wait()
	require.Equal(t, ChangeDropTable, last.Op)

	tb, err = db.CreateTable(ctx, "tbl")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{}))
	done := make(chan error, 1)
	seen := make(chan struct{})
	go func() {
		var out error
		first := true
		for _, err := range tb.Changes(ctx, ChangesQuery{Follow: true}) {
			if err == nil && first {
				close(seen) // following
				first = false
			}
			out = err
		}
		done <- out
	}()
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "r"}))
	select {
	case <-seen:
	case <-time.After(5 * time.Second):
		t.Fatal("the follower did not see the insert")
	}
	require.NoError(t, db.Close())
	select {
	case err := <-done:
		require.True(t, errors.Is(err, ErrClosed), "%v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end the follower")
	}
}

func TestChangesSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, nil)
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "tbl")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{Images: ImagesNew, Retention: time.Hour}))
	for i := range 5 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}))
	}
	before := readChanges(t, tb, ChangesQuery{})
	require.NoError(t, db.Close())
	db, err = Open(dir, nil)
	require.NoError(t, err)
	defer db.Close()
	tb = db.Table("tbl")
	st, err := tb.ChangeFeed(ctx)
	require.NoError(t, err)
	require.Equal(t, ChangeFeedOptions{Images: ImagesNew, Retention: time.Hour}, st.Options)
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "x"}))
	after := readChanges(t, tb, ChangesQuery{})
	require.Len(t, after, 6)
	require.Equal(t, before, after[:5])
	require.Greater(t, after[5].Seq, after[4].Seq)
}

// expiringTable is a table whose first reads of the feed fail with
// ErrCursorExpired, as they do when the pruner moves the feed's oldest
// change between Changes resolving its start and its first read.
type expiringTable struct {
	driver.Table
	driver.ChangeFeeder
	fails *int
}

func (t expiringTable) ReadChanges(ctx context.Context, req driver.ChangesRequest, emit func(driver.ChangeRecord) error) (driver.ChangesResult, error) {
	if *t.fails > 0 {
		*t.fails--
		return driver.ChangesResult{}, fmt.Errorf("%w: pruned under the reader", driver.ErrCursorExpired)
	}
	return t.ChangeFeeder.ReadChanges(ctx, req, emit)
}

// TestChangesStartPrunedUnderReader checks that a start resolved from the
// feed's state is resolved again when pruned before the first read, a
// bounded number of times, and that an explicit cursor is never moved.
func TestChangesStartPrunedUnderReader(t *testing.T) {
	o := (*Options)(nil).withDefaults()
	e, err := engine.OpenInMemory(o.engineOptions())
	require.NoError(t, err)
	fails := 0
	expiring := func(inner driver.Table) driver.Table {
		return expiringTable{Table: inner, ChangeFeeder: inner.(driver.ChangeFeeder), fails: &fails}
	}
	db, err := OpenDriver(wrappingConn{Conn: e, wrap: expiring}, nil)
	require.NoError(t, err)
	defer db.Close()
	tb, err := db.CreateTable(ctx, "tbl")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{}))
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "1"}))
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "2"}))
	all := readChanges(t, tb, ChangesQuery{})
	require.Len(t, all, 2)

	for _, from := range []Cursor{{}, CursorAt(time.Now().Add(-time.Minute))} {
		fails = 3
		require.Equal(t, all, readChanges(t, tb, ChangesQuery{From: from}))
		require.Zero(t, fails)
	}
	fails = 3
	require.Empty(t, readChanges(t, tb, ChangesQuery{From: CursorNow()}))

	// An explicit cursor expires at once.
	fails = 1
	err = firstErr(tb.Changes(ctx, ChangesQuery{From: all[0].Cursor}))
	require.ErrorIs(t, err, ErrCursorExpired)
	require.Zero(t, fails)

	// A start pruned at every read ends the iteration.
	fails = maxChangesRestarts + 1
	err = firstErr(tb.Changes(ctx, ChangesQuery{}))
	require.ErrorIs(t, err, ErrCursorExpired)
	require.Zero(t, fails)
}
