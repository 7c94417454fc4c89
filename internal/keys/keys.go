// Package keys encodes the store's sorted keyspace.
//
// A data key is
//
//	tableID (8 bytes, big-endian) | PartitionKey | 0x00 | RowKey
//
// Azure forbids bytes 0x00-0x1F in keys, so 0x00 separates the two parts
// without escaping and byte order equals (PartitionKey, RowKey) order. All
// ranges here are half-open: [start, end).
//
// Table ID 0 is reserved for metadata (the table catalog); data tables are
// numbered from 1. A table's secondary index entries follow its entities
// in its span (see index.go).
package keys

import (
	"encoding/binary"
	"errors"
	"math"
)

// MetaTableID is the reserved table ID under which metadata lives.
const MetaTableID uint64 = 0

// Sep separates PartitionKey from RowKey in a data key.
const Sep = 0x00

// ErrMalformed reports a key that is not a data key.
var ErrMalformed = errors.New("keys: malformed key")

// TablePrefix appends the 8-byte big-endian table ID to dst.
func TablePrefix(dst []byte, tableID uint64) []byte {
	return binary.BigEndian.AppendUint64(dst, tableID)
}

// TableSpan returns [start, end) covering every key of the table.
func TableSpan(tableID uint64) (start, end []byte) {
	start = TablePrefix(nil, tableID)
	if tableID == math.MaxUint64 {
		return start, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	return start, TablePrefix(nil, tableID+1)
}

// PartitionSpan returns [start, end) covering every row of one partition.
func PartitionSpan(tableID uint64, pk string) (start, end []byte) {
	start = append(TablePrefix(make([]byte, 0, 9+len(pk)), tableID), pk...)
	start = append(start, Sep)
	end = append([]byte(nil), start...)
	end[len(end)-1] = Sep + 1
	return start, end
}

// Entity appends the data key of (pk, rk) in the table to dst.
func Entity(dst []byte, tableID uint64, pk, rk string) []byte {
	dst = TablePrefix(dst, tableID)
	dst = append(dst, pk...)
	dst = append(dst, Sep)
	return append(dst, rk...)
}

// Split splits a data key into its table ID, PartitionKey and RowKey. The
// returned slices alias key.
func Split(key []byte) (tableID uint64, pk, rk []byte, err error) {
	if len(key) < 9 {
		return 0, nil, nil, ErrMalformed
	}
	tableID = binary.BigEndian.Uint64(key)
	rest := key[8:]
	for i, c := range rest {
		if c == Sep {
			return tableID, rest[:i], rest[i+1:], nil
		}
	}
	return 0, nil, nil, ErrMalformed
}

// Successor returns the smallest key greater than key: key | 0x00. Use it
// to turn an inclusive bound into an exclusive one.
func Successor(key []byte) []byte {
	out := make([]byte, len(key)+1)
	copy(out, key)
	return out
}
