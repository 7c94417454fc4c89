package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

func keyFile(t *testing.T, dir, name string, b byte) (path string, key []byte) {
	t.Helper()
	key = bytes.Repeat([]byte{b}, 32)
	path = writeFile(t, dir, name, base64.StdEncoding.EncodeToString(key)+"\n")
	require.NoError(t, os.Chmod(path, 0o600))
	return path, key
}

// TestKeyFileModes: a key file others may write is refused, one they may
// read draws a warning.
func TestKeyFileModes(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	k, _ := keyFile(t, dir, "k", 1)
	r := ok(t, "tables", "--store", store, "--encryption-key-file", k, "create", "Tab")
	require.NotContains(t, r.stderr, "warning")
	require.NoError(t, os.Chmod(k, 0o640))
	r = ok(t, "tables", "--store", store, "--encryption-key-file", k, "list")
	require.Contains(t, r.stderr, "warning: --encryption-key-file "+k+": the key file is readable by its group or others (mode 0640)")
	require.NoError(t, os.Chmod(k, 0o666))
	r = cli(t, "tables", "--store", store, "--encryption-key-file", k, "list")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "writable by its group or others (mode 0666)")
}

// TestRekeyRotatesContinuousBackup: rekey and rekey --rewrite on a closed
// store rotate its continuous backup too, found through the store, and
// say so; afterwards the store and its backup open with the new key
// alone and not with the old one. A backup file no key given opens
// fails the command before it rotates anything.
func TestRekeyRotatesContinuousBackup(t *testing.T) {
	for _, rewrite := range []bool{false, true} {
		t.Run(fmt.Sprint("rewrite=", rewrite), func(t *testing.T) {
			dir := t.TempDir()
			store, bdir := filepath.Join(dir, "store"), filepath.Join(dir, "backup")
			k1, key1 := keyFile(t, dir, "k1", 1)
			k2, key2 := keyFile(t, dir, "k2", 2)
			_, key3 := keyFile(t, dir, "k3", 3)
			open := func(key []byte) (*tablestore.DB, error) {
				return tablestore.Open(store, &tablestore.Options{Encryption: &tablestore.Encryption{Key: key},
					ContinuousBackup: &tablestore.ContinuousBackup{Dir: bdir}})
			}
			db, err := open(key1)
			require.NoError(t, err)
			tb, err := db.CreateTable(context.Background(), "Secrets")
			require.NoError(t, err)
			require.NoError(t, tb.Insert(context.Background(), &tablestore.Entity{PartitionKey: "p", RowKey: "1"}))
			require.NoError(t, db.Close())

			// A backup file under a key not given: nothing is changed.
			stray := filepath.Join(bdir, "seg-99999999999999999999.log")
			sdb, err := tablestore.Open(filepath.Join(dir, "other"), &tablestore.Options{Encryption: &tablestore.Encryption{Key: key3},
				ContinuousBackup: &tablestore.ContinuousBackup{Dir: filepath.Join(dir, "otherbackup")}})
			require.NoError(t, err)
			require.NoError(t, sdb.Close())
			segs, err := filepath.Glob(filepath.Join(dir, "otherbackup", "seg-*.log"))
			require.NoError(t, err)
			require.NotEmpty(t, segs)
			data, err := os.ReadFile(segs[0])
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(stray, data, 0o600))
			args := []string{"rekey", "--store", store, "--encryption-key-file", k2, "--old-encryption-key-file", k1}
			if rewrite {
				args = append(args, "--rewrite")
			}
			r := cli(t, args...)
			require.Equal(t, exitFail, r.code, "stdout: %s", r.stdout)
			require.Contains(t, r.stderr, stray)
			require.Contains(t, r.stderr, "nothing was changed")
			require.NoError(t, os.Remove(stray))
			ok(t, "backups", "list", bdir, "--encryption-key-file", k1) // not rotated

			r = ok(t, args...)
			require.Contains(t, r.stdout, "its continuous backup "+bdir)
			require.Contains(t, r.stdout, "under key "+tablestore.EncryptionKeyID(key2))
			db, err = open(key2)
			require.NoError(t, err, "the new key alone opens the store and its backup")
			require.NoError(t, db.Close())
			ok(t, "backups", "list", bdir, "--encryption-key-file", k2)
			r = cli(t, "backups", "list", bdir, "--encryption-key-file", k1)
			require.Equal(t, exitFail, r.code)
			require.Contains(t, r.stderr, "another key was given")
			require.Contains(t, r.stderr, tablestore.EncryptionKeyID(key1))
			_, err = open(key1)
			require.ErrorIs(t, err, tablestore.ErrEncryptionKey)
		})
	}
}

