package encfs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"errors"
	"io"
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// file is an open encrypted file: offsets are logical (past the header).
type file struct {
	f     vfs.File
	block cipher.Block
	iv    [ivSize]byte
	pos   int64 // the logical offset of the next Read or Write
	// writeAt makes Write use WriteAt: a file opened read-write whose
	// underlying position is not past its header.
	writeAt bool
	scratch []byte // WriteAt's ciphertext

	// A file open for writing is registered with its FS (owner) under
	// name, so Reencrypt can move it under a new data key while it is
	// open; mu orders that with every other use of the file. Files open
	// for reading only have no owner and take no lock.
	owner  *FS
	name   string
	mu     sync.Mutex
	closed bool
	// moved: Reencrypt replaced the file, whose size on disk no longer
	// follows Pebble's preallocation, so SyncTo syncs everything.
	moved bool
}

func newFile(f vfs.File, fk fileKeys, writeAt bool) (*file, error) {
	block, err := aes.NewCipher(subkey(fk.dataKey, "ctr"))
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return &file{f: f, block: block, iv: fk.iv, writeAt: writeAt}, nil
}

// lock takes mu for a file open for writing and returns its release.
func (f *file) lock() func() {
	if f.owner == nil {
		return nop
	}
	f.mu.Lock()
	return f.mu.Unlock
}

func nop() {}

// xorAt applies the key stream at logical offset off to src into dst.
func (f *file) xorAt(dst, src []byte, off int64) {
	if len(src) == 0 {
		return
	}
	var ctr [ivSize]byte
	copy(ctr[:], f.iv[:])
	addCounter(&ctr, uint64(off/aes.BlockSize))
	if skip := int(off % aes.BlockSize); skip > 0 {
		// The head, up to the next block boundary, from one block of key
		// stream, so the rest starts aligned.
		var ks [aes.BlockSize]byte
		f.block.Encrypt(ks[:], ctr[:])
		n := min(aes.BlockSize-skip, len(src))
		subtle.XORBytes(dst[:n], src[:n], ks[skip:skip+n])
		if len(src) == n {
			return
		}
		dst, src = dst[n:], src[n:]
		addCounter(&ctr, 1)
	}
	cipher.NewCTR(f.block, ctr[:]).XORKeyStream(dst, src)
}

// addCounter adds n to ctr, a 128-bit big-endian integer.
func addCounter(ctr *[ivSize]byte, n uint64) {
	for i := ivSize - 1; i >= 0 && n != 0; i-- {
		sum := uint64(ctr[i]) + n&0xff
		ctr[i] = byte(sum)
		n = n>>8 + sum>>8
	}
}

func (f *file) Read(p []byte) (int, error) {
	defer f.lock()()
	n, err := f.readAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	defer f.lock()()
	return f.readAt(p, off)
}

func (f *file) readAt(p []byte, off int64) (int, error) {
	n, err := f.f.ReadAt(p, off+HeaderSize)
	f.xorAt(p[:n], p[:n], off)
	return n, err
}

// Write encrypts p in place, as vfs.File allows.
func (f *file) Write(p []byte) (int, error) {
	defer f.lock()()
	f.xorAt(p, p, f.pos)
	var n int
	var err error
	if f.writeAt {
		n, err = f.f.WriteAt(p, f.pos+HeaderSize)
	} else {
		n, err = f.f.Write(p)
	}
	f.pos += int64(n)
	return n, err
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	defer f.lock()()
	if cap(f.scratch) < len(p) {
		f.scratch = make([]byte, len(p))
	}
	c := f.scratch[:len(p)]
	f.xorAt(c, p, off)
	return f.f.WriteAt(c, off+HeaderSize)
}

func (f *file) Close() error {
	if f.owner == nil {
		return f.f.Close()
	}
	// Closed and unregistered under one hold of mu: a Reencrypt that
	// found the file among the writers and waits on mu finds it closed
	// only once it has left them, so its retry copies the closed file
	// instead of meeting the writer again.
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	err := f.f.Close()
	f.owner.unregister(f)
	return err
}

func (f *file) Preallocate(offset, length int64) error {
	defer f.lock()()
	return f.f.Preallocate(offset+HeaderSize, length)
}

func (f *file) Stat() (vfs.FileInfo, error) {
	defer f.lock()()
	st, err := f.f.Stat()
	if err != nil {
		return nil, err
	}
	return logicalInfo(st), nil
}

func (f *file) Sync() error {
	defer f.lock()()
	return f.f.Sync()
}

func (f *file) SyncData() error {
	defer f.lock()()
	return f.f.SyncData()
}

func (f *file) SyncTo(length int64) (bool, error) {
	defer f.lock()()
	if f.moved {
		return true, f.f.SyncData()
	}
	return f.f.SyncTo(length + HeaderSize)
}

func (f *file) Prefetch(offset, length int64) error {
	defer f.lock()()
	return f.f.Prefetch(offset+HeaderSize, length)
}

func (f *file) Fd() uintptr {
	defer f.lock()()
	return f.f.Fd()
}

// emptyFile is a file of length 0 opened for reading: a file whose
// header was never written holds nothing.
type emptyFile struct{ f vfs.File }

func (e *emptyFile) Read([]byte) (int, error)          { return 0, io.EOF }
func (e *emptyFile) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (e *emptyFile) Write([]byte) (int, error)         { return 0, errReadOnly }
func (e *emptyFile) WriteAt([]byte, int64) (int, error) {
	return 0, errReadOnly
}
func (e *emptyFile) Close() error                   { return e.f.Close() }
func (e *emptyFile) Preallocate(int64, int64) error { return nil }
func (e *emptyFile) Stat() (vfs.FileInfo, error)    { return e.f.Stat() }
func (e *emptyFile) Sync() error                    { return e.f.Sync() }
func (e *emptyFile) SyncData() error                { return e.f.SyncData() }
func (e *emptyFile) SyncTo(int64) (bool, error)     { return e.f.SyncTo(0) }
func (e *emptyFile) Prefetch(int64, int64) error    { return nil }
func (e *emptyFile) Fd() uintptr                    { return e.f.Fd() }

var errReadOnly = errors.New("tablestore: the file is open for reading only")
