package tablestore_test

// Concurrency tests: optimistic concurrency through If-Match, transactions
// on one partition serializing, transactions on distinct partitions
// running side by side. Run them under the race detector:
//
//	go test -race -run Concurrency .

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
)

func openConcurrencyDB(t *testing.T, opts *ts.Options) (*ts.DB, *ts.Table) {
	t.Helper()
	db, err := ts.OpenInMemory(opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	tb, err := db.CreateTable(context.Background(), "Counters")
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	return db, tb
}

// TestConcurrencyCounter runs 8 goroutines that each add 1 to one counter
// 500 times by read-modify-write with If-Match, retrying on
// UpdateConditionNotSatisfied. A lost update would leave the counter
// short of 4000 and would show as two goroutines both writing the same
// value.
func TestConcurrencyCounter(t *testing.T) {
	const goroutines, increments = 8, 500
	ctx := context.Background()
	_, tb := openConcurrencyDB(t, nil)
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "c", RowKey: "counter", Properties: map[string]any{"N": int64(0)}}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var (
		mu      sync.Mutex
		written = map[int64]int{} // value -> goroutine that wrote it
		retries atomic.Int64
		wg      sync.WaitGroup
	)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < increments; i++ {
				for {
					e, err := tb.Get(ctx, "c", "counter", nil)
					if err != nil {
						t.Errorf("goroutine %d: get: %v", g, err)
						return
					}
					n, ok := e.Properties["N"].(int64)
					if !ok {
						t.Errorf("goroutine %d: N is %T %v", g, e.Properties["N"], e.Properties["N"])
						return
					}
					next := &ts.Entity{PartitionKey: "c", RowKey: "counter", Properties: map[string]any{"N": n + 1}}
					err = tb.Update(ctx, next, ts.Replace, e.ETag)
					if errors.Is(err, ts.ErrUpdateConditionNotSatisfied) {
						retries.Add(1)
						continue
					}
					if err != nil {
						t.Errorf("goroutine %d: update: %v", g, err)
						return
					}
					mu.Lock()
					if other, dup := written[n+1]; dup {
						t.Errorf("value %d written twice (goroutines %d and %d): a lost update", n+1, other, g)
					}
					written[n+1] = g
					mu.Unlock()
					break
				}
			}
		}()
	}
	wg.Wait()
	e, err := tb.Get(ctx, "c", "counter", nil)
	if err != nil {
		t.Fatalf("final get: %v", err)
	}
	if got := e.Properties["N"]; got != int64(goroutines*increments) {
		t.Fatalf("counter = %v, want %d", got, goroutines*increments)
	}
	for v := int64(1); v <= goroutines*increments; v++ {
		if _, ok := written[v]; !ok {
			t.Fatalf("no successful update wrote %d", v)
		}
	}
	t.Logf("%d increments, %d retries", goroutines*increments, retries.Load())
}

