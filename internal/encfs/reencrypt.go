package encfs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strings"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// Reencryption moves a file's contents under a fresh data key without
// changing them: the plaintext is copied into a temporary file (a new
// header, a new data key under the current KEK), which is synced and
// renamed over the file. A crash leaves either file whole under the
// name. Handles open for reading keep the old file (its inode) and read
// the same plaintext; a file open for writing (a WAL, the MANIFEST, the
// clock file, a backup segment) is moved while its writer waits, and
// the handle goes on in the new file.

// tempPrefix starts the name of Reencrypt's temporary files: no name
// Pebble or the store reads starts with it.
const tempPrefix = "reencrypt-"

const tempSuffix = ".tmp"

// move is a name Reencrypt is copying while no handle writes to it.
type move struct {
	// conflict: the name was created, opened for writing, renamed or
	// removed meanwhile, so the copy must not replace it.
	conflict bool
}

// testBeforeRename, when set, runs before a copy replaces a file.
var testBeforeRename func(name string)

var errMoveConflict = errors.New("encfs: the file changed while it was copied")

func (fs *FS) register(f *file, name string) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f.owner, f.name = fs, name
	if fs.writers == nil {
		fs.writers = map[string]*file{}
	}
	fs.writers[name] = f
	fs.touchLocked(name)
}

func (fs *FS) unregister(f *file) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.writers[f.name] == f {
		delete(fs.writers, f.name)
	}
}

// touchLocked marks a copy of name in progress as conflicting.
// REQUIRES: fs.mu held.
func (fs *FS) touchLocked(name string) {
	if m := fs.moving[name]; m != nil {
		m.conflict = true
	}
}

// Remove implements vfs.FS.
func (fs *FS) Remove(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.touchLocked(name)
	return fs.FS.Remove(name)
}

// RemoveAll implements vfs.FS.
func (fs *FS) RemoveAll(name string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for n, m := range fs.moving {
		if n == name || strings.HasPrefix(n, name+string(os.PathSeparator)) {
			m.conflict = true
		}
	}
	return fs.FS.RemoveAll(name)
}

// Rename implements vfs.FS. A file open for writing under oldname stays
// registered under newname.
func (fs *FS) Rename(oldname, newname string) error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.touchLocked(oldname)
	fs.touchLocked(newname)
	if err := fs.FS.Rename(oldname, newname); err != nil {
		return err
	}
	if w := fs.writers[oldname]; w != nil {
		delete(fs.writers, oldname)
		w.name = newname
		fs.writers[newname] = w
	}
	return nil
}

// Reencrypt rewrites the file at name under a fresh data key, wrapped
// under the provider's current key, with the same contents, while the
// store goes on using it (see above). It reports whether it rewrote the
// file: not for a directory, an empty file without a header, or a file
// removed meanwhile.
func (fs *FS) Reencrypt(name string) (bool, error) {
	// One at a time: a name has one temporary file.
	fs.reencryptMu.Lock()
	defer fs.reencryptMu.Unlock()
	return fs.reencryptRetry(name)
}

func (fs *FS) reencryptRetry(name string) (bool, error) {
	for range 100 {
		done, err := fs.reencrypt(name)
		if !errors.Is(err, errMoveConflict) {
			return done, err
		}
	}
	return false, fmt.Errorf("tablestore: re-encrypt %s: the file keeps changing", name)
}

func (fs *FS) reencrypt(name string) (bool, error) {
	fs.mu.Lock()
	if w := fs.writers[name]; w != nil {
		fs.mu.Unlock()
		return fs.reencryptOpen(w, name)
	}
	if fs.moving == nil {
		fs.moving = map[string]*move{}
	}
	m := &move{}
	fs.moving[name] = m
	fs.mu.Unlock()
	defer func() {
		fs.mu.Lock()
		if fs.moving[name] == m {
			delete(fs.moving, name)
		}
		fs.mu.Unlock()
	}()

	st, err := fs.FS.Stat(name)
	if err != nil {
		return false, notExistOK(err)
	}
	if !st.Mode().IsRegular() || st.Size() == 0 {
		return false, nil
	}
	raw, err := fs.FS.Open(name)
	if err != nil {
		return false, notExistOK(err)
	}
	// A read that fails on a name changed meanwhile (say, recreated
	// shorter) is a conflict: the next try reads the new file.
	changed := func(err error) error {
		fs.mu.Lock()
		defer fs.mu.Unlock()
		if m.conflict {
			return errors.Join(errMoveConflict, err)
		}
		return err
	}
	in, err := fs.read(raw, name, false)
	if err != nil {
		return false, changed(err)
	}
	defer in.Close()
	src, ok := in.(*file)
	if !ok {
		return false, nil
	}
	tmp, nf, err := fs.copyToTemp(src, name, st.Size()-HeaderSize)
	if err != nil {
		return false, changed(err)
	}
	if testBeforeRename != nil {
		testBeforeRename(name)
	}
	fs.mu.Lock()
	if m.conflict {
		fs.mu.Unlock()
		return false, errors.Join(errMoveConflict, nf.Close(), fs.FS.Remove(tmp))
	}
	err = fs.FS.Rename(tmp, name)
	fs.mu.Unlock()
	err = errors.Join(err, nf.Close())
	if err != nil {
		return false, errors.Join(err, removeIfExists(fs.FS, tmp))
	}
	return true, fs.syncDir(name)
}

