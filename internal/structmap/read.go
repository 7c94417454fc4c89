package structmap

import (
	"reflect"
	"time"
	"unsafe"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/arena"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// Row is one stored entity to decode: its keys, its record and its ETag
// ("" to derive it from the record's Timestamp).
type Row struct {
	PartitionKey, RowKey string
	Record               driver.Record
	ETag                 string
}

// Decoder fills structs from the records of one query page, or of one
// Get. A Decoder is used by one goroutine.
type Decoder struct {
	// Select, when not nil, is the projection: only the properties it
	// names fill their fields.
	Select []string
	// Owned says that every record decoded is the caller's and never
	// written again, so strings may alias it instead of a copy.
	Owned bool
	// Arena holds the copies of a page's text and binary values.
	Arena arena.Arena
	// Rows, when not 0, is how many rows the decoder expects to fill
	// (a page's Top): the first row's size times Rows sizes the arena's
	// first chunk, so a long page does not grow it by doubling.
	Rows int
}

// Into fills the struct r (a zero value of its type) from row. It
// reports false, the struct then partly filled, when the row cannot be
// decoded this way: a corrupt record, or a property that does not fit
// its field. The caller then decodes the row the reflective way, whose
// result and errors are the contract.
func (d *Decoder) Into(r Ref, row *Row) bool {
	p, base := r.Plan, r.Base
	it, ok := d.start(p, base, row)
	if !ok {
		return false
	}
	for j := 0; it.Next(); {
		// Records of one type mostly hold its fields in order: the
		// expected field is tested here, seek does the rest.
		f, name := (*field)(nil), it.Name()
		if j < len(p.props) && d.Select == nil && p.props[j].name == string(name) {
			f, j = p.props[j], j+1
		} else if f = d.seek(p, &j, name); f == nil {
			continue
		}
		if v := it.Value(); !d.setFast(f, base, v) {
			if setField(f, f.value(base), entityenc.DecodeValue(v)) != nil {
				return false
			}
		}
	}
	return it.Err() == nil
}

// IntoFast is Into for fields that need no reflection. It reports false,
// leaving the struct partly filled, at the first field that does. It
// never hands base to package reflect, so a struct on the caller's stack
// stays there.
func (d *Decoder) IntoFast(p *Plan, base unsafe.Pointer, row *Row) bool {
	it, ok := d.start(p, base, row)
	if !ok {
		return false
	}
	for j := 0; it.Next(); {
		f, name := (*field)(nil), it.Name() // as in Into
		if j < len(p.props) && d.Select == nil && p.props[j].name == string(name) {
			f, j = p.props[j], j+1
		} else if f = d.seek(p, &j, name); f == nil {
			continue
		}
		if !d.setFast(f, base, it.Value()) {
			return false
		}
	}
	return it.Err() == nil
}

// start fills the system fields at base and returns an iterator over
// the record's properties; false for a record whose header is corrupt.
func (d *Decoder) start(p *Plan, base unsafe.Pointer, row *Row) (driver.RecordIter, bool) {
	ticks, err := row.Record.Timestamp()
	if err != nil {
		return driver.RecordIter{}, false
	}
	if d.Rows > 0 {
		d.Arena.Expect(d.Rows * len(row.Record))
		d.Rows = 0
	}
	ts := edm.TimeFromTicks(ticks)
	for _, f := range p.system {
		switch f.system {
		case systemPartitionKey:
			*(*string)(f.at(base)) = row.PartitionKey
		case systemRowKey:
			*(*string)(f.at(base)) = row.RowKey
		case systemTimestamp:
			*(*time.Time)(f.at(base)) = ts
		case systemETag:
			etag := row.ETag
			if etag == "" {
				etag = driver.FormatETag(ts)
			}
			*(*string)(f.at(base)) = etag
		}
	}
	return row.Record.Iter(), true
}

// seek returns the field of p that property name fills, or nil when no
// field maps it or the selection leaves it out. *j is the first field not
// yet matched (0 for a record's first property) and is moved past the
// fields ordered before name: names are unique on both sides, so a field
// once matched is passed.
func (d *Decoder) seek(p *Plan, j *int, name []byte) *field {
	props, k := p.props, *j
	for k < len(props) && props[k].name < string(name) {
		k++
	}
	if k == len(props) || props[k].name != string(name) {
		*j = k
		return nil
	}
	*j = k + 1
	if d.Select != nil && !entityenc.Selected(d.Select, name) {
		return nil
	}
	return props[k]
}

// intIs64 reports whether int is 64 bits wide.
const intIs64 = unsafe.Sizeof(int(0)) == 8

// setFast stores v in field f when the field's type holds v's type
// without conversion (string kinds, int32, int64, int, float64, bool
// kinds, time.Time, GUID, byte slices), and reports whether it did.
// Everything else goes through setField.
func (d *Decoder) setFast(f *field, base unsafe.Pointer, v edm.Value) bool {
	if f.pointer {
		return false
	}
	p := f.at(base)
	switch v.Type {
	case edm.TypeString:
		if f.base != reflect.String {
			return false
		}
		if d.Owned {
			*(*string)(p) = arena.String(v.Bytes)
		} else {
			*(*string)(p) = d.Arena.String(v.Bytes)
		}
	case edm.TypeInt32, edm.TypeInt64:
		switch {
		case f.base == reflect.Int64 || f.base == reflect.Int && intIs64:
			*(*int64)(p) = v.Int
		case f.base == reflect.Int32 && v.Type == edm.TypeInt32:
			*(*int32)(p) = int32(v.Int)
		default:
			return false
		}
	case edm.TypeDouble:
		if f.base != reflect.Float64 {
			return false
		}
		*(*float64)(p) = v.Float
	case edm.TypeBoolean:
		if f.base != reflect.Bool {
			return false
		}
		*(*bool)(p) = v.Int != 0
	case edm.TypeDateTime:
		if f.typ != timeType {
			return false
		}
		*(*time.Time)(p) = edm.TimeFromTicks(v.Int)
	case edm.TypeGuid:
		if f.typ != guidType {
			return false
		}
		copy((*edm.GUID)(p)[:], v.Bytes)
	case edm.TypeBinary:
		if f.kind != kindBinary {
			return false
		}
		*(*[]byte)(p) = d.Arena.Bytes(v.Bytes)
	default:
		return false
	}
	return true
}
