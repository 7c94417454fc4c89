package tablestore_test

// The crash test of expiries in the change feed. A table with TTL
// settings (property ExpiresAt) and a feed on (new images) holds rows
// whose ExpiresAt is long past ("dead") or far ahead. A child process
// (TestTTLFeedCrashChild) opens the store, so the sweeper removes the
// dead rows, while a writer revives random rows (an upsert with a live
// ExpiresAt; over a dead row the sweeper has not reached, the write's
// commit records the expiry too), printing "ack I" after each synced
// upsert. The parent kills it with SIGKILL at a random moment, reopens
// the store and replays the feed from the beginning: sequence numbers
// strictly increase, every commit is whole, every expiry removes a row
// the replay holds, in the version it holds, every acknowledged revival
// is there, the feed reaches as far as before, and the replay is the
// table: its live rows are the table's, its dead rows as many as the
// sweeper has left. The parent then kills random rows again (upserts of a
// dead ExpiresAt) for the next child.

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	ts "github.com/tablestore/tablestore"
)

const (
	ttlFeedCrashChildEnv = "TABLESTORE_TTL_FEED_CRASH_CHILD" // the store's directory
	ttlFeedCrashSeedEnv  = "TABLESTORE_TTL_FEED_CRASH_SEED"
	ttlFeedCrashTable    = "TTLFeedCrash"
	ttlFeedCrashRows     = 3000
)

var (
	ttlFeedDead = time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	ttlFeedLive = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

func ttlFeedKey(i int) (pk, rk string) { return fmt.Sprintf("p%02d", i%20), fmt.Sprintf("r%05d", i) }

func TestTTLFeedCrashChild(t *testing.T) {
	dir := os.Getenv(ttlFeedCrashChildEnv)
	if dir == "" {
		t.Skip("runs only as the child process of TestTTLFeedCrash")
	}
	seed, _ := strconv.ParseInt(os.Getenv(ttlFeedCrashSeedEnv), 10, 64)
	rng := rand.New(rand.NewSource(seed))
	ctx := context.Background()
	db, err := ts.Open(dir, crashKey(&ts.Options{SweepRate: 4_000, MemTableSize: crashMemTable}))
	if err != nil {
		crashChildFail("open: %v", err)
	}
	tb := db.Table(ttlFeedCrashTable)
	fmt.Fprintf(os.Stdout, "ready\n")
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		i := rng.Intn(ttlFeedCrashRows)
		pk, rk := ttlFeedKey(i)
		e := &ts.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"I": int32(i), "ExpiresAt": ttlFeedLive, "Revived": true}}
		if err := tb.Upsert(ctx, e, ts.Replace); err != nil {
			crashChildFail("revive %d: %v", i, err)
		}
		fmt.Fprintf(os.Stdout, "ack %d\n", i)
	}
	os.Exit(0)
}

// ttlFeedRow is a row as the replay holds it.
type ttlFeedRow struct {
	props map[string]any
	etag  ts.ETag
}

// TestTTLFeedCrash runs the cycles on a plain store and on an encrypted
// one.
func TestTTLFeedCrash(t *testing.T) {
	if os.Getenv(ttlFeedCrashChildEnv) != "" {
		t.Skip("child process")
	}
	if testing.Short() {
		t.Skip("runs child processes")
	}
	eachCrashMode(t, func(t *testing.T, _ bool) { testTTLFeedCrash(t) })
}

func testTTLFeedCrash(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	cycles := envInt(t, "TABLESTORE_CRASH_CYCLES", scaled(2, 4))
	ctx := context.Background()
	dir := t.TempDir()

	// The table: every third row dead.
	db, err := ts.Open(dir, crashKey(&ts.Options{SweepRate: 1}))
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, ttlFeedCrashTable)
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{Images: ts.ImagesNew, Retention: time.Hour}))
	require.NoError(t, tb.SetTTL(ctx, ts.TTL{Property: "ExpiresAt"}))
	w, err := tb.NewBulkWriter(nil)
	require.NoError(t, err)
	for i := range ttlFeedCrashRows {
		exp := ttlFeedLive
		if i%3 == 0 {
			exp = ttlFeedDead
		}
		pk, rk := ttlFeedKey(i)
		require.NoError(t, w.Add(ctx, &ts.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"I": int32(i), "ExpiresAt": exp}}))
	}
	require.NoError(t, w.Flush(ctx))
	require.NoError(t, db.Close())

	var lastSeq uint64
	var expiries, inWrites int
	for cycle := range cycles {
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("cycle %d: %s (seed %d)", cycle, fmt.Sprintf(format, args...), seed)
		}
		acked := map[int]bool{}
		killAfter := time.Duration(20+rng.Intn(200)) * time.Millisecond
		stderr := runKilledChild(t, "TestTTLFeedCrashChild",
			[]string{ttlFeedCrashChildEnv + "=" + dir, fmt.Sprintf("%s=%d", ttlFeedCrashSeedEnv, seed+int64(cycle))},
			killAfter, fail, func(l string) {
				if !strings.HasPrefix(l, "ack ") {
					return
				}
				i, err := strconv.Atoi(l[4:])
				if err != nil {
					fail("bad line %q", l)
				}
				acked[i] = true
			})
		if strings.Contains(stderr, "panic") {
			fail("child: %s", stderr)
		}

		db, err := ts.Open(dir, crashKey(&ts.Options{SweepRate: 1}))
		if err != nil {
			fail("reopen: %v", err)
		}
		tb := db.Table(ttlFeedCrashTable)
		// The sweeper of this process removes a row a second: a check that
		// sees the feed and the table at different points is made again.
		var rows map[string]ttlFeedRow
		var problem string
		for attempt := 0; attempt < 50; attempt++ {
			if attempt > 0 {
				time.Sleep(20 * time.Millisecond) // sleep: let the sweeper move on before the check is made again
			}
			var seq uint64
			var e, iw int
			rows, seq, e, iw = replayTTLFeedCrash(t, tb, fail)
			if seq < lastSeq {
				fail("the feed ends at %d, before %d seen earlier", seq, lastSeq)
			}
			lastSeq, expiries, inWrites = seq, e, iw
			if problem = compareTTLFeedCrash(t, tb, rows); problem == "" {
				break
			}
		}
		if problem != "" {
			fail("%s", problem)
		}
		for i := range acked {
			pk, rk := ttlFeedKey(i)
			if r, ok := rows[pk+"/"+rk]; !ok || r.props["Revived"] != true {
				fail("acknowledged revival of row %d is not in the feed", i)
			}
		}
		// Kill random rows for the next child.
		for range 600 {
			i := rng.Intn(ttlFeedCrashRows)
			pk, rk := ttlFeedKey(i)
			if err := tb.Upsert(ctx, &ts.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"I": int32(i), "ExpiresAt": ttlFeedDead}}, ts.Replace); err != nil {
				fail("kill row %d: %v", i, err)
			}
		}
		if err := db.Close(); err != nil {
			fail("close: %v", err)
		}
		t.Logf("cycle %d: %d revivals acknowledged; the feed ends at %d, with %d expiries (%d by writes)", cycle, len(acked), lastSeq, expiries, inWrites)
	}
	if expiries == 0 {
		t.Fatalf("no expiry recorded (seed %d)", seed)
	}
}

