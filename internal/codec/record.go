package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tablestore/tablestore/filter"
)

// Record is one encoded entity value, as Encode writes it. Values that a
// Record's methods return in filter.Value.Bytes alias the Record unless the
// method says it copies. No method panics on corrupt bytes.
type Record []byte

var (
	errTruncated = errors.New("codec: truncated record")
	errOrder     = errors.New("codec: property names out of order or repeated")
)

// Timestamp returns the entity Timestamp in ticks (see filter.Value).
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
	if r[0] != Version {
		return fmt.Errorf("codec: unknown record version %d", r[0])
	}
	return nil
}

// Lookup finds one user property without decoding the others. It reports
// ok=false if the property is absent or the record is corrupt where it
// looked. v.Bytes aliases r. Lookup allocates nothing.
func (r Record) Lookup(name string) (v filter.Value, ok bool) {
	if len(r) < headerLen || r[0] != Version {
		return filter.Value{}, false
	}
	off := headerLen
	for off < len(r) {
		// Name length: one byte in the common case.
		n := int(r[off])
		off++
		if n >= 0x80 {
			u, k := binary.Uvarint(r[off-1:])
			if k <= 0 || u > uint64(len(r)) {
				return filter.Value{}, false
			}
			n, off = int(u), off-1+k
		}
		if n > len(r)-off {
			return filter.Value{}, false
		}
		pname := r[off : off+n]
		off += n
		if off >= len(r) {
			return filter.Value{}, false
		}
		t := r[off]
		off++
		plen := int(fixedLen[t])
		start := off
		if plen == 0 {
			if t != byte(filter.TypeString) && t != byte(filter.TypeBinary) {
				return filter.Value{}, false
			}
			u, k := binary.Uvarint(r[off:])
			if k <= 0 || u > uint64(len(r)) {
				return filter.Value{}, false
			}
			plen, start = int(u), off+k
		}
		if plen > len(r)-start {
			return filter.Value{}, false
		}
		if string(pname) == name {
			return payloadValue(filter.Type(t), r[start:start+plen:start+plen])
		}
		if string(pname) > name {
			return filter.Value{}, false
		}
		off = start + plen
	}
	return filter.Value{}, false
}

// payloadValue interprets a payload of the right length for type t.
func payloadValue(t filter.Type, p []byte) (filter.Value, bool) {
	var v filter.Value
	if !setPayload(&v, t, p) {
		return filter.Value{}, false
	}
	return v, true
}

// Iter walks the properties of a record in name order, checking the
// structure as it goes (lengths, types, boolean bytes, strictly increasing
// names). Name and Value alias the record. Use:
//
//	it := rec.Iter()
//	for it.Next() { ... it.Name(), it.Value() ... }
//	if err := it.Err(); err != nil { ... }
type Iter struct {
	r    Record
	off  int
	err  error
	name []byte
	val  filter.Value
}

// Iter returns an iterator positioned before the first property. A bad
// header makes the first Next return false and Err report it.
func (r Record) Iter() Iter {
	if err := r.checkHeader(); err != nil {
		return Iter{err: err}
	}
	return Iter{r: r, off: headerLen}
}

// Next advances to the next property and reports whether there is one.
// It returns false at the end of the record and on corruption (see Err).
func (it *Iter) Next() bool {
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
		return it.fail(fmt.Errorf("codec: property %q has invalid type byte %d", name, t))
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
	if !setPayload(&it.val, filter.Type(t), r[off:off+plen:off+plen]) {
		return it.fail(fmt.Errorf("codec: property %q has an invalid %s payload", name, filter.Type(t)))
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
func setPayload(v *filter.Value, t filter.Type, p []byte) bool {
	*v = filter.Value{Type: t}
	switch t {
	case filter.TypeString, filter.TypeBinary, filter.TypeGuid:
		v.Bytes = p
	case filter.TypeInt32:
		v.Int = int64(int32(binary.LittleEndian.Uint32(p)))
	case filter.TypeInt64, filter.TypeDateTime:
		v.Int = int64(binary.LittleEndian.Uint64(p))
	case filter.TypeDouble:
		v.Float = math.Float64frombits(binary.LittleEndian.Uint64(p))
	case filter.TypeBoolean:
		v.Int = int64(p[0])
		return p[0] <= 1
	default:
		return false
	}
	return true
}

func (it *Iter) fail(err error) bool {
	it.err = err
	it.name, it.val = nil, filter.Value{}
	return false
}

// Name returns the current property's name. It aliases the record.
func (it *Iter) Name() []byte { return it.name }

// Value returns the current property's value. Bytes alias the record.
func (it *Iter) Value() filter.Value { return it.val }

// Err returns the corruption that stopped the iteration, or nil.
func (it *Iter) Err() error { return it.err }

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
			return fmt.Errorf("codec: property name %q is not valid UTF-8", it.Name())
		}
		if v := it.Value(); v.Type == filter.TypeString && !utf8.Valid(v.Bytes) {
			return fmt.Errorf("codec: property %q holds a string that is not valid UTF-8", it.Name())
		}
	}
	return it.Err()
}

// View is one stored entity seen through filter.Properties: PartitionKey
// and RowKey (String) come from the key, Timestamp (DateTime) and the user
// properties from the record. Values alias the View's slices.
type View struct {
	PartitionKey, RowKey []byte
	Record               Record
}

var _ filter.Properties = (*View)(nil)

// Lookup implements filter.Properties. It allocates nothing; ok=false
// means absent or corrupt.
func (v *View) Lookup(name string) (filter.Value, bool) {
	switch name {
	case "PartitionKey":
		return filter.Value{Type: filter.TypeString, Bytes: v.PartitionKey}, true
	case "RowKey":
		return filter.Value{Type: filter.TypeString, Bytes: v.RowKey}, true
	case "Timestamp":
		ts, err := v.Record.Timestamp()
		if err != nil {
			return filter.Value{}, false
		}
		return filter.Value{Type: filter.TypeDateTime, Int: ts}, true
	}
	return v.Record.Lookup(name)
}
