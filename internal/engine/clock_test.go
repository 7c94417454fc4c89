package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// testClock returns a clock resuming from ceiling with the given persist.
func testClock(ceiling int64, persist func(int64) error) *timestampClock {
	c := &timestampClock{}
	c.init(ceiling, persist, func(f func()) { go f() })
	return c
}

func TestClockIssuesBelowDurableCeiling(t *testing.T) {
	var durable atomic.Int64
	c := testClock(0, func(ceiling int64) error {
		time.Sleep(200 * time.Microsecond) // a synced write
		durable.Store(ceiling)
		return nil
	})
	// Many goroutines, the wall clock moving and stalling: every value is
	// unique and below a ceiling already durable when it is issued.
	const goroutines, each = 8, 2000
	var wall atomic.Int64
	wall.Store(1_000_000_000)
	got := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				now := wall.Load()
				if i%3 == 0 {
					now = wall.Add(int64(rand.Intn(20_000)))
				}
				v, err := c.next(now, 0)
				if err != nil {
					t.Error(err)
					return
				}
				if d := durable.Load(); v >= d {
					t.Errorf("issued %d at or above the durable ceiling %d", v, d)
					return
				}
				got[g] = append(got[g], v)
			}
		}()
	}
	wg.Wait()
	seen := map[int64]bool{}
	for g := range got {
		for i, v := range got[g] {
			require.False(t, seen[v], "value %d issued twice", v)
			seen[v] = true
			if i > 0 {
				require.Greater(t, v, got[g][i-1], "one goroutine's values must increase")
			}
		}
	}
	require.Len(t, seen, goroutines*each)
	// The ceiling stays within the largest lead of the last value.
	last, _ := c.closing()
	require.LessOrEqual(t, durable.Load()-last, int64(clockMaxLead))
}

// recordWrites returns a persist that records the ceilings written.
func recordWrites() (func(int64) error, func() []int64) {
	var mu sync.Mutex
	var writes []int64
	return func(ceiling int64) error {
			mu.Lock()
			defer mu.Unlock()
			writes = append(writes, ceiling)
			return nil
		}, func() []int64 {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(writes)
		}
}

func TestClockFloorAndBackwardWallClock(t *testing.T) {
	persist, writes := recordWrites()
	c := testClock(0, persist)
	v1, err := c.next(5_000_000, 0)
	require.NoError(t, err)
	require.Equal(t, int64(5_000_000), v1)
	require.Equal(t, []int64{5_000_000 + clockMinLead}, writes(), "the first value moves the ceiling one lead past it")
	// The wall clock goes back: values go on from the last one.
	v2, err := c.next(1, 0)
	require.NoError(t, err)
	require.Equal(t, v1+1, v2)
	// A stored entity from the future: the value passes its Timestamp.
	v3, err := c.next(1, 9_000_000)
	require.NoError(t, err)
	require.Equal(t, int64(9_000_001), v3)
	c.closing() // waits for a move in flight
	w := writes()
	require.Greater(t, w[len(w)-1], v3)
}

func TestClockMovesAheadOfNeed(t *testing.T) {
	persist, writes := recordWrites()
	c := testClock(0, persist)
	now := int64(100_000_000)
	_, err := c.next(now, 0)
	require.NoError(t, err)
	require.Len(t, writes(), 1)
	// Half a lead or more before the ceiling: no move.
	_, err = c.next(now+clockMinLead/2, 0)
	require.NoError(t, err)
	c.closing()
	require.Len(t, writes(), 1)
	// Under half a lead before the ceiling, a background move starts,
	// and the value is issued without waiting for it.
	now += clockMinLead/2 + 1
	v, err := c.next(now, 0)
	require.NoError(t, err)
	require.Equal(t, now, v)
	c.closing()
	require.Equal(t, []int64{100_000_000 + clockMinLead, now + clockMinLead}, writes())
	require.Equal(t, now+clockMinLead, c.ceiling)
}

