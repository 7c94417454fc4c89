package tablestore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/engine"
)

// fakeClock is a settable Options.Clock.
type fakeClock struct{ ns atomic.Int64 }

func newFakeClock() *fakeClock {
	c := &fakeClock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	return c
}
func (c *fakeClock) now() time.Time      { return time.Unix(0, c.ns.Load()).UTC() }
func (c *fakeClock) add(d time.Duration) { c.ns.Add(int64(d)) }
func (c *fakeClock) set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func isCode(err error, code Code) bool   { return ErrorCode(err) == code }
func ttlEngine(db *DB) *engine.Engine    { return db.conn.(*engine.Engine) }
func ent(pk, rk string, props map[string]any) *Entity {
	return &Entity{PartitionKey: pk, RowKey: rk, Properties: props}
}

func TestTTLSettingsValidateAndPersist(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(dir, nil)
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Sessions")
	require.NoError(t, err)
	s, err := tb.TTL(ctx)
	require.NoError(t, err)
	require.Equal(t, TTL{}, s)
	require.True(t, isCode(tb.SetTTL(ctx, TTL{Default: -time.Second}), edm.CodeInvalidInput))
	require.True(t, isCode(tb.SetTTL(ctx, TTL{Property: "Bad-Name"}), edm.CodePropertyNameInvalid))
	require.True(t, isCode(tb.SetTTL(ctx, TTL{Property: "Timestamp"}), edm.CodeInvalidInput))
	require.True(t, isCode(db.Table("Nope").SetTTL(ctx, TTL{Default: time.Hour}), edm.CodeTableNotFound))
	require.NoError(t, tb.SetTTL(ctx, TTL{Default: 24 * time.Hour, Property: "ExpiresAt"}))
	require.NoError(t, db.Close())

	db, err = Open(dir, nil)
	require.NoError(t, err)
	s, err = db.Table("sessions").TTL(ctx)
	require.NoError(t, err)
	require.Equal(t, TTL{Default: 24 * time.Hour, Property: "ExpiresAt"}, s)
	// A table created again under the name starts without settings.
	require.NoError(t, db.DeleteTable(ctx, "Sessions"))
	tb, err = db.CreateTable(ctx, "Sessions")
	require.NoError(t, err)
	s, err = tb.TTL(ctx)
	require.NoError(t, err)
	require.Equal(t, TTL{}, s)
	require.NoError(t, db.Close())
}

