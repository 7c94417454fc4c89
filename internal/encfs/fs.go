// Package encfs is a vfs.FS that encrypts every file it writes: each file
// gets its own random data key, wrapped by a key-encryption key of a
// KeyProvider and kept in a small authenticated header (header.go); the
// contents are AES-256-CTR, so Pebble's random reads and appends work at
// any offset. Names, sizes (to within the header) and directory layout
// are not hidden. Directories and lock files are left as they are.
//
// CTR does not detect changes to the contents by itself: the formats
// stored on top do (Pebble's sstable blocks, WAL and MANIFEST records,
// and the store's clock file carry checksums, and a flipped ciphertext
// bit flips the same plaintext bit). The header is authenticated here.
package encfs

import (
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tablestore/tablestore/driver"
)

// FS encrypts the files of the FS it wraps. It is safe for concurrent use.
type FS struct {
	vfs.FS
	keys KeyProvider
	// headerMu is held in read mode while a header is written to a new
	// or reused file, and in write mode by Rewrap, so a rewrap never
	// meets a header being written.
	headerMu sync.RWMutex

	// mu guards writers (the files open for writing, by name) and moving
	// (the names Reencrypt is copying), and orders Reencrypt's renames
	// with the renames and removals of the store.
	mu      sync.Mutex
	writers map[string]*file
	moving  map[string]*move
	// reencryptMu is held by Reencrypt.
	reencryptMu sync.Mutex
}

// New returns an FS that encrypts the files of base with data keys
// wrapped by keys.
func New(base vfs.FS, keys KeyProvider) *FS {
	return &FS{FS: base, keys: keys}
}

// Unwrap implements vfs.FS.
func (fs *FS) Unwrap() vfs.FS { return fs.FS }

// Create implements vfs.FS: the new file starts with a fresh header.
func (fs *FS) Create(name string, category vfs.DiskWriteCategory) (vfs.File, error) {
	fs.headerMu.RLock()
	defer fs.headerMu.RUnlock()
	f, err := fs.FS.Create(name, category)
	if err != nil {
		return nil, err
	}
	return fs.start(f, name, false)
}

// ReuseForWrite implements vfs.FS by not reusing: it creates newname
// and removes oldname, as vfs.FS allows. A reused file would keep its
// old contents past what is written anew, which would no longer decrypt
// to anything (under a new data key) or would be overwritten with the
// same key stream (under the old one); Pebble's log checks must not meet
// either.
func (fs *FS) ReuseForWrite(oldname, newname string, category vfs.DiskWriteCategory) (vfs.File, error) {
	f, err := fs.Create(newname, category)
	if err != nil {
		return nil, err
	}
	if err := fs.Remove(oldname); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}

// start writes a new header at the start of f, whose position is 0.
func (fs *FS) start(f vfs.File, name string, writeAt bool) (vfs.File, error) {
	h, fk, err := newHeader(fs.keys, name)
	if err == nil {
		if writeAt {
			_, err = f.WriteAt(h, 0)
		} else {
			_, err = f.Write(h)
		}
	}
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	nf, err := newFile(f, fk, writeAt)
	if err != nil {
		return nil, err
	}
	fs.register(nf, name)
	return nf, nil
}

// Open implements vfs.FS. A file of length 0 (one whose header was never
// written) opens as an empty file.
func (fs *FS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	f, err := fs.FS.Open(name, opts...)
	if err != nil {
		return nil, err
	}
	return fs.read(f, name, false)
}

// OpenReadWrite implements vfs.FS. Writes to an existing file reuse its
// data key at the offsets they overwrite (the store's only such file is
// its clock file, which holds a time ceiling).
func (fs *FS) OpenReadWrite(name string, category vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	fs.headerMu.RLock()
	defer fs.headerMu.RUnlock()
	f, err := fs.FS.OpenReadWrite(name, category, opts...)
	if err != nil {
		return nil, err
	}
	return fs.read(f, name, true)
}

// read opens an existing file by its header.
func (fs *FS) read(f vfs.File, name string, writable bool) (vfs.File, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	if st.IsDir() {
		return f, nil
	}
	if st.Size() == 0 {
		if writable {
			return fs.start(f, name, true)
		}
		return &emptyFile{f}, nil
	}
	h, err := readHeader(f, name)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	fk, err := decodeHeader(h, fs.keys, name)
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	nf, err := newFile(f, fk, writable)
	if err != nil {
		return nil, err
	}
	if writable {
		fs.register(nf, name)
	}
	return nf, nil
}

