package plan

import "github.com/tablestore/tablestore/driver"

// Plans speak the driver's key vocabulary, so a plan's ranges cross the
// driver boundary as they are (driver.QueryRequest.Ranges).
type (
	// Key is a position in a table's (PartitionKey, RowKey) order; see
	// driver.Key.
	Key = driver.Key
	// KeyRange is a half-open range of positions; see driver.KeyRange.
	KeyRange = driver.KeyRange
)

// Compare orders positions by PartitionKey, then RowKey, byte-wise: it is
// a.Compare(b).
func Compare(a, b Key) int { return a.Compare(b) }

// Successor is driver.Successor: s followed by a space.
func Successor(s string) string { return driver.Successor(s) }

// PartitionEnd is driver.PartitionEnd, the first position after partition
// pk.
func PartitionEnd(pk string) Key { return driver.PartitionEnd(pk) }

// rangeKind classifies a single range.
func rangeKind(r KeyRange) Kind {
	if _, ok := r.Point(); ok {
		return Point
	}
	pk, ok := r.Partition()
	if !ok {
		return TableScan
	}
	if r.Start.RowKey == "" && r.End == PartitionEnd(pk) {
		return PartitionScan
	}
	return Range
}