// noMarker fails if a file under dir holds marker.
func noMarker(t *testing.T, dir, marker string) {
	t.Helper()
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		require.False(t, bytes.Contains(b, []byte(marker)), "%s holds %q", path, marker)
		n++
		return nil
	}))
	require.Greater(t, n, 3, "files scanned in %s", dir)
}

// TestEncryptionCommands: every command opens an encrypted store with
// --encryption-key-file or $TABLESTORE_ENCRYPTION_KEY, fails without it
// naming the key, and backups stay encrypted; rekey and encrypt convert.
func TestEncryptionCommands(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	k1, key1 := keyFile(t, dir, "k1", 1)
	k2, key2 := keyFile(t, dir, "k2", 2)
	id1, id2 := tablestore.EncryptionKeyID(key1), tablestore.EncryptionKeyID(key2)

	ok(t, "tables", "--store", store, "--encryption-key-file", k1, "create", "Secrets")
	ok(t, "put", "--store", store, "--encryption-key-file", k1, "Secrets", `{"PartitionKey":"p","RowKey":"1","Marker":"SecretMarkerValue"}`)
	r := ok(t, "get", "--store", store, "--encryption-key-file", k1, "Secrets", "p", "1")
	require.Contains(t, r.stdout, "SecretMarkerValue")

	// Without the key, or with another: the key's ID and what to do.
	for _, args := range [][]string{{}, {"--encryption-key-file", k2}} {
		r = cli(t, append([]string{"get", "--store", store, "Secrets", "p", "1"}, args...)...)
		require.Equal(t, exitFail, r.code, "stderr: %s", r.stderr)
		require.Contains(t, r.stderr, id1)
		require.Contains(t, r.stderr, "--encryption-key-file")
		require.NotContains(t, r.stderr, "corrupt")
	}
	r = cli(t, "check", "--store", store)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, id1)

	// The key file from the environment, then the key itself.
	t.Setenv("TABLESTORE_ENCRYPTION_KEY_FILE", k1)
	require.Contains(t, ok(t, "get", "--store", store, "Secrets", "p", "1").stdout, "SecretMarkerValue")
	t.Setenv("TABLESTORE_ENCRYPTION_KEY_FILE", "")
	t.Setenv(encryptionKeyEnv, base64.StdEncoding.EncodeToString(key1))
	r = ok(t, "query", "--store", store, "Secrets")
	require.Contains(t, r.stdout, "SecretMarkerValue")
	require.Contains(t, ok(t, "check", "--store", store).stdout, ": 0 damaged")
	ok(t, "stats", "--store", store, "--exact")
	backup := filepath.Join(dir, "backup")
	ok(t, "backup", "--store", store, backup)
	t.Setenv(encryptionKeyEnv, "")
	noMarker(t, store, "SecretMarkerValue")
	noMarker(t, backup, "SecretMarkerValue")
	require.Equal(t, exitFail, cli(t, "get", "--store", backup, "Secrets", "p", "1").code)
	require.Contains(t, ok(t, "get", "--store", backup, "--encryption-key-file", k1, "Secrets", "p", "1").stdout, "SecretMarkerValue")

	// Bad key files.
	for name, content := range map[string]string{"short": base64.StdEncoding.EncodeToString(make([]byte, 16)), "junk": "not base64 at all!"} {
		r = cli(t, "get", "--store", store, "--encryption-key-file", writeFile(t, dir, name, content), "Secrets", "p", "1")
		require.Equal(t, exitFail, r.code)
		require.Contains(t, r.stderr, "32 bytes of base64", name)
	}
	r = cli(t, "get", "--store", store, "--encryption-key-file", filepath.Join(dir, "missing"), "Secrets", "p", "1")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "--encryption-key-file")

	// Rekey to k2: then k2 alone opens it, and k1 alone names k2.
	r = ok(t, "rekey", "--store", store, "--encryption-key-file", k2, "--old-encryption-key-file", k1)
	require.Contains(t, r.stdout, id2)
	require.Contains(t, ok(t, "get", "--store", store, "--encryption-key-file", k2, "Secrets", "p", "1").stdout, "SecretMarkerValue")
	r = cli(t, "get", "--store", store, "--encryption-key-file", k1, "Secrets", "p", "1")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, id2)

	// Convert a plain store, and back.
	plain := filepath.Join(dir, "plain")
	ok(t, "tables", "--store", plain, "create", "Tee")
	ok(t, "put", "--store", plain, "Tee", `{"PartitionKey":"p","RowKey":"1","Marker":"PlainMarkerValue"}`)
	r = cli(t, "get", "--store", plain, "--encryption-key-file", k1, "Tee", "p", "1")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "not encrypted")
	enc := filepath.Join(dir, "converted")
	ok(t, "encrypt", "--store", plain, "--to", enc, "--encryption-key-file", k1)
	noMarker(t, enc, "PlainMarkerValue")
	require.Contains(t, ok(t, "get", "--store", enc, "--encryption-key-file", k1, "Tee", "p", "1").stdout, "PlainMarkerValue")
	back := filepath.Join(dir, "back")
	ok(t, "encrypt", "--decrypt", "--store", enc, "--to", back, "--encryption-key-file", k1)
	require.Contains(t, ok(t, "get", "--store", back, "Tee", "p", "1").stdout, "PlainMarkerValue")
	r = cli(t, "encrypt", "--store", enc, "--to", filepath.Join(dir, "again"), "--encryption-key-file", k1)
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "encrypted already")
	r = cli(t, "encrypt", "--store", plain, "--to", filepath.Join(dir, "x"))
	require.Equal(t, exitUsage, r.code)
	require.True(t, strings.Contains(r.stderr, "needs the key"), r.stderr)

	// serve: refused without the key, serves with it; a key for an
	// in-memory store is a usage error.
	r = cli(t, "serve", "--in-memory", "--encryption-key-file", k2)
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, "not --in-memory")
	r = cli(t, "serve", "--dir", store, "--addr", "127.0.0.1:0", "--anonymous")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, id2)
	_, base, _ := startServeBin(t, "--dir", store, "--anonymous", "--log-level", "none", "--encryption-key-file", k2)
	req, err := http.NewRequest("GET", base+"/Secrets(PartitionKey='p',RowKey='1')", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json;odata=nometadata")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Contains(t, string(body), "SecretMarkerValue")
}

