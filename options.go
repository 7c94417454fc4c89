package tablestore

import (
	"runtime"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/encfs"
	"github.com/tablestore/tablestore/internal/engine"
	"github.com/tablestore/tablestore/internal/propseal"
)

// Options configure a DB. A nil *Options, and every zero field, means the
// default given in the field's comment.
type Options struct {
	// NoSync makes commits return before the write-ahead log reaches
	// stable storage. Writes stay atomic (a crash never tears an entity or
	// a transaction) but the newest acknowledged writes may be lost.
	// CreateTable and DeleteTable are synced regardless. Timestamps never
	// repeat across a crash in either mode; after one, they resume
	// normally about 50 ms (at most 1 s) past the last one issued.
	// Default: false (every commit is synced; concurrent commits share one
	// fsync through Pebble's group commit).
	NoSync bool

	// CacheSize is the size in bytes of the block cache shared by all
	// tables. Default: 64 MiB.
	CacheSize int64

	// MemTableSize is the size in bytes of Pebble's memtable. Small values
	// force frequent flushes and compactions (useful in tests).
	// Must be under 4 GiB - 1 (Pebble's limit). Default: 4 MiB.
	MemTableSize uint64

	// BloomBitsPerKey sets the bloom filter built over every key in the
	// store, so a point lookup of an absent entity rarely reads a block.
	// Negative disables the filters. Default: 10.
	BloomBitsPerKey int

	// BlockSize is the size in bytes, before compression, that the data
	// blocks of the sstables Pebble writes aim for. Larger blocks make
	// scans faster (fewer blocks to fetch, decompress and index) and point
	// reads that miss the cache slower (each decompresses a whole block);
	// docs/performance.md ("Block size") measures both. Files already
	// written keep their blocks until compacted. At most 1 GiB; zero or
	// negative is the default. Default: 4 KiB (Pebble's).
	BlockSize int

	// Clock returns the current time; the engine derives Timestamps and
	// ETags from it. Timestamps still strictly increase per entity if the
	// clock stalls or goes backwards. Default: time.Now.
	Clock func() time.Time

	// FilterLimits bound the size of $filter expressions.
	// Default: filter.DefaultLimits.
	FilterLimits *filter.Limits

	// PageScanLimit is the most entities one query page examines before it
	// ends early with a continuation token (like Azure, a page may then
	// hold fewer entities than Top, even none). Default: 100,000.
	PageScanLimit int

	// PageTimeLimit is the longest one query page may take before it ends
	// early with a continuation token. Default: 5s (Azure's figure).
	PageTimeLimit time.Duration

	// Parallelism is how many goroutines read a query page that scans
	// much data with a residual filter: a forward page that has examined
	// 1,024 entities without ending, and whose ranges hold at least 2 MiB
	// on disk past that point, reads the rest as key segments (256 KiB
	// growing to 1 MiB, smaller where the page is expected to end) read
	// concurrently from the same view of the store, and the matches are
	// merged in key order, so pages, continuation tokens and results are
	// exactly those of a serial read (the time budget aside). A page that
	// ends sooner (a small table, a short range, a filter matching much)
	// is read serially at no extra cost. 1 turns it off; reverse queries
	// always read serially. The segments' buffers are kept for later
	// pages, at most 16 of at most 256 KiB each per process.
	// At most 256. Default: runtime.GOMAXPROCS(0).
	Parallelism int
	// OnCorruption, if set, is called once, on its own goroutine, with the
	// first fault the store meets (an error matching ErrCorrupt for
	// damaged data, found by a read, a write or a background compaction);
	// from then on the store refuses writes. DB.Health returns the same
	// error. Default: nil.
	OnCorruption func(error)

	// MustExist makes Open refuse a directory that holds no store instead
	// of creating one there: a directory that does not exist, is empty,
	// or holds only what a creation killed before its first write left.
	// The error is an *Error with code ResourceNotFound (errors.Is(err,
	// ErrResourceNotFound)) whose message names the directory and says
	// which of these it is; nothing is created or written. Programs that
	// only read or serve an existing store set it, so a mistyped path
	// fails instead of yielding a new, empty store. OpenInMemory ignores
	// it. Default: false (Open creates the store).
	MustExist bool

	// SweepRate bounds how many expired entities per second the
	// background sweeper removes from tables with TTL settings (see
	// Table.SetTTL), so foreground latency holds while it catches up. At
	// most 1,000,000. Default: 10,000.
	SweepRate int

	// WriteTimeout bounds how long a write waits for storage that is not
	// accepting writes: a full disk, or a write stall while flushes and
	// compactions catch up. Such a write fails with an error matching
	// ErrNoSpace within its context's deadline or WriteTimeout, whichever
	// comes first; a write refused before it reached the storage engine
	// is not applied (see ErrNoSpace for the rare one that did). Writes
	// that are slow on a healthy store (a large bulk write) are not cut
	// short. Close waits at most this long for writes held up by a full
	// disk. With NoSync, the rare write that rotates the memtable just as
	// the write-ahead log meets a full disk waits for space (see
	// docs/architecture.md). Negative waits as long as the context allows.
	// Default: 5 s.
	WriteTimeout time.Duration

	// Encryption, if set, encrypts every file of the store at rest (see
	// Encryption); a store made with it opens only with its key.
	// OpenDriver ignores it. Default: nil (files are plaintext).
	Encryption *Encryption

	// PropertyEncryption, if set, encrypts chosen properties of chosen
	// tables before they reach the driver (see PropertyEncryption); it
	// applies to OpenDriver's remote stores too. Default: nil.
	PropertyEncryption *PropertyEncryption

	// sealer is PropertyEncryption validated, set by validate.
	sealer *propseal.Sealer
	// ContinuousBackup, if set, keeps a continuous backup of the store
	// in a directory, from which Restore recreates the store as it was
	// at any instant of its window (see ContinuousBackup and
	// docs/backup.md). OpenInMemory refuses it. Default: nil (off).
	ContinuousBackup *ContinuousBackup
}

