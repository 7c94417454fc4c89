package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

func TestRestoreCommands(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store, bdir := filepath.Join(dir, "store"), filepath.Join(dir, "cb")
	db, err := tablestore.Open(store, &tablestore.Options{ContinuousBackup: &tablestore.ContinuousBackup{Dir: bdir}})
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Orders")
	require.NoError(t, err)
	for i := range 20 {
		require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%02d", i), Properties: map[string]any{"n": int32(i)}}))
	}
	snap, err := db.Snapshot(ctx)
	require.NoError(t, err)
	at := snap.Time()
	require.NoError(t, snap.Close())
	// The bad deploy: a rewrite, then the table is dropped.
	require.NoError(t, tb.Partition("p").DeleteRange(ctx, "05", ""))
	require.NoError(t, db.DeleteTable(ctx, "Orders"))
	require.NoError(t, db.Close())
	expected := filepath.Join(dir, "expected")
	require.NoError(t, os.MkdirAll(expected, 0o755))

	r := ok(t, "backups", "list", bdir)
	require.Contains(t, r.stdout, "window: ")
	require.Contains(t, r.stdout, "bases: 1")

	into := filepath.Join(dir, "r1")
	r = ok(t, "restore", "--from", bdir, "--to", at.Format(time.RFC3339Nano), "--into", into)
	require.Contains(t, r.stderr, "restore: "+into)
	got := readEntities(t, into, "Orders")
	require.Len(t, got, 20)

	// "now": the table is gone.
	now := filepath.Join(dir, "r2")
	ok(t, "restore", "--from", bdir, "--to", "now", "--into", now)
	require.Equal(t, exitFail, cli(t, "export", "--store", now, "Orders").code)

	// One table under a new name.
	one := filepath.Join(dir, "r3")
	ok(t, "restore", "--from", bdir, "--to", at.Format(time.RFC3339Nano), "--table", "orders", "--as", "OrdersBefore", "--into", one)
	before := readEntities(t, one, "OrdersBefore")
	require.Len(t, before, 20)
	for i, e := range before {
		// Stored as they were: the same Timestamps and ETags as the
		// whole store's restore shows.
		require.Equal(t, got[i].RowKey, e.RowKey)
		require.True(t, got[i].Timestamp.Equal(e.Timestamp), "%s: Timestamp %s, want %s", e.RowKey, e.Timestamp, got[i].Timestamp)
		require.Equal(t, got[i].ETag, e.ETag)
		require.Equal(t, got[i].Properties, e.Properties)
	}
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, strings.Contains(e.Name(), "restoring"), "the whole store restored on the way is removed: %s", e.Name())
	}

	// Bad input.
	r = cli(t, "restore", "--from", bdir, "--to", "yesterday", "--into", filepath.Join(dir, "x"))
	require.Equal(t, exitUsage, r.code)
	r = cli(t, "restore", "--from", bdir, "--to", at.Add(-time.Hour).Format(time.RFC3339Nano), "--into", filepath.Join(dir, "x"))
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "outside the backup's window")
	r = cli(t, "restore", "--from", bdir, "--to", "now", "--into", into)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "not empty")
	r = cli(t, "backups", "list", expected)
	require.Equal(t, exitFail, r.code)
	r = cli(t, "serve", "--in-memory", "--anonymous", "--addr", "127.0.0.1:0", "--continuous-backup", bdir)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "--continuous-backup needs a store directory")
}

// TestServeContinuousBackup serves a store with --continuous-backup,
// writes through the REST API, kills the server with SIGKILL and
// restores the newest instant: every acknowledged write is there.
// anonymousPost POSTs JSON body to the development account's path on
// an anonymous server at addr, and requires a success.
func anonymousPost(t *testing.T, addr, path, body string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/devstoreaccount1/"+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json;odata=nometadata")
	req.Header.Set("Prefer", "return-no-content")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300, "POST %s", path)
}

func TestServeContinuousBackup(t *testing.T) {
	for _, mode := range [][]string{nil, {"--continuous-backup-background-sync"}} {
		t.Run(fmt.Sprintf("%v", mode), func(t *testing.T) { serveContinuousBackup(t, mode...) })
	}
}