// Stat implements vfs.FS: a file's size excludes its header.
func (fs *FS) Stat(name string) (vfs.FileInfo, error) {
	st, err := fs.FS.Stat(name)
	if err != nil {
		return nil, err
	}
	return logicalInfo(st), nil
}

func logicalInfo(st vfs.FileInfo) vfs.FileInfo {
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return st
	}
	return sizedInfo{st, max(st.Size()-HeaderSize, 0)}
}

type sizedInfo struct {
	vfs.FileInfo
	size int64
}

func (s sizedInfo) Size() int64 { return s.size }

// Rewrap rewraps the data key of the file at name under the provider's
// current key, if another key wraps it, in place: one header slot, then
// the other, each synced, so a crash leaves a readable header. The
// contents and the data key stay as they are, and open handles to the
// file go on working. It reports whether it rewrote the header. A file
// without a header (empty) is left alone.
func (fs *FS) Rewrap(name string) (bool, error) {
	fs.headerMu.Lock()
	defer fs.headerMu.Unlock()
	st, err := fs.FS.Stat(name)
	if err != nil {
		return false, err
	}
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return false, nil
	}
	f, err := fs.FS.OpenReadWrite(name, vfs.WriteCategoryUnspecified)
	if err != nil {
		return false, err
	}
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		// Removed since the Stat above, and created again by the open
		// (no header can be in the making: headerMu is held).
		return false, errors.Join(f.Close(), fs.FS.Remove(name))
	}
	changed, err := fs.rewrap(f, name)
	return changed, errors.Join(err, f.Close())
}

// readHeader reads the encryption header of file f (named name); a file
// shorter than one is corrupt.
func readHeader(f vfs.File, name string) ([]byte, error) {
	h := make([]byte, HeaderSize)
	if _, err := f.ReadAt(h, 0); err != nil {
		if errors.Is(err, io.EOF) {
			err = corrupt(name, errors.New("the file is shorter than its encryption header"))
		}
		return nil, err
	}
	return h, nil
}

func (fs *FS) rewrap(f vfs.File, name string) (bool, error) {
	h, err := readHeader(f, name)
	if err != nil {
		return false, err
	}
	fk, err := decodeHeader(h, fs.keys, name)
	if err != nil {
		return false, err
	}
	current := fs.keys.CurrentKeyID()
	other, _ := parseSlot(h[(1-fk.index)*slotSize:])
	if fk.slot.keyID == current && other.keyID == current {
		return false, nil
	}
	s := slot{gen: fk.slot.gen + 1, keyID: current, iv: fk.iv}
	if s.wrapped, err = fs.keys.WrapKey(current, fk.dataKey, wrapContext(current)); err != nil {
		return false, &driver.EncryptionKeyError{KeyID: current, File: name, Err: err}
	}
	b := make([]byte, slotSize)
	if err := s.encode(b, fk.dataKey); err != nil {
		return false, err
	}
	for _, i := range []int{1 - fk.index, fk.index} {
		if _, err := f.WriteAt(b, int64(i*slotSize)); err != nil {
			return false, err
		}
		if err := f.Sync(); err != nil {
			return false, err
		}
	}
	return true, nil
}

// RewrapDir rewraps (see Rewrap) every file in dir, skipping files
// removed meanwhile, and returns how many it rewrote. It stops early
// with ctx's error.
func (fs *FS) RewrapDir(ctx context.Context, dir string) (int, error) {
	names, err := fs.FS.List(dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if name == "LOCK" {
			continue
		}
		changed, err := fs.Rewrap(fs.PathJoin(dir, name))
		if err := notExistOK(err); err != nil {
			return n, err
		}
		if changed {
			n++
		}
	}
	return n, nil
}

// ProbeFile reads the start of the file at name on fs (the FS under the
// encryption) and reports whether it is encrypted and the ID of the key
// it names. An empty file reports neither.
func ProbeFile(fs vfs.FS, name string) (keyID string, encrypted bool, err error) {
	f, err := fs.Open(name)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	h := make([]byte, HeaderSize)
	n, err := f.ReadAt(h, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", false, err
	}
	keyID, encrypted = IsEncrypted(h[:n])
	return keyID, encrypted, nil
}