// TestConcurrencyTransactionsOnePartition runs goroutines that each read
// the K entities of one partition and submit a transaction that adds 1 to
// every one of them, with If-Match on each ETag read. Transactions on one
// partition must serialize and be all-or-nothing: at the end every entity
// holds the same value, equal to the number of successful transactions.
// Every fourth attempt also carries a stale ETag on its last action and
// must fail at that index without changing anything.
func TestConcurrencyTransactionsOnePartition(t *testing.T) {
	const goroutines, attempts, k = 6, 150, 5
	ctx := context.Background()
	_, tb := openConcurrencyDB(t, nil)
	for i := 0; i < k; i++ {
		if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("e%d", i), Properties: map[string]any{"N": int64(0)}}); err != nil {
			t.Fatalf("insert: %v", err)
		}
	}
	stale := ts.ETag(`W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`)
	var successes, conflicts atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := 0; a < attempts; a++ {
				actions := make([]ts.TransactionAction, k)
				for i := 0; i < k; i++ {
					e, err := tb.Get(ctx, "p", fmt.Sprintf("e%d", i), nil)
					if err != nil {
						t.Errorf("get: %v", err)
						return
					}
					n := e.Properties["N"].(int64)
					actions[i] = ts.TransactionAction{
						Type:    ts.ActionUpdateMerge,
						Entity:  &ts.Entity{PartitionKey: "p", RowKey: e.RowKey, Properties: map[string]any{"N": n + 1}},
						IfMatch: e.ETag,
					}
				}
				doomed := a%4 == 3
				if doomed {
					actions[k-1].IfMatch = stale
				}
				err := tb.SubmitTransaction(ctx, actions)
				var be *ts.BatchError
				switch {
				case err == nil && doomed:
					t.Errorf("transaction with a stale ETag on action %d succeeded", k-1)
					return
				case err == nil:
					successes.Add(1)
				case errors.Is(err, ts.ErrUpdateConditionNotSatisfied) && errors.As(err, &be):
					if doomed && be.Index > k-1 {
						t.Errorf("failing index %d out of range", be.Index)
					}
					conflicts.Add(1)
				default:
					t.Errorf("transaction: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := 0; i < k; i++ {
		e, err := tb.Get(ctx, "p", fmt.Sprintf("e%d", i), nil)
		if err != nil {
			t.Fatalf("final get: %v", err)
		}
		if got := e.Properties["N"]; got != successes.Load() {
			t.Errorf("entity e%d: N = %v, want %d (the number of successful transactions)", i, got, successes.Load())
		}
	}
	if successes.Load() == 0 {
		t.Fatalf("no transaction succeeded")
	}
	t.Logf("%d successful transactions, %d conflicts", successes.Load(), conflicts.Load())
}

// rendezvousClock is an Options.Clock that, while armed, holds each caller
// until a second caller arrives (or a generous deadline passes). The
// engine reads the clock while it commits, holding its lock on the
// partition; if two transactions on distinct partitions ever meet inside
// the clock, they were in flight at the same time. A store that
// serialized all commits would never let two callers meet.
//
// This shows parallelism only if the engine reads the clock under its
// partition lock; an engine that read it before locking would pass
// trivially.
type rendezvousClock struct {
	armed    atomic.Bool
	inside   atomic.Int32 // callers now held in Now
	met      chan struct{}
	once     sync.Once
	deadline time.Duration
}

func (c *rendezvousClock) Now() time.Time {
	if c.armed.Load() {
		if c.inside.Add(1) >= 2 {
			c.once.Do(func() { close(c.met) })
		}
		select {
		case <-c.met:
		case <-time.After(c.deadline):
			// Nobody came: stop holding callers so the test ends.
			c.armed.Store(false)
		}
		c.inside.Add(-1)
	}
	return time.Now()
}

// TestConcurrencyTransactionsDistinctPartitions runs one goroutine per
// partition, each submitting transactions with If-Match on its own
// entities. Nothing is shared, so every transaction must succeed at once,
// with no conflict. While the clock is armed, the goroutines must meet
// inside it: at least two commits on distinct partitions in flight
// together.
func TestConcurrencyTransactionsDistinctPartitions(t *testing.T) {
	const goroutines, transactions, k = 8, 60, 4
	ctx := context.Background()
	clock := &rendezvousClock{met: make(chan struct{}), deadline: 20 * time.Second}
	_, tb := openConcurrencyDB(t, &ts.Options{Clock: clock.Now})
	for g := 0; g < goroutines; g++ {
		for i := 0; i < k; i++ {
			e := &ts.Entity{PartitionKey: fmt.Sprintf("part%d", g), RowKey: fmt.Sprintf("e%d", i), Properties: map[string]any{"N": int64(0)}}
			if err := tb.Insert(ctx, e); err != nil {
				t.Fatalf("insert: %v", err)
			}
		}
	}
	run := func(round int) {
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pk := fmt.Sprintf("part%d", g)
				for n := 0; n < transactions; n++ {
					actions := make([]ts.TransactionAction, k)
					for i := 0; i < k; i++ {
						e, err := tb.Get(ctx, pk, fmt.Sprintf("e%d", i), nil)
						if err != nil {
							t.Errorf("get: %v", err)
							return
						}
						actions[i] = ts.TransactionAction{
							Type:    ts.ActionUpdateReplace,
							Entity:  &ts.Entity{PartitionKey: pk, RowKey: e.RowKey, Properties: map[string]any{"N": e.Properties["N"].(int64) + 1}},
							IfMatch: e.ETag,
						}
					}
					if err := tb.SubmitTransaction(ctx, actions); err != nil {
						t.Errorf("round %d, partition %s, transaction %d: %v (no other writer touches this partition)", round, pk, n, err)
						return
					}
				}
			}()
		}
		wg.Wait()
	}
	clock.armed.Store(true)
	run(0)
	clock.armed.Store(false)
	select {
	case <-clock.met:
	default:
		t.Errorf("no two commits on distinct partitions were ever in flight together: commits look serialized")
	}
	run(1)
	for g := 0; g < goroutines; g++ {
		for i := 0; i < k; i++ {
			e, err := tb.Get(ctx, fmt.Sprintf("part%d", g), fmt.Sprintf("e%d", i), nil)
			if err != nil {
				t.Fatalf("final get: %v", err)
			}
			if got := e.Properties["N"]; got != int64(2*transactions) {
				t.Errorf("part%d/e%d: N = %v, want %d", g, i, got, 2*transactions)
			}
		}
	}
}

