package tablestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/internal/encfs"
)

// fileDataKeys returns the data key IDs of every encrypted file under
// the dirs (LOCK and empty files have none), read with keys, by path.
func fileDataKeys(t *testing.T, keys encfs.KeyProvider, dirs ...string) map[string]encfs.FileKeys {
	t.Helper()
	out := map[string]encfs.FileKeys{}
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() == "LOCK" {
				return err
			}
			if info, err := d.Info(); err != nil || info.Size() == 0 {
				return err
			}
			fk, err := encfs.InspectFile(vfs.Default, keys, path)
			if err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			out[path] = fk
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestEncryptionRekeyRewrite: Rekey with Rewrite gives every file of the
// store and of its continuous backup (the open WAL, MANIFEST, CLOCK and
// log segment included) a data key it did not have before, wrapped
// under the new key in both header slots, so the old key opens none of
// them; readers see every entity throughout and writers go on; the
// store then opens with the new key alone and checks clean, and its
// backup restores.
func TestEncryptionRekeyRewrite(t *testing.T) {
	ctx := context.Background()
	dir, backup, reopen := backedUpMarkers(t)
	k1, k2 := encKey(1), encKey(2)
	old1, err := encfs.NewStaticKeys(k1)
	if err != nil {
		t.Fatal(err)
	}
	before := fileDataKeys(t, old1, dir, backup)
	oldKeys := map[string]bool{}
	for _, fk := range before {
		oldKeys[fk.DataKeyID] = true
	}

	db := reopen(k2, k1)
	tb := db.Table(encMarkers[0])
	// Files open now carry data keys from before the rewrite too (the
	// WAL and MANIFEST Open made, the CLOCK written in place).
	both, err := encfs.NewStaticKeys(k2, k1)
	if err != nil {
		t.Fatal(err)
	}
	for _, fk := range fileDataKeys(t, both, dir, backup) {
		oldKeys[fk.DataKeyID] = true
	}
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "w", RowKey: "before"}); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var failed atomic.Value
	var passes, writes atomic.Int64
	wg.Add(2)
	go func() { // every entity, again and again
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := 0
			for _, err := range tb.Query(ctx, ts.Query{Filter: "PartitionKey ne 'w'"}) {
				if err != nil {
					failed.Store(fmt.Errorf("a query during the rewrite: %w", err))
					return
				}
				n++
			}
			if n != 600 {
				failed.Store(fmt.Errorf("a query during the rewrite saw %d entities, want 600", n))
				return
			}
			passes.Add(1)
		}
	}()
	go func() { // writes, synced through the WAL being moved
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "w", RowKey: fmt.Sprintf("%08d", i)}); err != nil {
				failed.Store(fmt.Errorf("a write during the rewrite: %w", err))
				return
			}
			writes.Add(1)
		}
	}()
	n, err := db.Rekey(ctx, &ts.RekeyOptions{Rewrite: true})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("Rekey(Rewrite) = %d, %v", n, err)
	}
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d files rewritten; %d full reads and %d writes meanwhile", n, passes.Load(), writes.Load())

	check := func() {
		t.Helper()
		only2, err := encfs.NewStaticKeys(k2)
		if err != nil {
			t.Fatal(err)
		}
		id2 := ts.EncryptionKeyID(k2)
		after := fileDataKeys(t, only2, dir, backup)
		if len(after) < 5 {
			t.Fatalf("only %d files found", len(after))
		}
		for path, fk := range after {
			if oldKeys[fk.DataKeyID] {
				t.Errorf("%s still has a data key from before the rewrite", path)
			}
			if fk.KeyID != id2 || fk.OtherKeyID != id2 {
				t.Errorf("%s: header slots under %s and %s, want %s", path, fk.KeyID, fk.OtherKeyID, id2)
			}
			var ke *ts.EncryptionKeyError
			if _, err := encfs.InspectFile(vfs.Default, old1, path); !errors.As(err, &ke) {
				t.Errorf("%s opens with the old key (%v)", path, err)
			}
		}
	}
	check()
	total := 601 + int(writes.Load())
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	check() // and what Close wrote

	db = reopen(k2) // with the new key alone
	if got := countEntities(t, db.Table(encMarkers[0])); got != total {
		t.Fatalf("read %d entities after the rewrite, want %d", got, total)
	}
	if rep, err := db.Check(ctx); err != nil || len(rep.Damaged) > 0 {
		t.Fatalf("Check after the rewrite = %+v, %v", rep, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	res, err := ts.Restore(ctx, backup, time.Time{}, filepath.Join(t.TempDir(), "r"), encOptions(k2))
	if err != nil || res.Entities != total {
		t.Fatalf("Restore after the rewrite = %+v, %v; want %d entities", res, err, total)
	}
}

const rewriteCrashChildEnv = "TABLESTORE_REWRITE_CRASH_CHILD" // dir,first

// rewriteCrashOptions opens the crash test's store under key 2 (key 1
// previous), with its continuous backup beside it.
func rewriteCrashOptions(dir string) *ts.Options {
	o := encOptions(encKey(2), encKey(1))
	o.ContinuousBackup = &ts.ContinuousBackup{Dir: dir + ".backup", SegmentBytes: 64 << 10}
	return o
}

// TestRewriteCrashChild is the child of TestRewriteCrash: on a store
// written under key 1 and opened with key 2 (key 1 previous), it
// re-encrypts every file again and again while a writer commits synced
// inserts, printing "ack N" after each and "rewrote" after each rewrite.
func TestRewriteCrashChild(t *testing.T) {
	env := os.Getenv(rewriteCrashChildEnv)
	if env == "" {
		t.Skip("runs only as the child process of TestRewriteCrash")
	}
	dir, firstText, _ := strings.Cut(env, ",")
	first, err := strconv.ParseInt(firstText, 10, 64)
	if err != nil {
		crashChildFail("bad %s: %v", rewriteCrashChildEnv, err)
	}
	ctx := context.Background()
	db, err := ts.Open(dir, rewriteCrashOptions(dir))
	if err != nil {
		crashChildFail("open: %v", err)
	}
	tb, err := db.CreateTable(ctx, "Rewrite")
	if errors.Is(err, ts.ErrTableAlreadyExists) {
		tb, err = db.Table("Rewrite"), nil
	}
	if err != nil {
		crashChildFail("create table: %v", err)
	}
	fmt.Fprintf(os.Stdout, "ready\n")
	var mu sync.Mutex
	deadline := time.Now().Add(time.Minute)
	go func() {
		for time.Now().Before(deadline) {
			if _, err := db.Rekey(ctx, &ts.RekeyOptions{Rewrite: true}); err != nil {
				crashChildFail("rekey: %v", err)
			}
			mu.Lock()
			fmt.Fprintf(os.Stdout, "rewrote\n")
			mu.Unlock()
		}
	}()
	for n := first; time.Now().Before(deadline); n++ {
		if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%09d", n), Properties: map[string]any{"Payload": payload(n, 0)}}); err != nil {
			crashChildFail("insert %d: %v", n, err)
		}
		mu.Lock()
		fmt.Fprintf(os.Stdout, "ack %d\n", n)
		mu.Unlock()
	}
	os.Exit(0)
}

