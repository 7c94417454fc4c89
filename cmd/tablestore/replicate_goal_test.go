package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/edm"
)

// replicateLongEnv set to 1 runs TestReplicateGoal at the goal's size:
// 1,000,000 entities and 100,000 changes (default 20,000 and 2,000).
const replicateLongEnv = "TABLESTORE_LONG_REPLICATE"

const goalTable = "Goal"

// goalProc is a `tablestore serve` child and its standard error, line by
// line with the time each arrived.
type goalProc struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []goalLine
	more  chan struct{} // closed and replaced when a line arrives
	ended chan struct{}
}

type goalLine struct {
	at   time.Time
	text string
}

func startGoalServe(t *testing.T, bin string, args ...string) *goalProc {
	t.Helper()
	p := &goalProc{cmd: exec.Command(bin, append([]string{"serve"}, args...)...), more: make(chan struct{}), ended: make(chan struct{})}
	stderr, err := p.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); <-p.ended })
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, goalLine{time.Now(), sc.Text()})
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
		}
		_ = p.cmd.Wait()
		close(p.ended)
	}()
	return p
}

// waitLine waits for a line matching re that arrived after since, and
// returns it with its submatches.
func (p *goalProc) waitLine(t *testing.T, re *regexp.Regexp, since time.Time, timeout time.Duration) (goalLine, []string) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		p.mu.Lock()
		for _, l := range p.lines {
			if !l.at.Before(since) {
				if m := re.FindStringSubmatch(l.text); m != nil {
					p.mu.Unlock()
					return l, m
				}
			}
		}
		more := p.more
		p.mu.Unlock()
		select {
		case <-more:
		case <-p.ended:
			t.Fatalf("the server ended waiting for %s:\n%s", re, p.text())
		case <-deadline:
			t.Fatalf("no %s within %s:\n%s", re, timeout, p.text())
		}
	}
}

// sawLine waits for a line matching re and reports whether one came
// before the process ended.
func (p *goalProc) sawLine(re *regexp.Regexp) bool {
	seen := 0
	for {
		p.mu.Lock()
		for ; seen < len(p.lines); seen++ {
			if re.MatchString(p.lines[seen].text) {
				p.mu.Unlock()
				return true
			}
		}
		more := p.more
		p.mu.Unlock()
		select {
		case <-more:
		case <-p.ended:
			// Every line arrived before the end: look at the last ones.
			p.mu.Lock()
			defer p.mu.Unlock()
			for _, l := range p.lines[seen:] {
				if re.MatchString(l.text) {
					return true
				}
			}
			return false
		}
	}
}

func (p *goalProc) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var b strings.Builder
	for _, l := range p.lines {
		fmt.Fprintf(&b, "%s %s\n", l.at.Format("15:04:05.000"), l.text)
	}
	return b.String()
}

var (
	connLine     = regexp.MustCompile(`^serve: connection string: (\S+)$`)
	listenLine   = regexp.MustCompile(`^serve: listening on (\S+)$`)
	copiedLine   = regexp.MustCompile(`^replicate: Goal: copied ([\d,]+) entities in (\S+) \(([\d,]+)/s\)$`)
	caughtUpLine = regexp.MustCompile(`^replicate: Goal: caught up: ([\d,]+) applied, lag 0$`)
	lagLine      = regexp.MustCompile(`^replicate: Goal: .*lag ([\d,]+) changes ([\d.]+)s$`)
)

func atoiCommas(s string) int64 {
	n, _ := strconv.ParseInt(strings.ReplaceAll(s, ",", ""), 10, 64)
	return n
}

// goalEntity is entity i of the table: partitions of 1,000 RowKeys.
func goalEntity(i int, gen int64) *ts.Entity {
	return &ts.Entity{PartitionKey: fmt.Sprintf("p%05d", i/1000), RowKey: fmt.Sprintf("r%08d", i), Properties: map[string]any{
		"Name":  fmt.Sprintf("entity %d generation %d", i, gen),
		"N":     int64(i)*7 + gen,
		"F":     float64(i) / 3,
		"I":     int32(gen),
		"On":    i%2 == 0,
		"When":  time.Unix(1_700_000_000+int64(i), 0).UTC(),
		"Bytes": bytes.Repeat([]byte{byte(i), byte(gen)}, 24),
	}}
}

