package driver

import (
	"context"
	"errors"
	"time"
)

// ChangeFeeder is a Table that keeps a change feed: a record of every
// committed change of the table, in commit order, that readers can
// resume from a position and follow as commits happen. The embedded
// engine implements it; a remote driver does not (Azure has no change
// feed), and package tablestore answers NotImplemented.
//
// Positions are sequence numbers, strictly increasing across the whole
// store in commit order; a table's feed holds the records of its own
// commits, so its sequence numbers have gaps. A position p means "every
// record up to and including p has been read".
type ChangeFeeder interface {
	// EnableChangeFeed turns the table's feed on, or changes its
	// settings when it is on already (the records kept so far stay).
	// Every commit that starts after it returns is recorded. The caller
	// has validated s (Retention > 0, a known Images). Errors:
	// TableNotFound.
	EnableChangeFeed(ctx context.Context, s ChangeFeedSettings) error
	// DisableChangeFeed turns the feed off and deletes its records;
	// positions in it fail from then on. Disabling a feed that is off
	// is not an error. Errors: TableNotFound.
	DisableChangeFeed(ctx context.Context) error
	// ChangeFeed describes the table's feed. Errors: TableNotFound.
	ChangeFeed(ctx context.Context) (ChangeFeedState, error)
	// ReadChanges reads the records of the feed after req.After, in
	// position order, up to the feed's readable end as of the call, at
	// most req.Limit of them; emit gets each one (its memory is the
	// caller's). Errors: TableNotFound, ResourceNotFound when the feed
	// is off, errors matching ErrCursorStale when req.Table names
	// another table than the name resolves to, ErrCursorExpired when
	// req.After lies before the oldest retained record.
	ReadChanges(ctx context.Context, req ChangesRequest, emit func(ChangeRecord) error) (ChangesResult, error)
	// WaitChanges returns once the store's readable end has passed
	// after (a ChangesResult.End), or ctx ends (ctx's error), or the
	// store closes (ErrClosed). It is woken by commits, not by polling;
	// a commit of another table may wake it too.
	WaitChanges(ctx context.Context, after uint64) error
}

// ImageMode says what a change record holds besides the keys.
type ImageMode uint8

// The image modes.
const (
	ImagesKeysOnly ImageMode = iota // keys, ETag and Timestamp only
	ImagesNew                       // also the new entity of a write
)

// String returns the mode's name in the feed's wire form: "keysOnly" or
// "new"; "unknown" for any other value.
func (m ImageMode) String() string {
	if int(m) < len(imageModeNames) {
		return imageModeNames[m]
	}
	return "unknown"
}

var imageModeNames = [...]string{"keysOnly", "new"}

// ParseImageMode is the inverse of ImageMode's String: it reports false
// for a name no mode has ("unknown" included).
func ParseImageMode(s string) (ImageMode, bool) {
	for m, n := range imageModeNames {
		if n == s {
			return ImageMode(m), true
		}
	}
	return 0, false
}

// ChangeFeedSettings are a feed's settings.
type ChangeFeedSettings struct {
	// Retention is how long records are kept: older ones are deleted in
	// the background.
	Retention time.Duration
	Images    ImageMode
}

// ChangeFeedState describes a table's feed.
type ChangeFeedState struct {
	Enabled  bool
	Settings ChangeFeedSettings
	// Table is the identity of the table (a positive number), for
	// cursors: a table re-created under the same name has another one.
	Table uint64
	// Oldest is the position before the oldest record kept; End the
	// position of the readable end (every record up to it can be read).
	Oldest, End uint64
}

// ChangeOp is what a change did. The values of the entity writes are
// those of ActionType.
type ChangeOp uint8

// String returns the operation's name: "insert", "updateMerge",
// "updateReplace", "upsertMerge", "upsertReplace", "delete",
// "deleteRange", "dropTable", "expire"; "unknown" for any other value.
func (op ChangeOp) String() string {
	if int(op) < len(changeOpNames) && changeOpNames[op] != "" {
		return changeOpNames[op]
	}
	return "unknown"
}

var changeOpNames = [...]string{"", "insert", "updateMerge", "updateReplace", "upsertMerge", "upsertReplace", "delete", "deleteRange", "dropTable", "expire"}

// ParseChangeOp is the inverse of ChangeOp's String: it reports false
// for a name no operation has ("unknown" included).
func ParseChangeOp(s string) (ChangeOp, bool) {
	for op, n := range changeOpNames {
		if n != "" && n == s {
			return ChangeOp(op), true
		}
	}
	return 0, false
}

