package tablestore_test

// The range deletion crash test. A child process (TestCrashRangeChild)
// cycles one partition through seven states, one synced write per step:
// five transactions fill blocks 0 to 4 (100 entities each, rows
// b*100..b*100+99), a DeleteRange removes blocks 1 to 3, and DeleteAll
// removes the rest. It prints "ack N" after step N returns. The parent
// kills it at a random moment, reopens the store and checks the partition
// is in the state of the last acknowledged step or the next one: a range
// deletion cut by the crash is all or nothing, and once acknowledged it
// is durable. TABLESTORE_CRASH_CYCLES sets the cycles (default 8, 20 with
// TABLESTORE_LONG=1).

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
)

const (
	crashRangeEnv   = "TABLESTORE_CRASH_RANGE_CHILD" // the store's directory
	crashRangeTable = "Ranges"
	crashRangeRows  = 100 // per block
)

// rangeState returns the blocks present after step s (the partition
// starts empty at step 0).
func rangeState(s int64) []int {
	switch k := int(s % 7); k {
	case 6:
		return []int{0, 4}
	default:
		out := []int{}
		for b := range k {
			out = append(out, b)
		}
		return out
	}
}

// rangeStep performs step s (leading from state s-1 to state s).
func rangeStep(ctx context.Context, p *ts.Partition, s int64) error {
	switch k := int(s % 7); k {
	case 0:
		return p.DeleteAll(ctx)
	case 6:
		return p.DeleteRange(ctx, rangeRow(1, 0), rangeRow(4, 0))
	default:
		b := p.NewBatch()
		for i := range crashRangeRows {
			b.Insert(&ts.Entity{RowKey: rangeRow(k-1, i), Properties: map[string]any{"Payload": strings.Repeat("x", 200)}})
		}
		return b.Submit(ctx)
	}
}

func rangeRow(block, i int) string { return fmt.Sprintf("r%05d", block*crashRangeRows+i) }

// TestCrashRangeChild is the child process; it does nothing in a normal run.
func TestCrashRangeChild(t *testing.T) {
	dir := os.Getenv(crashRangeEnv)
	if dir == "" {
		t.Skip("runs only as the child process of TestCrashRange")
	}
	start := crashChildStart()
	ctx := context.Background()
	p := crashChildTable(dir, crashKey(&ts.Options{MemTableSize: crashMemTable}), crashRangeTable).Partition("p")
	fmt.Fprintf(os.Stdout, "ready\n")
	deadline := time.Now().Add(time.Minute)
	for s := start; time.Now().Before(deadline); s++ {
		if err := rangeStep(ctx, p, s); err != nil {
			crashChildFail("step %d: %v", s, err)
		}
		fmt.Fprintf(os.Stdout, "ack %d\n", s)
	}
	os.Exit(0)
}

func TestCrashRange(t *testing.T) {
	if os.Getenv(crashRangeEnv) != "" || os.Getenv(crashChildEnv) != "" {
		t.Skip("child process")
	}
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	crashModes(t, envInt(t, "TABLESTORE_CRASH_CYCLES", scaled(8, 20)), func(t *testing.T, cycles int) {
		dir := t.TempDir()
		state := int64(0) // the step whose state the store holds
		sawDelete := 0
		for c := 0; c < cycles; c++ {
			cmd, out, stderr := startChild(t, "TestCrashRangeChild", crashRangeEnv+"="+dir, crashStartEnv+"="+strconv.FormatInt(state+1, 10))
			acked := state
			lines := bufio.NewScanner(out)
			ready := make(chan struct{})
			done := make(chan []string)
			go func() {
				var all []string
				for lines.Scan() {
					all = append(all, lines.Text())
					if lines.Text() == "ready" {
						close(ready)
					}
				}
				done <- all
			}()
			select {
			case <-ready:
			case <-time.After(30 * time.Second):
			}
			time.Sleep(time.Duration(rng.Intn(150)) * time.Millisecond) // sleep: a random moment to kill the child at
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			all := <-done
			_ = cmd.Wait()
			for _, l := range all {
				if strings.HasPrefix(l, "fail") {
					t.Fatalf("seed %d: child: %s\n%s", seed, l, stderr.String())
				}
				if n, ok := strings.CutPrefix(l, "ack "); ok {
					v, err := strconv.ParseInt(n, 10, 64)
					if err != nil {
						t.Fatalf("bad line %q", l)
					}
					acked = v
				}
			}

			db, err := ts.Open(dir, crashKey(nil))
			if err != nil {
				t.Fatalf("seed %d: reopen: %v", seed, err)
			}
			present := map[int]int{}
			for e, err := range db.Table(crashRangeTable).Partition("p").Query(context.Background(), ts.Query{}) {
				if err != nil && errors.Is(err, ts.ErrTableNotFound) && acked == 0 {
					break
				}
				if err != nil {
					t.Fatalf("seed %d: scan: %v", seed, err)
				}
				n, _ := strconv.Atoi(e.RowKey[1:])
				present[n/crashRangeRows]++
			}
			require := func(cond bool, format string, args ...any) {
				if !cond {
					t.Fatalf("seed %d, cycle %d, acked step %d: "+format+" (dir %s)", append([]any{seed, c, acked}, append(args, dir)...)...)
				}
			}
			var blocks []int
			for b, n := range present {
				require(n == crashRangeRows, "block %d has %d of %d entities", b, n, crashRangeRows)
				blocks = append(blocks, b)
			}
			slices.Sort(blocks)
			switch {
			case slices.Equal(blocks, rangeState(acked)):
				state = acked
			case slices.Equal(blocks, rangeState(acked+1)):
				state = acked + 1
			default:
				require(false, "blocks %v are neither step %d's %v nor step %d's %v", blocks, acked, rangeState(acked), acked+1, rangeState(acked+1))
			}
			if k := (acked + 1) % 7; k == 6 || k == 0 {
				sawDelete++ // killed with a deletion in flight or just done
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("seed %d: %d cycles, %d killed with a deletion as the next step", seed, cycles, sawDelete)
		crashCheckEncrypted(t, dir)
	})
}
