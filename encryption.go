package tablestore

import (
	"bytes"
	"context"
	"encoding/base64"
	"strings"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/encfs"
	"github.com/tablestore/tablestore/internal/propseal"
)

// EncryptionKeySize is the size of an encryption key: 32 bytes, for
// AES-256.
const EncryptionKeySize = encfs.KeySize

// Encryption configures encryption at rest for the embedded engine
// (Options.Encryption): every file the store writes (sstables, write-ahead
// log, MANIFEST, OPTIONS, the clock file) is encrypted with AES-256 under
// a data key of its own, which a key-encryption key wraps. A store is
// encrypted from its creation on (see docs/encryption.md for converting
// one), and opens only with a key that unwraps its files: without it,
// Open fails with an EncryptionKeyError naming the key ID it needs, and
// writes nothing.
type Encryption struct {
	// Key is the key-encryption key, EncryptionKeySize bytes: it wraps
	// the data keys of the files written from now on. Its ID is
	// EncryptionKeyID(Key).
	Key []byte
	// PreviousKeys are earlier keys that files written before a rotation
	// may still be wrapped under; DB.Rekey rewraps those under Key.
	PreviousKeys [][]byte
	// Provider, instead of Key and PreviousKeys, wraps and unwraps the
	// data keys, so a KMS or an HSM can hold the key-encryption keys.
	Provider KeyProvider
}

// KeyProvider holds the key-encryption keys of an encrypted store, each
// named by an ID (at most 255 bytes) that the files' headers record. It
// is called once per file the store creates (WrapKey) and once per file
// it opens (UnwrapKey), from many goroutines at once.
type KeyProvider interface {
	// CurrentKeyID names the key that wraps the data keys of new files.
	CurrentKeyID() string
	// WrapKey encrypts dataKey under the key keyID, bound to context, a
	// public byte string that UnwrapKey is given back. The result is at
	// most 1,024 bytes.
	WrapKey(keyID string, dataKey, context []byte) ([]byte, error)
	// UnwrapKey decrypts what WrapKey returned. It fails with an error
	// matching ErrCorrupt when wrapped or context were altered, and with
	// any other error when it cannot use the key keyID (the store then
	// reports an EncryptionKeyError naming keyID).
	UnwrapKey(keyID string, wrapped, context []byte) ([]byte, error)
}

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

// validate reports keys of the wrong size as InvalidInput.
func (e *Encryption) validate() error {
	if e == nil {
		return nil
	}
	if e.Provider != nil {
		if id := e.Provider.CurrentKeyID(); len(id) == 0 || len(id) > 255 {
			return newError(edm.CodeInvalidInput, "Encryption: the provider's key ID %q must be 1 to 255 bytes", id)
		}
		return nil
	}
	if _, err := encfs.NewStaticKeys(e.Key, e.PreviousKeys...); err != nil {
		return newError(edm.CodeInvalidInput, "Encryption: %s", strings.TrimPrefix(err.Error(), "tablestore: "))
	}
	return nil
}

// keys returns the provider the engine uses; nil when e is nil.
func (e *Encryption) keys() encfs.KeyProvider {
	switch {
	case e == nil:
		return nil
	case e.Provider != nil:
		return e.Provider
	}
	k, err := encfs.NewStaticKeys(e.Key, e.PreviousKeys...)
	if err != nil {
		return badKeys{err} // validate refused it first
	}
	return k
}

// badKeys fails every call: keys validate refused.
type badKeys struct{ err error }

func (b badKeys) CurrentKeyID() string { return "invalid" }
func (b badKeys) WrapKey(string, []byte, []byte) ([]byte, error) {
	return nil, b.err
}
func (b badKeys) UnwrapKey(string, []byte, []byte) ([]byte, error) {
	return nil, b.err
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

// PropertyEncryption encrypts chosen properties of chosen tables on the
// client, before they reach the driver: with the remote driver (the azure
// module) the service stores and returns only ciphertext; the embedded
// engine offers the same. Each value is sealed with AES-256-GCM under a
// random nonce, with the entity's PartitionKey and RowKey and the
// property's name as associated data, so a value copied to another
// entity or property fails to decrypt (ErrCorrupt) instead of reading as
// data. It is stored as an Edm.Binary value: the key ID, the nonce, and
// the sealed type and value. Keys are named by ID; every write seals
// under CurrentKeyID, so rewriting an entity moves its values to the
// current key, and values under older keys read as long as their key is
// in Keys.
//
// A $filter that names an encrypted property of the table is refused
// with InvalidInput naming it: the store holds only ciphertext, so it
// could not answer it. On a table with encrypted properties the table
// handle offers reads, writes, transactions, bulk writes, queries
// (reverse ones included), partition deletes and secondary indexes on
// the other properties (one on an encrypted property is InvalidInput
// naming it); change feeds and TTL answer NotImplemented there. Names, keys, types of the other
// properties, and the size of each value stay visible.
type PropertyEncryption struct {
	// Keys are the keys by ID: each EncryptionKeySize bytes, each ID 1 to
	// 255 bytes.
	Keys map[string][]byte
	// CurrentKeyID is the ID, in Keys, of the key new values are sealed
	// under.
	CurrentKeyID string
	// Tables maps a table name (matched case-insensitively) to the names
	// of its encrypted properties (matched exactly, as Azure matches
	// property names). PartitionKey, RowKey and Timestamp cannot be
	// encrypted.
	Tables map[string][]string
	// AllowPlaintext reads a value of an encrypted property that is not
	// sealed (written before its property was encrypted) as it is;
	// without it, such a value is ErrCorrupt. Writes always seal.
	AllowPlaintext bool
}

// build validates p and prepares its keys; nil for a nil p.
func (p *PropertyEncryption) build() (*propseal.Sealer, error) {
	if p == nil {
		return nil, nil
	}
	for id, k := range p.Keys {
		if len(id) == 0 || len(id) > 255 {
			return nil, newError(edm.CodeInvalidInput, "PropertyEncryption: key ID %q must be 1 to 255 bytes", id)
		}
		if len(k) != EncryptionKeySize {
			return nil, newError(edm.CodeInvalidInput, "PropertyEncryption: key %q must be %d bytes, not %d", id, EncryptionKeySize, len(k))
		}
	}
	if _, ok := p.Keys[p.CurrentKeyID]; !ok {
		return nil, newError(edm.CodeInvalidInput, "PropertyEncryption: CurrentKeyID %q is not in Keys", p.CurrentKeyID)
	}
	for table, names := range p.Tables {
		for _, n := range names {
			switch n {
			case "PartitionKey", "RowKey", "Timestamp", "":
				return nil, newError(edm.CodeInvalidInput, "PropertyEncryption: property %q of table %q cannot be encrypted", n, table)
			}
		}
	}
	return propseal.New(p.Keys, p.CurrentKeyID, p.Tables, p.AllowPlaintext)
}
