// Package rootapi is what the root package offers its REST server beyond
// the public API: reads that write Azure's JSON straight from the stored
// records, and what the server keeps in the store for Azure's REST API
// alone (the service properties document, the tables' stored access
// policies). No library user needs them, so they are no exports of the root;
// being internal, this package is no part of the public API either. A
// lint rule (internal/lint) lets only the server, and the bench module's
// measures of the server's paths, import it.
//
// The root imports this package, so this package cannot name the root's
// types: the root records an API of its own types at init (Set), and the
// server takes it back by naming the same types (Get).
package rootapi

import (
	"context"

	"github.com/tablestore/tablestore/driver"
)

// API is the root's operations on its types DB (*tablestore.DB), Table
// (*tablestore.Table), Query, Page (*tablestore.Page), JSONOptions and
// Action (TransactionAction).
// The options are passed by value: through a function value the compiler
// cannot tell that a pointer to the caller's would not be kept, and would
// allocate them per call.
type API[DB, Table, Query, Page, JSONOptions, Action any] struct {
	// GetJSON reads one entity as Table.Get does and appends it to dst as
	// one JSON object, as AppendEntityJSON writes it at opts, straight
	// from the stored entity without building an Entity or a property
	// map; opts.Select is the projection (Get's Select). It returns the
	// extended buffer and the entity's ETag. Errors: those of Get and of
	// AppendEntityJSON's options. On error dst is returned at its length.
	GetJSON func(t Table, ctx context.Context, dst []byte, partitionKey, rowKey string, opts JSONOptions) ([]byte, string, error)

	// AppendPageJSON reads one page of q as Table.QueryPage does and
	// appends its entities to dst as JSON objects separated by commas (the
	// elements of a "value" array), each as AppendEntityJSON writes it at
	// opts, straight from the stored entities. opts.Select is ignored:
	// q.Select is the projection. It returns the extended buffer and the
	// page, whose Entities is nil and whose Continuation and PageCost are
	// QueryPage's.
	//
	// keep, when not nil, is called after each entity is appended, with
	// what this call has appended so far and the number of entities on
	// the page, this one included. When it returns false the entity is
	// taken back out of the buffer and the page ends before it: its
	// continuation resumes at that entity, and its PageCost is -1
	// (uncounted). A query through an index in index order (Query.Index
	// with an order the keys do not give) cannot end before an entity:
	// keep must then be nil.
	//
	// Errors: those of QueryPage and of AppendEntityJSON's options, and
	// InvalidInput for keep with an index-order read. On error dst's
	// contents past its length are undefined.
	AppendPageJSON func(t Table, ctx context.Context, dst []byte, q Query, opts JSONOptions, keep func(b []byte, n int) bool) ([]byte, Page, error)

	// ServiceProperties returns the service properties document last
	// stored by SetServiceProperties, or nil when there is none. The
	// store does not interpret it: the server keeps Azure's Table Service
	// Properties XML (CORS rules, logging and metrics settings) there, so
	// they survive restarts and travel with backups. Errors:
	// NotImplemented for a driver that cannot keep one, ErrClosed, ctx's
	// error.
	ServiceProperties func(db DB, ctx context.Context) ([]byte, error)

	// SetServiceProperties durably replaces the stored document (nil
	// removes it). Errors: InvalidInput for a document over 64 KiB,
	// NotImplemented as for ServiceProperties, ErrClosed, ctx's error,
	// and the store's faults (see DB.Health).
	SetServiceProperties func(db DB, ctx context.Context, doc []byte) error

	// AccessPolicies returns the table's stored access policies (Azure's
	// SignedIdentifiers, which a shared access signature names), in the
	// order they were set (Azure's Get Table ACL). Errors: TableNotFound;
	// NotImplemented for a driver that stores no policies.
	AccessPolicies func(t Table, ctx context.Context) ([]driver.AccessPolicy, error)

	// SetAccessPolicies replaces the table's stored access policies
	// (Azure's Set Table ACL); nil or empty removes them all. Times are
	// kept in UTC at 100 ns precision. Policies are deleted with the
	// table. Errors: InvalidInput for more than 5 policies (Azure's
	// limit), an empty or repeated ID, an ID over 64 characters, or a
	// Permission that is not letters of "raud" in that order;
	// TableNotFound; NotImplemented for a driver that stores no policies.
	SetAccessPolicies func(t Table, ctx context.Context, policies []driver.AccessPolicy) error

	// SubmitTransaction is Table.SubmitTransaction with opts:
	// opts.DistinctTimestamps gives each entity written its own Timestamp
	// and ETag, each action's greater than the one's before it (the
	// store's clock gives the first, the others follow in 100 ns steps
	// while the clock stands still), as Cosmos DB for Table versions a
	// batch's entities. Errors: SubmitTransaction's, and NotImplemented
	// for DistinctTimestamps on a driver without driver.OptionCommitter.
	SubmitTransaction func(t Table, ctx context.Context, actions []Action, opts driver.CommitOptions) error
}

// api is the API Set recorded.
var api any

// Set records the root's API. The root calls it once, from an init
// function, so it is set before any importer of the root runs.
func Set[DB, Table, Query, Page, JSONOptions, Action any](a *API[DB, Table, Query, Page, JSONOptions, Action]) {
	api = a
}

// Get returns the API Set recorded. Its type arguments must be Set's:
// other types panic, at the caller's package initialization when it
// keeps the result in a package variable, as the server does.
func Get[DB, Table, Query, Page, JSONOptions, Action any]() *API[DB, Table, Query, Page, JSONOptions, Action] {
	return api.(*API[DB, Table, Query, Page, JSONOptions, Action])
}