// TestServeRekeysOnline: serve given the new key and the old one serves
// the store and rewraps its files meanwhile; afterwards the new key alone
// opens it. --old-encryption-key-file without a new key is a usage error.
func TestServeRekeysOnline(t *testing.T) {
	for _, rewrite := range []bool{false, true} {
		t.Run(fmt.Sprintf("rewrite=%v", rewrite), func(t *testing.T) { serveRekeysOnline(t, rewrite) })
	}
}

// serveRekeysOnline: serve rewraps, or with --rekey-rewrite re-encrypts,
// the store it serves; then a SIGKILL, and the new key alone opens it.
func serveRekeysOnline(t *testing.T, rewrite bool) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	k1, _ := keyFile(t, dir, "k1", 1)
	k2, key2 := keyFile(t, dir, "k2", 2)
	ok(t, "tables", "--store", store, "--encryption-key-file", k1, "create", "Secrets")
	ok(t, "put", "--store", store, "--encryption-key-file", k1, "Secrets", `{"PartitionKey":"p","RowKey":"1","Marker":"OnlineMarker"}`)

	r := cli(t, "get", "--store", store, "--old-encryption-key-file", k1, "Secrets", "p", "1")
	require.Equal(t, exitUsage, r.code, r.stderr)

	// Both lines are awaited, in whichever order they come.
	args := []string{"serve", "--addr", "127.0.0.1:0", "--dir", store, "--anonymous", "--log-level", "none",
		"--encryption-key-file", k2, "--old-encryption-key-file", k1}
	verb := "rewrapped"
	if rewrite {
		args, verb = append(args, "--rekey-rewrite"), "re-encrypted"
	}
	cmd := exec.Command(buildBinary(t), args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base, rekeyed := "", false
	sc := bufio.NewScanner(stderr)
	for (base == "" || !rekeyed) && sc.Scan() {
		l := sc.Text()
		if m := regexp.MustCompile(`^serve: listening on (\S+)$`).FindStringSubmatch(l); m != nil {
			base = "http://" + m[1] + "/devstoreaccount1"
		}
		if strings.HasPrefix(l, "serve: rekey of account") {
			require.Contains(t, l, "files "+verb+" under key "+tablestore.EncryptionKeyID(key2))
			rekeyed = true
		}
	}
	require.True(t, base != "" && rekeyed, "the server exited before it listened and rekeyed")
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	req, err := http.NewRequest("GET", base+"/Secrets(PartitionKey='p',RowKey='1')", nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "application/json;odata=nometadata")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(body), "OnlineMarker")
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()

	require.Contains(t, ok(t, "get", "--store", store, "--encryption-key-file", k2, "Secrets", "p", "1").stdout, "OnlineMarker")
	r = cli(t, "get", "--store", store, "--encryption-key-file", k1, "Secrets", "p", "1")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, tablestore.EncryptionKeyID(key2))
}

