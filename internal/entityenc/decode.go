package entityenc

import (
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/arena"
)

// DecodeValue converts a stored value back to the Go type EncodeValue
// took it from (a Go integer comes back as the int32 or int64 of its EDM
// type). Bytes are copied; time.Time is in UTC. An invalid type gives
// nil.
func DecodeValue(v edm.Value) any {
	switch v.Type {
	case edm.TypeString:
		return string(v.Bytes)
	case edm.TypeBinary:
		return append(make([]byte, 0, len(v.Bytes)), v.Bytes...)
	}
	return scalar(v)
}

// scalar boxes a value of a type whose Go value holds no stored bytes:
// every type but String and Binary (a Guid is copied into its array).
func scalar(v edm.Value) any {
	switch v.Type {
	case edm.TypeInt32:
		return int32(v.Int)
	case edm.TypeInt64:
		return v.Int
	case edm.TypeDouble:
		return v.Float
	case edm.TypeBoolean:
		return v.Int != 0
	case edm.TypeDateTime:
		return edm.TimeFromTicks(v.Int)
	case edm.TypeGuid:
		var g edm.GUID
		copy(g[:], v.Bytes)
		return g
	}
	return nil
}

// Decoder turns the records of one query page, or of one Get, into
// property maps. It copies the text of a page into a few large chunks
// (package arena) and lets the entities of a page share the strings of
// the property names they have in common; values are boxed one by one,
// as Go boxes them. A Decoder is used by one goroutine; the maps it
// returns are the caller's.
type Decoder struct {
	// Select, when not nil, is the projection: only the properties it
	// names are decoded (names of absent properties and system names are
	// ignored).
	Select []string
	// Owned says that every record decoded is the caller's and never
	// written again, so strings may alias it instead of a copy (a Get's
	// record).
	Owned bool
	// Arena holds the copies of a page's text.
	Arena arena.Arena
	props []namedValue // one entity's properties, before its map is sized
	// names holds the previous entity's property names in record order:
	// rows of one page mostly share them, so the strings are shared too.
	names []string
}

// namedValue is one decoded property awaiting its map.
type namedValue struct {
	name string
	val  any
}

// Properties decodes rec's properties (those d selects) into a new map,
// never nil. The error is the codec's for a corrupt record.
func (d *Decoder) Properties(rec driver.Record) (map[string]any, error) {
	if d.Owned {
		// One entity: its properties wait on the stack.
		var local [16]namedValue
		m, _, err := d.build(local[:0], rec)
		return m, err
	}
	if d.props == nil {
		d.props = make([]namedValue, 0, 16)
	}
	m, props, err := d.build(d.props[:0], rec)
	d.props = props[:0] // keep what appending grew, for the next entity
	return m, err
}

// build collects rec's properties into props, then makes their map,
// clearing props, which it returns.
func (d *Decoder) build(props []namedValue, rec driver.Record) (map[string]any, []namedValue, error) {
	it := rec.Iter()
	for it.Next() {
		name := it.Name()
		if d.Select != nil && !Selected(d.Select, name) {
			continue
		}
		props = append(props, namedValue{name: d.name(len(props), name), val: d.value(it.Value())})
	}
	if err := it.Err(); err != nil {
		clear(props)
		return nil, props, err
	}
	m := make(map[string]any, len(props))
	for i := range props {
		m[props[i].name] = props[i].val
		props[i] = namedValue{}
	}
	return m, props, nil
}

// name returns the string of the i-th property name of an entity: the
// previous entity's when it is the same, else a new one remembered for
// the next entity.
func (d *Decoder) name(i int, b []byte) string {
	if d.Owned {
		return arena.String(b)
	}
	if i < len(d.names) && d.names[i] == string(b) {
		return d.names[i]
	}
	s := d.Arena.String(b)
	if i < len(d.names) {
		d.names[i] = s
	} else if i == len(d.names) {
		d.names = append(d.names, s)
	}
	return s
}

// Text returns b as a string: aliasing the record when it is owned, else
// a copy in the decoder's arena.
func (d *Decoder) Text(b []byte) string {
	if d.Owned {
		return arena.String(b)
	}
	return d.Arena.String(b)
}

// value boxes one property value, copying what the record holds.
func (d *Decoder) value(v edm.Value) any {
	switch v.Type {
	case edm.TypeString:
		return d.Text(v.Bytes)
	case edm.TypeBinary:
		return d.Arena.Bytes(v.Bytes)
	}
	return scalar(v)
}

// Selected reports whether the projection sel names name.
func Selected(sel []string, name []byte) bool {
	for _, s := range sel {
		if s == string(name) {
			return true
		}
	}
	return false
}
