package tablestore_test

// Crash tests. The parent test re-executes the test binary as a child
// process (TestCrashChild, selected by TABLESTORE_CRASH_CHILD) that opens
// an on-disk store and commits in a loop, printing "try N" before and
// "ack N" after each acknowledged commit. The parent kills the child with
// SIGKILL at a random moment, reopens the store and checks:
//
//   - every transaction is all or nothing: all its entities with its
//     content, or none of them;
//   - with synced commits, every acknowledged write is present;
//   - the writes present are a prefix of those tried (a crash loses only
//     the newest), and what the parent once saw never disappears.
//
// TABLESTORE_CRASH_CYCLES sets the number of synced kill cycles (default
// 8, 20 with TABLESTORE_LONG=1; the no-sync and single-entity sets run half as many). On failure the
// store's directory is kept and its path printed with the seed.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/tablestoretest/modeltest"
)

const (
	crashChildEnv = "TABLESTORE_CRASH_CHILD" // the child's mode
	crashDirEnv   = "TABLESTORE_CRASH_DIR"
	crashStartEnv = "TABLESTORE_CRASH_START" // first number the child writes
	crashTable    = "Crash"
	crashMemTable = 256 << 10
)

// Child modes.
const (
	modeBatchSync   = "batch-sync"   // synced transactions
	modeBatchNoSync = "batch-nosync" // transactions with Options.NoSync
	modeSingleSync  = "single-sync"  // synced single-entity inserts
	// synced transactions on a store encrypted at rest
	modeBatchSyncEncrypted = "batch-sync-encrypted"
)

// batchRows is the number of entities transaction b writes besides its
// record: 20 to 50.
func batchRows(b int64) int { return 20 + int(b*37%31) }

// batchPartition is where transaction b writes: even numbers get a fresh
// partition (inserts), odd ones one of three shared partitions that they
// overwrite (upserts that replace).
func batchPartition(b int64) string {
	if b%2 == 0 {
		return fmt.Sprintf("u%09d", b)
	}
	return fmt.Sprintf("s%d", (b/2)%3)
}

// payload is the deterministic content of row i of transaction b.
func payload(b int64, i int) []byte {
	p := make([]byte, 64+int((b*131+int64(i)*29)%700))
	for j := range p {
		p[j] = byte(b*7 + int64(i)*13 + int64(j))
	}
	return p
}

func rowKey(i int) string { return fmt.Sprintf("r%03d", i) }

// batchActions builds transaction b: batchRows(b) rows and a record row
// saying which transaction wrote the partition and how many rows.
func batchActions(b int64) []ts.TransactionAction {
	pk := batchPartition(b)
	typ := ts.ActionInsert
	if b%2 == 1 {
		typ = ts.ActionUpsertReplace
	}
	n := batchRows(b)
	var actions []ts.TransactionAction
	for i := 0; i < n; i++ {
		actions = append(actions, ts.TransactionAction{Type: typ, Entity: &ts.Entity{
			PartitionKey: pk, RowKey: rowKey(i),
			Properties: map[string]any{"Batch": b, "Index": int32(i), "Payload": payload(b, i)},
		}})
	}
	actions = append(actions, ts.TransactionAction{Type: typ, Entity: &ts.Entity{
		PartitionKey: pk, RowKey: "record",
		Properties: map[string]any{"Batch": b, "Count": int32(n)},
	}})
	return actions
}

func crashOptions(mode string) *ts.Options {
	o := &ts.Options{NoSync: mode == modeBatchNoSync, MemTableSize: crashMemTable}
	if mode == modeBatchSyncEncrypted {
		o.Encryption = &ts.Encryption{Key: encKey(7)}
	}
	return o
}

// TestCrashChild is the child process; it does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	mode := os.Getenv(crashChildEnv)
	if mode == "" {
		t.Skip("runs only as the child process of TestCrash")
	}
	start := crashChildStart()
	ctx := context.Background()
	tb := crashChildTable(os.Getenv(crashDirEnv), crashOptions(mode), crashTable)
	var err error
	fmt.Fprintf(os.Stdout, "ready\n")
	// The parent kills the child; the deadline only guards against an
	// orphan that outlives it.
	deadline := time.Now().Add(time.Minute)
	for n := start; time.Now().Before(deadline); n++ {
		fmt.Fprintf(os.Stdout, "try %d\n", n)
		if mode == modeSingleSync {
			err = tb.Insert(ctx, &ts.Entity{PartitionKey: "single", RowKey: fmt.Sprintf("k%09d", n),
				Properties: map[string]any{"N": n, "Payload": payload(n, 0)}})
		} else {
			err = tb.SubmitTransaction(ctx, batchActions(n))
		}
		if err != nil {
			crashChildFail("commit %d: %v", n, err)
		}
		// os.Stdout is unbuffered: one write per line, so the parent
		// sees each acknowledgement as soon as the commit returns.
		fmt.Fprintf(os.Stdout, "ack %d\n", n)
	}
	os.Exit(0)
}

