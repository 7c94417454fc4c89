package driver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// Record is the stored value of one entity, the form entities take across
// this interface: its Timestamp and its typed user properties, binary and
// ordered by property name, so that one property can be found and
// compared without decoding the others. The keys are not part of it.
// The embedded engine stores records as they are; a remote driver converts
// them to and from its service's form.
//
// Layout (all integers little-endian):
//
//	record    = version timestamp property*
//	version   = 0x01                              (1 byte, RecordVersion)
//	timestamp = int64 ticks                       (8 bytes; see edm.Value)
//	property  = nameLen name type payload
//	nameLen   = uvarint                           (1 byte below 128)
//	name      = nameLen bytes of UTF-8
//	type      = edm.Type                          (1 byte, 1..8)
//	payload   = String, Binary: uvarint length, then that many bytes
//	            Int32: 4 bytes; Int64, DateTime: 8 bytes (two's complement;
//	            DateTime in ticks)
//	            Double: 8 bytes (IEEE 754 bits, so NaN and -0 survive)
//	            Boolean: 1 byte (0 or 1); Guid: 16 bytes (edm.GUID order)
//
// uvarint is encoding/binary's unsigned varint; writers use its shortest
// form, readers accept any. Properties appear in strictly increasing byte order of their names
// (not Azure's UTF-16 order), so a lookup stops as soon as it passes the
// name it wants; a record with no properties is 9 bytes long. PartitionKey,
// RowKey and Timestamp are never among the properties.
//
// Versioning: the first byte names the layout. Readers refuse any version
// they do not know with an error; a change of layout will take a new
// version byte, and readers will go on reading version 0x01, which stores
// keep forever, so a driver may store records as opaque bytes.
//
// Encode and the Append functions write records; Timestamp, Lookup, Iter,
// Properties, Select and Check read them. No reader panics on corrupt
// bytes: Lookup reports ok=false, the others return an error (a plain
// error describing the damage; a driver reporting stored data wraps it in
// a *CorruptError). Values a reader returns in edm.Value.Bytes alias the
// Record unless the method says it copies, and so stay valid only as long
// as the Record's memory does.
type Record []byte

var (
	errTruncated = errors.New("tablestore: truncated record")
	errOrder     = errors.New("tablestore: record property names out of order or repeated")
)

// Timestamp returns the entity's Timestamp in ticks (see edm.Value).
// Errors: the record is shorter than its header or has an unknown version.
func (r Record) Timestamp() (int64, error) {
	if err := r.checkHeader(); err != nil {
		return 0, err
	}
	return int64(binary.LittleEndian.Uint64(r[1:headerLen])), nil
}

func (r Record) checkHeader() error {
	if len(r) < headerLen {
		return errTruncated
	}
	if r[0] != RecordVersion {
		return fmt.Errorf("tablestore: unknown record version %d", r[0])
	}
	return nil
}

// Lookup finds one user property without decoding the others. It reports
// ok=false if the property is absent or the record is corrupt where it
// looked. v.Bytes aliases r. Lookup allocates nothing.
func (r Record) Lookup(name string) (v edm.Value, ok bool) {
	if len(r) < headerLen || r[0] != RecordVersion {
		return edm.Value{}, false
	}
	off := headerLen
	for off < len(r) {
		// Name length: one byte in the common case.
		n := int(r[off])
		off++
		if n >= 0x80 {
			u, k := binary.Uvarint(r[off-1:])
			if k <= 0 || u > uint64(len(r)) {
				return edm.Value{}, false
			}
			n, off = int(u), off-1+k
		}
		if n > len(r)-off {
			return edm.Value{}, false
		}
		pname := r[off : off+n]
		off += n
		if off >= len(r) {
			return edm.Value{}, false
		}
		t := r[off]
		off++
		plen := int(fixedLen[t])
		start := off
		if plen == 0 {
			if t != byte(edm.TypeString) && t != byte(edm.TypeBinary) {
				return edm.Value{}, false
			}
			u, k := binary.Uvarint(r[off:])
			if k <= 0 || u > uint64(len(r)) {
				return edm.Value{}, false
			}
			plen, start = int(u), off+k
		}
		if plen > len(r)-start {
			return edm.Value{}, false
		}
		if string(pname) == name {
			return payloadValue(edm.Type(t), r[start:start+plen:start+plen])
		}
		if string(pname) > name {
			return edm.Value{}, false
		}
		off = start + plen
	}
	return edm.Value{}, false
}

