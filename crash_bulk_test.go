package tablestore_test

// The bulk writer's crash test: a child process loads entities whose
// partitions interleave through a BulkWriter (synced), printing each
// commit's BulkCommit.Through; the parent kills it with SIGKILL at a
// random moment, reopens the store and checks that every entity below
// the last Through printed is present, that every present entity is
// whole, and that what is present is a prefix of what was added (the
// embedded engine writes each batch atomically, in order).
//
// TABLESTORE_CRASH_CYCLES sets the number of kill cycles (default 8, 20
// with TABLESTORE_LONG=1; this test runs half as many).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
)

const (
	crashBulkEnv   = "TABLESTORE_CRASH_BULK_DIR"
	crashBulkTable = "Bulk"
	// crashBulkSpan separates the numbers of successive children.
	crashBulkSpan = 10_000_000
)

// bulkCrashEntity is entity i: 37 interleaved partitions, a payload
// that depends on i.
func bulkCrashEntity(i int64) *ts.Entity {
	return &ts.Entity{PartitionKey: fmt.Sprintf("p%02d", i%37), RowKey: fmt.Sprintf("r%012d", i),
		Properties: map[string]any{"I": i, "Payload": payload(i, 0)}}
}

// TestCrashBulkChild is the child process; it does nothing in a normal
// run.
func TestCrashBulkChild(t *testing.T) {
	dir := os.Getenv(crashBulkEnv)
	if dir == "" {
		t.Skip("runs only as the child process of TestCrashBulk")
	}
	start := crashChildStart()
	ctx := context.Background()
	tb := crashChildTable(dir, crashKey(&ts.Options{MemTableSize: crashMemTable}), crashBulkTable)
	w, err := tb.NewBulkWriter(&ts.BulkOptions{Action: ts.ActionUpsertReplace,
		BatchEntities: 50 + int(start/crashBulkSpan%7)*40,
		OnCommit: func(c ts.BulkCommit) {
			fmt.Fprintf(os.Stdout, "through %d\n", start+c.Through)
		}})
	if err != nil {
		crashChildFail("bulk writer: %v", err)
	}
	fmt.Fprintf(os.Stdout, "ready\n")
	deadline := time.Now().Add(time.Minute)
	for i := start; time.Now().Before(deadline); i++ {
		if err := w.Add(ctx, bulkCrashEntity(i)); err != nil {
			crashChildFail("add %d: %v", i, err)
		}
	}
	os.Exit(0)
}

func TestCrashBulk(t *testing.T) {
	if os.Getenv(crashBulkEnv) != "" || os.Getenv(crashChildEnv) != "" {
		t.Skip("child process")
	}
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	crashModes(t, max(envInt(t, "TABLESTORE_CRASH_CYCLES", scaled(8, 20))/2, 1), func(t *testing.T, cycles int) {
		dir := t.TempDir()
		for cycle := range cycles {
			start := int64(cycle+1) * crashBulkSpan
			through := runBulkCrashChild(t, dir, start, time.Duration(20+rng.Intn(300))*time.Millisecond)
			db, err := ts.Open(dir, crashKey(&ts.Options{MustExist: true}))
			if err != nil {
				t.Fatalf("cycle %d (seed %d): reopen: %v", cycle, seed, err)
			}
			present := map[int64]bool{}
			for e, err := range db.Table(crashBulkTable).Query(context.Background(), ts.Query{
				Filter: fmt.Sprintf("I ge %dL and I lt %dL", start, start+crashBulkSpan)}) {
				if errors.Is(err, ts.ErrTableNotFound) {
					break // the first child was killed before creating it
				}
				if err != nil {
					t.Fatalf("cycle %d: query: %v", cycle, err)
				}
				i := e.Properties["I"].(int64)
				want := bulkCrashEntity(i)
				if e.PartitionKey != want.PartitionKey || e.RowKey != want.RowKey || !bytesEqual(e.Properties["Payload"], payload(i, 0)) || len(e.Properties) != 2 {
					t.Fatalf("cycle %d (seed %d): entity %d is not whole: %v", cycle, seed, i, e)
				}
				present[i] = true
			}
			require := func(ok bool, format string, args ...any) {
				if !ok {
					t.Fatalf("cycle %d (seed %d): %s", cycle, seed, fmt.Sprintf(format, args...))
				}
			}
			for i := start; i < through; i++ {
				require(present[i], "entity %d was below Through %d (durable) but is absent", i, through)
			}
			end := start + int64(len(present))
			for i := range present {
				require(i < end, "entity %d is present but not every entity added before it is (%d present)", i, len(present))
			}
			t.Logf("cycle %d: %d entities durable by Through, %d present", cycle, through-start, len(present))
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		}
		crashCheckEncrypted(t, dir)
	})
}

// runBulkCrashChild runs the bulk child from start, kills it d after it
// is ready, and returns the last Through it printed (start if none).
func runBulkCrashChild(t *testing.T, dir string, start int64, d time.Duration) int64 {
	t.Helper()
	cmd, out, _ := startChild(t, "TestCrashBulkChild", crashBulkEnv+"="+dir, crashStartEnv+"="+strconv.FormatInt(start, 10))
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	through := start
	var timer <-chan time.Time
	never := time.After(30 * time.Second)
	read := func(l string) {
		if strings.HasPrefix(l, "fail") {
			_ = cmd.Process.Kill()
			t.Fatalf("child: %s", l)
		}
		if v, ok := strings.CutPrefix(l, "through "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("child printed %q", l)
			}
			through = max(through, n)
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
		case <-never:
			if timer == nil {
				timer = time.After(0)
			}
		case <-timer:
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			break loop
		}
	}
	for l := range lines {
		read(l)
	}
	_ = cmd.Wait()
	return through
}