// TestRewriteCrash kills a store in the middle of online rewrites (Rekey
// with Rewrite) and writes: every acknowledged write survives and the
// store checks clean, and its continuous backup restores them all.
func TestRewriteCrash(t *testing.T) {
	if os.Getenv(rewriteCrashChildEnv) != "" {
		t.Skip("child process")
	}
	seed := testSeed(t)
	rng := rand.New(rand.NewSource(seed))
	cycles := envInt(t, "TABLESTORE_CRASH_CYCLES", scaled(8, 20)) / 2
	root := t.TempDir()
	dir := filepath.Join(root, "store")
	db, err := ts.Open(dir, encOptions(encKey(1)))
	if err != nil {
		t.Fatal(err)
	}
	fillMarkers(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	next, rewrites := int64(0), 0
	for cycle := range max(cycles, 1) {
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("cycle %d: %s (seed %d)", cycle, fmt.Sprintf(format, args...), seed)
		}
		acked := next - 1
		stderr := runKilledChild(t, "TestRewriteCrashChild", []string{fmt.Sprintf("%s=%s,%d", rewriteCrashChildEnv, dir, next)},
			time.Duration(50+rng.Intn(400))*time.Millisecond, fail, func(l string) {
				if l == "rewrote" {
					rewrites++
					return
				}
				if n, ok := strings.CutPrefix(l, "ack "); ok {
					v, err := strconv.ParseInt(n, 10, 64)
					if err != nil {
						fail("bad line %q", l)
					}
					acked = v
				}
			})
		db, err := ts.Open(dir, rewriteCrashOptions(dir))
		if err != nil {
			fail("reopen: %v\nchild: %s", err, stderr)
		}
		tb := db.Table("Rewrite")
		for n := int64(0); n <= acked; n++ {
			e, err := tb.Get(context.Background(), "p", fmt.Sprintf("%09d", n), nil)
			if err != nil {
				fail("acknowledged insert %d: %v", n, err)
			}
			if b, _ := e.Properties["Payload"].([]byte); !bytes.Equal(b, payload(n, 0)) {
				fail("insert %d: wrong payload", n)
			}
		}
		if n := countEntities(t, db.Table(encMarkers[0])); n != 600 {
			fail("the first table holds %d entities, want 600", n)
		}
		rep, err := db.Check(context.Background())
		if err != nil || len(rep.Damaged) > 0 {
			fail("check: %+v, %v", rep, err)
		}
		// The next child starts past whatever this one may have written.
		last := acked
		for e, err := range tb.Query(context.Background(), ts.Query{}) {
			if err != nil {
				fail("scan: %v", err)
			}
			v, _ := strconv.ParseInt(e.RowKey, 10, 64)
			last = max(last, v)
		}
		next = last + 1
		if err := db.Close(); err != nil {
			fail("close: %v", err)
		}
		// The backup, rewritten with the store, restores every
		// acknowledged write under the current key.
		into := filepath.Join(root, fmt.Sprintf("restored-%d", cycle))
		if _, err := ts.Restore(context.Background(), dir+".backup", time.Time{}, into, encOptions(encKey(2))); err != nil {
			fail("restore: %v", err)
		}
		rdb, err := ts.Open(into, &ts.Options{MustExist: true, Encryption: &ts.Encryption{Key: encKey(2)}})
		if err != nil {
			fail("open the restored store: %v", err)
		}
		for n := int64(0); n <= acked; n++ {
			if _, err := rdb.Table("Rewrite").Get(context.Background(), "p", fmt.Sprintf("%09d", n), nil); err != nil {
				fail("restored: acknowledged insert %d: %v", n, err)
			}
		}
		if err := rdb.Close(); err != nil {
			fail("close the restored store: %v", err)
		}
	}
	t.Logf("%d cycles, %d writes, %d whole rewrites", cycles, next, rewrites)
}
