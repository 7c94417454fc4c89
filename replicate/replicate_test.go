package replicate_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/replicate"
	"github.com/tablestore/tablestore/tablestoretest"
)

// contents reads a table as "pk/rk" -> properties.
func contents(t *testing.T, tb *ts.Table) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for e, err := range tb.Query(context.Background(), ts.Query{}) {
		require.NoError(t, err)
		out[e.PartitionKey+"/"+e.RowKey] = e.Properties
	}
	return out
}

type savedPositions struct {
	mu sync.Mutex
	m  map[string]ts.Cursor
}

func (p *savedPositions) Load(t string) (ts.Cursor, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.m[t]
	return c, ok, nil
}

func (p *savedPositions) Save(t string, c ts.Cursor) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[t] = c
	return nil
}

// TestRun mirrors a store into another while writers run, stopping the
// replicator at random moments and starting it again from its saved
// positions: the target ends equal to the source. (The command's tests
// in cmd/tablestore replicate into a server over the remote driver.)
func TestRun(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	ctx := context.Background()
	src, err := ts.OpenInMemory(&ts.Options{NoSync: true})
	require.NoError(t, err)
	defer src.Close()
	dst, err := ts.OpenInMemory(nil)
	require.NoError(t, err)
	defer dst.Close()

	names := []string{"Orders", "Users"}
	for _, n := range names {
		tb, err := src.CreateTable(ctx, n)
		require.NoError(t, err)
		tablestoretest.RandomWrites(t, tb, rng.Uint64(), 300) // before replication: the copy
	}
	pos := &savedPositions{m: map[string]ts.Cursor{}}
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tablestoretest.RandomWrites(t, src.Table(n), uint64(seed)+uint64(i)+1, 1500)
		}()
	}
	writing := make(chan struct{})
	go func() { wg.Wait(); close(writing) }()
	var progress sync.Map
	for round := 0; ; round++ {
		rctx, cancel := context.WithTimeout(ctx, time.Duration(20+rng.Intn(200))*time.Millisecond)
		err := replicate.Run(rctx, src, dst, replicate.Options{Tables: names, Positions: pos, Follow: true, SaveEvery: 10 * time.Millisecond,
			OnProgress: func(p replicate.Progress) { progress.Store(p.Table, p) }})
		cancel()
		require.NoError(t, err, "round %d", round)
		select {
		case <-writing:
		default:
			continue
		}
		break
	}
	// Catch up without following, then compare.
	require.NoError(t, replicate.Run(ctx, src, dst, replicate.Options{Tables: names, Positions: pos, OnProgress: func(p replicate.Progress) { progress.Store(p.Table, p) }}))
	for _, n := range names {
		want, got := contents(t, src.Table(n)), contents(t, dst.Table(n))
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Logf("extra %s %v", k, got[k])
				for c, err := range src.Table(n).Changes(ctx, ts.ChangesQuery{}) {
					require.NoError(t, err)
					if c.PartitionKey+"/"+c.RowKey == k || (c.Op == ts.ChangeDeleteRange && k[:2] == c.PartitionKey) {
						t.Logf("  %s %s %s %s %s", c.Cursor, c.Op.String(), c.PartitionKey, c.RowKey, c.ToRowKey)
					}
				}
				p, _, _ := pos.Load(n)
				t.Logf("  position %s", p)
				break
			}
		}
		require.Equal(t, len(want), len(got), "table %s (seed %d)", n, seed)
		require.Equal(t, want, got, "table %s (seed %d)", n, seed)
		p, ok := progress.Load(n)
		require.True(t, ok)
		require.Equal(t, n, p.(replicate.Progress).Table)
	}

	// A feed of keys only cannot be replicated; a refused change is named.
	tb, err := src.CreateTable(ctx, "KeysOnly")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{}))
	err = replicate.Run(ctx, src, dst, replicate.Options{Tables: []string{"KeysOnly"}})
	require.Equal(t, edm.CodeInvalidInput, ts.ErrorCode(err), "%v", err)

	tb, err = src.CreateTable(ctx, "Refused")
	require.NoError(t, err)
	require.NoError(t, replicate.Run(ctx, src, dst, replicate.Options{Tables: []string{"Refused"}, Positions: pos}))
	require.NoError(t, dst.DeleteTable(ctx, "Refused"))
	require.NoError(t, tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "r"}))
	err = replicate.Run(ctx, src, dst, replicate.Options{Tables: []string{"Refused"}, Positions: pos})
	var re *replicate.ChangeError
	require.True(t, errors.As(err, &re), "%v", err)
	require.Equal(t, "r", re.Change.RowKey)
	require.Contains(t, err.Error(), "insert of")
	require.Equal(t, edm.CodeTableNotFound, ts.ErrorCode(err))
}

