// Package codec is the engine's and the root package's side of the record
// format, which package driver defines and documents (driver.Record): the
// ETag text made from a record's Timestamp (time.go), and short names for
// the driver's record API, so that code writing records on a path whose
// properties are valid by construction reads as it did.
//
// Nothing here defines bytes of the format; every name below is the
// driver's.
package codec

import (
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// The record types; see package driver.
type (
	Property = driver.Property
	Record   = driver.Record
	Iter     = driver.RecordIter
	View     = driver.RowView
)

// Encode is driver.Encode for callers whose properties are valid by
// construction: validated by package tablestore, or decoded from a record
// and merged. An error of driver.Encode is a bug of such a caller, so
// Encode panics with it instead of returning it.
func Encode(dst []byte, timestamp int64, props []Property) []byte {
	out, err := driver.Encode(dst, timestamp, props)
	if err != nil {
		panic(err)
	}
	return out
}

// EncodedLen is driver.EncodedLen.
func EncodedLen(props []Property) int { return driver.EncodedLen(props) }

// SetTimestamp is rec's driver.Record.SetTimestamp.
func SetTimestamp(rec []byte, timestamp int64) error {
	return driver.Record(rec).SetTimestamp(timestamp)
}

// AppendHeader is driver.AppendHeader.
func AppendHeader(dst []byte, timestamp int64) []byte { return driver.AppendHeader(dst, timestamp) }

// AppendName is driver.AppendName.
func AppendName(dst []byte, name string, t edm.Type) []byte { return driver.AppendName(dst, name, t) }

// AppendBytesPayload is driver.AppendBytesPayload.
func AppendBytesPayload[B string | []byte](dst []byte, b B) []byte {
	return driver.AppendBytesPayload(dst, b)
}

// AppendIntPayload is driver.AppendIntPayload.
func AppendIntPayload(dst []byte, t edm.Type, x int64) []byte {
	return driver.AppendIntPayload(dst, t, x)
}

// AppendDoublePayload is driver.AppendDoublePayload.
func AppendDoublePayload(dst []byte, f float64) []byte { return driver.AppendDoublePayload(dst, f) }