// TestReplicateGoal is the replication goal as a harness: a store of N
// entities with its feed on (new images) is served by `tablestore serve
// --replicate-to`, which mirrors it into another `tablestore serve`
// (a separate store, over the REST API) while clients make M changes
// through the source's REST API (inserts, updates and upserts of both
// modes, deletes, entity group transactions). Once the replicator reports
// itself caught up after the last change, the source is stopped and the
// `tablestore export` of both tables (JSON lines in key order; Timestamp
// and ETag left out, since the target stamps its own) must be byte-equal.
// The killed variant kills the source server (and so its replicator)
// with SIGKILL several times, the first during the initial copy, makes
// range deletions through the library while it is down, and starts it
// again: the end state must be the same. TABLESTORE_LONG_REPLICATE=1
// runs the goal's size.
func TestReplicateGoal(t *testing.T) {
	n, m := 20_000, 2_000
	if os.Getenv(replicateLongEnv) == "1" {
		n, m = 1_000_000, 100_000
	}
	t.Run("plain", func(t *testing.T) { runReplicateGoal(t, n, m, 0) })
	t.Run("killed", func(t *testing.T) { runReplicateGoal(t, n, m, 3) })
}

func runReplicateGoal(t *testing.T, n, m, kills int) {
	bin := buildBinary(t)
	dir := t.TempDir()
	srcDir, dstDir := filepath.Join(dir, "source"), filepath.Join(dir, "target")
	ctx := context.Background()
	seed := time.Now().UnixNano()
	t.Logf("seed %d, %d entities, %d changes, %d kills", seed, n, m, kills)
	rng := rand.New(rand.NewSource(seed))

	// The source: n entities, loaded with the feed on.
	start := time.Now()
	db, err := ts.Open(srcDir, &ts.Options{NoSync: true})
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, goalTable)
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{Images: ts.ImagesNew}))
	w, err := tb.NewBulkWriter(&ts.BulkOptions{Action: ts.ActionInsert})
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, w.Add(ctx, goalEntity(i, 0)))
	}
	require.NoError(t, w.Flush(ctx))
	require.NoError(t, db.Close())
	t.Logf("loaded %d entities in %s", n, time.Since(start).Round(time.Millisecond))

	target := startGoalServe(t, bin, "--dir", dstDir, "--create", "--addr", "127.0.0.1:0", "--anonymous", "--log-level", "warn")
	_, cm := target.waitLine(t, connLine, time.Time{}, time.Minute)
	targetConn := cm[1]

	// The source server and its replicator; restarts keep the address.
	var src atomic.Pointer[goalProc]
	var procsMu sync.Mutex
	var procs []*goalProc
	srcAddr := "127.0.0.1:0"
	copyEnded := make(chan struct{}) // closed when a source server has finished a copy
	var copiedOnce sync.Once
	startSource := func() {
		p := startGoalServe(t, bin, "--dir", srcDir, "--addr", srcAddr, "--anonymous", "--log-level", "warn",
			"--replicate-to", targetConn, "--replicate-table", goalTable)
		_, lm := p.waitLine(t, listenLine, time.Time{}, time.Minute)
		srcAddr = lm[1]
		src.Store(p)
		procsMu.Lock()
		procs = append(procs, p)
		procsMu.Unlock()
		go func() {
			if p.sawLine(copiedLine) {
				copiedOnce.Do(func() { close(copyEnded) })
			}
		}()
	}
	// waitCopied waits for a source server to finish a copy, and reports
	// an error when none does in time.
	waitCopied := func() bool {
		select {
		case <-copyEnded:
			return true
		case <-time.After(10 * time.Minute):
			t.Error("no source server finished its copy in 10 minutes")
			return false
		}
	}
	e2eStart := time.Now()
	startSource()
	_, cm = src.Load().waitLine(t, connLine, time.Time{}, time.Minute)
	client, err := azure.Open(cm[1], nil)
	require.NoError(t, err)
	defer client.Close()

	// The changes, from 4 clients; ones the server cannot answer (down
	// while killed) are tried again.
	var made, inserted atomic.Int64
	writersDone := make(chan struct{})
	// reached[c] is closed when the c-th change is made: the kills after
	// the first wait for their share of the changes.
	reached := map[int64]chan struct{}{}
	for k := 1; k < kills; k++ {
		reached[int64(m*k/kills)] = make(chan struct{})
	}
	var halfway atomic.Int64 // when the second half of the changes began
	var retried atomic.Int64
	clientTb := client.Table(goalTable)
	do := func(op func() error) {
		deadline := time.Now().Add(3 * time.Minute)
		for {
			err := op()
			switch c := ts.ErrorCode(err); {
			case err == nil, c == edm.CodeResourceNotFound, c == edm.CodeEntityAlreadyExists, c == edm.CodeUpdateConditionNotSatisfied:
				return // done, or refused by the store: either way answered
			}
			if time.Now().After(deadline) {
				t.Errorf("a change kept failing: %v", err)
				return
			}
			retried.Add(1)
			time.Sleep(50 * time.Millisecond) // sleep: the client's back-off while the server is down between a kill and its restart
		}
	}
	change := func(r *rand.Rand) {
		total := n + int(inserted.Load())
		i := r.Intn(total)
		gen := made.Load() + 1
		e := goalEntity(i, gen)
		switch k := r.Intn(10); k {
		case 0, 1:
			i = n + int(inserted.Add(1)) - 1
			do(func() error { return clientTb.Insert(ctx, goalEntity(i, gen)) })
		case 2:
			do(func() error { return clientTb.Update(ctx, e, ts.Replace, ts.ETagAny) })
		case 3:
			e.Properties = map[string]any{"N": int64(-gen), "Extra": fmt.Sprint("merged ", gen)}
			do(func() error { return clientTb.Update(ctx, e, ts.Merge, ts.ETagAny) })
		case 4:
			do(func() error { return clientTb.Upsert(ctx, e, ts.Replace) })
		case 5:
			e.Properties = map[string]any{"Extra": fmt.Sprint("upsert-merged ", gen)}
			do(func() error { return clientTb.Upsert(ctx, e, ts.Merge) })
		case 6, 7:
			do(func() error { return clientTb.Delete(ctx, e.PartitionKey, e.RowKey, ts.ETagAny) })
		default: // a transaction of 2 to 20 actions in one partition
			base := i - i%1000
			b := client.Table(goalTable).Partition(e.PartitionKey).NewBatch()
			used := map[int]bool{}
			for range 2 + r.Intn(19) {
				j := base + r.Intn(1000)
				if used[j] {
					continue
				}
				used[j] = true
				x := goalEntity(j, gen)
				switch r.Intn(3) {
				case 0:
					b.Upsert(x, ts.Replace)
				case 1:
					x.Properties = map[string]any{"Extra": fmt.Sprint("batch-merged ", gen)}
					b.Upsert(x, ts.Merge)
				default:
					b.Delete(x.PartitionKey, x.RowKey, ts.ETagAny) // refuses the whole batch when absent
				}
			}
			do(func() error { return b.Submit(ctx) })
		}
		if c, ok := reached[made.Add(1)]; ok {
			close(c)
		}
	}

	// Kills: the first while the copy runs, the others spread over the
	// changes; while the server is down, range deletions through the
	// library (the REST API has none).
	killed := make(chan struct{})
	var killLog []string
	var rangeDeletes int
	go func() {
		defer close(killed)
		for k := range kills {
			if k == 0 {
				// During the copy: a share of the time a copy takes at
				// about 20,000 entities/s.
				time.Sleep(time.Duration(float64(n)/20000*float64(time.Second)) * time.Duration(2+rng.Intn(5)) / 10) // sleep: a random moment within the copy to kill at
			} else {
				// After a copy, while changes are made or applied.
				if !waitCopied() {
					return
				}
				select {
				case <-reached[int64(m*k/kills)]:
				case <-writersDone:
				}
				// Up to 1 s per 20,000 entities more, into the changes'
				// application when the changes are all made.
				time.Sleep(time.Duration(rng.Int63n(int64(time.Second) * int64(n) / 20000))) // sleep: a random moment to kill at
			}
			p := src.Load()
			copyFinished := false
			select {
			case <-copyEnded:
				copyFinished = true
			default:
			}
			require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
			<-p.ended
			killLog = append(killLog, fmt.Sprintf("kill %d after %s, %d changes made, copy finished: %v", k+1, time.Since(e2eStart).Round(time.Millisecond), made.Load(), copyFinished))
			db, err := ts.Open(srcDir, nil)
			require.NoError(t, err)
			part := db.Table(goalTable).Partition(fmt.Sprintf("p%05d", rng.Intn(n/1000)))
			lo := rng.Intn(900)
			require.NoError(t, part.DeleteRange(ctx, fmt.Sprintf("r%08d", lo), fmt.Sprintf("r%08d", lo+50+rng.Intn(50))))
			if k == 1 {
				require.NoError(t, db.Table(goalTable).Partition(fmt.Sprintf("p%05d", rng.Intn(n/1000))).DeleteAll(ctx))
				rangeDeletes++
			}
			rangeDeletes++
			require.NoError(t, db.Close())
			startSource()
		}
	}()
	var wg sync.WaitGroup
	per := m / 4
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewSource(seed + int64(c) + 1))
			for i := range per {
				if i == per/2 {
					// The first half during the copy, the second after it.
					if !waitCopied() {
						return
					}
					if c == 0 {
						halfway.Store(int64(time.Since(e2eStart)))
					}
				}
				change(r)
			}
		}()
	}
	wg.Wait()
	close(writersDone)
	t.Logf("%d changes made through the source server in %s (%d tried again), the second half from %s",
		made.Load(), time.Since(e2eStart).Round(time.Millisecond), retried.Load(), time.Duration(halfway.Load()).Round(time.Millisecond))
	<-killed
	writesDone := time.Now() // the last change, range deletions included
	for _, l := range killLog {
		t.Log(l)
	}
	if kills > 0 {
		t.Logf("%d range deletions while the server was down; the last change made at %s", rangeDeletes, writesDone.Sub(e2eStart).Round(time.Millisecond))
	}

	// Caught up: the replicator says so after the last change.
	p := src.Load()
	caught, um := p.waitLine(t, caughtUpLine, writesDone, 30*time.Minute)
	t.Logf("caught up %s after the last change, %s end to end; replicator line: %s", caught.at.Sub(writesDone).Round(time.Millisecond), caught.at.Sub(e2eStart).Round(time.Millisecond), caught.text)
	procsMu.Lock()
	var lines []goalLine
	for i, q := range procs {
		for _, l := range allLines(q, regexp.MustCompile(`^replicate: `)) {
			if copiedLine.MatchString(l.text) || caughtUpLine.MatchString(l.text) || testing.Verbose() {
				t.Logf("source server %d at %s: %s", i+1, l.at.Sub(e2eStart).Round(time.Millisecond), l.text)
			}
			lines = append(lines, l)
		}
	}
	procsMu.Unlock()
	var copied goalLine
	var maxLag int64
	var maxLagTime float64
	for _, l := range lines {
		if cm := copiedLine.FindStringSubmatch(l.text); cm != nil {
			copied = l
			require.Greater(t, atoiCommas(cm[1]), int64(n/2), "the copy")
		}
		if lm := lagLine.FindStringSubmatch(l.text); lm != nil {
			maxLag = max(maxLag, atoiCommas(lm[1]))
			lt, _ := strconv.ParseFloat(lm[2], 64)
			maxLagTime = max(maxLagTime, lt)
		}
	}
	require.NotEmpty(t, copied.text, "no copy finished")
	if kills == 0 {
		applied := atoiCommas(um[1])
		d := caught.at.Sub(copied.at)
		t.Logf("applied %d feed records in %s after the copy ended (%.0f/s; the last change was made %s the copy ended)",
			applied, d.Round(time.Millisecond), float64(applied)/d.Seconds(), beforeAfter(writesDone.Sub(copied.at)))
		if first, lm := firstLine(src.Load(), lagLine); lm != nil {
			t.Logf("first lag after the copy: %s changes (at %s)", lm[1], first.at.Sub(e2eStart).Round(time.Millisecond))
		}
	}
	t.Logf("largest lag reported: %d changes, %.1fs", maxLag, maxLagTime)

	// Stop the source (it drains and saves), then compare the exports.
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	<-p.ended
	require.Equal(t, 0, p.cmd.ProcessState.ExitCode(), p.text())
	start = time.Now()
	srcFile, dstFile := filepath.Join(dir, "source.jsonl"), filepath.Join(dir, "target.jsonl")
	exportTo(t, bin, srcDir, srcFile)
	exportTo(t, bin, targetConn, dstFile)
	same := sameFiles(t, srcFile, dstFile)
	t.Logf("exports equal: %d entities each (compared in %s)", same, time.Since(start).Round(time.Millisecond))
	require.Greater(t, same, n/2)
}

