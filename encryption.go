package tablestore

import (
	"bytes"
	"context"
	"encoding/base64"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/encfs"
)

// EncryptionKeyID returns the ID of a key given as Encryption.Key: a
// fingerprint that names it without revealing it.
func EncryptionKeyID(key []byte) string { return encfs.KeyID(key) }

// ParseEncryptionKey decodes a key written as base64 (standard or URL
// alphabet, padded or not; surrounding white space is ignored), as the
// command's --encryption-key-file and $TABLESTORE_ENCRYPTION_KEY hold
// it. Anything but 32 bytes of base64 is InvalidInput.
func ParseEncryptionKey(text []byte) ([]byte, error) {
	s := string(bytes.TrimSpace(text))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil {
			if len(k) != EncryptionKeySize {
				return nil, newError(edm.CodeInvalidInput, "an encryption key must be %d bytes of base64, not %d bytes", EncryptionKeySize, len(k))
			}
			return k, nil
		}
	}
	return nil, newError(edm.CodeInvalidInput, "an encryption key must be %d bytes of base64; this is not base64", EncryptionKeySize)
}

// rekeyer is implemented by drivers whose stores are encrypted at rest.
type rekeyer interface {
	Rekey(ctx context.Context, rewrite bool) (int, error)
}

// RekeyOptions are DB.Rekey's options; nil means the zero value.
type RekeyOptions struct {
	// Rewrite re-encrypts every file under a fresh data key instead of
	// rewrapping its data key: the contents are copied, unchanged, into
	// a new file whose data key is new and wrapped under the current
	// key, which replaces the file (files open for writing, the
	// write-ahead log and MANIFEST among them, move while their writer
	// waits). Afterwards no file of the store or of its continuous
	// backup has a data key from before the call, so a leaked data key
	// or an old key-encryption key opens none of them. It reads and
	// writes every byte of the store.
	Rewrite bool
}

// Rekey rewraps the data key of every file of the store under the
// current key (Encryption.Key, or the provider's current key), and of
// its continuous backup (Options.ContinuousBackup, or else the one the
// store last kept: see ContinuousBackupDir), while the store
// stays open: reads and writes go on meanwhile, and files written
// since Open are under the current key already. Afterwards the store
// opens with the current key alone. It returns how many files it
// rewrapped (or rewrote, with opts.Rewrite). Without opts.Rewrite only
// the wrapping changes, not the files' data keys or contents.
//
// Every file of that backup is opened under the keys first: one that
// does not open fails Rekey (an *EncryptionKeyError naming it) before
// it rewraps anything.
//
// Errors: InvalidInput for a store that is not encrypted,
// NotImplemented for a driver without encryption at rest, ErrClosed,
// ctx's error, key and I/O errors.
func (db *DB) Rekey(ctx context.Context, opts *RekeyOptions) (int, error) {
	if err := db.checkContext(ctx); err != nil {
		return 0, err
	}
	if opts == nil {
		opts = &RekeyOptions{}
	}
	r, ok := db.conn.(rekeyer)
	if !ok {
		return 0, newError(edm.CodeNotImplemented, "this store's driver has no encryption at rest")
	}
	n, err := r.Rekey(ctx, opts.Rewrite)
	if err != nil {
		return n, mapError(err, false)
	}
	return n, nil
}

// checkpointer is implemented by drivers that can write a checkpoint
// under other encryption than the store's.
type encryptedCheckpointer interface {
	CheckpointTo(ctx context.Context, dir string, keys encfs.KeyProvider) error
}

// CheckpointEncrypted writes a consistent copy of the whole store into
// directory dir, which must not exist yet, as Checkpoint does, but with
// every file encrypted under enc (nil: in plain text), whatever the
// store's own encryption; the copy opens with enc. It converts a store
// to encryption at rest, or from it, or rewrites every file under new
// data keys. Unlike Checkpoint it copies every file, and it needs room
// for two copies while it runs (a temporary directory beside dir, removed
// when it ends).
//
// Errors: InvalidInput for keys of the wrong size, NotImplemented when
// the store's driver cannot checkpoint, ErrClosed, ctx's error, key and
// I/O errors.
func (db *DB) CheckpointEncrypted(ctx context.Context, dir string, enc *Encryption) error {
	if err := db.checkContext(ctx); err != nil {
		return err
	}
	if err := enc.validate(); err != nil {
		return err
	}
	cp, ok := db.conn.(encryptedCheckpointer)
	if !ok {
		return newError(edm.CodeNotImplemented, "this store's driver cannot write a checkpoint")
	}
	return mapError(cp.CheckpointTo(ctx, dir, enc.keys()), false)
}
