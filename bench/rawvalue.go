package main

import (
	"encoding/binary"
	"errors"
	"math"
)

// The raw value format is the hand-built entity encoding the raw Pebble
// and SQLite comparators store, standing in for what an application
// would write without tablestore:
//
//	timestamp  int64 ticks, 8 bytes big-endian
//	count      1 byte, number of properties
//	count times:
//	  nameLen  1 byte
//	  name     nameLen bytes
//	  type     1 byte (rawString ... rawDateTime)
//	  payload  string, binary: uvarint length + bytes; int32: 4 bytes;
//	           int64, double, datetime: 8 bytes; bool: 1 byte;
//	           guid: 16 bytes (all fixed-width payloads big-endian)
//
// Like tablestore's own encoding it is typed and self-describing, so one
// property can be found without decoding the others.

const (
	rawString   = 1
	rawInt32    = 2
	rawInt64    = 3
	rawDouble   = 4
	rawBool     = 5
	rawDateTime = 6
	rawGUID     = 7 // not in the data set; the map decoder reads it
	rawBinary   = 8 // not in the data set; the map decoder reads it
)

// errRawCorrupt reports a raw value that does not follow the format.
var errRawCorrupt = errors.New("bench: corrupt raw value")

func appendRawName(b []byte, name string, typ byte) []byte {
	b = append(b, byte(len(name)))
	b = append(b, name...)
	return append(b, typ)
}

func appendRawString(b []byte, name, v string) []byte {
	b = appendRawName(b, name, rawString)
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

func appendRawInt32(b []byte, name string, v int32) []byte {
	return binary.BigEndian.AppendUint32(appendRawName(b, name, rawInt32), uint32(v))
}

func appendRawFixed64(b []byte, name string, typ byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(appendRawName(b, name, typ), v)
}

// encodeRaw appends the raw value of rec, written at timestamp ts
// (ticks), to b.
func encodeRaw(b []byte, rec *record, ts int64) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(ts))
	b = append(b, propertyCount)
	b = appendRawString(b, "Name", rec.Name)
	b = appendRawString(b, "Email", rec.Email)
	b = appendRawString(b, "City", rec.City)
	b = appendRawString(b, "Note", rec.Note)
	b = appendRawInt32(b, "Count", rec.Count)
	b = appendRawInt32(b, "Bucket", rec.Bucket)
	b = appendRawFixed64(b, "Score", rawInt64, uint64(rec.Score))
	b = appendRawFixed64(b, "Amount", rawDouble, math.Float64bits(rec.Amount))
	active := byte(0)
	if rec.Active {
		active = 1
	}
	b = append(appendRawName(b, "Active", rawBool), active)
	b = appendRawFixed64(b, "Created", rawDateTime, uint64(rec.Created))
	return b
}

// rawField is one decoded property header and its payload bytes.
type rawField struct {
	name    []byte
	typ     byte
	payload []byte
}

// rawReader walks the properties of a raw value in order.
type rawReader struct {
	rest []byte
	left int
}

// newRawReader checks the header of v and returns its timestamp and a
// reader positioned at the first property.
func newRawReader(v []byte) (int64, rawReader, error) {
	if len(v) < 9 {
		return 0, rawReader{}, errRawCorrupt
	}
	ts := int64(binary.BigEndian.Uint64(v))
	return ts, rawReader{rest: v[9:], left: int(v[8])}, nil
}

// next returns the next property; ok is false after the last one.
func (r *rawReader) next() (f rawField, ok bool, err error) {
	if r.left == 0 {
		if len(r.rest) != 0 {
			return f, false, errRawCorrupt
		}
		return f, false, nil
	}
	r.left--
	b := r.rest
	if len(b) < 1 || len(b) < 2+int(b[0]) {
		return f, false, errRawCorrupt
	}
	n := int(b[0])
	f.name = b[1 : 1+n]
	f.typ = b[1+n]
	b = b[2+n:]
	var size int
	switch f.typ {
	case rawString, rawBinary:
		l, k := binary.Uvarint(b)
		if k <= 0 || l > uint64(len(b)-k) {
			return f, false, errRawCorrupt
		}
		b = b[k:]
		size = int(l)
	case rawInt32:
		size = 4
	case rawInt64, rawDouble, rawDateTime:
		size = 8
	case rawBool:
		size = 1
	case rawGUID:
		size = 16
	default:
		return f, false, errRawCorrupt
	}
	if len(b) < size {
		return f, false, errRawCorrupt
	}
	f.payload = b[:size]
	r.rest = b[size:]
	return f, true, nil
}

// decodeRaw decodes a raw value into rec's properties (not its keys) and
// returns the timestamp and the number of properties. Unknown property
// names are skipped; a property whose type does not match the record
// field is an error.
func decodeRaw(v []byte, rec *record) (ts int64, n int, err error) {
	ts, r, err := newRawReader(v)
	if err != nil {
		return 0, 0, err
	}
	for {
		f, ok, err := r.next()
		if err != nil {
			return 0, 0, err
		}
		if !ok {
			return ts, n, nil
		}
		if err := setRecordField(rec, f); err != nil {
			return 0, 0, err
		}
		n++
	}
}

func setRecordField(rec *record, f rawField) error {
	switch string(f.name) {
	case "Name":
		return rawStringInto(&rec.Name, f)
	case "Email":
		return rawStringInto(&rec.Email, f)
	case "City":
		return rawStringInto(&rec.City, f)
	case "Note":
		return rawStringInto(&rec.Note, f)
	case "Count":
		return rawInt32Into(&rec.Count, f)
	case "Bucket":
		return rawInt32Into(&rec.Bucket, f)
	case "Score":
		if f.typ != rawInt64 {
			return errRawCorrupt
		}
		rec.Score = int64(binary.BigEndian.Uint64(f.payload))
	case "Amount":
		if f.typ != rawDouble {
			return errRawCorrupt
		}
		rec.Amount = math.Float64frombits(binary.BigEndian.Uint64(f.payload))
	case "Active":
		if f.typ != rawBool {
			return errRawCorrupt
		}
		rec.Active = f.payload[0] != 0
	case "Created":
		if f.typ != rawDateTime {
			return errRawCorrupt
		}
		rec.Created = int64(binary.BigEndian.Uint64(f.payload))
	}
	return nil
}

func rawStringInto(dst *string, f rawField) error {
	if f.typ != rawString {
		return errRawCorrupt
	}
	*dst = string(f.payload)
	return nil
}

func rawInt32Into(dst *int32, f rawField) error {
	if f.typ != rawInt32 {
		return errRawCorrupt
	}
	*dst = int32(binary.BigEndian.Uint32(f.payload))
	return nil
}

// rawInt32Property finds the Int32 property name in v without decoding
// the others. ok is false when v has no Int32 property of that name.
func rawInt32Property(v []byte, name string) (val int32, ok bool, err error) {
	_, r, err := newRawReader(v)
	if err != nil {
		return 0, false, err
	}
	for {
		f, more, err := r.next()
		if err != nil || !more {
			return 0, false, err
		}
		if f.typ == rawInt32 && string(f.name) == name {
			return int32(binary.BigEndian.Uint32(f.payload)), true, nil
		}
	}
}

// rawTimestamp returns the timestamp of a raw value.
func rawTimestamp(v []byte) (int64, error) {
	ts, _, err := newRawReader(v)
	return ts, err
}