func crashChildFail(format string, args ...any) {
	fmt.Fprintf(os.Stdout, "fail "+format+"\n", args...)
	os.Exit(3)
}

// crashChildStart is a child's first sequence number, from crashStartEnv.
func crashChildStart() int64 {
	start, err := strconv.ParseInt(os.Getenv(crashStartEnv), 10, 64)
	if err != nil {
		crashChildFail("bad %s: %v", crashStartEnv, err)
	}
	return start
}

// crashChildTable opens the store in dir with opts and returns its table
// name, created on the first run; a child fails on any error.
func crashChildTable(dir string, opts *ts.Options, name string) *ts.Table {
	db, err := ts.Open(dir, opts)
	if err != nil {
		crashChildFail("open: %v", err)
	}
	tb, err := db.CreateTable(context.Background(), name)
	if errors.Is(err, ts.ErrTableAlreadyExists) {
		tb, err = db.Table(name), nil
	}
	if err != nil {
		crashChildFail("create table: %v", err)
	}
	return tb
}

func TestCrash(t *testing.T) {
	if os.Getenv(crashChildEnv) != "" {
		t.Skip("child process")
	}
	seed := testSeed(t)
	cycles := envInt(t, "TABLESTORE_CRASH_CYCLES", scaled(8, 20))
	sets := []struct {
		mode   string
		cycles int
	}{
		{modeBatchSync, cycles},
		{modeBatchNoSync, max(cycles/2, 1)},
		{modeSingleSync, max(cycles/2, 1)},
		{modeBatchSyncEncrypted, max(cycles/2, 1)},
	}
	for i, set := range sets {
		t.Run(set.mode, func(t *testing.T) {
			c := &crashRun{t: t, mode: set.mode, seed: seed + int64(i), rng: rand.New(rand.NewSource(seed + int64(i))),
				present: map[int64]bool{}, sharedSeen: map[string]int64{"s0": -1, "s1": -1, "s2": -1}, sharedStamp: map[string]time.Time{}}
			dir, err := os.MkdirTemp("", "tablestore-crash-")
			if err != nil {
				t.Fatal(err)
			}
			c.dir = dir
			for c.cycle = 0; c.cycle < set.cycles; c.cycle++ {
				c.runCycle()
			}
			c.verify(0, c.next, true)
			t.Logf("%s: %d cycles, %d writes tried, %d acknowledged", set.mode, set.cycles, c.next, c.acked)
			os.RemoveAll(dir)
		})
	}
}

// crashRun is the parent's state for one mode.
type crashRun struct {
	t     *testing.T
	mode  string
	seed  int64
	rng   *rand.Rand
	dir   string
	cycle int
	next  int64 // first number the next child writes
	acked int

	ackedSet    map[int64]bool       // acknowledged numbers of the last cycle
	present     map[int64]bool       // numbers the parent has seen committed
	sharedSeen  map[string]int64     // newest transaction seen per shared partition
	sharedStamp map[string]time.Time // its record's Timestamp
}

func (c *crashRun) failf(format string, args ...any) {
	c.t.Helper()
	c.t.Fatalf("%s cycle %d: %s\nseed %d (replay: go test -run 'TestCrash/%s' -seed=%d .); store kept in %s",
		c.mode, c.cycle, fmt.Sprintf(format, args...), c.seed, c.mode, c.seed-c.modeOffset(), c.dir)
}

// modeOffset undoes the per-mode seed offset so the printed seed replays
// the whole test.
func (c *crashRun) modeOffset() int64 {
	switch c.mode {
	case modeBatchNoSync:
		return 1
	case modeSingleSync:
		return 2
	case modeBatchSyncEncrypted:
		return 3
	}
	return 0
}

// startChild starts this test binary running only test, with env added
// to its environment, and returns it with its standard output and the
// standard error it collects.
func startChild(t *testing.T, test string, env ...string) (*exec.Cmd, io.ReadCloser, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, out, stderr
}