const (
	defaultCacheSize     = 64 << 20
	defaultMemTableSize  = 4 << 20
	defaultBloomBits     = 10
	defaultPageScanLimit = 100_000
	defaultPageTimeLimit = 5 * time.Second
	defaultWriteTimeout  = 5 * time.Second
)

// Bounds of the engine's settings (see Options).
const (
	maxMemTableSize = 4<<30 - 1 // exclusive, as Pebble checks it
	maxBlockSize    = 1 << 30
	maxParallelism  = 256
)

// validate reports a setting of the embedded engine outside its bounds
// as InvalidInput, before anything is opened.
func (o *Options) validate() error {
	switch {
	case o.MemTableSize >= maxMemTableSize:
		return newError(edm.CodeInvalidInput, "MemTableSize %d is not under %d", o.MemTableSize, maxMemTableSize)
	case o.BlockSize > maxBlockSize:
		return newError(edm.CodeInvalidInput, "BlockSize %d is over 1 GiB", o.BlockSize)
	case o.Parallelism > maxParallelism:
		return newError(edm.CodeInvalidInput, "Parallelism %d is over %d", o.Parallelism, maxParallelism)
	case o.SweepRate > engine.MaxSweepRate:
		return newError(edm.CodeInvalidInput, "SweepRate %d is over %d", o.SweepRate, engine.MaxSweepRate)
	}
	if err := o.Encryption.validate(); err != nil {
		return err
	}
	var err error
	if o.sealer, err = o.PropertyEncryption.build(); err != nil {
		return err
	}
	return o.ContinuousBackup.validate()
}

// withDefaults returns a copy of o with every zero field set to its default.
func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.CacheSize <= 0 {
		r.CacheSize = defaultCacheSize
	}
	if r.MemTableSize == 0 {
		r.MemTableSize = defaultMemTableSize
	}
	if r.BloomBitsPerKey == 0 {
		r.BloomBitsPerKey = defaultBloomBits
	}
	if r.Clock == nil {
		r.Clock = time.Now
	}
	if r.FilterLimits == nil {
		l := filter.DefaultLimits
		r.FilterLimits = &l
	}
	if r.PageScanLimit <= 0 {
		r.PageScanLimit = defaultPageScanLimit
	}
	if r.PageTimeLimit <= 0 {
		r.PageTimeLimit = defaultPageTimeLimit
	}
	if r.Parallelism <= 0 {
		r.Parallelism = runtime.GOMAXPROCS(0)
	}
	if r.WriteTimeout == 0 {
		r.WriteTimeout = defaultWriteTimeout
	}
	return r
}

