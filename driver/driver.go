// Package driver defines the interface a storage engine implements to sit
// behind package tablestore, in the spirit of database/sql/driver. Its
// types are its own: a driver imports this package (and edm and filter,
// which it uses), never package tablestore's internals, so a driver can
// live in any module.
//
// The root package keeps the user's API and every check: table names,
// keys, property names, types and sizes, Azure's limits, $filter, $select
// and $top, the shape of a transaction (1 to 100 actions, one
// PartitionKey, no repeated RowKey, 4 MiB), struct and JSON conversion,
// query planning and iteration, the continuation-token format, Explain,
// and the mapping of errors to *tablestore.Error. A driver only ever
// receives validated work, and reports failures as *Error values carrying
// Azure's codes (edm.Code), which the root package turns into its typed
// errors.
//
// # Entities and queries
//
// Entities cross the boundary as a Record: the Timestamp and the user
// properties in one documented binary layout (see Record for the bytes,
// their order and versioning). Encode writes a record from []Property;
// Record's Timestamp, Lookup, Iter, Properties and Select read one, and
// never panic on corrupt bytes. A driver may store records as they are
// (the embedded engine does, stamping each with Record.SetTimestamp) or
// convert them to its service's form (the remote Azure driver sends JSON
// and encodes what it reads back).
//
// Queries arrive planned: QueryRequest.Ranges are half-open ranges of
// (PartitionKey, RowKey) positions (KeyRange) and QueryRequest.Residual
// the filter to evaluate on each entity in them, with filter.Eval over a
// RowView. A driver over a service with its own query language may send
// QueryRequest.Filter instead and ignore the ranges.
//
// # Writing a driver
//
// A driver implements Conn and Table and is opened with
// tablestore.OpenDriver(conn, opts); the doc comment of every method is
// its contract. In short:
//
//   - Every method is safe for concurrent use and honours ctx; after
//     Conn.Close every operation fails with ErrClosed.
//   - Failures Azure describes carry Azure's code in an *Error (Index names
//     a transaction's failing action); stored data that does not decode is
//     reported as a *CorruptError or wraps ErrCorrupt. Any other error
//     reaches the user wrapped in a *tablestore.Error with code
//     InternalError (OperationTimedOut for ctx's errors), still matching
//     errors.Is and errors.As.
//   - Table.Commit is all or nothing, and every entity it writes gets a new
//     Timestamp, greater than the one it replaces, and a new ETag: an HTTP
//     entity-tag (RFC 9110), since users send it back in If-Match. The
//     embedded engine makes it of the Timestamp, in Azure's form
//     W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'".
//   - Table.QueryPage emits entities in (PartitionKey, RowKey) order from
//     one consistent view, at most Top of them, and says where the next
//     page starts; the position is opaque to the caller, so a driver may
//     put its service's continuation there.
//   - Optional interfaces (RangeDeleter, ReverseQuerier, Segmenter,
//     Checker and others) add what a store can do beyond Azure; package
//     tablestore answers NotImplemented for a driver without them.
//
// The model test harness, package tablestoretest/modeltest, checks a
// driver against the reference model: modeltest.Run(t, open, cfg) with an
// Opener that returns tablestore.OpenDriver over a fresh instance of the
// driver runs a seeded random workload (tables, writes, transactions,
// queries with paging) and compares every result and error with the
// model's; a failing run prints its seed and saves a replayable log. The
// drivers in this repository pass it: internal/engine, the embedded Pebble
// engine, and the remote driver over Azure Table Storage in module
// github.com/tablestore/tablestore/azure, which uses only public packages.
package driver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// Conn is an open store. It is safe for concurrent use by many goroutines.
// Every method but Table and Close fails with ErrClosed once Close has
// been called, and with ctx's error when ctx is done before it starts.
type Conn interface {
	// CreateTable creates a table; name has passed Azure's table-name
	// rules. Names are unique case-insensitively and keep the case they
	// were created with. Errors: TableAlreadyExists.
	CreateTable(ctx context.Context, name string) error

	// DeleteTable deletes a table and all its entities atomically; name
	// matches case-insensitively. Errors: ResourceNotFound when no such
	// table exists.
	DeleteTable(ctx context.Context, name string) error

	// ListTables returns one page of table names, as created, sorted
	// case-insensitively (ties by exact name).
	ListTables(ctx context.Context, req ListTablesRequest) (ListTablesResult, error)

	// Table returns a handle on the named table. It does not check that
	// the table exists and does no I/O; the handle addresses the table by
	// name, so after DeleteTable and CreateTable of the same name it
	// addresses the new table. Handles are safe for concurrent use.
	Table(name string) Table

	// Close releases the store. It waits for operations in flight to end;
	// later operations fail with ErrClosed, and so does a second Close.
	Close() error
}

