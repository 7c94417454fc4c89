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

// Metrics are an engine's operational figures; see tablestore.EngineMetrics.
type Metrics struct {
	CompactionDebtBytes   uint64
	CompactionsInProgress int64
	Compactions           int64
	Flushes               int64
	L0Files               int64
	L0Sublevels           int32
	BlockCacheHits        int64
	BlockCacheMisses      int64
	BlockCacheBytes       int64
	MemTableBytes         uint64
	DiskBytes             uint64
	WALBytes              uint64
	WALSync               Histogram
	Tables                int
	Entities              int64
}

// Histogram is a cumulative latency distribution.
type Histogram struct {
	Count   uint64
	Sum     time.Duration
	Buckets []Bucket // ascending upper bounds; counts cumulative
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
