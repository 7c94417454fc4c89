package driver

import "context"

// Optional interfaces: a Conn implements them when its store can do what
// they describe. Package tablestore checks for them with a type assertion
// and answers NotImplemented when they are missing.

// Checkpointer is a Conn that can copy its store to a local directory
// while it stays open (the embedded engine; not a remote service).
type Checkpointer interface {
	// Checkpoint writes a consistent copy of the whole store, as of one
	// instant during the call, into dir, which must not exist yet; the
	// copy opens as a store. Reads and writes go on during the call:
	// every commit acknowledged before Checkpoint starts is in the copy,
	// and each transaction is in it entirely or not at all.
	Checkpoint(ctx context.Context, dir string) error
}

// StatsReader is a Conn that can estimate a table's size from its
// store's metadata, without reading the table.
type StatsReader interface {
	// TableStats estimates the size of the named table. Errors:
	// TableNotFound.
	TableStats(ctx context.Context, name string) (TableStats, error)
}

// TableStats are estimates of one table's size.
type TableStats struct {
	// Entities estimates the stored entities. Versions not yet compacted
	// away (overwritten or deleted entities) may be counted.
	Entities int64
	// Bytes estimates the disk space the table's data takes.
	Bytes int64
	// Unflushed is true when writes still held in memory may be missing
	// from both estimates.
	Unflushed bool
}
