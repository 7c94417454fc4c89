package tablestore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/edm"
)

const (
	ttlCrashDirEnv = "TABLESTORE_TTL_CRASH_DIR"
	// ttlCrashEncEnv set to 1 makes the child open the store encrypted,
	// as its parent made it.
	ttlCrashEncEnv = "TABLESTORE_TTL_CRASH_ENCRYPTED"
)

// ttlCrashOptions is o, with the store encrypted when encrypted is set.
func ttlCrashOptions(o Options, encrypted bool) *Options {
	if encrypted {
		o.Encryption = &Encryption{Key: bytes.Repeat([]byte{9}, EncryptionKeySize)}
	}
	return &o
}

// TestTTLCrashChild is the child of TestTTLCrash: it opens the store,
// sets the TTL (building the expiry index) and lets the sweeper work
// until it is killed.
func TestTTLCrashChild(t *testing.T) {
	dir := os.Getenv(ttlCrashDirEnv)
	if dir == "" {
		t.Skip("run by TestTTLCrash")
	}
	db, err := Open(dir, ttlCrashOptions(Options{SweepRate: 20_000}, os.Getenv(ttlCrashEncEnv) == "1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Table("Crash").SetTTL(context.Background(), TTL{Property: "ExpiresAt"}); err != nil {
		t.Fatal(err)
	}
	fmt.Println("sweeping")
	time.Sleep(time.Minute) // sleep: the child sweeps until its parent kills it
}

// TestTTLCrash kills a process while its sweeper removes expired
// entities, three times, and checks after each restart that every live
// entity is intact and no expired one is visible; on a plain store and
// on an encrypted one.
func TestTTLCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("runs child processes")
	}
	for _, encrypted := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "encrypted"}[encrypted], func(t *testing.T) { testTTLCrash(t, encrypted) })
	}
}

func testTTLCrash(t *testing.T, encrypted bool) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 6000 // even rows live, odd rows expired
	db, err := Open(dir, ttlCrashOptions(Options{NoSync: true}, encrypted))
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Crash")
	require.NoError(t, err)
	w, err := tb.NewBulkWriter(nil)
	require.NoError(t, err)
	live, dead := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		exp := live
		if i%2 == 1 {
			exp = dead
		}
		require.NoError(t, w.Add(ctx, ent(fmt.Sprintf("p%d", i%20), fmt.Sprintf("r%05d", i), map[string]any{"I": int32(i), "ExpiresAt": exp})))
	}
	require.NoError(t, w.Flush(ctx))
	require.NoError(t, db.Close())

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	for cycle := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestTTLCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), ttlCrashDirEnv+"="+dir, ttlCrashEncEnv+"="+map[bool]string{false: "0", true: "1"}[encrypted])
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		buf := make([]byte, 64)
		// "sweeping": the index is built, the sweeper runs.
		_, _ = out.Read(buf)
		time.Sleep(time.Duration(rng.IntN(150)) * time.Millisecond) // sleep: a random moment to kill the child at
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()

		db, err := Open(dir, ttlCrashOptions(Options{SweepRate: 1}, encrypted))
		require.NoError(t, err)
		tb := db.Table("Crash")
		seen := 0
		for e, err := range tb.Query(ctx, Query{}) {
			require.NoError(t, err)
			i := int(e.Properties["I"].(int32))
			require.Zero(t, i%2, "cycle %d: expired entity %s came back", cycle, e.RowKey)
			require.Equal(t, fmt.Sprintf("r%05d", i), e.RowKey)
			seen++
		}
		require.Equal(t, n/2, seen, "cycle %d: live entities lost", cycle)
		for range 50 {
			i := rng.IntN(n/2)*2 + 1
			_, err := tb.Get(ctx, fmt.Sprintf("p%d", i%20), fmt.Sprintf("r%05d", i), nil)
			require.True(t, isCode(err, edm.CodeResourceNotFound), "cycle %d: %v", cycle, err)
		}
		left, err := tb.ExpiredCount(ctx)
		require.NoError(t, err)
		t.Logf("cycle %d: %d expired entities await the sweeper", cycle, left)
		require.NoError(t, db.Close())
	}
}
