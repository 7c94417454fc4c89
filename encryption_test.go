package tablestore_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

func encKey(b byte) []byte { return bytes.Repeat([]byte{b}, ts.EncryptionKeySize) }

func encOptions(key []byte, previous ...[]byte) *ts.Options {
	return &ts.Options{MemTableSize: 64 << 10, Encryption: &ts.Encryption{Key: key, PreviousKeys: previous}}
}

// Marker strings written as a table name, keys, property names and
// values; none may appear in any file of an encrypted store.
var encMarkers = []string{"Zebratable", "PKmarkerQ", "RKmarkerQ", "PropMarkerQ", "ValueMarkerQ", "BinMarkerQ"}

// fillMarkers writes entities holding the markers, enough to flush
// several sstables.
func fillMarkers(t *testing.T, db *ts.DB) *ts.Table {
	t.Helper()
	ctx := context.Background()
	tb, err := db.CreateTable(ctx, encMarkers[0])
	if err != nil {
		t.Fatal(err)
	}
	for i := range 600 {
		e := &ts.Entity{PartitionKey: fmt.Sprintf("%s%d", encMarkers[1], i%7), RowKey: fmt.Sprintf("%s%05d", encMarkers[2], i),
			Properties: map[string]any{encMarkers[3]: strings.Repeat(encMarkers[4], 20), "B": []byte(encMarkers[5])}}
		if err := tb.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	return tb
}

// scanForMarkers fails if any file under dir holds a marker, in plain
// text or as UTF-16.
func scanForMarkers(t *testing.T, dir string) int {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, m := range encMarkers {
			if bytes.Contains(data, []byte(m)) || bytes.Contains(bytes.ToLower(data), []byte(strings.ToLower(m))) {
				t.Errorf("%s holds the marker %q in plain text", path, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// openOnlyWithKey checks that the store in dir (what names it) refuses
// to open without key, opens with it, and holds want entities in the
// first marker table; it returns the store, open.
func openOnlyWithKey(t *testing.T, dir string, key []byte, what string, want int) *ts.DB {
	t.Helper()
	if _, err := ts.Open(dir, nil); !errors.Is(err, ts.ErrEncryptionKey) {
		t.Fatalf("%s opens without its key: %v", what, err)
	}
	db, err := ts.Open(dir, encOptions(key))
	if err != nil {
		t.Fatal(err)
	}
	if n := countEntities(t, db.Table(encMarkers[0])); n != want {
		t.Fatalf("%s holds %d entities, want %d", what, n, want)
	}
	return db
}

func countEntities(t *testing.T, tb *ts.Table) int {
	t.Helper()
	n := 0
	for _, err := range tb.Query(context.Background(), ts.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

// TestEncryptionNoPlaintext: every file of an encrypted store, and of a
// checkpoint of it, holds none of the names, keys and values written;
// both open with the key and read back everything. The same workload
// without encryption does leave the markers on disk (so the scan can
// find them).
func TestEncryptionNoPlaintext(t *testing.T) {
	plainDir := t.TempDir()
	plainBackup := filepath.Join(t.TempDir(), "backup")
	plain, err := ts.Open(plainDir, &ts.Options{MemTableSize: 64 << 10, ContinuousBackup: &ts.ContinuousBackup{Dir: plainBackup}})
	if err != nil {
		t.Fatal(err)
	}
	fillMarkers(t, plain)
	plain.Close()
	for _, d := range []string{plainDir, plainBackup} {
		found := false
		filepath.WalkDir(d, func(path string, de fs.DirEntry, err error) error {
			if err == nil && !de.IsDir() {
				data, _ := os.ReadFile(path)
				found = found || bytes.Contains(data, []byte(encMarkers[3]))
			}
			return nil
		})
		if !found {
			t.Fatalf("the unencrypted %s holds no marker: the scan proves nothing", d)
		}
	}

	dir := filepath.Join(t.TempDir(), "store")
	backup := filepath.Join(t.TempDir(), "backup")
	key := encKey(1)
	opts := encOptions(key)
	opts.ContinuousBackup = &ts.ContinuousBackup{Dir: backup}
	db, err := ts.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	fillMarkers(t, db)
	cp := filepath.Join(t.TempDir(), "cp")
	if err := db.Checkpoint(context.Background(), cp); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := scanForMarkers(t, dir); n < 5 {
		t.Fatalf("scanned only %d files", n)
	}
	scanForMarkers(t, cp)
	// The continuous backup: its log segments, base checkpoints and
	// BASE files.
	if n := scanForMarkers(t, backup); n < 5 {
		t.Fatalf("scanned only %d files of the backup", n)
	}
	for _, d := range []string{dir, cp} {
		db, err := ts.Open(d, encOptions(key))
		if err != nil {
			t.Fatal(err)
		}
		if n := countEntities(t, db.Table(encMarkers[0])); n != 600 {
			t.Fatalf("%s: read %d entities, want 600", d, n)
		}
		rep, err := db.Check(context.Background())
		if err != nil || len(rep.Damaged) != 0 {
			t.Fatalf("%s: Check = %+v, %v", d, rep, err)
		}
		db.Close()
		rep, err = ts.CheckDir(context.Background(), d, encOptions(key))
		if err != nil || len(rep.Damaged) != 0 || rep.Files == 0 {
			t.Fatalf("%s: CheckDir = %+v, %v", d, rep, err)
		}
	}
}

// dirState is every file's name, mode, size, time and content hash.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %v", path, info.Mode(), info.Size(), info.ModTime().UnixNano())
		if !d.IsDir() {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestEncryptionWrongKey: opening an encrypted store without its key, or
// with another, fails with an EncryptionKeyError naming the key it needs,
// and changes nothing on disk; so do CheckDir, and opening an
// unencrypted store with a key.
func TestEncryptionWrongKey(t *testing.T) {
	dir := t.TempDir()
	key := encKey(1)
	db, err := ts.Open(dir, encOptions(key))
	if err != nil {
		t.Fatal(err)
	}
	fillMarkers(t, db)
	db.Close()
	before := dirState(t, dir)
	for name, opts := range map[string]*ts.Options{"no key": nil, "other key": encOptions(encKey(2))} {
		_, err := ts.Open(dir, opts)
		var ke *ts.EncryptionKeyError
		if !errors.Is(err, ts.ErrEncryptionKey) || !errors.As(err, &ke) || ke.KeyID != ts.EncryptionKeyID(key) {
			t.Errorf("%s: Open = %v; want an EncryptionKeyError naming %s", name, err, ts.EncryptionKeyID(key))
		}
		if errors.Is(err, ts.ErrCorrupt) || ts.ErrorCode(err) != edm.CodeInvalidInput {
			t.Errorf("%s: Open = %v (code %s); want InvalidInput, not corruption", name, err, ts.ErrorCode(err))
		}
		if !strings.Contains(err.Error(), ts.EncryptionKeyID(key)) {
			t.Errorf("%s: the message does not name the key: %v", name, err)
		}
		if _, err := ts.CheckDir(context.Background(), dir, opts); !errors.Is(err, ts.ErrEncryptionKey) {
			t.Errorf("%s: CheckDir = %v; want ErrEncryptionKey", name, err)
		}
	}
	if after := dirState(t, dir); after != before {
		t.Fatalf("a failed open changed the store:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	plainDir := t.TempDir()
	plain, err := ts.Open(plainDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	plain.Close()
	before = dirState(t, plainDir)
	_, err = ts.Open(plainDir, encOptions(key))
	var ke *ts.EncryptionKeyError
	if !errors.As(err, &ke) || ke.KeyID != "" || !strings.Contains(err.Error(), "not encrypted") {
		t.Fatalf("a key for an unencrypted store: Open = %v", err)
	}
	if after := dirState(t, plainDir); after != before {
		t.Fatal("opening an unencrypted store with a key changed it")
	}
}

func TestEncryptionBadKey(t *testing.T) {
	for _, k := range [][]byte{nil, make([]byte, 16), make([]byte, 33)} {
		_, err := ts.OpenInMemory(&ts.Options{Encryption: &ts.Encryption{Key: k}})
		if ts.ErrorCode(err) != edm.CodeInvalidInput {
			t.Errorf("a %d-byte key: Open = %v; want InvalidInput", len(k), err)
		}
	}
	_, err := ts.OpenInMemory(&ts.Options{Encryption: &ts.Encryption{Key: encKey(1), PreviousKeys: [][]byte{{1, 2}}}})
	if ts.ErrorCode(err) != edm.CodeInvalidInput {
		t.Errorf("a 2-byte previous key: Open = %v; want InvalidInput", err)
	}
	if _, err := ts.OpenInMemory(&ts.Options{Encryption: &ts.Encryption{Provider: &kmsProvider{}}}); ts.ErrorCode(err) != edm.CodeInvalidInput {
		t.Errorf("a provider with an empty key ID: Open = %v; want InvalidInput", err)
	}
	good := "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="
	if k, err := ts.ParseEncryptionKey([]byte(" " + good + "\n")); err != nil || !bytes.Equal(k, encKey(1)) {
		t.Errorf("ParseEncryptionKey(good) = %x, %v", k, err)
	}
	for _, bad := range []string{"", "not base64!", "AQEBAQ==", good + good} {
		if _, err := ts.ParseEncryptionKey([]byte(bad)); ts.ErrorCode(err) != edm.CodeInvalidInput {
			t.Errorf("ParseEncryptionKey(%q) = %v; want InvalidInput", bad, err)
		}
	}
}

// TestEncryptionTamper: a flipped byte in an encrypted sstable's contents
// is found as corruption by Check, and one in its header as corruption
// by the read that opens it.
func TestEncryptionTamper(t *testing.T) {
	for _, where := range []string{"contents", "header"} {
		t.Run(where, func(t *testing.T) {
			dir := t.TempDir()
			key := encKey(3)
			db, err := ts.Open(dir, encOptions(key))
			if err != nil {
				t.Fatal(err)
			}
			fillMarkers(t, db)
			db.Close()
			ssts, _ := filepath.Glob(filepath.Join(dir, "*.sst"))
			if len(ssts) == 0 {
				t.Fatal("no sstable")
			}
			for _, p := range ssts {
				data, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				off := 4096 + 100 // a data block
				if where == "header" {
					off = 40 // the wrapped key, in both slots
					data[2048+off] ^= 0x10
				}
				data[off] ^= 0x10
				if err := os.WriteFile(p, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := ts.CheckDir(context.Background(), dir, encOptions(key))
			if err != nil {
				t.Fatalf("CheckDir: %v", err)
			}
			if len(rep.Damaged) == 0 {
				t.Fatalf("CheckDir found no damage in %d tampered sstables", len(ssts))
			}
			for _, d := range rep.Damaged {
				if errors.Is(d.Err, ts.ErrEncryptionKey) {
					t.Errorf("tampering reads as a key error: %v", d.Err)
				}
			}
		})
	}
}

// TestEncryptionRekey: Rekey moves every file to the new key while
// reads go on; the store then opens with the new key alone, and the old
// key alone gets an error naming the new one.
func TestEncryptionRekey(t *testing.T) {
	dir := t.TempDir()
	k1, k2 := encKey(1), encKey(2)
	db, err := ts.Open(dir, encOptions(k1))
	if err != nil {
		t.Fatal(err)
	}
	fillMarkers(t, db)
	db.Close()

	db, err = ts.Open(dir, encOptions(k2, k1))
	if err != nil {
		t.Fatal(err)
	}
	tb := db.Table(encMarkers[0])
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var readErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := tb.Get(ctx, fmt.Sprintf("%s%d", encMarkers[1], i%7), fmt.Sprintf("%s%05d", encMarkers[2], i%7), nil); err != nil {
				readErr = err
				return
			}
		}
	}()
	n, err := db.Rekey(ctx, nil)
	close(stop)
	wg.Wait()
	if err != nil || n == 0 {
		t.Fatalf("Rekey = %d, %v", n, err)
	}
	if readErr != nil {
		t.Fatalf("a read during Rekey: %v", readErr)
	}
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "after", RowKey: "rekey"}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = ts.Open(dir, encOptions(k2))
	if err != nil {
		t.Fatalf("open with the new key alone: %v", err)
	}
	if n := countEntities(t, db.Table(encMarkers[0])); n != 601 {
		t.Fatalf("read %d entities, want 601", n)
	}
	db.Close()
	_, err = ts.Open(dir, encOptions(k1))
	var ke *ts.EncryptionKeyError
	if !errors.As(err, &ke) || ke.KeyID != ts.EncryptionKeyID(k2) {
		t.Fatalf("open with the old key alone = %v; want an error naming %s", err, ts.EncryptionKeyID(k2))
	}

	plain, err := ts.OpenInMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if _, err := plain.Rekey(ctx, nil); ts.ErrorCode(err) != edm.CodeInvalidInput {
		t.Fatalf("Rekey of an unencrypted store = %v; want InvalidInput", err)
	}
}

// TestEncryptionConvert: CheckpointEncrypted turns an unencrypted store
// into an encrypted copy (no plaintext on disk, opens with the key only)
// and back.
func TestEncryptionConvert(t *testing.T) {
	ctx := context.Background()
	plainDir := t.TempDir()
	db, err := ts.Open(plainDir, &ts.Options{MemTableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	fillMarkers(t, db)
	key := encKey(5)
	encDir := filepath.Join(t.TempDir(), "enc")
	if err := db.CheckpointEncrypted(ctx, encDir, &ts.Encryption{Key: key}); err != nil {
		t.Fatal(err)
	}
	if err := db.CheckpointEncrypted(ctx, encDir, &ts.Encryption{Key: key}); err == nil {
		t.Fatal("a checkpoint into an existing directory succeeded")
	}
	if err := db.CheckpointEncrypted(ctx, filepath.Join(t.TempDir(), "x"), &ts.Encryption{Key: key[:3]}); ts.ErrorCode(err) != edm.CodeInvalidInput {
		t.Fatalf("a 3-byte key: %v; want InvalidInput", err)
	}
	db.Close()
	scanForMarkers(t, encDir)
	if entries, _ := os.ReadDir(filepath.Dir(encDir)); len(entries) != 1 {
		t.Fatalf("the temporary checkpoint was left: %v", entries)
	}
	enc := openOnlyWithKey(t, encDir, key, "the encrypted copy", 600)
	backDir := filepath.Join(t.TempDir(), "plain")
	if err := enc.CheckpointEncrypted(ctx, backDir, nil); err != nil {
		t.Fatal(err)
	}
	enc.Close()
	back, err := ts.Open(backDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if n := countEntities(t, back.Table(encMarkers[0])); n != 600 {
		t.Fatalf("the decrypted copy holds %d entities, want 600", n)
	}
}

// kmsProvider stands in for a KMS: it wraps with a key it holds under
// its own IDs, counts its calls, and can be told to fail.
type kmsProvider struct {
	mu      sync.Mutex
	current string
	keys    map[string][]byte // the provider's keys by its IDs
	down    error             // UnwrapKey's error when set
	calls   int
}

func (k *kmsProvider) CurrentKeyID() string { return k.current }

func (k *kmsProvider) inner(id string) (ts.KeyProvider, error) {
	key, ok := k.keys[id]
	if !ok {
		return nil, fmt.Errorf("kms: no key %q", id)
	}
	return staticProvider(key), nil
}

func (k *kmsProvider) WrapKey(id string, dataKey, context []byte) ([]byte, error) {
	k.mu.Lock()
	k.calls++
	k.mu.Unlock()
	p, err := k.inner(id)
	if err != nil {
		return nil, err
	}
	return p.WrapKey(p.CurrentKeyID(), dataKey, context)
}

func (k *kmsProvider) UnwrapKey(id string, wrapped, context []byte) ([]byte, error) {
	k.mu.Lock()
	k.calls++
	down := k.down
	k.mu.Unlock()
	if down != nil {
		return nil, down
	}
	p, err := k.inner(id)
	if err != nil {
		return nil, err
	}
	return p.UnwrapKey(p.CurrentKeyID(), wrapped, context)
}

// staticProvider is a provider over one key.
func staticProvider(key []byte) ts.KeyProvider {
	return &gcmProvider{key: key}
}

// gcmProvider wraps with AES-GCM under key, its ID "inner".
type gcmProvider struct{ key []byte }

func (g *gcmProvider) CurrentKeyID() string { return "inner" }
func (g *gcmProvider) aead() cipher.AEAD {
	b, _ := aes.NewCipher(g.key)
	a, _ := cipher.NewGCM(b)
	return a
}
func (g *gcmProvider) WrapKey(_ string, dataKey, context []byte) ([]byte, error) {
	a := g.aead()
	nonce := make([]byte, a.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	return a.Seal(nonce, nonce, dataKey, context), nil
}
func (g *gcmProvider) UnwrapKey(_ string, wrapped, context []byte) ([]byte, error) {
	a := g.aead()
	k, err := a.Open(nil, wrapped[:a.NonceSize()], wrapped[a.NonceSize():], context)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ts.ErrCorrupt, err)
	}
	return k, nil
}

// TestEncryptionKeyProvider: a store on a key provider opens through it;
// a provider that cannot unwrap gets an EncryptionKeyError naming its
// key ID and carrying its error, and rotation works through it too.
func TestEncryptionKeyProvider(t *testing.T) {
	dir := t.TempDir()
	kms := &kmsProvider{current: "arn:kms:key/one", keys: map[string][]byte{
		"arn:kms:key/one": encKey(1), "arn:kms:key/two": encKey(2)}}
	opts := &ts.Options{MemTableSize: 64 << 10, Encryption: &ts.Encryption{Provider: kms}}
	db, err := ts.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	fillMarkers(t, db)
	db.Close()
	if kms.calls == 0 {
		t.Fatal("the provider was never called")
	}
	scanForMarkers(t, dir)

	kms.down = errors.New("kms: access denied")
	_, err = ts.Open(dir, opts)
	var ke *ts.EncryptionKeyError
	if !errors.As(err, &ke) || ke.KeyID != "arn:kms:key/one" || !strings.Contains(err.Error(), "access denied") {
		t.Fatalf("provider down: Open = %v; want an EncryptionKeyError naming arn:kms:key/one with the provider's error", err)
	}
	kms.down = nil

	kms.current = "arn:kms:key/two"
	db, err = ts.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := db.Rekey(context.Background(), nil); err != nil || n == 0 {
		t.Fatalf("Rekey through the provider = %d, %v", n, err)
	}
	db.Close()
	delete(kms.keys, "arn:kms:key/one")
	db, err = ts.Open(dir, opts)
	if err != nil {
		t.Fatalf("open after the rotation, the old key gone: %v", err)
	}
	defer db.Close()
	if n := countEntities(t, db.Table(encMarkers[0])); n != 600 {
		t.Fatalf("read %d entities, want 600", n)
	}
}

// TestEncryptionTamperWAL: a flipped byte early in an encrypted WAL,
// with intact records after it, makes Open fail with ErrCorrupt naming
// the file, not a key error and not a silent loss.
func TestEncryptionTamperWAL(t *testing.T) {
	dir := t.TempDir()
	key := encKey(4)
	db, err := ts.Open(dir, &ts.Options{Encryption: &ts.Encryption{Key: key}})
	if err != nil {
		t.Fatal(err)
	}
	fillMarkers(t, db)
	db.Close()
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	var wal string
	for _, l := range logs {
		if st, err := os.Stat(l); err == nil && st.Size() > 4096+8192 {
			wal = l
		}
	}
	if wal == "" {
		t.Fatalf("no WAL with records among %v", logs)
	}
	data, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}
	data[4096+200] ^= 0x01
	if err := os.WriteFile(wal, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ts.Open(dir, &ts.Options{Encryption: &ts.Encryption{Key: key}})
	if !errors.Is(err, ts.ErrCorrupt) || errors.Is(err, ts.ErrEncryptionKey) || !strings.Contains(err.Error(), filepath.Base(wal)) {
		t.Fatalf("Open = %v; want ErrCorrupt naming %s", err, filepath.Base(wal))
	}
}

// TestEncryptionBackupKeys: a continuous backup of an encrypted store
// lists and restores only with its key: without it, or with another,
// ListBackups and Restore fail with an EncryptionKeyError naming the key
// ID and change neither the backup nor the target; a key for a plain
// backup fails too. The restore with the key holds no plaintext and
// opens with the key only.
func TestEncryptionBackupKeys(t *testing.T) {
	ctx := context.Background()
	key := encKey(1)
	_, backup, _ := backedUpMarkers(t)
	before := dirState(t, backup)
	for name, o := range map[string]*ts.Options{"no key": nil, "other key": encOptions(encKey(2))} {
		_, err := ts.ListBackups(backup, o)
		var ke *ts.EncryptionKeyError
		if !errors.As(err, &ke) || ke.KeyID != ts.EncryptionKeyID(key) || ts.ErrorCode(err) != edm.CodeInvalidInput {
			t.Errorf("%s: ListBackups = %v; want InvalidInput, an EncryptionKeyError naming %s", name, err, ts.EncryptionKeyID(key))
		}
		empty := t.TempDir()
		missing := filepath.Join(t.TempDir(), "restored")
		for _, into := range []string{empty, missing} {
			_, err = ts.Restore(ctx, backup, time.Time{}, into, o)
			ke = nil
			if !errors.As(err, &ke) || ke.KeyID != ts.EncryptionKeyID(key) || ts.ErrorCode(err) != edm.CodeInvalidInput {
				t.Errorf("%s: Restore = %v; want InvalidInput, an EncryptionKeyError naming %s", name, err, ts.EncryptionKeyID(key))
			}
		}
		if ents, err := os.ReadDir(empty); err != nil || len(ents) != 0 {
			t.Errorf("%s: a failed restore changed its empty target: %v, %v", name, ents, err)
		}
		if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: a failed restore created its target: %v", name, err)
		}
	}
	if after := dirState(t, backup); after != before {
		t.Fatalf("a failed restore changed the backup:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	into := filepath.Join(t.TempDir(), "restored")
	res, err := ts.Restore(ctx, backup, time.Time{}, into, encOptions(key))
	if err != nil {
		t.Fatal(err)
	}
	if res.Entities != 600 {
		t.Fatalf("restored %d entities, want 600", res.Entities)
	}
	scanForMarkers(t, into)
	openOnlyWithKey(t, into, key, "the restored store", 600).Close()

	// A plain backup with a key.
	plainDir, plainBackup := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	plain, err := ts.Open(plainDir, &ts.Options{ContinuousBackup: &ts.ContinuousBackup{Dir: plainBackup}})
	if err != nil {
		t.Fatal(err)
	}
	plain.Close()
	_, err = ts.ListBackups(plainBackup, encOptions(key))
	var ke *ts.EncryptionKeyError
	if !errors.As(err, &ke) || ke.KeyID != "" {
		t.Fatalf("a key for a plain backup: ListBackups = %v", err)
	}
	// An encrypted store does not write into a plain backup.
	opts := encOptions(key)
	opts.ContinuousBackup = &ts.ContinuousBackup{Dir: plainBackup}
	if _, err := ts.Open(t.TempDir(), opts); !errors.Is(err, ts.ErrEncryptionKey) {
		t.Fatalf("an encrypted store opened with a plain backup directory: %v", err)
	}
}

// TestEncryptionBackupDamage: damage in an encrypted backup segment is
// found, and reported at its offset in the segment's contents (past the
// encryption header).
func TestEncryptionBackupDamage(t *testing.T) {
	ctx := context.Background()
	key := encKey(1)
	dir, backup := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	opts := encOptions(key)
	opts.ContinuousBackup = &ts.ContinuousBackup{Dir: backup, SegmentBytes: 4 << 10}
	db, err := ts.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := db.CreateTable(ctx, "Alpha")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 80 {
		if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%03d", i), Properties: map[string]any{"v": strings.Repeat("x", 100)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	segs, err := filepath.Glob(filepath.Join(backup, "seg-*.log"))
	if err != nil || len(segs) < 3 {
		t.Fatalf("segments: %v, %v", segs, err)
	}
	victim := segs[len(segs)-2]
	data, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	const headerSize = 4096 // encfs.HeaderSize
	pos := 1000             // in the contents, well inside the records
	data[headerSize+pos] ^= 0xff
	if err := os.WriteFile(victim, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ts.Restore(ctx, backup, time.Time{}, filepath.Join(t.TempDir(), "r"), encOptions(key))
	var damaged *ts.DamagedBackupError
	if !errors.As(err, &damaged) || damaged.File != victim {
		t.Fatalf("Restore = %v; want a DamagedBackupError in %s", err, victim)
	}
	if damaged.Offset > int64(pos) || damaged.Offset <= int64(pos)-400 {
		t.Fatalf("damage reported at byte %d, want the record holding byte %d of the contents", damaged.Offset, pos)
	}
}

// backedUpMarkers writes the markers into a new store under key 1 with a
// continuous backup and closes it; it returns the store's directory, the
// backup's, and a function reopening the store (with its backup) under
// key and previous.
func backedUpMarkers(t *testing.T) (dir, backup string, reopen func(key []byte, previous ...[]byte) *ts.DB) {
	t.Helper()
	dir, backup = t.TempDir(), filepath.Join(t.TempDir(), "backup")
	reopen = func(key []byte, previous ...[]byte) *ts.DB {
		t.Helper()
		opts := encOptions(key, previous...)
		opts.ContinuousBackup = &ts.ContinuousBackup{Dir: backup}
		db, err := ts.Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := reopen(encKey(1))
	fillMarkers(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, backup, reopen
}

// TestEncryptionRekeyBackup: Rekey rewraps the continuous backup's files
// too, so after a rotation the backup restores with the new key alone.
func TestEncryptionRekeyBackup(t *testing.T) {
	ctx := context.Background()
	_, backup, reopen := backedUpMarkers(t)
	k1, k2 := encKey(1), encKey(2)
	db := reopen(k2, k1)
	if _, err := db.Rekey(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.ListBackups(backup, encOptions(k2)); err != nil {
		t.Fatalf("ListBackups with the new key alone: %v", err)
	}
	res, err := ts.Restore(ctx, backup, time.Time{}, filepath.Join(t.TempDir(), "r"), encOptions(k2))
	if err != nil || res.Entities != 600 {
		t.Fatalf("Restore with the new key alone = %+v, %v", res, err)
	}
}
