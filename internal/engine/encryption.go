package engine

import (
	"context"
	"errors"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/atomicfs"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/encfs"
)

// Encryption at rest (see internal/encfs and docs/encryption.md): with
// Options.Keys set, every file the store writes goes through an
// encfs.FS, Pebble's and the store's own (the clock file) alike.

// storeFS returns the FS the store in dir is read and written through:
// base itself when keys is nil, else base encrypted with keys. It first
// compares the store's current MANIFEST with keys, reading only, so that
// opening a store with the wrong key, or without its key, fails with a
// *driver.EncryptionKeyError naming the key it needs before anything is
// written; so does opening an unencrypted store with a key.
func storeFS(base vfs.FS, dir string, keys encfs.KeyProvider) (vfs.FS, *encfs.FS, error) {
	if dir != "" {
		if err := checkKeys(base, dir, keys); err != nil {
			return nil, nil, err
		}
	}
	if keys == nil {
		return base, nil, nil
	}
	enc := encfs.New(base, keys)
	return enc, enc, nil
}

func checkKeys(base vfs.FS, dir string, keys encfs.KeyProvider) error {
	manifest, err := atomicfs.ReadMarker(base, dir, "manifest")
	if err != nil || manifest == "" {
		return nil // no store yet, or not one: inspectDir says which
	}
	path := base.PathJoin(dir, manifest)
	keyID, encrypted, err := encfs.ProbeFile(base, path)
	switch {
	case err != nil:
		return nil // inspectDir reports it
	case keys == nil && encrypted:
		return &driver.EncryptionKeyError{KeyID: keyID, File: path}
	case keys != nil && !encrypted:
		if st, err := base.Stat(path); err == nil && st.Size() == 0 {
			return nil
		}
		return &driver.EncryptionKeyError{File: path}
	case keys != nil:
		f, err := encfs.New(base, keys).Open(path)
		if err != nil {
			return err
		}
		return f.Close()
	}
	return nil
}

// Rekey rewraps the data key of every file of the store under the key
// provider's current key (encfs.FS.Rewrap), while the store stays open:
// reads and writes go on, and files written meanwhile are under the
// current key already. The file contents are not rewritten; a full
// compaction (Compact) rewrites the sstables with new data keys. It
// returns how many files it rewrapped. Errors: InvalidInput for a store
// that is not encrypted, ErrClosed, ctx's error, key and I/O errors.
func (db *Engine) Rekey(ctx context.Context) (int, error) {
	release, err := db.enter(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	if db.enc == nil {
		return 0, errorf(edm.CodeInvalidInput, "the store is not encrypted")
	}
	if db.opts.readOnly {
		return 0, errors.New("tablestore: rekey: the store is open read-only")
	}
	return db.enc.RewrapDir(db.dir)
}

// Encrypted reports whether the store's files are encrypted.
func (db *Engine) Encrypted() bool { return db.enc != nil }
