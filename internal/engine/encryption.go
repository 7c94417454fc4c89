package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

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
// current key already. With rewrite it re-encrypts every file instead
// (encfs.FS.Reencrypt): each gets a fresh data key under the current
// key, the files open for writing (WAL, MANIFEST, CLOCK, the backup's
// segment) included, so that afterwards no file of the store or of its
// continuous backup holds a data key from before the call. It returns
// how many files it rewrapped or rewrote, the continuous backup's
// included. Errors: InvalidInput for a store that is not encrypted,
// ErrClosed, ctx's error, key and I/O errors.
func (db *Engine) Rekey(ctx context.Context, rewrite bool) (int, error) {
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
	// The backup the store keeps, or last kept: every file of it must
	// open under the keys before anything is changed.
	l := db.backup
	if l == nil {
		dir, err := db.backupDir()
		if err != nil {
			return 0, err
		}
		if dir != "" {
			if _, err := os.Stat(dir); err != nil {
				return 0, fmt.Errorf("tablestore: rekey: the store's continuous backup %q: %w", dir, err)
			}
			l = &backupLog{opts: BackupOptions{Dir: dir}, fs: backupFS(nil, db.opts.Keys)}
		}
	}
	if l != nil {
		if err := l.checkKeys(db.opts.Keys); err != nil {
			return 0, fmt.Errorf("tablestore: rekey: the store's continuous backup %q cannot be rotated, so nothing was changed: %w", l.opts.Dir, err)
		}
	}
	pass := db.enc.RewrapDir
	if rewrite {
		pass = db.enc.ReencryptDir
	}
	n, err := pass(ctx, db.dir)
	if err != nil || l == nil {
		return n, err
	}
	m, err := l.rewrap(ctx, rewrite)
	return n + m, err
}

// Encrypted reports whether the store's files are encrypted.
func (db *Engine) Encrypted() bool { return db.enc != nil }

// CheckpointTo writes a checkpoint of the store into dir, which must not
// exist, with its files encrypted under keys, or in plain text when keys
// is nil, whatever the store's own encryption: it checkpoints into a
// temporary directory beside dir, then copies each file through the
// target's FS, and removes the temporary directory. The copy opens with
// keys. Errors: ErrClosed, ctx's error, key and I/O errors.
func (db *Engine) CheckpointTo(ctx context.Context, dir string, keys encfs.KeyProvider) (err error) {
	base := db.rawFS()
	if db.enc != nil {
		base = db.enc.Unwrap()
	}
	if _, err := base.Stat(dir); err == nil {
		return fmt.Errorf("tablestore: checkpoint into %q: the directory exists", dir)
	}
	tmp := dir + ".checkpoint-tmp"
	if err := base.RemoveAll(tmp); err != nil {
		return err
	}
	if err := db.Checkpoint(ctx, tmp); err != nil {
		return err
	}
	defer func() { err = errors.Join(err, base.RemoveAll(tmp)) }()
	target, _, err := storeFS(base, "", keys)
	if err != nil {
		return err
	}
	var src vfs.FS = base
	if db.enc != nil {
		src = db.enc
	}
	if err := base.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names, err := base.List(tmp)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		if name == "LOCK" {
			continue
		}
		if err := copyFile(src, target, src.PathJoin(tmp, name), target.PathJoin(dir, name)); err != nil {
			return fmt.Errorf("tablestore: checkpoint into %q: %w", dir, err)
		}
	}
	return syncDir(base, dir)
}

// copyFile copies from (read through fromFS) to to (written through
// toFS), synced.
func copyFile(fromFS, toFS vfs.FS, from, to string) error {
	st, err := fromFS.Stat(from)
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory", from)
	}
	in, err := fromFS.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := toFS.Create(to, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	buf := make([]byte, 256<<10)
	for {
		n, rerr := in.Read(buf)
		if n > 0 {
			if _, err := out.Write(buf[:n]); err != nil {
				return errors.Join(err, out.Close())
			}
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return errors.Join(rerr, out.Close())
		}
	}
	return errors.Join(out.Sync(), out.Close())
}
