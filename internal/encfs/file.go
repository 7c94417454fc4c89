package encfs

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/subtle"
	"errors"
	"io"

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
}

func newFile(f vfs.File, fk fileKeys, writeAt bool) (vfs.File, error) {
	block, err := aes.NewCipher(subkey(fk.dataKey, "ctr"))
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return &file{f: f, block: block, iv: fk.iv, writeAt: writeAt}, nil
}

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
	n, err := f.ReadAt(p, f.pos)
	f.pos += int64(n)
	return n, err
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.f.ReadAt(p, off+HeaderSize)
	f.xorAt(p[:n], p[:n], off)
	return n, err
}

// Write encrypts p in place, as vfs.File allows.
func (f *file) Write(p []byte) (int, error) {
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
	if cap(f.scratch) < len(p) {
		f.scratch = make([]byte, len(p))
	}
	c := f.scratch[:len(p)]
	f.xorAt(c, p, off)
	return f.f.WriteAt(c, off+HeaderSize)
}

func (f *file) Close() error { return f.f.Close() }

func (f *file) Preallocate(offset, length int64) error {
	return f.f.Preallocate(offset+HeaderSize, length)
}

func (f *file) Stat() (vfs.FileInfo, error) {
	st, err := f.f.Stat()
	if err != nil {
		return nil, err
	}
	return logicalInfo(st), nil
}

func (f *file) Sync() error     { return f.f.Sync() }
func (f *file) SyncData() error { return f.f.SyncData() }

func (f *file) SyncTo(length int64) (bool, error) { return f.f.SyncTo(length + HeaderSize) }

func (f *file) Prefetch(offset, length int64) error {
	return f.f.Prefetch(offset+HeaderSize, length)
}

func (f *file) Fd() uintptr { return f.f.Fd() }

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