// TestTTLExpiredIsAbsent walks one entity through expiry on every read
// and precondition, a clock step back and a restart.
func TestTTLExpiredIsAbsent(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	clk := newFakeClock()
	opts := &Options{Clock: clk.now}
	db, err := Open(dir, opts)
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Ttl")
	require.NoError(t, err)
	require.NoError(t, tb.CreateIndex(ctx, IndexSpec{Name: "ByV", Properties: []string{"V"}}))
	require.NoError(t, tb.SetTTL(ctx, TTL{Default: time.Hour, Property: "ExpiresAt"}))
	start := clk.now()
	require.NoError(t, tb.Insert(ctx, ent("p", "default", map[string]any{"V": int32(1)})))
	require.NoError(t, tb.Insert(ctx, ent("p", "own", map[string]any{"V": int32(1), "ExpiresAt": start.Add(10 * time.Minute)})))
	require.NoError(t, tb.Insert(ctx, ent("p", "far", map[string]any{"V": int32(1), "ExpiresAt": start.Add(100 * time.Hour)})))

	live := func() []string {
		var out []string
		for e, err := range tb.Query(ctx, Query{}) {
			require.NoError(t, err)
			out = append(out, e.RowKey)
		}
		var viaIndex []string
		for e, err := range tb.Query(ctx, Query{Filter: "V eq 1"}) {
			require.NoError(t, err)
			viaIndex = append(viaIndex, e.RowKey)
		}
		require.Equal(t, out, viaIndex)
		return out
	}
	require.Equal(t, []string{"default", "far", "own"}, live())
	clk.add(11 * time.Minute)
	require.Equal(t, []string{"default", "far"}, live())
	_, err = tb.Get(ctx, "p", "own", nil)
	require.True(t, isCode(err, edm.CodeResourceNotFound), "%v", err)
	require.True(t, isCode(tb.Update(ctx, ent("p", "own", nil), Merge, "*"), edm.CodeResourceNotFound))
	require.True(t, isCode(tb.Delete(ctx, "p", "own", "*"), edm.CodeResourceNotFound))

	clk.add(time.Hour)
	require.Equal(t, []string{"far"}, live())
	// A step back of the clock brings nothing back.
	clk.set(start)
	require.Equal(t, []string{"far"}, live())
	_, err = tb.Get(ctx, "p", "default", nil)
	require.True(t, isCode(err, edm.CodeResourceNotFound), "%v", err)
	// Insert over an expired entity succeeds; a transaction sees it absent.
	require.NoError(t, tb.Insert(ctx, ent("p", "own", map[string]any{"V": int32(1)})))
	err = tb.NewBatch().Insert(ent("p", "default", map[string]any{"V": int32(1)})).Submit(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{"default", "far", "own"}, live())
	n, err := tb.ExpiredCount(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	// Expire them again, close, reopen with the clock stepped back.
	clk.add(3 * time.Hour)
	require.Equal(t, []string{"far"}, live())
	require.NoError(t, db.Close())
	clk.set(start)
	db, err = Open(dir, opts)
	require.NoError(t, err)
	tb = db.Table("Ttl")
	require.Equal(t, []string{"far"}, live())
	// The background sweeper, resumed at Open, removes them physically,
	// index entries too.
	require.Eventually(t, func() bool { return ttlEngine(db).Swept() == 2 }, 10*time.Second, time.Millisecond)
	n, err = tb.ExpiredCount(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	rep, err := db.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
	// Settings that change apply to stored entities at once.
	require.NoError(t, tb.SetTTL(ctx, TTL{}))
	require.Equal(t, []string{"far"}, live())
	require.NoError(t, tb.SetTTL(ctx, TTL{Default: time.Nanosecond * 100}))
	require.Empty(t, live())
	require.NoError(t, db.Close())
}

// ttlModelEntity is the model's entity: its properties and the clock
// when it was written.
type ttlModelEntity struct {
	props   map[string]any
	written time.Time
}

// TestTTLModel runs seeded random operations against a table with
// changing TTL settings, a clock that jumps forward and steps back, and
// a sweeper running concurrently, and checks every read against a model.
// Expiries are kept half a second off every clock reading, so the ticks
// the store's clock adds to keep Timestamps increasing never matter. The
// table's change feed is on: replayed from the beginning, or from a
// cursor onto the table as it was there, with the entities past their
// expiry hidden as reads hide them, it gives the table at every check,
// and with nothing left to sweep it gives the table as it is, unfiltered.
func TestTTLModel(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { runTTLModel(t, seed) })
	}
}