// serveContinuousBackup: every write serve acknowledged is restored
// after a SIGKILL, in either sync mode (background sync writes each
// record before the acknowledgement, so the page cache keeps it). The
// backup shares the store's disk here, which serve warns of unless
// background sync is on.
func serveContinuousBackup(t *testing.T, extra ...string) {
	dir := t.TempDir()
	store, bdir := filepath.Join(dir, "store"), filepath.Join(dir, "cb")
	p := startServe(t, nil, append([]string{"--dir", store, "--create", "--anonymous", "--addr", "127.0.0.1:0", "--continuous-backup", bdir}, extra...)...)
	const warning = "is on the store's disk: every synced write waits for two disk syncs"
	if len(extra) == 0 {
		require.Contains(t, p.output(), warning)
	} else {
		require.NotContains(t, p.output(), warning)
	}
	post := func(path, body string) { t.Helper(); anonymousPost(t, p.addr, path, body) }
	post("Tables", `{"TableName":"Orders"}`)
	for i := range 10 {
		post("Orders", fmt.Sprintf(`{"PartitionKey":"p","RowKey":"%02d","N":%d}`, i, i))
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
	into := filepath.Join(dir, "restored")
	ok(t, "restore", "--from", bdir, "--to", "now", "--into", into)
	require.Len(t, readEntities(t, into, "Orders"), 10)
}

// TestRestoreEncrypted: serve with a key and --continuous-backup writes
// an encrypted backup; backups list and restore read it only with the
// key (--encryption-key-file or $TABLESTORE_ENCRYPTION_KEY), and fail
// without it naming the key, creating nothing; the restored store is
// encrypted under the key.
func TestRestoreEncrypted(t *testing.T) {
	dir := t.TempDir()
	store, bdir := filepath.Join(dir, "store"), filepath.Join(dir, "cb")
	k1, key := keyFile(t, dir, "k1", 1)
	p := startServe(t, nil, "--dir", store, "--create", "--anonymous", "--addr", "127.0.0.1:0", "--continuous-backup", bdir, "--encryption-key-file", k1)
	post := func(path, body string) { t.Helper(); anonymousPost(t, p.addr, path, body) }
	post("Tables", `{"TableName":"Orders"}`)
	for i := range 10 {
		post("Orders", fmt.Sprintf(`{"PartitionKey":"p","RowKey":"%02d","Note":"SecretBackupMarker"}`, i))
	}
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
	<-p.done
	noMarker(t, bdir, "SecretBackupMarker")

	keyID := tablestore.EncryptionKeyID(key)
	r := cli(t, "backups", "list", bdir)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, keyID)
	into := filepath.Join(dir, "restored")
	r = cli(t, "restore", "--from", bdir, "--to", "now", "--into", into)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, keyID)
	_, err := os.Stat(into)
	require.True(t, os.IsNotExist(err), "a restore without the key created its target")

	require.Contains(t, ok(t, "backups", "list", bdir, "--encryption-key-file", k1).stdout, "bases: 1")
	ok(t, "restore", "--from", bdir, "--to", "now", "--into", into, "--encryption-key-file", k1)
	noMarker(t, into, "SecretBackupMarker")
	_, err = tablestore.Open(into, nil)
	require.ErrorIs(t, err, tablestore.ErrEncryptionKey)
	require.Contains(t, ok(t, "get", "--store", into, "--encryption-key-file", k1, "Orders", "p", "09").stdout, "SecretBackupMarker")

	// One table, the key from the environment.
	t.Setenv(encryptionKeyEnv, base64.StdEncoding.EncodeToString(key))
	one := filepath.Join(dir, "one")
	ok(t, "restore", "--from", bdir, "--to", "now", "--table", "Orders", "--as", "OrdersBefore", "--into", one)
	noMarker(t, one, "SecretBackupMarker")
	require.Contains(t, ok(t, "get", "--store", one, "OrdersBefore", "p", "03").stdout, "SecretBackupMarker")
}
