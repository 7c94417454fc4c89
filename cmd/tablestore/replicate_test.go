package main

import (
	"bytes"
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/tablestoretest"
)

func TestReplicateCommand(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	srv := tablestoretest.NewServer(t)
	conn := srv.ConnectionString()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	write := func(n int) {
		db, err := ts.Open(store, nil)
		require.NoError(t, err)
		for _, name := range []string{"Orders", "Users"} {
			tb, err := db.CreateTableIfNotExists(context.Background(), name)
			require.NoError(t, err)
			tablestoretest.RandomWrites(t, tb, rng.Uint64(), n)
		}
		require.NoError(t, db.Close())
	}
	same := func() {
		for _, name := range []string{"Orders", "Users"} {
			require.Equal(t, ok(t, "export", "--store", store, name).stdout, ok(t, "export", "--store", conn, name).stdout, name)
		}
	}
	write(200)
	require.Equal(t, exitUsage, cli(t, "replicate", "--store", store).code)
	r := ok(t, "replicate", "--store", store, "--to", conn, "--once")
	require.Contains(t, r.stderr, "replicate: Orders: ")
	require.Contains(t, r.stderr, "copied")
	same()
	state, err := os.ReadFile(store + ".replicate.json")
	require.NoError(t, err)
	require.Contains(t, string(state), `"Orders"`)

	// More changes: the next run resumes from the saved positions (no
	// copy), also after a run interrupted while following.
	write(300)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	var out, errb bytes.Buffer
	code := run(ctx, []string{"replicate", "--store", store, "--to", conn}, &stdio{stdin: strings.NewReader(""), stdout: &out, stderr: &errb})
	cancel()
	require.Equal(t, exitOK, code, errb.String())
	write(300)
	r = ok(t, "replicate", "--store", store, "--to", conn, "--once", "Orders", "Users")
	require.NotContains(t, r.stderr, "copied")
	same()

	// An entity that expires at the source leaves the target once the
	// sweeper has removed it.
	until := time.Now().Add(500 * time.Millisecond)
	db, err := ts.Open(store, nil)
	require.NoError(t, err)
	require.NoError(t, db.Table("Orders").SetTTL(context.Background(), ts.TTL{Property: "Until"}))
	require.NoError(t, db.Table("Orders").Insert(context.Background(), &ts.Entity{PartitionKey: "x", RowKey: "brief", Properties: map[string]any{"Until": until}}))
	require.NoError(t, db.Close())
	ok(t, "replicate", "--store", store, "--to", conn, "--once", "Orders")
	require.Contains(t, ok(t, "export", "--store", conn, "Orders").stdout, "brief")
	time.Sleep(time.Until(until)) // sleep: the entity expires when the wall clock passes Until; the command has no clock to set
	db, err = ts.Open(store, nil)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		n, err := db.Table("Orders").ExpiredCount(context.Background())
		require.NoError(t, err)
		return n == 0
	}, 10*time.Second, 5*time.Millisecond)
	require.NoError(t, db.Close())
	ok(t, "replicate", "--store", store, "--to", conn, "--once", "Orders")
	require.NotContains(t, ok(t, "export", "--store", conn, "Orders").stdout, "brief")
	same()
}

// TestServeReplicateFails: a replication that cannot run stops the
// server, which exits with the replicator's error.
func TestServeReplicateFails(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	db, err := ts.Open(store, nil)
	require.NoError(t, err)
	tb, err := db.CreateTable(context.Background(), "KeysOnly")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(context.Background(), ts.ChangeFeedOptions{}))
	require.NoError(t, db.Close())
	done := make(chan result, 1)
	go func() {
		done <- cli(t, "serve", "--dir", store, "--addr", "127.0.0.1:0", "--anonymous", "--log-level", "none",
			"--replicate-to", filepath.Join(dir, "mirror"))
	}()
	select {
	case r := <-done:
		require.NotEqual(t, exitOK, r.code)
		require.Contains(t, r.stderr, "serve: replication stopped: ")
		require.Contains(t, r.stderr, "keeps keys only")
		require.Contains(t, r.stderr, "serve: stopped; closing the store")
	case <-time.After(30 * time.Second):
		t.Fatal("the server kept running")
	}
}