func runTTLModel(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 27))
	clk := newFakeClock()
	db, err := OpenInMemory(&Options{Clock: clk.now, SweepRate: 1_000_000})
	require.NoError(t, err)
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Model")
	require.NoError(t, err)
	require.NoError(t, tb.CreateIndex(ctx, IndexSpec{Name: "ByV", Properties: []string{"V"}}))
	require.NoError(t, tb.EnableChangeFeed(ctx, ChangeFeedOptions{Images: ImagesNew}))

	// Every clock reading is shown to the store at once (a read of a
	// table with settings observes the clock), so the store's never-
	// backwards "now" is the greatest reading, as the model's.
	ticker, err := db.CreateTable(ctx, "Ticker")
	require.NoError(t, err)
	require.NoError(t, ticker.SetTTL(ctx, TTL{Property: "ExpiresAt"}))
	require.NoError(t, ticker.Insert(ctx, ent("p", "r", nil)))
	observe := func() {
		_, err := ticker.Get(ctx, "p", "r", nil)
		require.NoError(t, err)
	}
	observe()
	model := map[[2]string]ttlModelEntity{}
	var settings TTL
	maxNow := clk.now()
	expired := func(m ttlModelEntity) bool {
		if settings.Property != "" {
			if v, ok := m.props[settings.Property].(time.Time); ok {
				return !v.After(maxNow)
			}
		}
		if settings.Default > 0 {
			return !m.written.Add(settings.Default).After(maxNow)
		}
		return false
	}
	feedExpired := func(e feedEntity, written time.Time) bool {
		return expired(ttlModelEntity{props: e.props, written: written})
	}
	// An expiry is the entity's ExpiresAt, or its Timestamp plus one of
	// the defaults (whole seconds and a half).
	checkExpiry := func(c Change, e feedEntity, written time.Time) {
		if v, ok := e.props["ExpiresAt"].(time.Time); ok && v.Equal(c.Expiry) {
			return
		}
		d := c.Expiry.Sub(written)
		require.True(t, d > 0 && d%time.Second == 500*time.Millisecond, "change %d: expiry %v of an entity written at %v (%v)", c.Seq, c.Expiry, written, e.props)
	}
	var marks []ttlFeedMark
	checkFeed := func(step int, final bool) {
		want := tableState(t, tb)
		got := replayTTLFeed(t, tb, ChangesQuery{}, feedState{}, nil, true, checkExpiry)
		for k, e := range got.state {
			if feedExpired(e, got.written[k]) {
				require.False(t, final, "seed %d step %d: %q is past its expiry, unswept, with nothing left to sweep", seed, step, k)
				delete(got.state, k)
			}
		}
		requireSameState(t, want, got.state, "seed %d step %d: replay from the beginning", seed, step)
		if final {
			t.Logf("seed %d: expiries recorded by sweeps %d, by writes %d, by bulk commits %d", seed, got.expiries[CommitSweep], got.expiries[CommitSingle], got.expiries[CommitBulk])
			require.NotZero(t, got.expiries[CommitSweep], "seed %d: no sweep recorded an expiry", seed)
			require.NotZero(t, got.expiries[CommitSingle], "seed %d: no write over an expired entity", seed)
		}
		for _, m := range marks {
			got := replayTTLFeed(t, tb, ChangesQuery{From: m.cursor}, m.state.clone(), maps.Clone(m.written), false, checkExpiry)
			for k, e := range got.state {
				if feedExpired(e, got.written[k]) {
					delete(got.state, k)
				}
			}
			requireSameState(t, want, got.state, "seed %d step %d: replay from %s", seed, step, m.cursor)
		}
		if rng.IntN(3) == 0 {
			st, err := tb.ChangeFeed(ctx)
			require.NoError(t, err)
			m := ttlFeedMark{cursor: st.Latest, state: tableState(t, tb), written: map[string]time.Time{}}
			for k := range m.state {
				m.written[k] = got.written[k]
			}
			marks = append(marks, m)
		}
	}
	liveModel := func() map[[2]string]ttlModelEntity {
		out := map[[2]string]ttlModelEntity{}
		for k, m := range model {
			if !expired(m) {
				out[k] = m
			}
		}
		return out
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if _, err := ttlEngine(db).SweepExpired(7); err != nil {
				t.Errorf("sweep: %v", err)
				return
			}
			time.Sleep(50 * time.Microsecond) // sleep: the sweeper's pace
		}
	}()
	defer func() { stop.Store(true); wg.Wait() }()

	key := func() (string, string) { return fmt.Sprintf("p%d", rng.IntN(3)), fmt.Sprintf("r%d", rng.IntN(6)) }
	props := func() map[string]any {
		p := map[string]any{"V": int32(rng.IntN(3))}
		if rng.IntN(2) == 0 {
			p["ExpiresAt"] = clk.now().Add(time.Duration(rng.IntN(8))*time.Second - 4*time.Second + 500*time.Millisecond)
		}
		return p
	}
	checkRow := func(step int, k [2]string, e *Entity) {
		m, ok := model[k]
		if !ok || expired(m) {
			_, gerr := tb.Get(ctx, k[0], k[1], nil)
			st, _ := tb.TTL(ctx)
			t.Logf("get: %v; store settings %+v", gerr, st)
		}
		require.True(t, ok && !expired(m), "seed %d step %d: %v returned but absent in the model (%v %+v; settings %+v, now %v; got %v %v)",
			seed, step, k, ok, m, settings, maxNow, e.Timestamp, e.Properties)
		want := maps.Clone(m.props)
		got := maps.Clone(e.Properties)
		for name, v := range want {
			if tv, ok := v.(time.Time); ok {
				want[name] = tv.UTC().Truncate(100)
			}
		}
		for name, v := range got {
			if tv, ok := v.(time.Time); ok {
				got[name] = tv.UTC()
			}
		}
		require.Equal(t, want, got, "seed %d step %d: %v", seed, step, k)
	}
	write := func(step int, err error, wantOK bool, k [2]string, p map[string]any, merge bool) {
		if !wantOK {
			require.Error(t, err, "seed %d step %d: %v (%+v; settings %+v, now %v)", seed, step, k, model[k], settings, maxNow)
			return
		}
		require.NoError(t, err, "seed %d step %d: %v (%+v; settings %+v, now %v)", seed, step, k, model[k], settings, maxNow)
		if p == nil {
			delete(model, k)
			return
		}
		if merge {
			if m, ok := model[k]; ok && !expired(m) {
				merged := maps.Clone(m.props)
				maps.Copy(merged, p)
				p = merged
			}
		}
		model[k] = ttlModelEntity{props: p, written: maxNow} // Timestamps never go backwards
	}
	for step := range 800 {
		pk, rk := key()
		k := [2]string{pk, rk}
		m, present := model[k]
		present = present && !expired(m)
		switch op := rng.IntN(100); {
		case op < 8:
			clk.add(time.Duration(rng.IntN(5)+1) * time.Second)
			observe()
		case op < 11:
			clk.add(-time.Duration(rng.IntN(5)+1) * time.Second)
			observe()
		case op < 14:
			s := TTL{}
			if rng.IntN(3) > 0 {
				s.Default = time.Duration(rng.IntN(6))*time.Second + 500*time.Millisecond
			}
			if rng.IntN(2) == 0 {
				s.Property = "ExpiresAt"
			}
			require.NoError(t, tb.SetTTL(ctx, s))
			for k, m := range model {
				if expired(m) {
					delete(model, k) // expired: gone for good
				}
			}
			settings = s
		case op < 30:
			p := props()
			write(step, tb.Upsert(ctx, ent(pk, rk, p), Replace), true, k, p, false)
		case op < 38:
			p := props()
			write(step, tb.Upsert(ctx, ent(pk, rk, p), Merge), true, k, p, true)
		case op < 48:
			p := props()
			write(step, tb.Insert(ctx, ent(pk, rk, p)), !present, k, p, false)
		case op < 55:
			p := props()
			write(step, tb.Update(ctx, ent(pk, rk, p), Merge, "*"), present, k, p, true)
		case op < 62:
			err := tb.Delete(ctx, pk, rk, "*")
			if !present {
				require.True(t, isCode(err, edm.CodeResourceNotFound), "seed %d step %d: %v", seed, step, err)
			}
			write(step, err, present, k, nil, false)
		case op < 68:
			// A transaction: insert rk and delete another row.
			rk2 := fmt.Sprintf("r%d", rng.IntN(6))
			k2 := [2]string{pk, rk2}
			if rk2 == rk {
				continue
			}
			m2, present2 := model[k2]
			present2 = present2 && !expired(m2)
			p := props()
			err := tb.NewBatch().Insert(ent(pk, rk, p)).Delete(pk, rk2, "*").Submit(ctx)
			if !present && present2 {
				require.NoError(t, err, "seed %d step %d", seed, step)
				write(step, nil, true, k, p, false)
				write(step, nil, true, k2, nil, false)
			} else {
				require.Error(t, err, "seed %d step %d", seed, step)
			}
		case op < 80:
			e, err := tb.Get(ctx, pk, rk, nil)
			if present {
				require.NoError(t, err, "seed %d step %d: %v", seed, step, k)
				checkRow(step, k, e)
			} else {
				require.True(t, isCode(err, edm.CodeResourceNotFound), "seed %d step %d: %v: %v", seed, step, k, err)
			}
		default:
			var q Query
			switch rng.IntN(3) {
			case 0:
			case 1:
				q.Filter = fmt.Sprintf("PartitionKey eq '%s'", pk)
			case 2:
				q.Filter = fmt.Sprintf("V eq %d", rng.IntN(3))
			}
			q.Top = rng.IntN(4) + 1
			var got [][2]string
			for e, err := range tb.Query(ctx, q) {
				require.NoError(t, err)
				gk := [2]string{e.PartitionKey, e.RowKey}
				checkRow(step, gk, e)
				got = append(got, gk)
			}
			var want [][2]string
			for k, m := range liveModel() {
				v := m.props["V"].(int32)
				if q.Filter == "" || q.Filter == fmt.Sprintf("PartitionKey eq '%s'", k[0]) || q.Filter == fmt.Sprintf("V eq %d", v) {
					want = append(want, k)
				}
			}
			sort.Slice(want, func(i, j int) bool {
				return want[i][0] < want[j][0] || want[i][0] == want[j][0] && want[i][1] < want[j][1]
			})
			if len(want) == 0 {
				want = nil
			}
			require.Equal(t, want, got, "seed %d step %d: %q", seed, step, q.Filter)
		}
		maxNow = later(maxNow, clk.now())
		if step%100 == 99 {
			checkFeed(step, false)
		}
	}
	stop.Store(true)
	wg.Wait()
	for {
		n, err := ttlEngine(db).SweepExpired(1000)
		require.NoError(t, err)
		if n == 0 {
			break
		}
	}
	checkFeed(800, true)
	n, err := tb.ExpiredCount(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	rep, err := db.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
}