// runCycle starts a child, kills it at a random moment, and checks the
// store.
func (c *crashRun) runCycle() {
	start := c.next
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		crashChildEnv+"="+c.mode,
		crashDirEnv+"="+c.dir,
		crashStartEnv+"="+strconv.FormatInt(start, 10),
	)
	out, err := cmd.StdoutPipe()
	if err != nil {
		c.failf("pipe: %v", err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		c.failf("start child: %v", err)
	}
	lines := make(chan string, 1024)
	var all []string
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// One cycle in five kills the child at once, often while it opens
	// and recovers the store; the others let it commit for a while.
	var killAfter time.Duration
	early := c.rng.Intn(5) == 0
	if early {
		killAfter = time.Duration(c.rng.Intn(80)) * time.Millisecond
	} else {
		killAfter = time.Duration(5+c.rng.Intn(250)) * time.Millisecond
	}
	timer := time.NewTimer(killAfter)
	if !early {
		// Start the clock once the child is ready.
		timer.Stop()
	wait:
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					break wait
				}
				all = append(all, l)
				if l == "ready" {
					timer.Reset(killAfter)
					break wait
				}
			case <-time.After(30 * time.Second):
				timer.Reset(0) // never ready: kill it now
				break wait
			}
		}
	}
	killed := false
	for !killed {
		select {
		case l, ok := <-lines:
			if !ok {
				killed = true // the child ended on its own
				break
			}
			all = append(all, l)
		case <-timer.C:
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				c.failf("kill: %v", err)
			}
			killed = true
		}
	}
	for l := range lines {
		all = append(all, l)
	}
	wg.Wait()
	werr := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		c.failf("child did not die by SIGKILL (%v); output:\n%s\nstderr:\n%s", werr, strings.Join(all, "\n"), stderr.String())
	}

	maxTried := start - 1
	c.ackedSet = map[int64]bool{}
	for _, l := range all {
		f := strings.Fields(l)
		if len(f) != 2 || (f[0] != "try" && f[0] != "ack") {
			continue
		}
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			continue
		}
		if f[0] == "try" && n > maxTried {
			maxTried = n
		}
		if f[0] == "ack" {
			c.ackedSet[n] = true
			c.acked++
		}
	}
	for _, l := range all {
		if strings.HasPrefix(l, "fail") {
			c.failf("child: %s\nstderr:\n%s", l, stderr.String())
		}
	}
	c.next = maxTried + 1
	c.verify(start, c.next, false)
}

// getEntity reads one entity; nil when absent. The table itself may be
// absent if the first child was killed before creating it durably; the
// checks on acknowledged and once-seen writes catch a table that vanishes
// later.
func (c *crashRun) getEntity(tb *ts.Table, pk, rk string) *ts.Entity {
	c.t.Helper()
	e, err := tb.Get(context.Background(), pk, rk, nil)
	if errors.Is(err, ts.ErrResourceNotFound) || errors.Is(err, ts.ErrTableNotFound) {
		return nil
	}
	if err != nil {
		c.failf("get (%q,%q): %v", pk, rk, err)
	}
	return e
}

