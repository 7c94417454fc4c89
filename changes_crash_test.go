package tablestore_test

// The change feed's crash test. A child process (TestChangesCrashChild)
// opens an on-disk store with a feed on (new images) and runs two
// writers, each committing in a loop to a partition of its own, single
// inserts and transactions in turn, printing "ack W N" after each
// acknowledged synced commit. The parent kills it with SIGKILL at a
// random moment, reopens the store and reads the feed from the
// beginning: per writer, the commits in it must be exactly N = 0, 1, 2,
// ... up to at least the last acknowledged one, each whole, in order,
// without gaps or duplicates; sequence numbers strictly increase and the
// table holds exactly what the feed says. Then the next child goes on.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
)

const (
	feedCrashChildEnv = "TABLESTORE_FEED_CRASH_CHILD" // the store's directory
	feedCrashStartEnv = "TABLESTORE_FEED_CRASH_START" // "N0,N1": each writer's first number
	feedCrashTable    = "FeedCrash"
)

// feedCrashSize is the number of entities commit n of a writer writes:
// even ones are single inserts, odd ones transactions of 2 to 5.
func feedCrashSize(n int64) int {
	if n%2 == 0 {
		return 1
	}
	return 2 + int(n%4)
}

func TestChangesCrashChild(t *testing.T) {
	dir := os.Getenv(feedCrashChildEnv)
	if dir == "" {
		t.Skip("runs only as the child process of TestChangesCrash")
	}
	var starts [2]int64
	if _, err := fmt.Sscanf(os.Getenv(feedCrashStartEnv), "%d,%d", &starts[0], &starts[1]); err != nil {
		crashChildFail("bad %s: %v", feedCrashStartEnv, err)
	}
	ctx := context.Background()
	tb := crashChildTable(dir, crashKey(&ts.Options{MemTableSize: crashMemTable}), feedCrashTable)
	if err := tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{Images: ts.ImagesNew, Retention: time.Hour}); err != nil {
		crashChildFail("enable: %v", err)
	}
	var mu sync.Mutex // one line at a time
	fmt.Fprintf(os.Stdout, "ready\n")
	deadline := time.Now().Add(time.Minute)
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pk := fmt.Sprintf("w%d", w)
			for n := starts[w]; time.Now().Before(deadline); n++ {
				size := feedCrashSize(n)
				var err error
				if size == 1 {
					err = tb.Insert(ctx, &ts.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%09d-0", n), Properties: map[string]any{"N": n, "Payload": payload(n, 0)}})
				} else {
					b := tb.NewBatch()
					for i := range size {
						b.Insert(&ts.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%09d-%d", n, i), Properties: map[string]any{"N": n, "Payload": payload(n, i)}})
					}
					err = b.Submit(ctx)
				}
				if err != nil {
					crashChildFail("commit %s %d: %v", pk, n, err)
				}
				mu.Lock()
				fmt.Fprintf(os.Stdout, "ack %d %d\n", w, n)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	os.Exit(0)
}

func TestChangesCrash(t *testing.T) {
	if os.Getenv(feedCrashChildEnv) != "" {
		t.Skip("child process")
	}
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	crashModes(t, envInt(t, "TABLESTORE_CRASH_CYCLES", 8), func(t *testing.T, cycles int) {
		dir := t.TempDir()
		var next [2]int64
		var lastSeq uint64
		total := 0
		for cycle := range cycles {
			fail := func(format string, args ...any) {
				t.Helper()
				t.Fatalf("cycle %d: %s (seed %d)", cycle, fmt.Sprintf(format, args...), seed)
			}
			acked := [2]int64{-1, -1}
			killAfter := time.Duration(20+rng.Intn(200)) * time.Millisecond
			stderr := runKilledChild(t, "TestChangesCrashChild",
				[]string{feedCrashChildEnv + "=" + dir, fmt.Sprintf("%s=%d,%d", feedCrashStartEnv, next[0], next[1])},
				killAfter, fail, func(l string) {
					if !strings.HasPrefix(l, "ack ") {
						return
					}
					var w, n int64
					if _, err := fmt.Sscanf(l, "ack %d %d", &w, &n); err != nil {
						fail("bad line %q", l)
					}
					acked[w] = n
				})

			db, err := ts.Open(dir, crashKey(nil))
			if err != nil {
				fail("reopen: %v", err)
			}
			tb := db.Table(feedCrashTable)
			// Per writer, the commits the feed holds, and the entities.
			seen := [2]int64{-1, -1}
			var prev uint64
			fed := map[string]bool{}
			var open *ts.Change // the first change of the commit being read
			got := 0
			for c, err := range tb.Changes(context.Background(), ts.ChangesQuery{}) {
				if err != nil {
					if errors.Is(err, ts.ErrResourceNotFound) && cycle == 0 {
						break // killed before the feed was on
					}
					fail("read the feed: %v", err)
				}
				if c.Seq <= prev {
					fail("seq %d after %d", c.Seq, prev)
				}
				prev = c.Seq
				if c.Op != ts.ChangeInsert || c.Entity == nil {
					fail("change %d: op %s, image %v", c.Seq, c.Op.String(), c.Entity != nil)
				}
				w := int64(c.PartitionKey[1] - '0')
				n := c.Entity.Properties["N"].(int64)
				if c.Index == 0 {
					if open != nil {
						fail("commit %d ends after %d of %d changes", open.Commit, open.Index+1, open.Count)
					}
					if n != seen[w]+1 {
						fail("writer %d: commit %d after %d", w, n, seen[w])
					}
					if c.Count != feedCrashSize(n) {
						fail("writer %d commit %d: %d changes, want %d", w, n, c.Count, feedCrashSize(n))
					}
					seen[w] = n
					cc := c
					open = &cc
				} else if open == nil || c.Commit != open.Commit || c.Seq != open.Seq+uint64(c.Index) || c.PartitionKey != open.PartitionKey {
					fail("change %d (index %d of commit %d) out of its commit", c.Seq, c.Index, c.Commit)
				}
				if c.RowKey != fmt.Sprintf("%09d-%d", n, c.Index) {
					fail("change %d: row %q for commit %d index %d", c.Seq, c.RowKey, n, c.Index)
				}
				if c.Index == c.Count-1 {
					open = nil
				}
				fed[c.PartitionKey+"/"+c.RowKey] = true
				got++
			}
			if open != nil {
				fail("the feed ends inside commit %d", open.Commit)
			}
			if prev < lastSeq {
				fail("the feed ends at seq %d, before %d seen earlier", prev, lastSeq)
			}
			lastSeq = prev
			for w := range 2 {
				if seen[w] < acked[w] {
					fail("writer %d: acknowledged %d, the feed ends at %d", w, acked[w], seen[w])
				}
				if seen[w] < next[w]-1 {
					fail("writer %d: the feed lost commits: ends at %d, %d seen before", w, seen[w], next[w]-1)
				}
				next[w] = seen[w] + 1
			}
			n := 0
			for e, err := range tb.Query(context.Background(), ts.Query{}) {
				if err != nil {
					fail("query: %v", err)
				}
				if !fed[e.PartitionKey+"/"+e.RowKey] {
					fail("entity (%s, %s) is not in the feed", e.PartitionKey, e.RowKey)
				}
				n++
			}
			if n != len(fed) {
				fail("the table holds %d entities, the feed %d", n, len(fed))
			}
			total = got
			if err := db.Close(); err != nil {
				fail("close: %v", err)
			}
			if strings.Contains(stderr, "panic") {
				fail("child: %s", stderr)
			}
		}
		t.Logf("%d cycles: %d changes, commits %d and %d", cycles, total, next[0], next[1])
		crashCheckEncrypted(t, dir)
	})
}

// runKilledChild runs the test binary's test named test as a child
// process, with env added to its environment, and passes each line it
// prints to onLine. killAfter after the child prints "ready" it is killed
// with SIGKILL; a line "fail ..." fails the cycle through fail. It returns
// the child's standard error once the child has exited.
func runKilledChild(t *testing.T, test string, env []string, killAfter time.Duration, fail func(string, ...any), onLine func(string)) string {
	t.Helper()
	cmd, out, stderr := startChild(t, test, env...)
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	timer := time.NewTimer(time.Minute)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				_ = cmd.Wait()
				return stderr.String()
			}
			switch {
			case l == "ready":
				timer.Reset(killAfter)
			case strings.HasPrefix(l, "fail "):
				fail("child: %s", l)
			default:
				onLine(l)
			}
		case <-timer.C:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			timer.Reset(time.Minute)
		}
	}
}
