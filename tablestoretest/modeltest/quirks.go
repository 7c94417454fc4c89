package modeltest

// Quirks name the known ways a remote service departs from Azure's
// behaviour, which the model follows. Each switch turns off exactly the
// checks that service would fail, and no other; the zero value checks
// everything. A remote driver's tests set the quirks of the service they
// run against and say why in the README's list of divergences.
type Quirks struct {
	// TableNameCase: the service matches table names case-sensitively
	// (Azure matches them case-insensitively). The workload then
	// addresses each table in the case it was created with, and never
	// creates two names that differ only in case.
	TableNameCase bool
	// NegativeZero: the service stores the Double -0.0 as 0. The
	// workload then writes no -0.0.
	NegativeZero bool
	// PropertyFilters: the service evaluates $filter comparisons on user
	// properties unlike Azure (Azurite: an Int64 literal against a Double
	// property fails with 500, a comparison across types answers false
	// for ne, Guid values do not order). The workload's filters then
	// compare only PartitionKey, RowKey and Timestamp.
	PropertyFilters bool
	// TimestampFilters: the service compares Timestamp in $filter at
	// millisecond precision (Azurite; Azure at 100 ns, as the model).
	// The workload's filters then leave Timestamp out.
	TimestampFilters bool
	// NoKeyspaceOps: the driver has none of the embedded engine's
	// keyspace operations (range deletes, reverse reads, segments) and
	// answers NotImplemented for them, as the remote Azure driver does.
	// The workload then uses none of them; its driver's own tests check
	// the NotImplemented answers.
	NoKeyspaceOps bool
	// NoReverseOrSegments: the driver deletes ranges of partitions but
	// cannot read in reverse or split a table into segments, and answers
	// NotImplemented for those (the remote driver against a tablestore
	// server whose capability document lacks them). The workload then
	// reads forward only and never splits.
	NoReverseOrSegments bool
	// NoIndexes: the service has no secondary indexes (Azure). The
	// workload then creates none and reads through none.
	NoIndexes bool
	// NoChangeFeed: the service has no change feed (Azure). The workload
	// then never turns one on nor reads one.
	NoChangeFeed bool
	// NoTTL: the service does not expire entities (Azure), or the test
	// cannot move its clock (Config.Advance). The workload then sets no
	// time-to-live and never moves the clock.
	NoTTL bool
}

// noScans reports whether reverse reads and segments are off.
func (q Quirks) noScans() bool { return q.NoKeyspaceOps || q.NoReverseOrSegments }