// replayTTLFeedCrash reads the feed from the beginning and replays it,
// checking its order, its commits and its expiries (fail ends the test).
// It returns the rows, the last sequence number, and the numbers of
// expiries, and of those written by writes' commits.
func replayTTLFeedCrash(t *testing.T, tb *ts.Table, fail func(string, ...any)) (map[string]ttlFeedRow, uint64, int, int) {
	t.Helper()
	rows := map[string]ttlFeedRow{}
	var prev uint64
	var open *ts.Change
	expiries, inWrites := 0, 0
	for c, err := range tb.Changes(context.Background(), ts.ChangesQuery{}) {
		if err != nil {
			fail("read the feed: %v", err)
		}
		if c.Seq <= prev {
			fail("seq %d after %d", c.Seq, prev)
		}
		prev = c.Seq
		if c.Index == 0 {
			if open != nil {
				fail("commit %d ends after %d of %d changes", open.Commit, open.Index+1, open.Count)
			}
		} else if open == nil || c.Commit != open.Commit || c.Seq != open.Seq+1 || c.Count != open.Count {
			fail("change %d (index %d of commit %d) out of its commit", c.Seq, c.Index, c.Commit)
		}
		cc := c
		open = &cc
		if c.Index == c.Count-1 {
			open = nil
		}
		key := c.PartitionKey + "/" + c.RowKey
		switch c.Op {
		case ts.ChangeUpsertReplace, ts.ChangeInsert:
			if c.Entity == nil {
				fail("change %d has no image", c.Seq)
			}
			rows[key] = ttlFeedRow{props: c.Entity.Properties, etag: c.ETag}
		case ts.ChangeExpire:
			r, ok := rows[key]
			switch {
			case !ok:
				fail("change %d: an expiry of %s, absent", c.Seq, key)
			case r.etag != c.ETag:
				fail("change %d: the expiry of %s names %s, the replay holds %s", c.Seq, key, c.ETag, r.etag)
			case !c.Expiry.Equal(ttlFeedDead) || !r.props["ExpiresAt"].(time.Time).Equal(ttlFeedDead):
				fail("change %d: an expiry at %v of %s (ExpiresAt %v)", c.Seq, c.Expiry, key, r.props["ExpiresAt"])
			}
			delete(rows, key)
			expiries++
			if c.Kind != ts.CommitSweep {
				inWrites++
			}
		default:
			fail("change %d: op %s", c.Seq, c.Op.String())
		}
	}
	if open != nil {
		fail("the feed ends inside commit %d", open.Commit)
	}
	return rows, prev, expiries, inWrites
}

// compareTTLFeedCrash compares the replay's rows with the table: the
// live ones with the table's entities, the number of dead ones with the
// table's expired entities awaiting the sweeper. It returns what differs.
func compareTTLFeedCrash(t *testing.T, tb *ts.Table, rows map[string]ttlFeedRow) string {
	t.Helper()
	ctx := context.Background()
	dead := 0
	for _, r := range rows {
		if r.props["ExpiresAt"].(time.Time).Equal(ttlFeedDead) {
			dead++
		}
	}
	n := 0
	for e, err := range tb.Query(ctx, ts.Query{}) {
		if err != nil {
			return fmt.Sprintf("query: %v", err)
		}
		r, ok := rows[e.PartitionKey+"/"+e.RowKey]
		if !ok || r.etag != e.ETag {
			return fmt.Sprintf("entity %s/%s (%s) is not in the replay (%v)", e.PartitionKey, e.RowKey, e.ETag, r.etag)
		}
		n++
	}
	if n+dead != len(rows) {
		return fmt.Sprintf("the table has %d live entities, the replay %d", n, len(rows)-dead)
	}
	left, err := tb.ExpiredCount(ctx)
	if err != nil {
		return fmt.Sprintf("expired count: %v", err)
	}
	if left != int64(dead) {
		return fmt.Sprintf("%d expired entities await the sweeper, the replay holds %d", left, dead)
	}
	return ""
}
