package driver

import (
	"context"
	"time"
)

// MetricsReader is a Conn that can report its engine's operational
// figures cheaply (from counters it keeps, without reading data).
type MetricsReader interface {
	// Metrics returns the current figures. It does no data I/O and is
	// meant to be called about once a second. Errors: ErrClosed.
	Metrics(ctx context.Context) (Metrics, error)
}

// Metrics are an engine's operational figures, for monitoring: read
// from counters the engine keeps, without reading data. Counters
// (Compactions, Flushes, BlockCacheHits, BlockCacheMisses, WALSync) grow
// from the store's open; the rest are current values. The root package
// gives them to its users as tablestore.EngineMetrics.
type Metrics struct {
	// CompactionDebtBytes estimates the bytes compactions must rewrite
	// for the store to reach a stable shape; growing debt means writes
	// outpace compaction.
	CompactionDebtBytes uint64
	// CompactionsInProgress, Compactions and Flushes count compactions
	// running now, compactions since the open and memtable flushes since
	// the open.
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
	WALSync Histogram
	// Tables is the number of tables.
	Tables int
	// Entities estimates the stored entities from data file metadata
	// (as TableStats does, for the whole store): writes still in memory
	// are missing, and versions not yet compacted away are counted.
	Entities int64
	// Snapshots is the number of open snapshots (DB.Snapshot) and
	// OldestSnapshotAge how long ago the oldest was taken (0 when none).
	// An open snapshot keeps the versions it shows from being compacted
	// away; SnapshotPinnedBytes counts the bytes compactions have had to
	// keep for snapshots since the open.
	Snapshots           int
	OldestSnapshotAge   time.Duration
	SnapshotPinnedBytes uint64
}

// Histogram is a cumulative latency distribution.
type Histogram struct {
	Count   uint64        // observations
	Sum     time.Duration // their total
	Buckets []Bucket      // ascending upper bounds; counts cumulative
}

// Bucket is one histogram bucket: Count observations took at most
// UpperBound.
type Bucket struct {
	UpperBound time.Duration
	Count      uint64
}

// ServicePropertiesStore is a Conn that keeps one opaque document for
// the service that serves it (the REST server's Table Service
// Properties), durably, with the store.
type ServicePropertiesStore interface {
	// ServiceProperties returns the document last set, or nil when none
	// was. Errors: ErrClosed.
	ServiceProperties(ctx context.Context) ([]byte, error)
	// SetServiceProperties replaces the document (nil or empty removes
	// it), durably. Errors: ErrClosed, and the store's faults.
	SetServiceProperties(ctx context.Context, doc []byte) error
}