func TestClockPersistFailure(t *testing.T) {
	fail := errors.New("disk gone")
	var failing bool
	var writes int
	c := testClock(0, func(int64) error {
		writes++
		if failing {
			return fail
		}
		return nil
	})
	v, err := c.next(1000, 0)
	require.NoError(t, err)
	require.Equal(t, int64(1000), v)
	c.closing()
	ceiling := c.ceiling
	// A failed write of the ceiling is the caller's error, and the
	// ceiling stays.
	failing = true
	_, err = c.next(ceiling, 0)
	require.ErrorIs(t, err, fail)
	require.Equal(t, ceiling, c.ceiling)
	require.Equal(t, 2, writes)
	// Values still below the durable ceiling need no write.
	failing = false
	c.last = 1000
	v, err = c.next(1001, 0)
	require.NoError(t, err)
	require.Equal(t, int64(1001), v)
	require.Equal(t, 2, writes)
}

func TestClockLeadFollowsSyncLatency(t *testing.T) {
	clock := &timestampClock{}
	clock.init(0, func(int64) error { time.Sleep(20 * time.Millisecond); return nil }, func(f func()) { go f() })
	_, err := clock.next(1_000_000_000, 0)
	require.NoError(t, err)
	clock.closing() // waits for the background move the new lead starts
	require.GreaterOrEqual(t, clock.lead, int64(clockLatencyFactor*200_000), "%dx a 20 ms write", clockLatencyFactor)
	require.LessOrEqual(t, clock.lead, int64(clockMaxLead))
}

func openClockTest(t testing.TB, dir string, noSync bool) *Engine {
	t.Helper()
	db, err := Open(dir, clockTestOptions(noSync))
	require.NoError(t, err)
	return db
}

// clockTestOptions are the options of openClockTest.
func clockTestOptions(noSync bool) Options {
	return Options{CacheSize: 1 << 20, MemTableSize: 1 << 20, PageScanLimit: 1000,
		PageTimeLimit: time.Second, Clock: time.Now, NoSync: noSync}
}

// upsertOne writes (p, r) and returns its Timestamp in ticks.
func upsertOne(t testing.TB, db *Engine, rk string) int64 {
	t.Helper()
	res, err := db.Table("T").Commit(context.Background(), []driver.Action{{
		Type: driver.ActionUpsertReplace, PartitionKey: "p", RowKey: rk, Record: mustEncode(nil, 0, nil)}})
	require.NoError(t, err)
	return edm.TicksFromTime(res.Timestamp)
}

// TestClockReopenStaysOnWallClock opens, writes and closes a store 100
// times: each Open resumes from the exact last value, so the Timestamps
// stay on the wall clock instead of running ahead by a lead per Open.
func TestClockReopenStaysOnWallClock(t *testing.T) {
	dir := t.TempDir()
	db := openClockTest(t, dir, false)
	require.NoError(t, db.CreateTable(context.Background(), "T"))
	require.NoError(t, db.Close())
	var prev int64
	for i := range 100 {
		db := openClockTest(t, dir, i%2 == 1)
		ts := upsertOne(t, db, "r")
		wall := edm.TicksFromTime(time.Now())
		require.NoError(t, db.Close())
		require.Greater(t, ts, prev, "cycle %d", i)
		prev = ts
		require.LessOrEqual(t, ts-wall, int64(50*time.Millisecond/100), "cycle %d: Timestamp %s ahead of the wall clock", i, time.Duration(ts-wall)*100)
	}
	// A read-only session leaves the stored clock as it is.
	db = openClockTest(t, dir, false)
	before := db.clock.ceiling
	require.NoError(t, db.Close())
	db = openClockTest(t, dir, false)
	defer db.Close()
	require.Equal(t, before, db.clock.ceiling)
	require.Equal(t, prev+1, db.clock.ceiling, "the ceiling after Close is one past the last value")
}