// payloadValue interprets a payload of the right length for type t.
func payloadValue(t edm.Type, p []byte) (edm.Value, bool) {
	var v edm.Value
	if !setPayload(&v, t, p) {
		return edm.Value{}, false
	}
	return v, true
}

// RecordIter walks the properties of a record in name order, checking the
// structure as it goes (lengths, types, boolean bytes, strictly increasing
// names; not UTF-8, which Check adds). Name and Value alias the record,
// not the iterator: they stay valid after Next, as long as the record's
// memory does. An iterator allocates nothing. Use:
//
//	it := rec.Iter()
//	for it.Next() { ... it.Name(), it.Value() ... }
//	if err := it.Err(); err != nil { ... }
type RecordIter struct {
	r    Record
	off  int
	err  error
	name []byte
	val  edm.Value
}

// Iter returns an iterator positioned before the first property. A bad
// header makes the first Next return false and Err report it.
func (r Record) Iter() RecordIter {
	if err := r.checkHeader(); err != nil {
		return RecordIter{err: err}
	}
	return RecordIter{r: r, off: headerLen}
}

// Next advances to the next property and reports whether there is one.
// It returns false at the end of the record and on corruption (see Err).
func (it *RecordIter) Next() bool {
	r, off := it.r, it.off
	if it.err != nil || off >= len(r) {
		return false
	}
	// Lengths below 128, one byte, are read inline.
	n, k := uint64(r[off]), 1
	if n >= 0x80 {
		n, k = binary.Uvarint(r[off:])
	}
	if k <= 0 || n > uint64(len(r)-off-k) {
		return it.fail(errTruncated)
	}
	off += k
	name := r[off : off+int(n) : off+int(n)]
	off += int(n)
	if it.name != nil && !nameAfter(name, it.name) {
		return it.fail(errOrder)
	}
	if off >= len(r) {
		return it.fail(errTruncated)
	}
	t := r[off]
	off++
	if !validType(t) {
		return it.fail(fmt.Errorf("tablestore: record property %q has invalid type byte %d", name, t))
	}
	plen := int(fixedLen[t])
	if plen == 0 {
		n, k := uint64(0), 0
		if off < len(r) && r[off] < 0x80 {
			n, k = uint64(r[off]), 1
		} else {
			n, k = binary.Uvarint(r[off:])
		}
		if k <= 0 || n > uint64(len(r)-off-k) {
			return it.fail(errTruncated)
		}
		plen, off = int(n), off+k
	}
	if plen > len(r)-off {
		return it.fail(errTruncated)
	}
	if !setPayload(&it.val, edm.Type(t), r[off:off+plen:off+plen]) {
		return it.fail(fmt.Errorf("tablestore: record property %q has an invalid %s payload", name, edm.Type(t)))
	}
	it.name, it.off = name, off+plen
	return true
}

// nameAfter reports whether name sorts strictly after prev, deciding on
// the first bytes when they differ, as between most neighbouring names.
func nameAfter(name, prev []byte) bool {
	if len(name) > 0 && len(prev) > 0 && name[0] != prev[0] {
		return name[0] > prev[0]
	}
	return string(name) > string(prev)
}

// setPayload is payloadValue storing into *v, which it overwrites (with
// something unspecified when it reports false).
func setPayload(v *edm.Value, t edm.Type, p []byte) bool {
	*v = edm.Value{Type: t}
	switch t {
	case edm.TypeString, edm.TypeBinary, edm.TypeGuid:
		v.Bytes = p
	case edm.TypeInt32:
		v.Int = int64(int32(binary.LittleEndian.Uint32(p)))
	case edm.TypeInt64, edm.TypeDateTime:
		v.Int = int64(binary.LittleEndian.Uint64(p))
	case edm.TypeDouble:
		v.Float = math.Float64frombits(binary.LittleEndian.Uint64(p))
	case edm.TypeBoolean:
		v.Int = int64(p[0])
		return p[0] <= 1
	default:
		return false
	}
	return true
}

func (it *RecordIter) fail(err error) bool {
	it.err = err
	it.name, it.val = nil, edm.Value{}
	return false
}

