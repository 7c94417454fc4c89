package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

// TestBackupWhileWriting backs a store up while a writer goroutine
// commits transactions of 10 entities, then checks each backup opens,
// holds whole transactions only and everything acknowledged before it
// began, and exports byte-identically to the live store for the entities
// they share.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	live := filepath.Join(dir, "live")
	db, err := tablestore.Open(live, nil)
	require.NoError(t, err)
	tbl, err := db.CreateTable(ctx, "Events")
	require.NoError(t, err)
	var acked atomic.Int64
	ahead := make(chan struct{}, 3) // a signal at 20, 40 and 60 acknowledged batches
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 0; n < 50_000; n++ {
			select {
			case <-stop:
				return
			default:
			}
			b := tbl.NewBatch()
			for i := range 10 {
				b.Insert(&tablestore.Entity{PartitionKey: fmt.Sprintf("p%02d", n%7), RowKey: fmt.Sprintf("%06d-%d", n, i),
					Properties: map[string]any{"N": int32(n), "S": strings.Repeat("s", n%50)}})
			}
			if err := b.Submit(ctx); err != nil {
				t.Error(err)
				return
			}
			if a := acked.Add(1); a%20 == 0 && a <= 60 {
				ahead <- struct{}{}
			}
		}
	}()
	var backups []string
	var before []int64
	for i := range 3 {
		// Let the writer get 20 batches further ahead.
		select {
		case <-ahead:
		case <-time.After(30 * time.Second):
			close(stop)
			wg.Wait()
			t.Fatalf("backup %d: the writer acknowledged %d batches in 30 s; want %d", i, acked.Load(), 20*(i+1))
		}
		before = append(before, acked.Load())
		dest := filepath.Join(dir, fmt.Sprint("backup", i))
		n, bytes, err := backup(ctx, db, dest)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Positive(t, bytes)
		backups = append(backups, dest)
	}
	close(stop)
	wg.Wait()
	require.NoError(t, db.Close())

	liveLines := map[string]string{} // RowKey -> export line
	for _, line := range strings.SplitAfter(ok(t, "export", "--store", live, "Events").stdout, "\n") {
		if line != "" {
			liveLines[rowKeyOf(t, line)] = line
		}
	}
	for i, dest := range backups {
		perTx := map[string]int{}
		lines := strings.SplitAfter(ok(t, "export", "--store", dest, "Events").stdout, "\n")
		for _, line := range lines[:len(lines)-1] {
			rk := rowKeyOf(t, line)
			require.Equal(t, liveLines[rk], line, "backup %d differs from the live store", i)
			perTx[rk[:6]]++
		}
		for tx, n := range perTx {
			require.Equal(t, 10, n, "transaction %s is partial in backup %d", tx, i)
		}
		require.GreaterOrEqual(t, int64(len(perTx)), before[i], "backup %d lacks acknowledged transactions", i)
	}
}

func rowKeyOf(t *testing.T, line string) string {
	var e tablestore.Entity
	require.NoError(t, e.UnmarshalJSON([]byte(line)))
	return e.RowKey
}

func TestBackupAndStatsCommands(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	var b strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&b, `{"PartitionKey":"p%d","RowKey":"%05d","S":"some text"}`+"\n", i/100, i)
	}
	ok(t, "import", "--store", store, "Big", writeFile(t, dir, "in.jsonl", b.String()))
	ok(t, "tables", "--store", store, "create", "Empty")

	r := ok(t, "stats", "--store", store, "--exact")
	require.Regexp(t, `(?m)^TABLE\s+ENTITIES\s+BYTES\s+COUNTED$`, r.stdout)
	require.Regexp(t, `(?m)^Big\s+~[0-9,]+\s+~[0-9.]+ [KM]iB\s+3,000$`, r.stdout)
	require.Regexp(t, `(?m)^Empty\s+~0\s+~0 B\s+0$`, r.stdout)
	require.True(t, strings.HasSuffix(r.stdout, "\n"+statsFootnote+"\n"), "the footnote ends the output with its newline: %q", r.stdout)
	r = ok(t, "stats", "--store", store, "Big", "--json")
	require.Contains(t, r.stdout, `{"table":"Big","estimatedEntities":`)
	require.Equal(t, exitFail, cli(t, "stats", "--store", store, "Nope").code)

	dest := filepath.Join(dir, "backup")
	r = ok(t, "backup", "--store", store, dest)
	require.Contains(t, r.stderr, "backup: 2 table(s), ")
	require.Equal(t, ok(t, "export", "--store", store, "Big").stdout, ok(t, "export", "--store", dest, "Big").stdout)
	r = cli(t, "backup", "--store", store, dest)
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "exists")

	// A store another process has open.
	db, err := tablestore.Open(store, nil)
	require.NoError(t, err)
	defer db.Close()
	out, err := exec.Command(buildBinary(t), "backup", "--store", store, filepath.Join(dir, "b2")).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "is open in another process")
}
