package tablestore

import (
	"context"
	"time"

	"github.com/tablestore/tablestore/driver"
)

// EngineMetrics are the store engine's operational figures, for
// monitoring: read from counters the engine keeps, without reading data.
// Counters (Compactions, Flushes, BlockCacheHits, BlockCacheMisses,
// WALSync) grow from Open; the rest are current values.
type EngineMetrics struct {
	// CompactionDebtBytes estimates the bytes compactions must rewrite
	// for the store to reach a stable shape; growing debt means writes
	// outpace compaction.
	CompactionDebtBytes uint64
	// CompactionsInProgress, Compactions and Flushes count compactions
	// running now, compactions since Open and memtable flushes since Open.
	CompactionsInProgress int64
	Compactions           int64
	Flushes               int64
	// L0Files and L0Sublevels describe level 0: many files or sublevels
	// slow reads and, past Pebble's thresholds, stall writes.
	L0Files     int64
	L0Sublevels int32
	// BlockCacheHits and BlockCacheMisses count block cache lookups;
	// BlockCacheBytes is the cache's current size.
	BlockCacheHits   int64
	BlockCacheMisses int64
	BlockCacheBytes  int64
	// MemTableBytes is memory held by memtables.
	MemTableBytes uint64
	// DiskBytes is the disk space the store's files take (live and not
	// yet deleted obsolete files, WAL included); WALBytes the WAL's part.
	DiskBytes uint64
	WALBytes  uint64
	// WALSync is the distribution of write-ahead log sync latencies.
	WALSync LatencyHistogram
	// Tables is the number of tables.
	Tables int
	// Entities estimates the stored entities from data file metadata
	// (as TableStats does, for the whole store): writes still in memory
	// are missing, and versions not yet compacted away are counted.
	Entities int64
	// Fault is Health's answer: nil while the store accepts writes.
	Fault error
}

// LatencyHistogram is a cumulative latency distribution.
type LatencyHistogram struct {
	Count   uint64        // observations
	Sum     time.Duration // their total
	Buckets []LatencyBucket
}

// LatencyBucket says Count observations took at most UpperBound;
// buckets are in ascending order of bound and counts are cumulative.
type LatencyBucket struct {
	UpperBound time.Duration
	Count      uint64
}

// EngineMetrics returns the engine's current figures. It reads no
// entities; on the embedded engine it costs about as much as listing the
// store's data files. It may be called concurrently with anything.
// Errors: NotImplemented for a driver that keeps no such figures (a
// remote store), ErrClosed, ctx's error.
func (db *DB) EngineMetrics(ctx context.Context) (*EngineMetrics, error) {
	if err := db.checkContext(ctx); err != nil {
		return nil, err
	}
	mr, ok := db.conn.(driver.MetricsReader)
	if !ok {
		return nil, newError(CodeNotImplemented, "this store's driver keeps no engine metrics")
	}
	m, err := mr.Metrics(ctx)
	if err != nil {
		return nil, mapError(err, false)
	}
	out := &EngineMetrics{
		CompactionDebtBytes: m.CompactionDebtBytes, CompactionsInProgress: m.CompactionsInProgress,
		Compactions: m.Compactions, Flushes: m.Flushes, L0Files: m.L0Files, L0Sublevels: m.L0Sublevels,
		BlockCacheHits: m.BlockCacheHits, BlockCacheMisses: m.BlockCacheMisses, BlockCacheBytes: m.BlockCacheBytes,
		MemTableBytes: m.MemTableBytes, DiskBytes: m.DiskBytes, WALBytes: m.WALBytes,
		Tables: m.Tables, Entities: m.Entities, Fault: db.Health(),
		WALSync: LatencyHistogram{Count: m.WALSync.Count, Sum: m.WALSync.Sum},
	}
	for _, b := range m.WALSync.Buckets {
		out.WALSync.Buckets = append(out.WALSync.Buckets, LatencyBucket{UpperBound: b.UpperBound, Count: b.Count})
	}
	return out, nil
}

// MaxServicePropertiesSize bounds the document SetServiceProperties keeps.
const MaxServicePropertiesSize = 64 << 10

// ServiceProperties returns the service properties document last stored
// by SetServiceProperties, or nil when there is none. The library does
// not interpret it: the REST server keeps Azure's Table Service
// Properties XML (CORS rules, logging and metrics settings) here, so they
// survive restarts and travel with backups. Errors: NotImplemented for a
// driver that cannot keep one, ErrClosed, ctx's error.
func (db *DB) ServiceProperties(ctx context.Context) ([]byte, error) {
	if err := db.checkContext(ctx); err != nil {
		return nil, err
	}
	ps, ok := db.conn.(driver.ServicePropertiesStore)
	if !ok {
		return nil, newError(CodeNotImplemented, "this store's driver cannot keep service properties")
	}
	doc, err := ps.ServiceProperties(ctx)
	return doc, mapError(err, false)
}

// SetServiceProperties durably replaces the stored service properties
// document (nil removes it). The document is opaque to the library.
// Errors: InvalidInput for a document over MaxServicePropertiesSize,
// NotImplemented as for ServiceProperties, ErrClosed, ctx's error, and
// the store's faults (see Health).
func (db *DB) SetServiceProperties(ctx context.Context, doc []byte) error {
	if err := db.checkContext(ctx); err != nil {
		return err
	}
	if len(doc) > MaxServicePropertiesSize {
		return newError(CodeInvalidInput, "the service properties document is larger than 64 KiB")
	}
	ps, ok := db.conn.(driver.ServicePropertiesStore)
	if !ok {
		return newError(CodeNotImplemented, "this store's driver cannot keep service properties")
	}
	return mapError(ps.SetServiceProperties(ctx, doc), false)
}