// TestConcurrencyQuerySnapshot runs a writer that sets all K entities of a
// partition to one new value per transaction, and readers that query the
// partition in one page. A page reads from one consistent snapshot, so
// every page shows K entities that all hold the same value, and the value
// a reader sees never goes back.
func TestConcurrencyQuerySnapshot(t *testing.T) {
	const k, readers, rounds = 20, 4, 300
	ctx := context.Background()
	_, tb := openConcurrencyDB(t, nil)
	actions := func(v int64) []ts.TransactionAction {
		a := make([]ts.TransactionAction, k)
		for i := range a {
			a[i] = ts.TransactionAction{Type: ts.ActionUpsertReplace, Entity: &ts.Entity{
				PartitionKey: "snap", RowKey: fmt.Sprintf("e%02d", i), Properties: map[string]any{"V": v}}}
		}
		return a
	}
	if err := tb.SubmitTransaction(ctx, actions(0)); err != nil {
		t.Fatalf("first transaction: %v", err)
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	var pagesRead atomic.Int64
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			seen := int64(-1)
			for !done.Load() {
				p, err := tb.QueryPage(ctx, ts.Query{Filter: "PartitionKey eq 'snap'"})
				if err != nil {
					t.Errorf("query: %v", err)
					return
				}
				if len(p.Entities) != k || p.Continuation != "" {
					t.Errorf("page of %d entities (continuation %q), want all %d", len(p.Entities), p.Continuation, k)
					return
				}
				v := p.Entities[0].Properties["V"].(int64)
				for _, e := range p.Entities {
					if e.Properties["V"] != v {
						t.Errorf("one page shows two transactions: %s holds %v, %s holds %d", e.RowKey, e.Properties["V"], p.Entities[0].RowKey, v)
						return
					}
				}
				if v < seen {
					t.Errorf("a later page shows an older transaction: %d after %d", v, seen)
					return
				}
				seen = v
				pagesRead.Add(1)
			}
		}()
	}
	for v := int64(1); v <= rounds; v++ {
		if err := tb.SubmitTransaction(ctx, actions(v)); err != nil {
			t.Errorf("transaction %d: %v", v, err)
			break
		}
	}
	done.Store(true)
	wg.Wait()
	t.Logf("%d transactions, %d pages read", rounds, pagesRead.Load())
}

// TestConcurrencyClose closes an on-disk store while goroutines write and
// read, over several rounds. Every operation must succeed or fail with
// ErrClosed (never panic or fail otherwise), Close must succeed, and after
// reopening, every write that was acknowledged must be there.
func TestConcurrencyClose(t *testing.T) {
	const rounds = 20
	for round := 0; round < rounds && !t.Failed(); round++ {
		closeUnderLoad(t, round)
	}
}