// reencryptOpen moves a file open for writing: its writer waits on w.mu
// while the contents are copied, and then writes to the new file.
func (fs *FS) reencryptOpen(w *file, name string) (bool, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false, errMoveConflict
	}
	st, err := w.f.Stat()
	if err != nil {
		return false, err
	}
	tmp, nf, err := fs.copyToTemp(w, name, max(st.Size()-HeaderSize, 0))
	if err != nil {
		return false, err
	}
	fs.mu.Lock()
	if fs.writers[name] != w {
		fs.mu.Unlock()
		return false, errors.Join(errMoveConflict, nf.Close(), fs.FS.Remove(tmp))
	}
	err = fs.FS.Rename(tmp, name)
	fs.mu.Unlock()
	if err == nil {
		// Before the writer goes on: what it syncs to the new file must
		// be found under the name after a crash.
		err = fs.syncDir(name)
	}
	if err != nil {
		return false, errors.Join(err, nf.Close(), removeIfExists(fs.FS, tmp))
	}
	old := w.f
	w.f, w.block, w.iv = nf.f, nf.block, nf.iv
	w.writeAt, w.moved = true, true
	return true, old.Close()
}

// copyToTemp copies the first size bytes of src (decrypted) into a new
// temporary file beside name under a fresh data key, synced, and returns
// its path and the file, open.
func (fs *FS) copyToTemp(src *file, name string, size int64) (string, *file, error) {
	dir, base := fs.PathDir(name), fs.PathBase(name)
	tmp := fs.PathJoin(dir, tempPrefix+base+tempSuffix)
	raw, err := fs.FS.Create(tmp, vfs.WriteCategoryUnspecified)
	if err != nil {
		return "", nil, err
	}
	fail := func(err error) (string, *file, error) {
		return "", nil, errors.Join(err, raw.Close(), removeIfExists(fs.FS, tmp))
	}
	h, fk, err := newHeader(fs.keys, name)
	if err != nil {
		return fail(err)
	}
	if _, err := raw.Write(h); err != nil {
		return fail(err)
	}
	nf, err := newFile(raw, fk, false)
	if err != nil {
		return "", nil, errors.Join(err, removeIfExists(fs.FS, tmp))
	}
	buf := make([]byte, 256<<10)
	for off := int64(0); off < size; {
		n := int(min(int64(len(buf)), size-off))
		got, err := src.readAt(buf[:n], off)
		if got < n && err == nil {
			err = io.ErrUnexpectedEOF
		}
		if err != nil && !(errors.Is(err, io.EOF) && got == n) {
			return fail(fmt.Errorf("tablestore: re-encrypt %s: %w", name, err))
		}
		if _, err := nf.Write(buf[:n]); err != nil { // encrypts in place
			return fail(err)
		}
		off += int64(n)
	}
	if err := raw.Sync(); err != nil {
		return fail(err)
	}
	return tmp, nf, nil
}

func (fs *FS) syncDir(name string) error {
	d, err := fs.FS.OpenDir(fs.PathDir(name))
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// ReencryptDir re-encrypts (see Reencrypt) every file in dir but the
// lock file, and returns how many it rewrote. Files created meanwhile
// have fresh data keys already. It removes the temporary files an
// earlier run left (after a crash) first, and stops early with ctx's
// error.
func (fs *FS) ReencryptDir(ctx context.Context, dir string) (int, error) {
	fs.reencryptMu.Lock()
	defer fs.reencryptMu.Unlock()
	names, err := fs.FS.List(dir)
	if err != nil {
		return 0, err
	}
	for _, name := range names {
		if strings.HasPrefix(name, tempPrefix) && strings.HasSuffix(name, tempSuffix) {
			if err := removeIfExists(fs.FS, fs.PathJoin(dir, name)); err != nil {
				return 0, err
			}
		}
	}
	n := 0
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		if name == "LOCK" || strings.HasPrefix(name, tempPrefix) {
			continue
		}
		done, err := fs.reencryptRetry(fs.PathJoin(dir, name))
		if err != nil {
			return n, err
		}
		if done {
			n++
		}
	}
	return n, nil
}

func notExistOK(err error) error {
	if errors.Is(err, iofs.ErrNotExist) {
		return nil
	}
	return err
}

func removeIfExists(fs vfs.FS, name string) error {
	return notExistOK(fs.Remove(name))
}

// FileKeys describes the encryption of one file, for tests and tools.
type FileKeys struct {
	// KeyID names the key-encryption key that wraps the data key in the
	// header's current slot, OtherKeyID the one in the other slot.
	KeyID, OtherKeyID string
	// DataKeyID is a fingerprint of the data key (not the key): files
	// share it only if they share the data key.
	DataKeyID string
}

// InspectFile reads the header of the file at name on base (the FS
// under the encryption) with keys.
func InspectFile(base vfs.FS, keys KeyProvider, name string) (FileKeys, error) {
	f, err := base.Open(name)
	if err != nil {
		return FileKeys{}, err
	}
	defer f.Close()
	h, err := readHeader(f, name)
	if err != nil {
		return FileKeys{}, err
	}
	fk, err := decodeHeader(h, keys, name)
	if err != nil {
		return FileKeys{}, err
	}
	other, _ := parseSlot(h[(1-fk.index)*slotSize:])
	sum := sha256.Sum256(append([]byte("tablestore data key id\x00"), fk.dataKey...))
	return FileKeys{KeyID: fk.slot.keyID, OtherKeyID: other.keyID, DataKeyID: hex.EncodeToString(sum[:8])}, nil
}