// Table is a handle on one table. It is safe for concurrent use. Every
// method fails with ErrClosed after Conn.Close, with ctx's error when ctx
// ends, and with TableNotFound when the table does not exist.
type Table interface {
	// Exists returns nil when the table exists, else TableNotFound.
	Exists(ctx context.Context) error

	// Get reads one entity. The returned Row, Record included, is the
	// caller's: the driver keeps no reference to it, so the caller may
	// alias the record's bytes. sel is the validated $select (nil: all); a
	// driver may ignore it and return every property, since the caller
	// projects while decoding. Errors: ResourceNotFound when the entity is
	// absent, ErrCorrupt (wrapped) for stored bytes that do not decode.
	Get(ctx context.Context, pk, rk string, sel []string) (Row, error)

	// Commit applies actions atomically: every action takes effect, in
	// order, or none does. The caller guarantees 1 to 100 actions, one
	// PartitionKey, distinct RowKeys, validated and sorted properties (in
	// Properties or Record) and the If-Match rules of each action's type.
	// Commits on one partition serialize; on different partitions they
	// may run in parallel. Every entity written gets the result's
	// Timestamp and ETag.
	//
	// A failing precondition is an *Error whose Index is the failing
	// action's: EntityAlreadyExists, ResourceNotFound,
	// UpdateConditionNotSatisfied, and for a merge whose result exceeds
	// Azure's limits TooManyProperties or EntityTooLarge. TableNotFound has
	// Index 0. Nothing is written on any error.
	Commit(ctx context.Context, actions []Action) (CommitResult, error)

	// QueryPage reads one page of a query: it calls emit, in
	// (PartitionKey, RowKey) order, for each matching entity, at most
	// q.Top times, all from one consistent view of the table. emit's Row
	// is valid only during the call; emit's error ends the page and is
	// returned as is. When entities may remain, the result names the
	// position the next page starts at (More is true); the page may end
	// early, even with no entity emitted, when a driver's own budget (scan
	// count, time) runs out. Errors: ErrCorrupt (wrapped).
	QueryPage(ctx context.Context, q *QueryRequest, emit func(Row) error) (PageResult, error)
}

// ListTablesRequest selects one page of a table listing.
type ListTablesRequest struct {
	// Prefix keeps only names starting with it, case-insensitively.
	Prefix string
	// After starts the listing at the first name not less than it,
	// case-insensitively ("" starts at the beginning); it is a table name
	// (a previous result's Next).
	After string
	// Top is the page size, 1 to 1000.
	Top int
}

// ListTablesResult is one page of a table listing.
type ListTablesResult struct {
	Names []string // as created
	Next  string   // the first name of the next page; "" when complete
}

// ActionType is the kind of one action of a write or an entity group
// transaction. The names follow the Azure SDKs' transaction action types.
type ActionType uint8

// The action types.
const (
	ActionInsert        ActionType = iota + 1 // Azure's Add
	ActionUpdateMerge                         // update (merge) with IfMatch
	ActionUpdateReplace                       // update (replace) with IfMatch
	ActionUpsertMerge                         // Azure's InsertMerge
	ActionUpsertReplace                       // Azure's InsertReplace
	ActionDelete                              // delete with IfMatch
)

// String returns the value of the matching aztables TransactionType
// ("add", "updatemerge", "updatereplace", "insertmerge", "insertreplace",
// "delete"), so aztables.TransactionType(a.String()) names the same
// action; "ActionType(N)" for any other value.
func (a ActionType) String() string {
	if a >= ActionInsert && a <= ActionDelete {
		return actionTypeNames[a-ActionInsert]
	}
	return fmt.Sprintf("ActionType(%d)", uint8(a))
}