// Name returns the current property's name, nil before the first Next
// and after the last. It aliases the record.
func (it *RecordIter) Name() []byte { return it.name }

// Value returns the current property's value. Bytes alias the record.
func (it *RecordIter) Value() edm.Value { return it.val }

// Err returns the corruption that stopped the iteration, or nil.
func (it *RecordIter) Err() error { return it.err }

// Properties decodes all user properties, sorted by name. Names and Bytes
// are copies, safe to keep after r changes. Errors: a corrupt record.
func (r Record) Properties() ([]Property, error) {
	// First pass: validate and size everything, so the result takes three
	// allocations whatever the number of properties (a third pass hands
	// out the names as substrings of one string).
	count, nameBytes, valueBytes := 0, 0, 0
	it := r.Iter()
	for it.Next() {
		count++
		nameBytes += len(it.Name())
		valueBytes += len(it.Value().Bytes)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	if count == 0 {
		return nil, nil
	}
	props := make([]Property, 0, count)
	var names strings.Builder // all names, one allocation
	names.Grow(nameBytes)
	values := make([]byte, 0, valueBytes) // non-nil even when empty
	it = r.Iter()
	for it.Next() {
		names.Write(it.Name())
		v := it.Value()
		if v.Bytes != nil {
			start := len(values)
			values = append(values, v.Bytes...)
			v.Bytes = values[start:len(values):len(values)]
		}
		props = append(props, Property{Value: v})
	}
	all, off := names.String(), 0
	it = r.Iter()
	for i := 0; it.Next(); i++ {
		n := len(it.Name())
		props[i].Name = all[off : off+n]
		off += n
	}
	return props, nil
}

// Select decodes only the named properties, in record (name) order,
// skipping the rest; names absent from the record are skipped, repeated
// names are returned once. Names and Bytes are copies. Errors: a corrupt
// record (the whole record is checked).
func (r Record) Select(names []string) ([]Property, error) {
	var props []Property
	it := r.Iter()
	for it.Next() {
		name := it.Name()
		if !contains(names, name) {
			continue
		}
		v := it.Value()
		if v.Bytes != nil {
			v.Bytes = append([]byte(nil), v.Bytes...)
			if v.Bytes == nil {
				v.Bytes = []byte{}
			}
		}
		props = append(props, Property{Name: string(name), Value: v})
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	return props, nil
}

func contains(names []string, name []byte) bool {
	for _, n := range names {
		if n == string(name) {
			return true
		}
	}
	return false
}

// Check validates the whole record: header, structure, strictly increasing
// names, valid UTF-8 in names and String values, Guid length and boolean
// bytes. Use it for fuzzing and for data of doubtful origin.
func (r Record) Check() error {
	it := r.Iter()
	for it.Next() {
		if !utf8.Valid(it.Name()) {
			return fmt.Errorf("tablestore: record property name %q is not valid UTF-8", it.Name())
		}
		if v := it.Value(); v.Type == edm.TypeString && !utf8.Valid(v.Bytes) {
			return fmt.Errorf("tablestore: record property %q holds a string that is not valid UTF-8", it.Name())
		}
	}
	return it.Err()
}

// RowView is one stored entity seen through filter.Properties, so that a
// driver can evaluate a query's residual filter on it with filter.Eval
// without decoding or allocating: PartitionKey and RowKey (String) come
// from the key, Timestamp (DateTime) and the user properties from the
// record. Values alias the RowView's slices; one RowView may be reused for
// every entity a page examines.
type RowView struct {
	PartitionKey, RowKey []byte
	Record               Record
}

var _ filter.Properties = (*RowView)(nil)

// Lookup implements filter.Properties. It allocates nothing; ok=false
// means absent or corrupt.
func (v *RowView) Lookup(name string) (edm.Value, bool) {
	switch name {
	case "PartitionKey":
		return edm.Value{Type: edm.TypeString, Bytes: v.PartitionKey}, true
	case "RowKey":
		return edm.Value{Type: edm.TypeString, Bytes: v.RowKey}, true
	case "Timestamp":
		ts, err := v.Record.Timestamp()
		if err != nil {
			return edm.Value{}, false
		}
		return edm.Value{Type: edm.TypeDateTime, Int: ts}, true
	}
	return v.Record.Lookup(name)
}