func closeUnderLoad(t *testing.T, round int) {
	const writers, readers = 3, 6
	ctx := context.Background()
	dir := t.TempDir()
	db, err := ts.Open(dir, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	tb, err := db.CreateTable(ctx, "Closing")
	if err != nil {
		t.Fatalf("create table: %v", err)
	}
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p0", RowKey: "first"}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var (
		mu    sync.Mutex
		acked []string
		wg    sync.WaitGroup
		ops   = newProgress()
	)
	// check reports an error other than ErrClosed; it returns false when
	// the goroutine should stop.
	check := func(what string, err error) bool {
		if err == nil {
			return true
		}
		if !errors.Is(err, ts.ErrClosed) {
			t.Errorf("round %d: %s during Close: %v, want nil or ErrClosed", round, what, err)
		}
		return false
	}
	guard := func(what string) {
		if r := recover(); r != nil {
			t.Errorf("round %d: %s panicked during Close: %v", round, what, r)
		}
	}
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer guard("Insert")
			for i := 0; ; i++ {
				rk := fmt.Sprintf("w%d-%06d", w, i)
				err := tb.Insert(ctx, &ts.Entity{PartitionKey: fmt.Sprintf("p%d", w), RowKey: rk, Properties: map[string]any{"I": int32(i)}})
				if !check("Insert", err) {
					return
				}
				ops.Add(1)
				mu.Lock()
				acked = append(acked, fmt.Sprintf("p%d/%s", w, rk))
				mu.Unlock()
			}
		}()
	}
	for r := 0; r < readers; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			what := "Get"
			if r%2 == 1 {
				what = "QueryPage"
			}
			defer guard(what)
			for {
				var err error
				if r%2 == 0 {
					_, err = tb.Get(ctx, "p0", "first", nil)
				} else {
					_, err = tb.QueryPage(ctx, ts.Query{Filter: "PartitionKey eq 'p1'", Top: 50})
				}
				if !check(what, err) {
					return
				}
				ops.Add(1)
			}
		}()
	}
	if !ops.waitFor(100, t.Failed) {
		t.Errorf("round %d: %d operations before Close; want 100", round, ops.Load())
	}
	if err := db.Close(); err != nil {
		t.Errorf("round %d: Close while reads and writes run: %v", round, err)
	}
	wg.Wait()
	if err := db.Close(); !errors.Is(err, ts.ErrClosed) {
		t.Errorf("round %d: second Close: %v, want ErrClosed", round, err)
	}
	db, err = ts.Open(dir, nil)
	if err != nil {
		t.Fatalf("round %d: reopen: %v", round, err)
	}
	defer db.Close()
	tb = db.Table("Closing")
	for _, key := range acked {
		pk, rk, _ := strings.Cut(key, "/")
		if _, err := tb.Get(ctx, pk, rk, nil); err != nil {
			t.Fatalf("round %d: acknowledged insert %s after reopen: %v", round, key, err)
		}
	}
}