// ttlFeedMark is a cursor of a feed and the table there, with each
// entity's Timestamp.
type ttlFeedMark struct {
	cursor  Cursor
	state   feedState
	written map[string]time.Time
	// expiries counts the ChangeExpire changes by commit kind.
	expiries map[driver.CommitKind]int
}

// replayTTLFeed replays q's changes onto s (written: the entities'
// Timestamps), as a replicator would, and checks every ChangeExpire:
// after its entity's last change, at or before its commit's Timestamp,
// with the removed entity's ETag, and passes checkExpiry (when not nil)
// the entity and its Timestamp; strict (a replay from the beginning)
// also requires the entity present, since the feed records no removal
// twice, and an insert only of an absent entity.
func replayTTLFeed(t *testing.T, tb *Table, q ChangesQuery, s feedState, written map[string]time.Time, strict bool, checkExpiry func(Change, feedEntity, time.Time)) ttlFeedMark {
	t.Helper()
	if written == nil {
		written = map[string]time.Time{}
	}
	var prev uint64
	var commit uint64
	expiries := map[driver.CommitKind]int{}
	for _, c := range readChanges(t, tb, q) {
		require.Greater(t, c.Seq, prev, "changes out of order")
		prev = c.Seq
		if c.Index == 0 {
			commit = c.Seq
		}
		require.Equal(t, commit, c.Commit, "change %d is out of its commit", c.Seq)
		key := c.PartitionKey + "\x00" + c.RowKey
		if c.Op != ChangeExpire {
			require.True(t, c.Expiry.IsZero())
			if _, ok := s[key]; ok && strict && c.Op == ChangeInsert {
				t.Fatalf("change %d: an insert of %q, which the replay still has", c.Seq, key)
			}
			s.applyChange(t, c)
			if c.Entity != nil {
				written[key] = c.Timestamp
			}
			continue
		}
		require.Nil(t, c.Entity)
		require.False(t, c.Expiry.After(c.Timestamp), "change %d: expiry %v after its removal %v", c.Seq, c.Expiry, c.Timestamp)
		e, ok := s[key]
		if strict {
			require.True(t, ok, "change %d: an expiry of %q, absent", c.Seq, key)
		}
		if ok {
			require.Equal(t, e.etag, c.ETag, "change %d: the expiry of %q names another version", c.Seq, key)
			if checkExpiry != nil {
				checkExpiry(c, e, written[key])
			}
			if c.Kind != CommitSweep {
				// A write's commit: the write's own change follows.
				require.Less(t, c.Index, c.Count-1, "change %d: a write's expiry ends its commit", c.Seq)
			}
		}
		delete(s, key)
		delete(written, key)
		expiries[c.Kind]++
	}
	return ttlFeedMark{state: s, written: written, expiries: expiries}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

var _ = errors.New
