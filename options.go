package tablestore

import (
	"runtime"
	"time"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
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
