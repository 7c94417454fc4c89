package driver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/tablestore/tablestore/edm"
)

// RecordVersion is the first byte of every record this version of the
// format describes (see Record).
const RecordVersion = 0x01

// headerLen is the length of a record's header: the version byte and the
// Timestamp.
const headerLen = 9

// Property is one named, typed user property of an entity.
type Property struct {
	Name  string
	Value edm.Value
}

// fixedLen gives the payload length of the fixed-width types; 0 marks the
// length-prefixed types and invalid type bytes (told apart by validType).
var fixedLen = [256]uint8{
	edm.TypeInt32:    4,
	edm.TypeInt64:    8,
	edm.TypeDouble:   8,
	edm.TypeBoolean:  1,
	edm.TypeDateTime: 8,
	edm.TypeGuid:     16,
}

func validType(t byte) bool { return t >= byte(edm.TypeString) && t <= byte(edm.TypeBinary) }

var errEncodeOrder = errors.New("tablestore: record properties must be sorted by name, each name once")

// Encode appends to dst the record of an entity (see Record): its
// Timestamp, in ticks (see edm.Value), and its user properties, and
// returns the extended buffer. It reads props only during the call.
//
// props must be sorted by Name in increasing byte order, each name once;
// names and String values must be valid UTF-8, every Value must have a
// valid Type and hold what edm.Value says for it: a Guid exactly 16 Bytes,
// a Boolean 0 or 1, an Int32 a value that fits in 32 bits. Otherwise Encode
// returns dst cut back to its original length and an error naming the
// first property at fault.
// So a record Encode returns passes Record.Check, and Record.Properties
// gives props back exactly.
//
// Encode checks nothing of Azure's limits (property count, sizes, names);
// package tablestore does that before a driver receives an entity.
func Encode(dst []byte, timestamp int64, props []Property) ([]byte, error) {
	n := len(dst)
	dst = AppendHeader(dst, timestamp)
	for i := range props {
		p := &props[i]
		if i > 0 && p.Name <= props[i-1].Name {
			return dst[:n], errEncodeOrder
		}
		if err := checkProperty(p); err != nil {
			return dst[:n], err
		}
		dst = appendPayload(AppendName(dst, p.Name, p.Value.Type), p.Value)
	}
	return dst, nil
}

// checkProperty reports why Encode cannot encode p, if it cannot.
func checkProperty(p *Property) error {
	v := &p.Value
	bad := ""
	switch {
	case !utf8.ValidString(p.Name):
		return fmt.Errorf("tablestore: record property name %q is not valid UTF-8", p.Name)
	case !validType(byte(v.Type)):
		return fmt.Errorf("tablestore: record property %q has invalid type %d", p.Name, v.Type)
	case v.Type == edm.TypeString && !utf8.Valid(v.Bytes):
		bad = "a string that is not valid UTF-8"
	case v.Type == edm.TypeGuid && len(v.Bytes) != 16:
		bad = fmt.Sprintf("%d bytes, not 16", len(v.Bytes))
	case v.Type == edm.TypeBoolean && v.Int != 0 && v.Int != 1:
		bad = fmt.Sprintf("%d, not 0 or 1", v.Int)
	case v.Type == edm.TypeInt32 && v.Int != int64(int32(v.Int)):
		bad = fmt.Sprintf("%d, out of range", v.Int)
	default:
		return nil
	}
	return fmt.Errorf("tablestore: record property %q of type %s holds %s", p.Name, v.Type, bad)
}

// AppendHeader appends a record's header, the version byte and the
// Timestamp in ticks, and returns the extended buffer. A record is its
// header followed by, for each property in increasing name order,
// AppendName's output and then the payload's (AppendBytesPayload,
// AppendIntPayload, AppendDoublePayload, or a Guid's 16 bytes).
//
// These appenders are for writers that build records property by property
// without a []Property, such as package tablestore's encoders; they check
// nothing, so the writer answers for what Encode would check. A record
// built wrongly is not a panic here but a decoding error later.
func AppendHeader(dst []byte, timestamp int64) []byte {
	dst = append(dst, RecordVersion)
	return binary.LittleEndian.AppendUint64(dst, uint64(timestamp))
}

// AppendName appends the part of a property's encoding before its
// payload: the name's length, the name and the type byte. A writer that
// knows a property's name and type in advance may keep this prefix and
// append it whole.
func AppendName(dst []byte, name string, t edm.Type) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	return append(dst, byte(t))
}

// AppendBytesPayload appends the payload of a String or Binary value: its
// length, then its bytes.
func AppendBytesPayload[B string | []byte](dst []byte, b B) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// AppendIntPayload appends the payload of an Int32, Int64, DateTime or
// Boolean value held in x as edm.Value.Int holds it: an Int32 is
// truncated to its 32 bits, a Boolean is written 1 for any x but 0.
func AppendIntPayload(dst []byte, t edm.Type, x int64) []byte {
	switch t {
	case edm.TypeInt32:
		return binary.LittleEndian.AppendUint32(dst, uint32(int32(x)))
	case edm.TypeBoolean:
		if x != 0 {
			return append(dst, 1)
		}
		return append(dst, 0)
	}
	return binary.LittleEndian.AppendUint64(dst, uint64(x))
}

// AppendDoublePayload appends the payload of a Double value: its IEEE 754
// bits, so NaN payloads and -0 survive.
func AppendDoublePayload(dst []byte, f float64) []byte {
	return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f))
}

// appendPayload appends v's payload. REQUIRES: checkProperty accepts v.
func appendPayload(dst []byte, v edm.Value) []byte {
	switch v.Type {
	case edm.TypeString, edm.TypeBinary:
		return AppendBytesPayload(dst, v.Bytes)
	case edm.TypeDouble:
		return AppendDoublePayload(dst, v.Float)
	case edm.TypeGuid:
		return append(dst, v.Bytes...)
	}
	return AppendIntPayload(dst, v.Type, v.Int)
}

// EncodedLen returns the number of bytes Encode appends for props, so a
// caller can size its buffer once. For props Encode refuses it is only
// an estimate.
func EncodedLen(props []Property) int {
	n := headerLen
	for i := range props {
		p := &props[i]
		n += uvarintLen(uint64(len(p.Name))) + len(p.Name) + 1
		switch p.Value.Type {
		case edm.TypeString, edm.TypeBinary:
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

// SetTimestamp overwrites the Timestamp in r's header with timestamp, in
// ticks, leaving the properties as they are: a driver that stores the
// records it receives (Action.Record) stamps its own copy this way.
// Errors: r is shorter than a header or has an unknown version; r is then
// unchanged.
func (r Record) SetTimestamp(timestamp int64) error {
	if err := r.checkHeader(); err != nil {
		return err
	}
	binary.LittleEndian.PutUint64(r[1:headerLen], uint64(timestamp))
	return nil
}
