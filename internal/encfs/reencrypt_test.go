package encfs

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
)

func dataKeyID(t *testing.T, base vfs.FS, keys KeyProvider, name string) string {
	t.Helper()
	fk, err := InspectFile(base, keys, name)
	if err != nil {
		t.Fatal(err)
	}
	return fk.DataKeyID
}

// TestReencryptOpenWriter: a file open for writing moves to a new data
// key under the current key while open; its writer goes on in the new
// file, and a reader opened before keeps reading the same bytes.
func TestReencryptOpenWriter(t *testing.T) {
	mem := vfs.NewMem()
	k1, k2 := testKey(t, 1), testKey(t, 2)
	old := New(mem, staticKeys(t, k1))
	w, err := old.Create("log", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	first := bytes.Repeat([]byte("first-part."), 30000)
	if _, err := w.Write(bytes.Clone(first)); err != nil {
		t.Fatal(err)
	}
	before := dataKeyID(t, mem, staticKeys(t, k1), "log")
	r, err := old.Open("log")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	// The same writer, its FS now under k2 (as a store reopened with a
	// new key would have it): swap the provider.
	old.keys = staticKeys(t, k2, k1)
	if done, err := old.Reencrypt("log"); err != nil || !done {
		t.Fatalf("Reencrypt = %v, %v", done, err)
	}
	if _, err := w.Write([]byte("second")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.SyncTo(int64(len(first)) + 6); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fk, err := InspectFile(mem, staticKeys(t, k2), "log")
	if err != nil {
		t.Fatal(err)
	}
	if fk.DataKeyID == before || fk.KeyID != KeyID(k2) || fk.OtherKeyID != KeyID(k2) {
		t.Fatalf("after Reencrypt: %+v; want a new data key (was %s) under %s", fk, before, KeyID(k2))
	}
	if _, err := InspectFile(mem, staticKeys(t, k1), "log"); err == nil {
		t.Fatal("the old key still opens the file")
	}
	want := append(bytes.Clone(first), "second"...)
	if got := readAll(t, New(mem, staticKeys(t, k2)), "log"); !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, want %d (the copy and the later write)", len(got), len(want))
	}
	buf := make([]byte, len(first))
	if _, err := r.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, first) {
		t.Fatalf("the reader opened before: %v, same bytes %v", err, bytes.Equal(buf, first))
	}
}

// TestReencryptRemovedMeanwhile: a file removed while its copy is made
// stays removed (the copy does not bring it back) and no temporary file
// is left.
func TestReencryptRemovedMeanwhile(t *testing.T) {
	mem := vfs.NewMem()
	fs := New(mem, staticKeys(t, testKey(t, 1)))
	for _, name := range []string{"a.sst", "b.sst"} {
		f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte("contents of " + name)); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	testBeforeRename = func(name string) {
		if name == "a.sst" {
			if err := fs.Remove(name); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() { testBeforeRename = nil }()
	before := dataKeyID(t, mem, fs.keys, "b.sst")
	n, err := fs.ReencryptDir(context.Background(), "")
	if err != nil || n != 1 {
		t.Fatalf("ReencryptDir = %d, %v; want 1 file rewritten", n, err)
	}
	ls, err := mem.List("")
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 1 || ls[0] != "b.sst" {
		t.Fatalf("files after: %v; want only b.sst", ls)
	}
	if dataKeyID(t, mem, fs.keys, "b.sst") == before {
		t.Fatal("b.sst kept its data key")
	}
	if got := readAll(t, fs, "b.sst"); string(got) != "contents of b.sst" {
		t.Fatalf("b.sst reads %q", got)
	}
}

// TestReencryptRecycledMeanwhile: a log Pebble recycles (ReuseForWrite
// removes the old name) while its copy is made stays removed.
func TestReencryptRecycledMeanwhile(t *testing.T) {
	mem := vfs.NewMem()
	fs := New(mem, staticKeys(t, testKey(t, 1)))
	f, err := fs.Create("000001.log", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("old log")); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	testBeforeRename = func(name string) {
		nf, err := fs.ReuseForWrite("000001.log", "000002.log", vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Error(err)
			return
		}
		if err := nf.Close(); err != nil {
			t.Error(err)
		}
	}
	defer func() { testBeforeRename = nil }()
	if done, err := fs.Reencrypt("000001.log"); err != nil || done {
		t.Fatalf("Reencrypt = %v, %v; want nothing rewritten", done, err)
	}
	if _, err := mem.Stat("000001.log"); err == nil {
		t.Fatal("the recycled log came back")
	}
}

// TestReencryptConcurrent: two rewrites of the same directory at once
// leave every file whole (they share no temporary file).
func TestReencryptConcurrent(t *testing.T) {
	dir := t.TempDir()
	fs := New(vfs.Default, staticKeys(t, testKey(t, 1)))
	want := map[string][]byte{}
	for i := range 8 {
		name := fs.PathJoin(dir, string(rune('a'+i))+".sst")
		want[name] = bytes.Repeat([]byte{byte(i + 1)}, 300_000+i)
		f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(bytes.Clone(want[name])); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := fs.ReencryptDir(context.Background(), dir)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range want {
		if got := readAll(t, fs, name); !bytes.Equal(got, b) {
			t.Fatalf("%s: %d bytes read back, want %d equal ones", name, len(got), len(b))
		}
	}
}

// TestReencryptWhileWritersClose: rewrites of a name whose file keeps
// being recreated, written and closed succeed (a writer met closing has
// left the writers when the rewrite retries; a copy cut short by the
// file's recreation is a conflict, retried) and leave the last contents
// whole.
func TestReencryptWhileWritersClose(t *testing.T) {
	dir := t.TempDir()
	fs := New(vfs.Default, staticKeys(t, testKey(t, 1)))
	name := fs.PathJoin(dir, "000001.sst")
	const rounds = 300
	written := make(chan []byte, 1)
	errs := make(chan error, 1)
	go func() {
		var last []byte
		for i := range rounds {
			last = bytes.Repeat([]byte{byte(i)}, 4096+i)
			f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
			if err == nil {
				_, err = f.Write(bytes.Clone(last))
				err = errors.Join(err, f.Close())
			}
			if err != nil {
				errs <- err
				return
			}
		}
		written <- last
	}()
	for {
		select {
		case err := <-errs:
			t.Fatal(err)
		case last := <-written:
			if _, err := fs.Reencrypt(name); err != nil {
				t.Fatal(err)
			}
			if got := readAll(t, fs, name); !bytes.Equal(got, last) {
				t.Fatalf("%d bytes read back, want %d equal ones", len(got), len(last))
			}
			return
		default:
			if _, err := fs.Reencrypt(name); err != nil {
				t.Fatal(err)
			}
		}
	}
}
