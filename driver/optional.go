package driver

import (
	"context"
	"time"
)

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

// The interfaces below are optional: a Table implements those it can. The
// caller checks for them with a type assertion; when a Table lacks one,
// package tablestore reports NotImplemented for the operation. A Table that
// implements one may still refuse a particular call with an *Error whose
// Code is "NotImplemented".

// RangeDeleter is a Table that can delete a range of one partition.
type RangeDeleter interface {
	// DeleteRange deletes every entity of partition pk whose RowKey lies
	// in the half-open range [fromRowKey, toRowKey); "" leaves a side
	// unbounded (both "" delete the whole partition). The caller has
	// validated both bounds and guarantees fromRowKey < toRowKey when both
	// are set. Deleting nothing is not an error. Errors: TableNotFound.
	//
	// Azure has no such operation. The embedded engine writes one range
	// deletion under the partition's lock: constant time, atomic with
	// respect to transactions and other writes of the partition, durable
	// like a commit; it reports Atomic. A remote driver over Azure can only
	// query the range and delete what it finds in transactions of up to
	// 100 entities: that is not atomic (concurrent writers may add
	// entities behind it, readers see it half done, and an error leaves it
	// half done), and it reports Atomic false.
	DeleteRange(ctx context.Context, pk, fromRowKey, toRowKey string) (DeleteRangeResult, error)
}

// DeleteRangeResult describes a successful DeleteRange.
type DeleteRangeResult struct {
	// Atomic reports that the deletion took effect as one atomic write.
	Atomic bool
	// Deleted is the number of entities deleted, or -1 when the driver
	// does not count them (a range deletion never reads them).
	Deleted int64
}

// ReverseQuerier is a Table that can read a query in descending order.
type ReverseQuerier interface {
	// QueryPageReverse is QueryPage in descending (PartitionKey, RowKey)
	// order: the same ranges and residual, read from the last position
	// down. A resume point (q.NextPartitionKey, q.NextRowKey) names the
	// next entity to read, which is the greatest one still to examine; the
	// result's resume point likewise. A driver that cannot read in reverse
	// on this table returns an *Error with Code "NotImplemented".
	QueryPageReverse(ctx context.Context, q *QueryRequest, emit func(Row) error) (PageResult, error)
}

// Segmenter is a Table that can split itself into key ranges of about
// equal data volume, for segmented scans.
type Segmenter interface {
	// Segments returns n-1 split positions, in ascending order, possibly
	// repeated: segment i runs from split i-1 (the table's start for the
	// first) to split i, excluded (the table's end for the last). Together
	// the segments cover every position exactly once; a repeated split
	// makes an empty segment. Positions hold no byte below 0x20 (see
	// Key). The caller guarantees 1 <= n <= 1000.
	Segments(ctx context.Context, n int) ([]Key, error)
}

// OptionCommitter is a Table whose Commit takes options.
type OptionCommitter interface {
	// CommitWith is Commit with opts; with the zero CommitOptions it is
	// Commit.
	CommitWith(ctx context.Context, actions []Action, opts CommitOptions) (CommitResult, error)
}

// CommitOptions adjust a CommitWith call.
type CommitOptions struct {
	// DistinctTimestamps gives each action its own Timestamp, greater
	// than the action's before it, where Commit gives every action one:
	// the entity written by action i gets the i-th and the ETag made of
	// it, and CommitResult.Timestamps and ETags hold them (zero for a
	// delete). Each is one the clock has never issued before, as
	// Commit's is. Cosmos DB for Table versions a batch's entities so.
	DistinctTimestamps bool
}

// BulkCommitter is a Table that can commit many independent single-entity
// writes, on any partitions and in any order, together: what a bulk load
// needs when its input is not grouped by partition.
type BulkCommitter interface {
	// CommitBulk applies each action as a write of its own: its
	// precondition is checked against the stored entity as Commit checks
	// it, and an action that fails it is reported in the result and not
	// applied, without failing the others (with StopAtFailure, the first
	// failing action, in order, ends the call: the actions before it
	// are applied, it and those after it are not). The caller guarantees
	// 1 or more actions of types ActionInsert, ActionUpsertMerge or
	// ActionUpsertReplace, validated as for Commit, with distinct
	// (PartitionKey, RowKey) pairs.
	//
	// Each applied action is atomic and durable like a Commit (synced
	// unless the store is set not to sync); every entity written gets a
	// Timestamp greater than its stored one. No atomicity across actions
	// is promised: other writers may interleave, and a crash during the
	// call may keep any subset of the applied actions. The embedded
	// engine in fact takes every touched partition's lock, checks all the
	// preconditions, and writes the applied actions in one Pebble batch
	// with one sync, so they become visible and durable together.
	//
	// An error (TableNotFound, ErrClosed, ctx's error, a storage fault)
	// means nothing was applied.
	CommitBulk(ctx context.Context, actions []Action, opts BulkCommitOptions) (BulkCommitResult, error)
}

// BulkCommitOptions adjust a CommitBulk call.
type BulkCommitOptions struct {
	// StopAtFailure applies only the actions before the first one whose
	// precondition fails.
	StopAtFailure bool
}

// BulkCommitResult is what a CommitBulk call applied and refused.
type BulkCommitResult struct {
	// Applied is the number of actions applied.
	Applied int
	// Failures are the actions whose precondition failed, in action
	// order, each with its Index and code (EntityAlreadyExists, or
	// TooManyProperties or EntityTooLarge for a merge whose result
	// exceeds Azure's limits); with StopAtFailure at most one.
	Failures []*Error
}

// Snapshotter is a Conn that can show the whole store as of one instant.
type Snapshotter interface {
	// Snapshot returns a read-only view of the store: every commit
	// acknowledged before the call is in it, each transaction entirely
	// or not at all, and nothing committed after the call returns. Its
	// tables answer reads as a Conn's do and refuse every write; the
	// caller closes it.
	Snapshot(ctx context.Context) (Snapshot, error)
}

// Snapshot is a read-only Conn over one instant of a store.
type Snapshot interface {
	Conn
	// Time is the instant shown, on the store's clock.
	Time() time.Time
}

// ServerPlanner is an Indexer whose service plans key-order reads itself,
// from the filter: QueryIndexPage answers a key-order read (Scan.Order
// false) exactly as QueryPage does. The library then lists the indexes
// for a key-order query only to explain it (Table.Plan), sparing the
// listing's round trip on every filtered query; reads in an index's own
// order (Query.Index) still list them.
type ServerPlanner interface {
	// PlansKeyOrderReads reports whether the service plans key-order
	// reads itself.
	PlansKeyOrderReads() bool
}