// verify opens the store and checks the numbers in [from, to): each
// committed entirely or not at all, and nothing seen before gone; after a
// cycle (not final) also that the acknowledged ones are present (synced
// modes) and the committed ones are a prefix of those tried.
func (c *crashRun) verify(from, to int64, final bool) {
	c.t.Helper()
	db, err := ts.Open(c.dir, crashOptions(c.mode))
	if err != nil {
		c.failf("reopen after kill: %v", err)
	}
	defer func() {
		if err := db.Close(); err != nil {
			c.failf("close: %v", err)
		}
	}()
	tb := db.Table(crashTable)
	synced := c.mode != modeBatchNoSync
	firstMissing := int64(-1)
	for n := from; n < to; n++ {
		var ok bool
		if c.mode == modeSingleSync {
			ok = c.checkSingle(tb, n)
		} else if n%2 == 0 {
			ok = c.checkFresh(tb, n)
		} else {
			continue // shared partitions are checked below
		}
		if ok && firstMissing >= 0 && !final {
			c.failf("write %d is present but %d, tried before it, is not: a crash lost an older write and kept a newer one", n, firstMissing)
		}
		if !ok && firstMissing < 0 {
			firstMissing = n
		}
		if !ok && c.present[n] {
			c.failf("write %d was present after an earlier crash and is gone now", n)
		}
		if !ok && synced && c.ackedSet[n] && !final {
			c.failf("write %d was acknowledged (synced) but is not in the store", n)
		}
		if ok {
			c.present[n] = true
		}
	}
	if final {
		c.scanAll(tb)
	}
	if c.mode == modeSingleSync {
		return
	}
	for s := int64(0); s < 3; s++ {
		pk := fmt.Sprintf("s%d", s)
		newest, stamp := c.checkShared(tb, pk)
		if newest < c.sharedSeen[pk] {
			c.failf("shared partition %s went back from transaction %d to %d", pk, c.sharedSeen[pk], newest)
		}
		// Timestamps strictly increase per entity, across crashes too.
		prev := c.sharedStamp[pk]
		if newest > c.sharedSeen[pk] && !prev.IsZero() && !stamp.After(prev) {
			c.failf("partition %s record: transaction %d has Timestamp %v, not after %v of transaction %d", pk, newest, stamp, prev, c.sharedSeen[pk])
		}
		if newest == c.sharedSeen[pk] && !prev.IsZero() && !stamp.Equal(prev) {
			c.failf("partition %s record: transaction %d's Timestamp changed from %v to %v", pk, newest, prev, stamp)
		}
		c.sharedSeen[pk], c.sharedStamp[pk] = newest, stamp
		if synced && !final {
			for n := range c.ackedSet {
				if n%2 == 1 && batchPartition(n) == pk && n > newest {
					c.failf("transaction %d was acknowledged (synced) but partition %s holds transaction %d", n, pk, newest)
				}
			}
		}
	}
}

// scanAll reads the whole table with a query and checks it holds exactly
// the entities of the writes found present, and nothing else.
func (c *crashRun) scanAll(tb *ts.Table) {
	c.t.Helper()
	counts := map[string]int{}
	for e, err := range tb.Query(context.Background(), ts.Query{}) {
		if errors.Is(err, ts.ErrTableNotFound) && len(c.present) == 0 {
			break
		}
		if err != nil {
			c.failf("final scan: %v", err)
		}
		counts[e.PartitionKey]++
	}
	want := map[string]int{}
	for n := range c.present {
		switch {
		case c.mode == modeSingleSync:
			want["single"]++
		case n%2 == 0:
			want[batchPartition(n)] = batchRows(n) + 1
		}
	}
	for pk, n := range counts {
		if strings.HasPrefix(pk, "s") && c.mode != modeSingleSync {
			if n > 51 {
				c.failf("final scan: shared partition %s holds %d entities, more than 50 rows and a record", pk, n)
			}
			continue
		}
		if want[pk] != n {
			c.failf("final scan: partition %s holds %d entities, want %d", pk, n, want[pk])
		}
	}
	for pk, n := range want {
		if counts[pk] != n {
			c.failf("final scan: partition %s holds %d entities, want %d", pk, counts[pk], n)
		}
	}
}

// checkSingle checks single-entity write n; it reports whether it is
// present.
func (c *crashRun) checkSingle(tb *ts.Table, n int64) bool {
	e := c.getEntity(tb, "single", fmt.Sprintf("k%09d", n))
	if e == nil {
		return false
	}
	if e.Properties["N"] != n || !bytesEqual(e.Properties["Payload"], payload(n, 0)) {
		c.failf("single write %d has wrong content: %v", n, modeltest.Describe(e))
	}
	return true
}

// checkFresh checks transaction n, which wrote its own partition: the
// record and all rows, or nothing. It reports whether it is present.
func (c *crashRun) checkFresh(tb *ts.Table, n int64) bool {
	pk := batchPartition(n)
	rows := batchRows(n)
	record := c.getEntity(tb, pk, "record")
	var present, absent []int
	for i := 0; i <= rows; i++ { // one past the end must be absent
		e := c.getEntity(tb, pk, rowKey(i))
		if e == nil {
			absent = append(absent, i)
			continue
		}
		present = append(present, i)
		if e.Properties["Batch"] != n || e.Properties["Index"] != int32(i) || !bytesEqual(e.Properties["Payload"], payload(n, i)) {
			c.failf("transaction %d row %d has wrong content: %s", n, i, modeltest.Describe(e))
		}
	}
	if record == nil {
		if len(present) > 0 {
			c.failf("transaction %d is torn: no record but rows %v present", n, present)
		}
		return false
	}
	if record.Properties["Batch"] != n || record.Properties["Count"] != int32(rows) {
		c.failf("transaction %d record has wrong content: %s", n, modeltest.Describe(record))
	}
	if len(present) != rows || absent[0] != rows {
		c.failf("transaction %d is torn: record present, rows %v of 0..%d missing", n, absent, rows-1)
	}
	return true
}

