package keys

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/tablestore/tablestore/edm"
	"math"

	"github.com/tablestore/tablestore/filter"
)

// Secondary index entries share the table's key span, after every entity:
//
//	tableID | 0xFF | indexID (4 bytes, big-endian) | suffix
//
// Entity keys continue the table ID with a PartitionKey, which is valid
// UTF-8 and so never holds the byte 0xFF, or with the 0x00 separator of
// an empty PartitionKey; so every index key sorts after every entity key
// of its table, and TableSpan still covers a table with its indexes (a
// table's drop stays one range deletion). EntitySpan is the part holding
// entities only: readers of entities bound their iterators by it.
//
// The suffix of an entry of a table-wide index is
//
//	value tuple | PartitionKey | 0x00 | RowKey
//
// and that of a Partitioned index (ordered within each partition)
//
//	PartitionKey | 0x00 | value tuple | RowKey
//
// Index ID 0 is reserved for the table's index metadata (pending sweeps,
// see package engine); indexes are numbered from 1.
//
// A value tuple is the concatenation of one encoded value per indexed
// property, in the index's order. Each value starts with a tag byte and is
// self-delimiting and order-preserving, so that byte order of tuples is
// the order of their values compared property by property, and within one
// type the order of package filter's comparisons:
//
//	absent   0x08                       (the entity lacks the property)
//	String   0x11 escaped bytes 0x00 0x01
//	Int32    0x12 4 bytes, big-endian, sign bit flipped
//	Int64    0x13 8 bytes, big-endian, sign bit flipped
//	Double   0x14 8 bytes: NaN 0; a value >= 0 (-0 as +0) its bits with
//	              the sign bit flipped; a negative value its bits inverted
//	Boolean  0x15 0x00 or 0x01
//	DateTime 0x16 ticks as Int64
//	Guid     0x17 the 16 bytes
//	Binary   0x18 escaped bytes 0x00 0x01
//
// Escaped bytes write each 0x00 as 0x00 0xFF, so 0x00 0x01 ends the value
// and a prefix sorts first. The tag comes first, so values of different
// types are different and never interleave: an Int32 5, an Int64 5 and a
// Double 5 are three values, as Azure's typed comparison has them, and an
// absent property sorts before every value. No byte that may follow a
// complete value in a key is 0xFF (a tag, a PartitionKey byte, the 0x00
// separator), so value|0xFF sorts after every key that starts with value
// and before every key starting with a greater value: ValueEnd.

// IndexTag is the byte after a table ID that starts the table's index
// keyspace.
const IndexTag = 0xFF

// IndexPrefixLen is the length of an index's key prefix.
const IndexPrefixLen = 8 + 1 + 4

// Tags of encoded values.
const (
	TagAbsent = 0x08
	tagBase   = 0x10 // + edm.Type
)

// escape bytes of String and Binary values.
const (
	escByte = 0x00
	escZero = 0xFF // 0x00 0xFF is a 0x00 inside the value
	escEnd  = 0x01 // 0x00 0x01 ends the value
)

// ErrMalformedIndex reports an index key or value that does not decode.
var ErrMalformedIndex = errors.New("keys: malformed index key")

// EntitySpan returns [start, end) covering every entity of the table and
// none of its index entries.
func EntitySpan(tableID uint64) (start, end []byte) {
	start = TablePrefix(nil, tableID)
	return start, EntitiesEnd(nil, tableID)
}

// EntitiesEnd appends to dst the first key after every entity of the
// table: the start of its index keyspace.
func EntitiesEnd(dst []byte, tableID uint64) []byte {
	return append(TablePrefix(dst, tableID), IndexTag)
}

// IndexPrefix appends the key prefix of index indexID of the table.
func IndexPrefix(dst []byte, tableID uint64, indexID uint32) []byte {
	dst = append(TablePrefix(dst, tableID), IndexTag)
	return binary.BigEndian.AppendUint32(dst, indexID)
}

// IndexSpan returns [start, end) covering every entry of one index.
func IndexSpan(tableID uint64, indexID uint32) (start, end []byte) {
	start = IndexPrefix(nil, tableID, indexID)
	if indexID == math.MaxUint32 {
		return start, append(append(TablePrefix(nil, tableID), IndexTag), 0xff, 0xff, 0xff, 0xff, 0xff)
	}
	return start, IndexPrefix(nil, tableID, indexID+1)
}