// onFault adapts OnCorruption to the engine's error values.
func (o *Options) onFault() func(error) {
	if o.OnCorruption == nil {
		return nil
	}
	f := o.OnCorruption
	return func(err error) { f(mapError(err, false)) }
}

// engineOptions returns the embedded engine's share of o (with defaults).
func (o *Options) engineOptions() engine.Options {
	return engine.Options{
		NoSync:          o.NoSync,
		CacheSize:       o.CacheSize,
		MemTableSize:    o.MemTableSize,
		BloomBitsPerKey: o.BloomBitsPerKey,
		BlockSize:       o.BlockSize,
		Clock:           o.Clock,
		PageScanLimit:   o.PageScanLimit,
		PageTimeLimit:   o.PageTimeLimit,
		Parallelism:     o.Parallelism,
		OnFault:         o.onFault(),
		MustExist:       o.MustExist,
		SweepRate:       o.SweepRate,
		WriteTimeout:    o.WriteTimeout,
		Keys:            o.Encryption.keys(),
		Backup:          o.ContinuousBackup.engineOptions(),
	}
}

// ContinuousBackup configures continuous backup (Options.ContinuousBackup):
// the store keeps, in Dir, periodic base checkpoints and a log of every
// commit of every table since, so Restore can recreate the store as it
// was at any instant from the oldest base kept to the last commit.
//
// A synced commit returns only once its log record is written and
// synced too (that sync overlaps the store's own); an unsynced commit's
// record is written within about 50 ms, as durable as the commit itself.
// docs/backup.md gives the costs and the layout.
type ContinuousBackup struct {
	// Dir is the backup directory, created if missing; one store's only.
	Dir string
	// BaseInterval is how often a new base checkpoint is taken; one is
	// also taken at every Open. Default: 1 hour.
	BaseInterval time.Duration
	// Retention is how far back the window reaches: older bases, but
	// the newest of them, and the log they alone need are deleted when a
	// base is taken. Default: 24 hours.
	Retention time.Duration
	// SegmentBytes is the size past which the log starts a new segment
	// file. Default: 64 MiB.
	SegmentBytes int64
	// BackgroundSync trades some of the backup's durability for the
	// speed of synced commits: a synced commit returns once its log
	// record is written to the file (it survives the process being
	// killed) but before the record is synced; a background sync follows
	// within about 25 ms. So a synced commit waits for one disk sync, the
	// store's. A power loss or OS crash may then lose the last records of
	// commits the store kept: the next Open finds them missing and the
	// window gets a hole (BackupWindow.Holes) that Restore refuses; the
	// instants before and after it restore as usual. Off by default.
	BackgroundSync bool

	// fs, in tests, is what the log is written through (nil: the OS).
	fs vfs.FS
}

const (
	defaultBaseInterval = time.Hour
	defaultRetention    = 24 * time.Hour
	defaultSegmentBytes = 64 << 20
)

func (c *ContinuousBackup) validate() error {
	switch {
	case c == nil:
		return nil
	case c.Dir == "":
		return newError(edm.CodeInvalidInput, "ContinuousBackup.Dir is empty")
	case c.BaseInterval < 0, c.Retention < 0, c.SegmentBytes < 0:
		return newError(edm.CodeInvalidInput, "ContinuousBackup's intervals and sizes must not be negative")
	}
	return nil
}

func (c *ContinuousBackup) engineOptions() *engine.BackupOptions {
	if c == nil {
		return nil
	}
	o := &engine.BackupOptions{Dir: c.Dir, BaseInterval: c.BaseInterval, Retention: c.Retention, SegmentBytes: c.SegmentBytes, BackgroundSync: c.BackgroundSync, FS: c.fs}
	if o.BaseInterval == 0 {
		o.BaseInterval = defaultBaseInterval
	}
	if o.Retention == 0 {
		o.Retention = defaultRetention
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = defaultSegmentBytes
	}
	return o
}

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