// TestRunExpiry replicates a table with TTL settings: an entity
// removed by the source's sweeper, and one a write replaced after it
// expired, leave the target as they leave the source; applying the feed
// again from an earlier position changes nothing.
func TestRunExpiry(t *testing.T) {
	ctx := context.Background()
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	src, err := ts.OpenInMemory(&ts.Options{NoSync: true, Clock: func() time.Time { return time.Unix(0, clock.Load()) }})
	require.NoError(t, err)
	defer src.Close()
	dst, err := ts.OpenInMemory(nil)
	require.NoError(t, err)
	defer dst.Close()
	tb, err := src.CreateTable(ctx, "Sessions")
	require.NoError(t, err)
	require.NoError(t, tb.SetTTL(ctx, ts.TTL{Default: time.Hour}))
	for _, rk := range []string{"a", "b", "c", "keep"} {
		require.NoError(t, tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: rk, Properties: map[string]any{"V": rk}}))
	}
	pos := &savedPositions{m: map[string]ts.Cursor{}}
	opts := replicate.Options{Tables: []string{"Sessions"}, Positions: pos}
	require.NoError(t, replicate.Run(ctx, src, dst, opts))
	require.Len(t, contents(t, dst.Table("Sessions")), 4)
	before, _, _ := pos.Load("Sessions")

	// Everything but "keep" (written again) expires; "a" is written over
	// before the sweeper comes, the sweeper removes "b" and "c".
	clock.Add(int64(30 * time.Minute))
	require.NoError(t, tb.Upsert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "keep", Properties: map[string]any{"V": "kept"}}, ts.Replace))
	clock.Add(int64(40 * time.Minute))
	require.NoError(t, tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "a", Properties: map[string]any{"V": "again"}}))
	require.Eventually(t, func() bool {
		n, err := tb.ExpiredCount(ctx)
		require.NoError(t, err)
		return n == 0
	}, 10*time.Second, 5*time.Millisecond, "the sweeper removes b and c")
	var ops []string
	for c, err := range tb.Changes(ctx, ts.ChangesQuery{From: before}) {
		require.NoError(t, err)
		ops = append(ops, c.Op.String()+" "+c.RowKey)
	}
	require.ElementsMatch(t, []string{"upsertReplace keep", "expire a", "insert a", "expire b", "expire c"}, ops)
	require.Equal(t, []string{"upsertReplace keep", "expire a", "insert a"}, ops[:3])

	require.NoError(t, replicate.Run(ctx, src, dst, opts))
	want := map[string]map[string]any{"p/a": {"V": "again"}, "p/keep": {"V": "kept"}}
	require.Equal(t, want, contents(t, src.Table("Sessions")))
	require.Equal(t, want, contents(t, dst.Table("Sessions")))
	// Again from the earlier position: the expiries of entities already
	// gone, and the writes, apply to no effect.
	require.NoError(t, pos.Save("Sessions", before))
	require.NoError(t, replicate.Run(ctx, src, dst, opts))
	require.Equal(t, want, contents(t, dst.Table("Sessions")))
}

// TestRunCaughtUp: a following replicator whose feed goes quiet
// saves its position and reports the table caught up with lag 0, once,
// without waiting for more commits or for its end; a later commit makes
// it report again.
func TestRunCaughtUp(t *testing.T) {
	ctx := context.Background()
	src, err := ts.OpenInMemory(&ts.Options{NoSync: true})
	require.NoError(t, err)
	defer src.Close()
	dst, err := ts.OpenInMemory(nil)
	require.NoError(t, err)
	defer dst.Close()
	tb, err := src.CreateTable(ctx, "Quiet")
	require.NoError(t, err)
	require.NoError(t, tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "0"}))
	// Another table's commits move the store-wide end: not a lag of T.
	other, err := src.CreateTable(ctx, "Other")
	require.NoError(t, err)
	require.NoError(t, other.EnableChangeFeed(ctx, ts.ChangeFeedOptions{}))

	pos := &savedPositions{m: map[string]ts.Cursor{}}
	reports := make(chan replicate.Progress, 100)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- replicate.Run(rctx, src, dst, replicate.Options{Tables: []string{"Quiet"}, Positions: pos, Follow: true,
			SaveEvery: 20 * time.Millisecond, OnProgress: func(p replicate.Progress) { reports <- p }})
	}()
	next := func() replicate.Progress {
		select {
		case p := <-reports:
			return p
		case <-time.After(10 * time.Second):
			t.Fatal("no progress report")
			return replicate.Progress{}
		}
	}
	caughtUp := func() replicate.Progress {
		for {
			if p := next(); p.CaughtUp {
				return p
			}
		}
	}
	p := next()
	require.Equal(t, int64(1), p.Copied, "the copy is reported")
	require.Greater(t, p.CopyTime, time.Duration(0))
	p = caughtUp()
	require.Zero(t, p.LagChanges)

	for i := range 5 {
		require.NoError(t, tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i + 1)}))
		require.NoError(t, other.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}))
	}
	p = caughtUp()
	require.Equal(t, int64(5), p.Applied)
	require.Zero(t, p.LagChanges)
	require.Zero(t, p.LagTime)
	// The position is saved while still running: a new replicator starts
	// from the last change.
	saved, ok, err := pos.Load("Quiet")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, p.Cursor, saved)
	var last ts.Change
	for c, err := range tb.Changes(ctx, ts.ChangesQuery{}) {
		require.NoError(t, err)
		last = c
	}
	require.Equal(t, last.Cursor, saved)
	// Quiet: no more reports until the next commit.
	select {
	case p := <-reports:
		t.Fatalf("a report while quiet: %+v", p)
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	require.NoError(t, <-done)
	n := 0
	for _, err := range dst.Table("Quiet").Query(ctx, ts.Query{}) {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 6, n)
}