// AppendIndexEntry appends the key of an index entry: the index's prefix,
// then the suffix of a table-wide index (tuple, pk, 0x00, rk) or of a
// Partitioned one (pk, 0x00, tuple, rk).
func AppendIndexEntry(dst []byte, tableID uint64, indexID uint32, partitioned bool, tuple []byte, pk, rk string) []byte {
	dst = IndexPrefix(dst, tableID, indexID)
	return AppendIndexSuffix(dst, partitioned, tuple, pk, rk)
}

// AppendIndexSuffix appends the suffix of an index entry (see
// AppendIndexEntry).
func AppendIndexSuffix(dst []byte, partitioned bool, tuple []byte, pk, rk string) []byte {
	if partitioned {
		dst = append(dst, pk...)
		dst = append(dst, Sep)
		dst = append(dst, tuple...)
		return append(dst, rk...)
	}
	dst = append(dst, tuple...)
	dst = append(dst, pk...)
	dst = append(dst, Sep)
	return append(dst, rk...)
}

// IndexEntryLen returns the length of AppendIndexEntry's output.
func IndexEntryLen(tupleLen int, pk, rk string) int {
	return IndexPrefixLen + tupleLen + len(pk) + 1 + len(rk)
}

// SplitIndexSuffix splits the suffix of an entry of an index of n
// properties into its tuple, PartitionKey and RowKey; they alias suffix.
func SplitIndexSuffix(suffix []byte, n int, partitioned bool) (tuple, pk, rk []byte, err error) {
	if partitioned {
		i := bytes.IndexByte(suffix, Sep)
		if i < 0 {
			return nil, nil, nil, ErrMalformedIndex
		}
		pk, rest := suffix[:i], suffix[i+1:]
		tl, ok := TupleLen(rest, n)
		if !ok {
			return nil, nil, nil, ErrMalformedIndex
		}
		return rest[:tl], pk, rest[tl:], nil
	}
	tl, ok := TupleLen(suffix, n)
	if !ok {
		return nil, nil, nil, ErrMalformedIndex
	}
	tuple, rest := suffix[:tl], suffix[tl:]
	i := bytes.IndexByte(rest, Sep)
	if i < 0 {
		return nil, nil, nil, ErrMalformedIndex
	}
	return tuple, rest[:i], rest[i+1:], nil
}

// AppendValue appends the index encoding of v (see the package comment).
// Equal values (as package filter compares values of one type) encode
// equally: -0 as +0, every NaN alike, every nonzero Boolean as true.
// v must be a valid value: a known Type, a Guid of 16 bytes.
func AppendValue(dst []byte, v edm.Value) []byte {
	dst = append(dst, tagBase+byte(v.Type))
	switch v.Type {
	case edm.TypeString, edm.TypeBinary:
		return appendEscaped(dst, v.Bytes)
	case edm.TypeInt32:
		return binary.BigEndian.AppendUint32(dst, uint32(int32(v.Int))^1<<31)
	case edm.TypeInt64, edm.TypeDateTime:
		return binary.BigEndian.AppendUint64(dst, uint64(v.Int)^1<<63)
	case edm.TypeDouble:
		return binary.BigEndian.AppendUint64(dst, doubleBits(v.Float))
	case edm.TypeBoolean:
		if v.Int != 0 {
			return append(dst, 1)
		}
		return append(dst, 0)
	case edm.TypeGuid:
		return append(dst, v.Bytes...)
	}
	return dst
}

// AppendAbsent appends the encoding of an absent property.
func AppendAbsent(dst []byte) []byte { return append(dst, TagAbsent) }

// ValueEnd appends to enc, one encoded value or a tuple prefix ending
// with a complete value, the key that follows every key starting with
// it.
func ValueEnd(enc []byte) []byte {
	out := make([]byte, len(enc)+1)
	copy(out, enc)
	out[len(enc)] = 0xff
	return out
}

// TypeStart returns the first encoding of type t's values; TypeEnd the
// first encoding after them.
func TypeStart(t edm.Type) []byte { return []byte{tagBase + byte(t)} }

// TypeEnd: see TypeStart.
func TypeEnd(t edm.Type) []byte { return []byte{tagBase + byte(t) + 1} }

