// Package codec encodes the stored value of one entity: its Timestamp and
// its typed user properties. The encoding is binary and ordered by property
// name, so one property can be found and compared without decoding the
// others.
//
// Layout (all integers little-endian):
//
//	record   = version timestamp property*
//	version  = 0x01                               (1 byte)
//	timestamp= int64 ticks                        (8 bytes; see filter.Value)
//	property = nameLen name type payload
//	nameLen  = uvarint                            (1 byte below 128)
//	name     = nameLen bytes of UTF-8
//	type     = filter.Type                        (1 byte, 1..8)
//	payload  = String, Binary: uvarint length, then that many bytes
//	           Int32: 4 bytes; Int64, DateTime: 8 bytes (two's complement)
//	           Double: 8 bytes (IEEE 754 bits, so NaN and -0 survive)
//	           Boolean: 1 byte (0 or 1); Guid: 16 bytes
//
// Properties appear in strictly increasing byte order of their names, so a
// lookup stops as soon as it passes the name it wants. A record with no
// properties is 9 bytes long.
//
// Nothing in this package panics on corrupt input: Lookup reports
// ok=false, the other readers return an error prefixed "codec:". Encode
// trusts its caller (see its contract).
package codec

import (
	"encoding/binary"
	"math"

	"github.com/tablestore/tablestore/filter"
)

// Version is the first byte of every record this package writes.
const Version = 0x01

// headerLen is the length of the version byte and the timestamp.
const headerLen = 9

// Property is one named, typed user property.
type Property struct {
	Name  string
	Value filter.Value
}

// fixedLen gives the payload length of the fixed-width types; 0 marks the
// length-prefixed types and invalid type bytes (told apart by validType).
var fixedLen = [256]uint8{
	filter.TypeInt32:    4,
	filter.TypeInt64:    8,
	filter.TypeDouble:   8,
	filter.TypeBoolean:  1,
	filter.TypeDateTime: 8,
	filter.TypeGuid:     16,
}

func validType(t byte) bool { return t >= byte(filter.TypeString) && t <= byte(filter.TypeBinary) }

// Encode appends to dst the encoding of an entity value: its Timestamp
// (ticks, see filter.Value) and its properties, and returns the extended
// buffer.
//
// REQUIRES: props is sorted by Name and names are unique and valid UTF-8;
// every Value has a valid Type, a Guid has exactly 16 Bytes, and a Boolean
// holds 0 or 1 in Int. These are programming errors of the caller, so
// Encode panics on an invalid Type or Guid length instead of returning an
// error; the root package validates user input before calling it.
func Encode(dst []byte, timestamp int64, props []Property) []byte {
	dst = AppendHeader(dst, timestamp)
	for i := range props {
		dst = AppendProperty(dst, props[i].Name, props[i].Value)
	}
	return dst
}

// AppendHeader appends a record's header: the version byte and the
// Timestamp. A record is its header followed by AppendProperty's output
// for each property in increasing name order.
func AppendHeader(dst []byte, timestamp int64) []byte {
	dst = append(dst, Version)
	return binary.LittleEndian.AppendUint64(dst, uint64(timestamp))
}

// SetTimestamp overwrites the Timestamp in the header of rec, which must
// begin with AppendHeader's output.
func SetTimestamp(rec []byte, timestamp int64) {
	binary.LittleEndian.PutUint64(rec[1:headerLen], uint64(timestamp))
}

// AppendProperty appends one property's encoding. REQUIRES: those of
// Encode for one property.
func AppendProperty(dst []byte, name string, v filter.Value) []byte {
	return appendPayload(AppendName(dst, name, v.Type), v)
}

// AppendName appends the part of a property's encoding before its
// payload: the name and the type. A writer that knows a property's type
// in advance may keep this prefix and append it whole, then the payload
// with AppendBytesPayload, AppendIntPayload or AppendDoublePayload.
func AppendName(dst []byte, name string, t filter.Type) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	return append(dst, byte(t))
}

// AppendBytesPayload appends the payload of a String or Binary value.
func AppendBytesPayload[B string | []byte](dst []byte, b B) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// AppendIntPayload appends the payload of an Int32, Int64, DateTime or
// Boolean value held in x as filter.Value.Int holds it.
func AppendIntPayload(dst []byte, t filter.Type, x int64) []byte {
	switch t {
	case filter.TypeInt32:
		return binary.LittleEndian.AppendUint32(dst, uint32(int32(x)))
	case filter.TypeBoolean:
		if x != 0 {
			return append(dst, 1)
		}
		return append(dst, 0)
	}
	return binary.LittleEndian.AppendUint64(dst, uint64(x))
}

// AppendDoublePayload appends the payload of a Double value.
func AppendDoublePayload(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

// EncodedLen returns the number of bytes Encode appends for props, so a
// caller can size its buffer once.
func EncodedLen(props []Property) int {
	n := headerLen
	for i := range props {
		p := &props[i]
		n += uvarintLen(uint64(len(p.Name))) + len(p.Name) + 1
		switch p.Value.Type {
		case filter.TypeString, filter.TypeBinary:
			n += uvarintLen(uint64(len(p.Value.Bytes))) + len(p.Value.Bytes)
		default:
			n += int(fixedLen[p.Value.Type])
		}
	}
	return n
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

func appendPayload(dst []byte, v filter.Value) []byte {
	switch v.Type {
	case filter.TypeString, filter.TypeBinary:
		return AppendBytesPayload(dst, v.Bytes)
	case filter.TypeInt32, filter.TypeInt64, filter.TypeDateTime, filter.TypeBoolean:
		return AppendIntPayload(dst, v.Type, v.Int)
	case filter.TypeDouble:
		return AppendDoublePayload(dst, v.Float)
	case filter.TypeGuid:
		if len(v.Bytes) != 16 {
			panic("codec: guid value must be 16 bytes")
		}
		return append(dst, v.Bytes...)
	}
	panic("codec: invalid property type")
}
