package encfs

import (
	"bytes"
	"context"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"io"
	mrand "math/rand/v2"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tablestore/tablestore/driver"
)

func testKey(t testing.TB, b byte) []byte {
	t.Helper()
	return bytes.Repeat([]byte{b}, KeySize)
}

func staticKeys(t testing.TB, current []byte, previous ...[]byte) *StaticKeys {
	t.Helper()
	k, err := NewStaticKeys(current, previous...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func readAll(t *testing.T, fs vfs.FS, name string) []byte {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRoundTrip writes a file in pieces and reads it back sequentially
// and at random offsets; the bytes on disk hold none of the plaintext.
func TestRoundTrip(t *testing.T) {
	mem := vfs.NewMem()
	fs := New(mem, staticKeys(t, testKey(t, 1)))
	want := make([]byte, 100_003)
	for i := range want {
		want[i] = "MARKER-plaintext-"[i%17]
	}
	f, err := fs.Create("f", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Preallocate(0, 1<<20); err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(want); {
		n := min(1+mrand.IntN(5000), len(want)-off)
		chunk := bytes.Clone(want[off : off+n]) // Write may change its argument
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil || st.Size() != int64(len(want)) {
		t.Fatalf("Stat of the open file: %v, %v; want size %d", st, err, len(want))
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err := fs.Stat("f"); err != nil || st.Size() != int64(len(want)) {
		t.Fatalf("Stat: %v, %v; want size %d", st, err, len(want))
	}
	if got := readAll(t, fs, "f"); !bytes.Equal(got, want) {
		t.Fatal("sequential read differs from what was written")
	}
	raw := readAll(t, mem, "f")
	if len(raw) != len(want)+HeaderSize {
		t.Fatalf("raw size %d, want %d", len(raw), len(want)+HeaderSize)
	}
	if bytes.Contains(raw, []byte("MARKER")) {
		t.Fatal("the plaintext is on disk")
	}
	r, err := fs.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for range 200 {
		off := mrand.IntN(len(want))
		n := mrand.IntN(len(want) - off + 10)
		buf := make([]byte, n)
		got, err := r.ReadAt(buf, int64(off))
		wantN := min(n, len(want)-off)
		if got != wantN || (got < n && !errors.Is(err, io.EOF)) || (got == n && err != nil) {
			t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d", n, off, got, err, wantN)
		}
		if !bytes.Equal(buf[:got], want[off:off+got]) {
			t.Fatalf("ReadAt(%d bytes at %d) returned other bytes", n, off)
		}
	}
}

// TestWriteAtAndReuse covers files opened read-write (overwrites in
// place) and reused files, which start afresh.
func TestWriteAtAndReuse(t *testing.T) {
	mem := vfs.NewMem()
	fs := New(mem, staticKeys(t, testKey(t, 1)))
	f, err := fs.OpenReadWrite("rw", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("0123456789"), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("abc"), 4); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("XY")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := string(readAll(t, fs, "rw")); got != "XY23abc789" {
		t.Fatalf("read %q, want %q", got, "XY23abc789")
	}
	f, err = fs.OpenReadWrite("rw", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("Z"), 9); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := string(readAll(t, fs, "rw")); got != "XY23abc78Z" {
		t.Fatalf("read %q, want %q", got, "XY23abc78Z")
	}

	f, err = fs.ReuseForWrite("rw", "reused", vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("new")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := mem.Stat("rw"); err == nil {
		t.Fatal("the old file is still there")
	}
	if got := string(readAll(t, fs, "reused")); got != "new" {
		t.Fatalf("read %q, want %q: nothing of the old contents", got, "new")
	}
}

func writeFile(t *testing.T, fs vfs.FS, name, data string) {
	t.Helper()
	f, err := fs.Create(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWrongKey: a file opened without its key, or with another key,
// fails with an EncryptionKeyError naming the key it needs.
func TestWrongKey(t *testing.T) {
	mem := vfs.NewMem()
	k1 := testKey(t, 1)
	writeFile(t, New(mem, staticKeys(t, k1)), "f", "secret")
	for name, keys := range map[string]KeyProvider{"no key": nil, "other key": staticKeys(t, testKey(t, 2))} {
		_, err := New(mem, keys).Open("f")
		var ke *driver.EncryptionKeyError
		if !errors.As(err, &ke) || !errors.Is(err, driver.ErrEncryptionKey) || ke.KeyID != KeyID(k1) {
			t.Errorf("%s: Open = %v; want an EncryptionKeyError naming %s", name, err, KeyID(k1))
		}
		if errors.Is(err, driver.ErrCorrupt) {
			t.Errorf("%s: a key error reads as corruption: %v", name, err)
		}
	}
	if id, ok := IsEncrypted(readAll(t, mem, "f")); !ok || id != KeyID(k1) {
		t.Errorf("IsEncrypted = %q, %v", id, ok)
	}
}

// TestHeaderTamper: altering any byte the header's authentication covers
// (in both slots) is corruption, never data and never a key error for
// a key that is given.
func TestHeaderTamper(t *testing.T) {
	mem := vfs.NewMem()
	keys := staticKeys(t, testKey(t, 1))
	fs := New(mem, keys)
	writeFile(t, fs, "f", "secret")
	raw := readAll(t, mem, "f")
	s, err := parseSlot(raw)
	if err != nil {
		t.Fatal(err)
	}
	covered := len(s.signed) + tagSize
	for i := 0; i < covered; i++ {
		if i >= len(magic)+1+4 && i < len(magic)+1+4+1+len(s.keyID) {
			continue // the key ID: another ID is a key error (below)
		}
		b := bytes.Clone(raw)
		b[i] ^= 0x40
		b[slotSize+i] ^= 0x40
		f, err := mem.Create("t", vfs.WriteCategoryUnspecified)
		if err != nil {
			t.Fatal(err)
		}
		f.Write(b)
		f.Close()
		_, err = fs.Open("t")
		if !errors.Is(err, driver.ErrCorrupt) {
			t.Fatalf("byte %d altered: Open = %v; want corruption", i, err)
		}
	}
	// One damaged slot is survived: the other is intact.
	b := bytes.Clone(raw)
	b[len(s.signed)] ^= 1
	f, _ := mem.Create("t", vfs.WriteCategoryUnspecified)
	f.Write(b)
	f.Close()
	if got := string(readAll(t, fs, "t")); got != "secret" {
		t.Fatalf("with one slot damaged: read %q", got)
	}
	// Another key ID is a key error naming it.
	b = bytes.Clone(raw)
	b[len(magic)+1+4+1] ^= 1
	b[slotSize+len(magic)+1+4+1] ^= 1
	f, _ = mem.Create("t", vfs.WriteCategoryUnspecified)
	f.Write(b)
	f.Close()
	if _, err := fs.Open("t"); !errors.Is(err, driver.ErrEncryptionKey) {
		t.Fatalf("key ID altered: Open = %v; want a key error", err)
	}
	// A truncated header, and a file with no header.
	f, _ = mem.Create("t", vfs.WriteCategoryUnspecified)
	f.Write(raw[:100])
	f.Close()
	if _, err := fs.Open("t"); !errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("truncated header: Open = %v; want corruption", err)
	}
	f, _ = mem.Create("t", vfs.WriteCategoryUnspecified)
	f.Write(make([]byte, 2*HeaderSize))
	f.Close()
	if _, err := fs.Open("t"); !errors.Is(err, driver.ErrCorrupt) {
		t.Fatalf("no header: Open = %v; want corruption", err)
	}
}

// TestRewrap: rewrapping moves a file to the current key, so it opens
// with that key alone, while a handle opened before keeps reading.
func TestRewrap(t *testing.T) {
	mem := vfs.NewMem()
	k1, k2 := testKey(t, 1), testKey(t, 2)
	writeFile(t, New(mem, staticKeys(t, k1)), "f", "secret data")
	both := New(mem, staticKeys(t, k2, k1))
	open, err := both.Open("f")
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	n, err := both.RewrapDir(context.Background(), "")
	if err != nil || n != 1 {
		t.Fatalf("RewrapDir = %d, %v; want 1", n, err)
	}
	if n, err := both.RewrapDir(context.Background(), ""); err != nil || n != 0 {
		t.Fatalf("second RewrapDir = %d, %v; want 0", n, err)
	}
	buf := make([]byte, 6)
	if _, err := open.ReadAt(buf, 0); err != nil || string(buf) != "secret" {
		t.Fatalf("handle opened before the rewrap read %q, %v", buf, err)
	}
	if got := string(readAll(t, New(mem, staticKeys(t, k2)), "f")); got != "secret data" {
		t.Fatalf("read with the new key alone: %q", got)
	}
	_, err = New(mem, staticKeys(t, k1)).Open("f")
	var ke *driver.EncryptionKeyError
	if !errors.As(err, &ke) || ke.KeyID != KeyID(k2) {
		t.Fatalf("open with the old key alone = %v; want a key error naming %s", err, KeyID(k2))
	}
	raw := readAll(t, mem, "f")
	for i := range 2 {
		s, err := parseSlot(raw[i*slotSize:])
		if err != nil || s.keyID != KeyID(k2) {
			t.Fatalf("slot %d after rewrap: %v, %v", i, s.keyID, err)
		}
	}
}

func TestBadKeys(t *testing.T) {
	if _, err := NewStaticKeys(make([]byte, 16)); err == nil {
		t.Fatal("a 16-byte key was accepted")
	}
	if _, err := NewStaticKeys(make([]byte, 32), make([]byte, 31)); err == nil {
		t.Fatal("a 31-byte previous key was accepted")
	}
}

// FuzzHeader feeds arbitrary bytes to the header parser: it never
// panics, fails only with a corruption or key error, and accepts a slot
// only if it is byte for byte one the writer made.
func FuzzHeader(f *testing.F) {
	keys := staticKeys(f, testKey(f, 7), testKey(f, 8))
	// Seeds the same in every fuzzing process.
	seeded := mrand.NewChaCha8([32]byte{9})
	randRead = seeded.Read
	defer func() { randRead = rand.Read }()
	var valid [][]byte
	for range 2 {
		h, _, err := newHeader(keys, "seed")
		if err != nil {
			f.Fatal(err)
		}
		valid = append(valid, h[:slotSize])
		f.Add(h)
		f.Add(h[:slotSize+100])
		half := bytes.Clone(h)
		half[10] ^= 1
		f.Add(half)
	}
	f.Add(make([]byte, HeaderSize))
	junk := make([]byte, HeaderSize)
	rand.Read(junk)
	f.Add(junk)
	f.Fuzz(func(t *testing.T, b []byte) {
		IsEncrypted(b)
		h := make([]byte, HeaderSize)
		copy(h, b)
		fk, err := decodeHeader(h, keys, "fuzz")
		if err != nil {
			if !errors.Is(err, driver.ErrCorrupt) && !errors.Is(err, driver.ErrEncryptionKey) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		got := h[fk.index*slotSize : fk.index*slotSize+len(fk.slot.signed)+tagSize]
		for _, v := range valid {
			if bytes.HasPrefix(v, got) && len(got) > len(magic) {
				return
			}
		}
		t.Fatalf("accepted a slot the writer never made: %x", got)
	})
}

// TestKeyStreamOffsets: the key stream at any offset is the same as one
// stream read from the start (unaligned heads, counter carries).
func TestKeyStreamOffsets(t *testing.T) {
	for _, iv := range [][ivSize]byte{{}, {15: 0xff, 14: 0xff, 13: 0xff}, {0: 0xff, 1: 0xff, 2: 0xff, 3: 0xff, 4: 0xff, 5: 0xff, 6: 0xff, 7: 0xff, 8: 0xff, 9: 0xff, 10: 0xff, 11: 0xff, 12: 0xff, 13: 0xff, 14: 0xff, 15: 0xfe}} {
		f, err := newFile(nil, fileKeys{dataKey: testKey(t, 3), iv: iv}, false)
		if err != nil {
			t.Fatal(err)
		}
		ef := f
		whole := make([]byte, 1000)
		ef.xorAt(whole, whole, 0)
		ref := make([]byte, 1000)
		cipher.NewCTR(ef.block, iv[:]).XORKeyStream(ref, ref)
		if !bytes.Equal(whole, ref) {
			t.Fatalf("iv %x: the stream from 0 is not AES-CTR's", iv)
		}
		for off := 0; off < 200; off++ {
			for _, n := range []int{1, 5, 15, 16, 17, 100} {
				part := make([]byte, n)
				ef.xorAt(part, part, int64(off))
				if !bytes.Equal(part, whole[off:off+n]) {
					t.Fatalf("iv %x: %d bytes at %d differ from the stream", iv, n, off)
				}
			}
		}
	}
}