// doubleBits maps a double to 8 bytes whose order is package filter's
// total order of doubles: NaN first, -0 equal to +0.
func doubleBits(f float64) uint64 {
	switch {
	case f != f:
		return 0
	case f == 0:
		return 1 << 63
	}
	b := math.Float64bits(f)
	if b>>63 == 0 {
		return b ^ 1<<63
	}
	return ^b
}

func appendEscaped(dst, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, escByte)
		if i < 0 {
			break
		}
		dst = append(dst, b[:i+1]...)
		dst = append(dst, escZero)
		b = b[i+1:]
	}
	dst = append(dst, b...)
	return append(dst, escByte, escEnd)
}

// fixedValueLen gives the payload length of the fixed-width types.
var fixedValueLen = [...]int{
	edm.TypeInt32:    4,
	edm.TypeInt64:    8,
	edm.TypeDouble:   8,
	edm.TypeBoolean:  1,
	edm.TypeDateTime: 8,
	edm.TypeGuid:     16,
}

// ValueLen returns the length of the encoded value at the start of b.
func ValueLen(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	if b[0] == TagAbsent {
		return 1, true
	}
	t := edm.Type(b[0] - tagBase)
	if b[0] < tagBase || t < edm.TypeString || t > edm.TypeBinary {
		return 0, false
	}
	if t == edm.TypeString || t == edm.TypeBinary {
		for i := 1; i+1 < len(b); i++ {
			if b[i] != escByte {
				continue
			}
			switch b[i+1] {
			case escEnd:
				return i + 2, true
			case escZero:
				i++
			default:
				return 0, false
			}
		}
		return 0, false
	}
	n := 1 + fixedValueLen[t]
	if len(b) < n || (t == edm.TypeBoolean && b[1] > 1) {
		return 0, false
	}
	return n, true
}

// TupleLen returns the length of the n encoded values at the start of b.
func TupleLen(b []byte, n int) (int, bool) {
	off := 0
	for range n {
		l, ok := ValueLen(b[off:])
		if !ok {
			return 0, false
		}
		off += l
	}
	return off, true
}

// DecodeValue decodes the encoded value at the start of b and returns it
// with its length; absent reports the absent tag. The value's Bytes are
// new memory.
func DecodeValue(b []byte) (v edm.Value, absent bool, n int, err error) {
	n, ok := ValueLen(b)
	if !ok {
		return edm.Value{}, false, 0, ErrMalformedIndex
	}
	if b[0] == TagAbsent {
		return edm.Value{}, true, 1, nil
	}
	v.Type = edm.Type(b[0] - tagBase)
	p := b[1:n]
	switch v.Type {
	case edm.TypeString, edm.TypeBinary:
		out := make([]byte, 0, len(p)-2)
		for i := 0; i < len(p)-2; i++ {
			out = append(out, p[i])
			if p[i] == escByte {
				i++
			}
		}
		v.Bytes = out
	case edm.TypeInt32:
		v.Int = int64(int32(binary.BigEndian.Uint32(p) ^ 1<<31))
	case edm.TypeInt64, edm.TypeDateTime:
		v.Int = int64(binary.BigEndian.Uint64(p) ^ 1<<63)
	case edm.TypeDouble:
		u := binary.BigEndian.Uint64(p)
		switch {
		case u == 0:
			v.Float = math.NaN()
		case u>>63 == 1:
			v.Float = math.Float64frombits(u ^ 1<<63)
		default:
			v.Float = math.Float64frombits(^u)
		}
	case edm.TypeBoolean:
		v.Int = int64(p[0])
	case edm.TypeGuid:
		v.Bytes = bytes.Clone(p)
	}
	return v, false, n, nil
}

// FormatTuple prints an encoded tuple of the named properties as
// "P1 = literal, P2 absent", or "invalid" when it does not decode.
func FormatTuple(tuple []byte, props []string) string {
	var b []byte
	for i, p := range props {
		v, absent, n, err := DecodeValue(tuple)
		if err != nil {
			return "invalid"
		}
		tuple = tuple[n:]
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, p...)
		if absent {
			b = append(b, " absent"...)
			continue
		}
		b = append(b, " = "...)
		b = append(b, filter.FormatLiteral(v)...)
	}
	return string(b)
}