// beforeAfter says "D before" or "D after".
func beforeAfter(d time.Duration) string {
	if d < 0 {
		return (-d).Round(time.Millisecond).String() + " before"
	}
	return d.Round(time.Millisecond).String() + " after"
}

func firstLine(p *goalProc, re *regexp.Regexp) (goalLine, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.lines {
		if m := re.FindStringSubmatch(l.text); m != nil {
			return l, m
		}
	}
	return goalLine{}, nil
}

func allLines(p *goalProc, re *regexp.Regexp) []goalLine {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []goalLine
	for _, l := range p.lines {
		if re.MatchString(l.text) {
			out = append(out, l)
		}
	}
	return out
}

func exportTo(t *testing.T, bin, store, file string) {
	t.Helper()
	out, err := exec.Command(bin, "export", "--store", store, goalTable, file).CombinedOutput()
	require.NoError(t, err, "export %s: %s", store, out)
}

// sameFiles requires two files to be byte-equal, naming the first line
// that differs, and returns their number of lines.
func sameFiles(t *testing.T, a, b string) int {
	t.Helper()
	fa, err := os.Open(a)
	require.NoError(t, err)
	defer fa.Close()
	fb, err := os.Open(b)
	require.NoError(t, err)
	defer fb.Close()
	ra, rb := bufio.NewReaderSize(fa, 1<<20), bufio.NewReaderSize(fb, 1<<20)
	for line := 1; ; line++ {
		la, errA := ra.ReadString('\n')
		lb, errB := rb.ReadString('\n')
		require.Equal(t, la, lb, "line %d of the exports differs", line)
		if errors.Is(errA, io.EOF) || errors.Is(errB, io.EOF) {
			require.Equal(t, errA, errB, "one export ends at line %d", line)
			return line - 1
		}
		require.NoError(t, errA)
		require.NoError(t, errB)
	}
}
