package tablestore_test

// The continuous backup's crash test: a child process writes synced
// single inserts and transactions to a store with continuous backup on,
// printing "ack N" once write N returns; the parent kills it with
// SIGKILL after a random number of acknowledgements (sometimes at once,
// while it opens), then restores the newest instant of the backup into
// a new directory and checks that every acknowledged write is in it and
// every transaction is whole. Cycles go on with the same store and
// backup. TABLESTORE_PITR_CYCLES sets the cycles (default 3, 20 with
// TABLESTORE_LONG=1). It runs with BackgroundSync off and on: a killed
// process loses no record it wrote, so either restores every
// acknowledged write.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
)

const (
	pitrChildEnv = "TABLESTORE_PITR_CHILD" // the store directory; the backup is beside it
	pitrStartEnv = "TABLESTORE_PITR_START"
	pitrBgEnv    = "TABLESTORE_PITR_BACKGROUND_SYNC" // "1": ContinuousBackup.BackgroundSync
	pitrTxnRows  = 5
)

func pitrOptions(dir string) *ts.Options {
	return crashKey(&ts.Options{MemTableSize: 256 << 10, ContinuousBackup: &ts.ContinuousBackup{Dir: dir + ".backup", SegmentBytes: 64 << 10,
		BackgroundSync: os.Getenv(pitrBgEnv) == "1"}})
}