var actionTypeNames = [...]string{"add", "updatemerge", "updatereplace", "insertmerge", "insertreplace", "delete"}

// Action is one validated write.
type Action struct {
	Type         ActionType
	PartitionKey string
	RowKey       string
	// Properties are the user properties, validated, sorted by name with
	// unique names; nil for ActionDelete and when Record is set. Values
	// may alias the caller's memory until Commit returns; the driver must
	// not modify them.
	Properties []Property
	// Record, when not nil, holds the user properties already encoded: a
	// Record (as Encode writes it, validated as Properties would be)
	// whose header Timestamp is zero. The driver stores a copy with its
	// Timestamp set (Record.SetTimestamp) or, if it wants Properties,
	// decodes them (Record.Properties). It aliases the caller's memory
	// until Commit returns; the driver must not modify it. nil for
	// ActionDelete. A driver must accept either form.
	Record []byte
	// IfMatch is the ETag an update or delete requires ("*" matches any
	// existing entity); "" for inserts and upserts.
	IfMatch string
}

// CommitResult is what a successful Commit gave every written entity.
type CommitResult struct {
	Timestamp time.Time // UTC, at 100 ns precision
	ETag      string
	// Timestamps and ETags, when not nil, hold each action's own version,
	// in order (zero for a delete), for a service that gives the entities
	// of one transaction different versions (Azurite does). Timestamp and
	// ETag are then the first written entity's.
	Timestamps []time.Time
	ETags      []string
}

// QueryRequest is one validated, planned query page. The caller reuses
// one request for every page of a query, changing only the resume point,
// and does not modify it during a call; the driver must not modify it
// either, nor keep it after the call.
//
// A driver answers it one of two ways: by reading Ranges and evaluating
// Residual on each entity in them (the embedded engine), or by handing
// Filter (or FilterText) to a service that plans for itself (the remote
// Azure driver). Both give the entities matching Filter.
type QueryRequest struct {
	// Filter is the checked $filter (nil: every entity) and FilterText its
	// text as the user wrote it.
	Filter     filter.Node
	FilterText string
	// Ranges are the key ranges holding every entity that matches Filter,
	// half-open over (PartitionKey, RowKey) positions (see KeyRange),
	// sorted, non-overlapping and non-empty; they may hold entities that do
	// not match. No range means that no entity can match (Filter
	// contradicts itself on the keys). The whole table is one range,
	// KeyRange{Unbounded: true}. At most 100 ranges. On a resumed page the
	// ranges are still the whole query's; RangesFrom (RangesUpto in
	// reverse) gives what is left from the resume point.
	Ranges []KeyRange
	// Within, when not nil, is the segment (Table.Segments) the query is
	// restricted to: Ranges already lie inside it, but Filter does not
	// say so, so a driver that hands Filter to a service must restrict
	// the service's read to Within itself.
	Within *KeyRange
	// Residual is the part of Filter that Ranges do not guarantee, to
	// evaluate on each entity in them (filter.Eval over a RowView); nil
	// means every entity in Ranges matches. It shares nodes with Filter.
	Residual filter.Node
	// Select is the validated $select (nil: all). A driver may return
	// more properties; the caller projects.
	Select []string
	// Top is the most entities to emit, 1 to 1000.
	Top int
	// NextPartitionKey and NextRowKey resume a query where a previous
	// page's result pointed; both "" start at the beginning. They are
	// opaque to the caller: the embedded engine puts the next entity's
	// keys there, a remote driver whatever its service's continuation
	// holds.
	NextPartitionKey, NextRowKey string
	// Table, when not "", is the identity of the table the query must
	// read (a previous page's PageResult.Table): if the name now resolves
	// to another table, or to none, QueryPage fails with TableNotFound.
	// "" reads whatever table the name resolves to.
	Table string
	// PreviousExamined is a hint: how many stored entities the query's
	// previous page examined (PageResult.Examined), when the caller read
	// one; 0 when unknown. A driver may plan the page's reads by it, but
	// what the page returns never depends on it. The embedded engine
	// reads a page in parallel from its first entity, instead of after a
	// short serial start, when the previous page examined more than that
	// start.
	PreviousExamined int
	// NoETag says the caller reads no ETags: a driver may leave Row.ETag
	// empty and save formatting one per row.
	NoETag bool
	// Final says the caller reads no page after this one (an iterator
	// whose limit this page's Top reaches): a driver may end a page that
	// has emitted Top rows without looking for more, with More false.
	Final bool
}