// TestConcurrencyDeleteTable deletes and re-creates a table over and over
// while writers, through handles taken once at the start, submit
// two-entity transactions and read them back. The checks:
//
//   - a write or read whose whole span saw no DeleteTable begin, and that
//     began with the table in place, succeeds and reads back exactly what
//     this writer wrote last (handles follow the name to the new table);
//   - otherwise the only failures allowed are TableNotFound (the table was
//     gone for a moment) and, for the read, ResourceNotFound;
//   - the two entities of a transaction are present together or absent
//     together, at every read and in the final table.
func TestConcurrencyDeleteTable(t *testing.T) {
	const writers, cycles = 4, 40
	ctx := context.Background()
	db, tb := openConcurrencyDB(t, nil)
	var (
		started  atomic.Int64 // DeleteTable calls begun
		finished atomic.Int64 // cycles complete (table created again)
		ops      = newProgress()
		done     atomic.Bool
		wg       sync.WaitGroup
	)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := int64(0); !done.Load(); n++ {
				pk := fmt.Sprintf("w%d-%d", w, n%5)
				s0, f0 := started.Load(), finished.Load()
				stable := s0 == f0
				err := tb.SubmitTransaction(ctx, []ts.TransactionAction{
					{Type: ts.ActionUpsertReplace, Entity: &ts.Entity{PartitionKey: pk, RowKey: "a", Properties: map[string]any{"V": n}}},
					{Type: ts.ActionUpsertReplace, Entity: &ts.Entity{PartitionKey: pk, RowKey: "b", Properties: map[string]any{"V": n}}},
				})
				untouched := stable && started.Load() == s0
				switch {
				case err == nil:
				case errors.Is(err, ts.ErrTableNotFound) && !untouched:
					continue
				default:
					t.Errorf("writer %d: transaction %d: %v (stable %v, untouched %v)", w, n, err, stable, untouched)
					return
				}
				a, errA := tb.Get(ctx, pk, "a", nil)
				b, errB := tb.Get(ctx, pk, "b", nil)
				untouched = stable && started.Load() == s0
				if untouched {
					if errA != nil || errB != nil {
						t.Errorf("writer %d: read back %s with no DeleteTable since the write: %v, %v", w, pk, errA, errB)
						return
					}
					if a.Properties["V"] != n || b.Properties["V"] != n {
						t.Errorf("writer %d: read back %s: V = %v and %v, want %d", w, pk, a.Properties["V"], b.Properties["V"], n)
						return
					}
				}
				for _, err := range []error{errA, errB} {
					if err != nil && !errors.Is(err, ts.ErrTableNotFound) && !errors.Is(err, ts.ErrResourceNotFound) {
						t.Errorf("writer %d: read back: %v", w, err)
						return
					}
				}
				ops.Add(1)
			}
		}()
	}
	for c := 0; c < cycles && !t.Failed(); c++ {
		if !ops.waitFor(ops.Load()+20, t.Failed) && !t.Failed() {
			t.Errorf("cycle %d: no 20 writes in 10 s", c)
		}
		started.Add(1)
		if err := db.DeleteTable(ctx, "counters"); err != nil {
			t.Errorf("delete table: %v", err)
		}
		if _, err := db.CreateTable(ctx, "Counters"); err != nil {
			t.Errorf("create table: %v", err)
		}
		finished.Add(1)
	}
	done.Store(true)
	wg.Wait()
	// Final state: transactions are whole.
	vals := map[string]map[string]any{}
	for e, err := range tb.Query(ctx, ts.Query{}) {
		if err != nil {
			t.Fatalf("final query: %v", err)
		}
		if vals[e.PartitionKey] == nil {
			vals[e.PartitionKey] = map[string]any{}
		}
		vals[e.PartitionKey][e.RowKey] = e.Properties["V"]
	}
	for pk, rows := range vals {
		if len(rows) != 2 || rows["a"] != rows["b"] {
			t.Errorf("partition %s holds a torn transaction: %v", pk, rows)
		}
	}
	t.Logf("%d cycles, %d writes read back, %d partitions at the end", cycles, ops.Load(), len(vals))
}

// progress counts operations done and signals each one, so that a test
// waits for a count on an event rather than polling.
type progress struct {
	n    atomic.Int64
	tick chan struct{}
}

func newProgress() *progress { return &progress{tick: make(chan struct{}, 1)} }

// Add counts d operations done.
func (p *progress) Add(d int64) {
	p.n.Add(d)
	select {
	case p.tick <- struct{}{}:
	default:
	}
}

// Load is the count.
func (p *progress) Load() int64 { return p.n.Load() }

// waitFor waits until the count reaches n. It returns false when gaveUp
// says so or 10 s pass without an operation.
func (p *progress) waitFor(n int64, gaveUp func() bool) bool {
	for p.n.Load() < n {
		if gaveUp() {
			return false
		}
		select {
		case <-p.tick:
		case <-time.After(10 * time.Second):
			return false
		}
	}
	return true
}