// TestPITRCrashChild is the child process; it does nothing in a normal
// run.
func TestPITRCrashChild(t *testing.T) {
	dir := os.Getenv(pitrChildEnv)
	if dir == "" {
		t.Skip("runs only as the child process of TestPITRCrash")
	}
	start, err := strconv.ParseInt(os.Getenv(pitrStartEnv), 10, 64)
	if err != nil {
		crashChildFail("bad start: %v", err)
	}
	tb := crashChildTable(dir, pitrOptions(dir), "Crash")
	var mu sync.Mutex
	next := atomic.Int64{}
	next.Store(start)
	fmt.Fprintf(os.Stdout, "ready\n")
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100_000 {
				n := next.Add(1) - 1
				var err error
				if w == 0 {
					err = tb.Insert(ctx, &ts.Entity{PartitionKey: "single", RowKey: fmt.Sprintf("%09d", n), Properties: map[string]any{"N": n}})
				} else {
					acts := make([]ts.TransactionAction, pitrTxnRows)
					for i := range acts {
						acts[i] = ts.TransactionAction{Type: ts.ActionInsert, Entity: &ts.Entity{PartitionKey: "txn", RowKey: fmt.Sprintf("%09d-%d", n, i), Properties: map[string]any{"N": n}}}
					}
					err = tb.SubmitTransaction(ctx, acts)
				}
				if err != nil {
					crashChildFail("write %d: %v", n, err)
				}
				mu.Lock()
				fmt.Fprintf(os.Stdout, "ack %d\n", n)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	os.Exit(0)
}

func TestPITRCrash(t *testing.T) {
	if os.Getenv(pitrChildEnv) != "" {
		t.Skip("child process")
	}
	for _, bg := range []string{"0", "1"} {
		t.Run("background-sync-"+bg, func(t *testing.T) {
			t.Setenv(pitrBgEnv, bg)
			pitrCrash(t)
		})
	}
}

func pitrCrash(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	crashModes(t, envInt(t, "TABLESTORE_PITR_CYCLES", scaled(3, 20)), func(t *testing.T, cycles int) {
		root := t.TempDir()
		dir := filepath.Join(root, "store")
		acked := map[int64]bool{}
		next := int64(0)
		for cycle := range cycles {
			// Kill after k acknowledgements; k = 0 kills at once, often
			// while the child opens the store and takes its base (not
			// in the first cycle: the store must come to exist).
			k := rng.Intn(400)
			if rng.Intn(4) == 0 {
				k = 0
			}
			if cycle == 0 {
				k = max(k, 1)
			}
			got, tried := pitrCycle(t, dir, next, k)
			for n := range got {
				acked[n] = true
			}
			next = tried + 1
			into := filepath.Join(root, fmt.Sprintf("restored-%d", cycle))
			if _, err := ts.ListBackups(dir+".backup", crashKey(nil)); err != nil && len(acked) == 0 {
				// Killed before its first open took the first base:
				// nothing was acknowledged, so nothing is owed.
				continue
			}
			_, err := ts.Restore(context.Background(), dir+".backup", time.Time{}, into, crashKey(nil))
			if err != nil {
				t.Fatalf("cycle %d (seed %d): restore: %v", cycle, seed, err)
			}
			pitrVerify(t, into, acked, next, fmt.Sprintf("cycle %d (seed %d)", cycle, seed))
		}
		t.Logf("%d cycles, %d writes acknowledged", cycles, len(acked))
		pitrSameAsStore(t, dir, root, seed)
		crashCheckEncrypted(t, dir)
	})
}

// pitrCycle runs one child from start, kills it after k
// acknowledgements, and returns the acknowledged numbers and the
// greatest number it may have tried.
func pitrCycle(t *testing.T, dir string, start int64, k int) (map[int64]bool, int64) {
	t.Helper()
	cmd, out, stderr := startChild(t, "TestPITRCrashChild", pitrChildEnv+"="+dir, pitrStartEnv+"="+strconv.FormatInt(start, 10))
	acks := map[int64]bool{}
	var lines []string
	var failed string // the child's first "fail" line
	sc := bufio.NewScanner(out)
	killed := false
	kill := func() {
		if !killed {
			killed = true
			_ = cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	if k == 0 {
		kill()
	}
	for sc.Scan() {
		l := sc.Text()
		lines = append(lines, l)
		if n, ok := strings.CutPrefix(l, "ack "); ok {
			v, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				t.Fatalf("child said %q", l)
			}
			acks[v] = true
			if len(acks) >= k {
				kill()
			}
		}
		if strings.HasPrefix(l, "fail") && failed == "" {
			failed = l
			kill()
		}
	}
	werr := cmd.Wait()
	// A child that failed is killed on its line, so it may die by the
	// signal: its line fails the test.
	if failed != "" {
		t.Fatalf("child: %s\nstderr:\n%s", failed, stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die by SIGKILL (%v); output:\n%s\nstderr:\n%s", werr, strings.Join(lines, "\n"), stderr.String())
	}
	// Every number up to the greatest acknowledged plus the writers in
	// flight may have been tried.
	tried := start + int64(len(acks)) + 2
	for n := range acks {
		tried = max(tried, n+2)
	}
	return acks, tried
}

// pitrSameAsStore recovers the store after the last kill (its open
// reconciles the backup with it) and checks that a restore to now holds
// exactly its entities, ETags included: no commit the store lost, none
// it kept missing.
func pitrSameAsStore(t *testing.T, dir, root string, seed int64) {
	t.Helper()
	list := func(db *ts.DB) []string {
		var out []string
		for e, err := range db.Table("Crash").Query(context.Background(), ts.Query{}) {
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			out = append(out, e.PartitionKey+"/"+e.RowKey+"/"+string(e.ETag))
		}
		return out
	}
	db, err := ts.Open(dir, pitrOptions(dir))
	if err != nil {
		t.Fatalf("seed %d: reopen after the last kill: %v", seed, err)
	}
	want := list(db)
	if err := db.Close(); err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	into := filepath.Join(root, "restored-final")
	if _, err := ts.Restore(context.Background(), dir+".backup", time.Time{}, into, crashKey(nil)); err != nil {
		t.Fatalf("seed %d: restore after recovery: %v", seed, err)
	}
	rdb, err := ts.Open(into, crashKey(&ts.Options{MustExist: true}))
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	defer rdb.Close()
	if got := list(rdb); !slices.Equal(got, want) {
		t.Fatalf("seed %d: the restore after recovery differs from the store: %d entities, the store %d", seed, len(got), len(want))
	}
}

// pitrVerify opens the restored store in dir and checks that every
// acknowledged write is there, transactions whole, nothing unknown.
func pitrVerify(t *testing.T, dir string, acked map[int64]bool, limit int64, what string) {
	t.Helper()
	db, err := ts.Open(dir, crashKey(&ts.Options{MustExist: true}))
	if err != nil {
		t.Fatalf("%s: open the restored store: %v", what, err)
	}
	defer db.Close()
	singles, rows := map[int64]bool{}, map[int64]int{}
	for e, err := range db.Table("Crash").Query(context.Background(), ts.Query{}) {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		n := e.Properties["N"].(int64)
		if n >= limit {
			t.Fatalf("%s: write %d was never tried", what, n)
		}
		if e.PartitionKey == "single" {
			singles[n] = true
		} else {
			rows[n]++
		}
	}
	for n, c := range rows {
		if c != pitrTxnRows {
			t.Fatalf("%s: transaction %d restored with %d of its %d rows", what, n, c, pitrTxnRows)
		}
	}
	for n := range acked {
		if !singles[n] && rows[n] == 0 {
			t.Fatalf("%s: acknowledged write %d is missing from the restore", what, n)
		}
	}
}