// PageResult ends one page of a query.
type PageResult struct {
	// More reports whether the query may have more matches; then the next
	// page resumes at (NextPartitionKey, NextRowKey).
	More                         bool
	NextPartitionKey, NextRowKey string
	// Table is the identity of the table read, at most 64 bytes (the
	// embedded engine's table ID in decimal); "" when the driver keeps
	// none. The caller passes it back in QueryRequest.Table.
	Table string
	// Counted says the driver counted what the page read: Examined is
	// the number of stored entities it looked at (matching or not,
	// expired ones included) and IndexEntries the number of secondary
	// index entries it read to find them. A driver that cannot tell (a
	// remote service) leaves all three zero.
	Counted                bool
	Examined, IndexEntries int
}

// Row is one stored entity as a driver passes it to the caller.
type Row struct {
	PartitionKey, RowKey string
	// Record holds the Timestamp and the properties (see Record). In a
	// QueryPage callback it may alias driver memory valid only during the
	// call; from Get it is the caller's.
	Record Record
	// ETag is the entity's version. Rows with the same Timestamp may share
	// one string.
	ETag string
}

// Error is a failure with one of Azure's error codes, such as
// "EntityAlreadyExists". Index is the failing action's index for Commit,
// else 0. Message is lowercase prose without a prefix.
type Error struct {
	Code    edm.Code
	Index   int
	Message string
}

func (e *Error) Error() string { return "tablestore: " + string(e.Code) + ": " + e.Message }

// Sentinel errors shared by every driver; package tablestore exports them
// as its own ErrClosed, ErrCorrupt and ErrNoSpace.
var (
	// ErrClosed is returned by every operation on a closed Conn.
	ErrClosed = errors.New("tablestore: closed")
	// ErrCorrupt, wrapped, reports stored bytes that do not decode.
	ErrCorrupt = errors.New("tablestore: corrupt data")
	// ErrNoSpace, wrapped, is the error of a write refused because the
	// store's disk is full (or the store cannot keep up with writes);
	// reads go on, and writes resume by themselves once space returns.
	ErrNoSpace = errors.New("tablestore: no space left on the store's disk")
	// ErrBackupStopped, wrapped, is the error of a write refused
	// because the store's continuous backup could not write its log;
	// the store refuses writes until it is reopened.
	ErrBackupStopped = errors.New("tablestore: continuous backup has stopped")
	// ErrAppliedBackupStopped, wrapped, is the error of the write whose
	// backup record could not be written: the write is applied (do not
	// retry it), and the backup has stopped. It matches
	// ErrBackupStopped too.
	ErrAppliedBackupStopped error = &narrowed{"tablestore: the write is applied, but continuous backup has stopped", ErrBackupStopped}
)

// narrowed is a sentinel that matches a broader one too.
type narrowed struct {
	msg   string
	broad error
}

func (e *narrowed) Error() string { return e.msg }
func (e *narrowed) Unwrap() error { return e.broad }

// AccessPolicy is one stored access policy of a table (Azure's
// SignedIdentifier). Zero times and an empty Permission mean the field is
// not set.
type AccessPolicy struct {
	ID         string
	Start      time.Time // UTC
	Expiry     time.Time // UTC
	Permission string    // letters of "raud", in that order
}

// PolicyTable is implemented by a Table that stores access policies
// (Azure's Get and Set Table ACL). It is optional: package tablestore
// answers NotImplemented for a driver whose tables lack it.
type PolicyTable interface {
	// AccessPolicies returns the table's stored access policies in the
	// order they were set; none is an empty result. Errors: TableNotFound.
	AccessPolicies(ctx context.Context) ([]AccessPolicy, error)

	// SetAccessPolicies replaces the table's policies (nil removes them).
	// The caller has validated them: at most five, distinct IDs of 1 to 64
	// characters, permissions from "raud". Policies are deleted with the
	// table. Errors: TableNotFound.
	SetAccessPolicies(ctx context.Context, policies []AccessPolicy) error
}