// TestClockCrash kills a child process that commits in a loop (synced
// and NoSync) and checks, after each kill, that the reopened store issues
// values above every Timestamp the child acknowledged (even NoSync ones
// the crash lost: their ETags may be in a client's hands), and that it
// resumes at most one lead (1 s at worst, normally 10 ms) past them.
func TestClockCrash(t *testing.T) {
	if os.Getenv(clockChildEnv) != "" {
		t.Skip("child process")
	}
	cycles := 6
	if testing.Short() {
		cycles = 2
	}
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("nosync=%v", noSync), func(t *testing.T) {
			dir := t.TempDir()
			db := openClockTest(t, dir, false)
			require.NoError(t, db.CreateTable(context.Background(), "T"))
			require.NoError(t, db.Close())
			var worst int64
			for cycle := range cycles {
				acked := runClockChild(t, dir, noSync, time.Duration(20+rand.Intn(150))*time.Millisecond)
				if acked == 0 {
					continue
				}
				db := openClockTest(t, dir, noSync)
				resume := db.clock.ceiling
				ts := upsertOne(t, db, "after")
				wall := edm.TicksFromTime(time.Now())
				require.NoError(t, db.Close())
				require.Greater(t, ts, acked, "cycle %d: a value at or below an acknowledged Timestamp", cycle)
				require.LessOrEqual(t, resume-acked, int64(clockMaxLead), "cycle %d: resumed %s past the last acknowledged value", cycle, time.Duration(resume-acked)*100)
				require.LessOrEqual(t, ts-wall, int64(clockMaxLead), "cycle %d", cycle)
				worst = max(worst, resume-acked)
			}
			t.Logf("resumed at most %s past the last acknowledged Timestamp", time.Duration(worst)*100)
		})
	}
}

const clockChildEnv = "TABLESTORE_CLOCK_CHILD"

// TestClockCrashChild is TestClockCrash's child: it upserts in a loop and
// prints each acknowledged Timestamp.
func TestClockCrashChild(t *testing.T) {
	mode := os.Getenv(clockChildEnv)
	if mode == "" {
		t.Skip("runs only as the child process of TestClockCrash")
	}
	db, err := Open(os.Getenv(clockChildEnv+"_DIR"), Options{CacheSize: 1 << 20, MemTableSize: 1 << 20,
		PageScanLimit: 1000, PageTimeLimit: time.Second, Clock: time.Now, NoSync: mode == "nosync"})
	if err != nil {
		fmt.Printf("fail %v\n", err)
		os.Exit(3)
	}
	fmt.Println("ready")
	deadline := time.Now().Add(time.Minute)
	for i := 0; time.Now().Before(deadline); i++ {
		res, err := db.Table("T").Commit(context.Background(), []driver.Action{{
			Type: driver.ActionUpsertReplace, PartitionKey: "p", RowKey: strconv.Itoa(i % 10), Record: mustEncode(nil, 0, nil)}})
		if err != nil {
			fmt.Printf("fail %v\n", err)
			os.Exit(3)
		}
		fmt.Printf("ack %d\n", edm.TicksFromTime(res.Timestamp))
	}
	os.Exit(0)
}

// runClockChild runs the child for about d after it is ready, kills it,
// and returns the greatest Timestamp it acknowledged (0 if none).
func runClockChild(t *testing.T, dir string, noSync bool, d time.Duration) int64 {
	t.Helper()
	mode := "sync"
	if noSync {
		mode = "nosync"
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestClockCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), clockChildEnv+"="+mode, clockChildEnv+"_DIR="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string, 1<<16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var acked int64
	var timer <-chan time.Time
	ready := time.After(30 * time.Second)
	read := func(l string) {
		if strings.HasPrefix(l, "fail") {
			_ = cmd.Process.Kill()
			t.Fatalf("child: %s", l)
		}
		if v, ok := strings.CutPrefix(l, "ack "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			acked = max(acked, n)
		}
	}
loop:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break loop
			}
			if l == "ready" && timer == nil {
				timer = time.After(d)
			}
			read(l)
		case <-ready:
			if timer == nil {
				timer = time.After(0)
			}
		case <-timer:
			require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
			break loop
		}
	}
	for l := range lines {
		read(l)
	}
	_ = cmd.Wait()
	return acked
}