// The change operations beyond ActionType's.
const (
	// ChangeDeleteRange deleted the RowKeys [RowKey, ToRowKey) of one
	// partition; "" leaves a side unbounded.
	ChangeDeleteRange ChangeOp = 7
	// ChangeDropTable ends the feed: the table was deleted.
	ChangeDropTable ChangeOp = 8
	// ChangeExpire removed an entity that had expired (see TTLTable):
	// written by the sweeper's commit that removed it, or by the commit
	// of a write that replaced it before the sweeper came, just before
	// that write's own record.
	ChangeExpire ChangeOp = 9
)

// CommitKind says what kind of commit wrote a record.
type CommitKind uint8

// The commit kinds.
const (
	CommitSingle      CommitKind = iota // Commit (a write or a transaction)
	CommitBulk                          // CommitBulk
	CommitRangeDelete                   // DeleteRange
	CommitDropTable                     // DeleteTable
	CommitSweep                         // a removal of expired entities
)

// String returns the kind's name in the feed's wire form: "single",
// "bulk", "rangeDelete", "dropTable", "sweep"; "unknown" for any other
// value.
func (k CommitKind) String() string {
	if int(k) < len(commitKindNames) {
		return commitKindNames[k]
	}
	return "unknown"
}

var commitKindNames = [...]string{"single", "bulk", "rangeDelete", "dropTable", "sweep"}

// ParseCommitKind is the inverse of CommitKind's String: it reports false
// for a name no kind has ("unknown" included).
func ParseCommitKind(s string) (CommitKind, bool) {
	for k, n := range commitKindNames {
		if n == s {
			return CommitKind(k), true
		}
	}
	return 0, false
}

// ChangeRecord is one record of a feed.
type ChangeRecord struct {
	Seq uint64
	Op  ChangeOp
	// Kind, Index and Count identify the commit that wrote the record:
	// it wrote Count records, at positions Seq-Index to Seq-Index+Count-1
	// (the commit's identity is Seq-Index).
	Kind         CommitKind
	Index, Count int
	// Timestamp is the one the commit gave the record's entity, in ticks
	// (see edm): the commit's, unless it gave each action its own
	// (CommitOptions.DistinctTimestamps); the entity's ETag derives from
	// it.
	Timestamp                      int64
	PartitionKey, RowKey, ToRowKey string
	// Record is the new entity of a write with ImagesNew, as stored (its
	// Timestamp set); nil otherwise.
	Record Record
	// Removed and Expiry, for ChangeExpire only, are the removed
	// entity's Timestamp (its ETag derives from it) and the instant it
	// expired at, in ticks; Expiry is at or before Timestamp.
	Removed, Expiry int64
}

// ChangesRequest is one read of a feed.
type ChangesRequest struct {
	// Table is the table identity the read expects (ChangeFeedState.Table);
	// 0 reads whatever table the name resolves to.
	Table uint64
	// After is the position to read after; records at or before it are
	// skipped.
	After uint64
	// FromTime, when not zero, skips records whose Timestamp (ticks) is
	// below it, up to the first one that is not.
	FromTime int64
	// PartitionKey, when not "", skips records of other partitions (a
	// drop record is never skipped).
	PartitionKey string
	// Limit is the most records to emit, >= 1.
	Limit int
}

// ChangesResult ends one read.
type ChangesResult struct {
	// Table is the identity of the table read.
	Table uint64
	// Last is the position read up to: the last record examined, or the
	// readable end when the read reached it; the next read goes on after
	// it.
	Last uint64
	// End is the readable end the read saw; pass it to WaitChanges.
	End uint64
	// More says the read stopped at Limit before the readable end.
	More bool
	// Dropped says the read emitted the feed's final record.
	Dropped bool
}

// Errors of change feed reads, matched with errors.Is.
var (
	// ErrCursorExpired: the position lies before the oldest record the
	// feed keeps (deleted by retention, or before the feed was on).
	ErrCursorExpired = errors.New("tablestore: change cursor expired")
	// ErrCursorStale: the position belongs to another table than the one
	// the name now resolves to (the table was deleted, perhaps re-created),
	// or lies ahead of the feed.
	ErrCursorStale = errors.New("tablestore: change cursor does not belong to this feed")
)