// checkShared checks a shared partition: the record names the newest
// transaction B that wrote it; rows below B's count hold B's content,
// later rows hold an older transaction's content or are absent. It returns
// B and the record's Timestamp, or -1 if nothing wrote the partition.
func (c *crashRun) checkShared(tb *ts.Table, pk string) (int64, time.Time) {
	record := c.getEntity(tb, pk, "record")
	newest := int64(-1)
	var stamp time.Time
	rows := 0
	if record != nil {
		stamp = record.Timestamp
		b, ok := record.Properties["Batch"].(int64)
		if !ok || batchPartition(b) != pk || record.Properties["Count"] != int32(batchRows(b)) {
			c.failf("partition %s record has wrong content: %s", pk, modeltest.Describe(record))
		}
		newest, rows = b, batchRows(b)
	}
	for i := 0; i < 51; i++ {
		e := c.getEntity(tb, pk, rowKey(i))
		if e == nil {
			if i < rows {
				c.failf("partition %s is torn: record names transaction %d of %d rows, row %d missing", pk, newest, rows, i)
			}
			continue
		}
		b, ok := e.Properties["Batch"].(int64)
		if !ok || e.Properties["Index"] != int32(i) || !bytesEqual(e.Properties["Payload"], payload(b, i)) {
			c.failf("partition %s row %d has wrong content: %s", pk, i, modeltest.Describe(e))
		}
		switch {
		case i < rows && b != newest:
			c.failf("partition %s is torn: record names transaction %d, row %d holds transaction %d", pk, newest, i, b)
		case i >= rows && b >= newest:
			c.failf("partition %s is torn: record names transaction %d (%d rows), row %d holds transaction %d", pk, newest, rows, i, b)
		}
	}
	return newest, stamp
}

func bytesEqual(v any, want []byte) bool {
	b, ok := v.([]byte)
	return ok && string(b) == string(want)
}

// crashEncryptedEnv, set to 1, makes the stores of the crash suites that
// run through crashModes encrypted at rest, in the parent and in the
// child processes, which inherit it.
const crashEncryptedEnv = "TABLESTORE_CRASH_ENCRYPTED"

// crashKey returns o (nil: new Options) with the crash suites' key when
// crashEncryptedEnv is set, else o.
func crashKey(o *ts.Options) *ts.Options {
	if os.Getenv(crashEncryptedEnv) != "1" {
		return o
	}
	c := ts.Options{}
	if o != nil {
		c = *o
	}
	c.Encryption = &ts.Encryption{Key: encKey(8)}
	return &c
}

// crashModes runs a crash suite twice: plain with cycles, then encrypted
// at rest with a quarter of them (at least one).
func crashModes(t *testing.T, cycles int, run func(t *testing.T, cycles int)) {
	eachCrashMode(t, func(t *testing.T, encrypted bool) {
		if encrypted {
			run(t, max(cycles/4, 1))
		} else {
			run(t, cycles)
		}
	})
}

// eachCrashMode runs a crash suite as the subtest "plain", then as
// "encrypted" with crashEncryptedEnv set (see crashKey).
func eachCrashMode(t *testing.T, run func(t *testing.T, encrypted bool)) {
	t.Run("plain", func(t *testing.T) { run(t, false) })
	t.Run("encrypted", func(t *testing.T) {
		t.Setenv(crashEncryptedEnv, "1")
		run(t, true)
	})
}

// crashCheckEncrypted fails, in an encrypted run, unless the store in
// dir refuses to open without its key: the run was encrypted throughout.
func crashCheckEncrypted(t *testing.T, dir string) {
	t.Helper()
	if os.Getenv(crashEncryptedEnv) != "1" {
		return
	}
	db, err := ts.Open(dir, &ts.Options{MustExist: true})
	if err == nil {
		db.Close()
	}
	if !errors.Is(err, ts.ErrEncryptionKey) {
		t.Fatalf("the store in %s opens without its key (%v): it is not encrypted", dir, err)
	}
}