// TestRekeyRewriteCommand: rekey --rewrite re-encrypts the store's files
// (their encrypted contents change, not only the headers) under the new
// key and reports the rate; the new key alone opens the store, the old
// alone is refused naming the new, and a rewrite needs no old key when
// every file is under the current one.
func TestRekeyRewriteCommand(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	k1, _ := keyFile(t, dir, "k1", 1)
	k2, key2 := keyFile(t, dir, "k2", 2)
	id2 := tablestore.EncryptionKeyID(key2)
	ok(t, "tables", "--store", store, "--encryption-key-file", k1, "create", "Secrets")
	ok(t, "put", "--store", store, "--encryption-key-file", k1, "Secrets", `{"PartitionKey":"p","RowKey":"1","Marker":"SecretMarkerValue"}`)
	contents := func() map[string][]byte {
		out := map[string][]byte{}
		ents, err := os.ReadDir(store)
		require.NoError(t, err)
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join(store, e.Name()))
			require.NoError(t, err)
			if len(b) > 4096 {
				out[e.Name()] = b[4096:]
			}
		}
		return out
	}
	before := contents()
	require.NotEmpty(t, before)

	r := ok(t, "rekey", "--rewrite", "--store", store, "--encryption-key-file", k2, "--old-encryption-key-file", k1)
	require.Contains(t, r.stdout, "re-encrypted under key "+id2)
	require.Contains(t, r.stdout, "MB/s")
	for name, b := range contents() {
		if old, ok := before[name]; ok {
			require.False(t, bytes.Equal(old, b), "%s: the same ciphertext after the rewrite", name)
		}
	}
	require.Contains(t, ok(t, "get", "--store", store, "--encryption-key-file", k2, "Secrets", "p", "1").stdout, "SecretMarkerValue")
	r = cli(t, "get", "--store", store, "--encryption-key-file", k1, "Secrets", "p", "1")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, id2)
	r = ok(t, "rekey", "--rewrite", "--store", store, "--encryption-key-file", k2)
	require.Contains(t, r.stdout, "re-encrypted")
	require.Contains(t, ok(t, "check", "--store", store, "--encryption-key-file", k2).stdout, ": 0 damaged")
}
