package tablestore

import (
	"fmt"
	"time"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
)

// decodeValue converts a codec value back to the Go type encodeValue took
// it from. Bytes are copied; time.Time is in UTC. An invalid type gives
// nil.
func decodeValue(v filter.Value) any {
	switch v.Type {
	case filter.TypeString:
		return string(v.Bytes)
	case filter.TypeInt32:
		return int32(v.Int)
	case filter.TypeInt64:
		return v.Int
	case filter.TypeDouble:
		return v.Float
	case filter.TypeBoolean:
		return v.Int != 0
	case filter.TypeDateTime:
		return edm.TimeFromTicks(v.Int)
	case filter.TypeGuid:
		var g GUID
		copy(g[:], v.Bytes)
		return g
	case filter.TypeBinary:
		return append(make([]byte, 0, len(v.Bytes)), v.Bytes...)
	}
	return nil
}

// decodeEntity builds an Entity from a stored key and record. A nil sel
// decodes every property; otherwise only the properties named in sel
// (a projection; names of absent properties and system names in sel are
// ignored). PartitionKey, RowKey, Timestamp and ETag are always set, and
// Properties is never nil. A corrupt record gives an error matching
// ErrCorrupt (no Azure code describes corruption) naming the entity.
func decodeEntity(pk, rk string, rec codec.Record, sel []string) (*Entity, error) {
	return decodeRow(driver.Row{PartitionKey: pk, RowKey: rk, Record: rec}, sel, false)
}

// decodeRow is decodeEntity for a driver's row; the ETag is the row's, or
// derived from the Timestamp when the row has none. owned says the record
// is the caller's and never written again, so the entity's strings may
// alias it instead of a copy.
func decodeRow(r driver.Row, sel []string, owned bool) (*Entity, error) {
	var d decoder
	d.sel, d.owned = sel, owned
	if owned {
		// One entity (a Get): its slabs come in one allocation.
		one := new(oneEntity)
		d.ents = one.ents[:0]
		d.boxes = boxes{strs: one.strs[:0], words: one.words[:0], times: one.times[:0]}
	}
	return d.entity(r)
}

// oneEntity holds the memory one typical decoded entity needs; values
// beyond it go to slabs of their own.
type oneEntity struct {
	ents  [1]Entity
	strs  [8]string
	words [8]uint64
	times [2]time.Time
}

// decoder turns the rows of one page (or one Get) into entities. It hands
// out memory from slabs it allocates as it goes, so a page costs a few
// allocations per slab instead of several per entity: entities, copied
// text, boxed values. A decoder is used by one goroutine.
type decoder struct {
	sel   []string
	owned bool // see decodeRow; then strings alias the row's record
	arena arena
	boxes boxes
	ents  []Entity
	props []namedValue // one entity's properties, before the map is sized
	// names holds the previous entity's property names in record order:
	// rows of one page mostly share them, so the strings are shared too.
	names []string
}

// namedValue is one decoded property awaiting its map.
type namedValue struct {
	name string
	val  any
}

// entity decodes one row; see decodeRow.
func (d *decoder) entity(r driver.Row) (*Entity, error) {
	pk, rk, rec := r.PartitionKey, r.RowKey, r.Record
	ticks, err := rec.Timestamp()
	if err != nil {
		return nil, corruptEntity(pk, rk, err)
	}
	ts := edm.TimeFromTicks(ticks)
	etag := ETag(r.ETag)
	if etag == "" {
		etag = etagFor(ts)
	}
	if d.owned {
		// One entity: its properties wait on the stack.
		var local [16]namedValue
		props, err := d.collect(local[:0], rec)
		if err != nil {
			return nil, corruptEntity(pk, rk, err)
		}
		return d.build(pk, rk, ts, etag, props), nil
	}
	if d.props == nil {
		d.props = make([]namedValue, 0, 16)
	}
	props, err := d.collect(d.props[:0], rec)
	d.props = props[:0]
	if err != nil {
		return nil, corruptEntity(pk, rk, err)
	}
	return d.build(pk, rk, ts, etag, props), nil
}

// build makes the entity of decoded properties props, clearing them.
func (d *decoder) build(pk, rk string, ts time.Time, etag ETag, props []namedValue) *Entity {
	if len(d.ents) == cap(d.ents) {
		d.ents = make([]Entity, 0, slabSize(cap(d.ents)))
	}
	d.ents = append(d.ents, Entity{PartitionKey: pk, RowKey: rk, Timestamp: ts, ETag: etag,
		Properties: make(map[string]any, len(props))})
	e := &d.ents[len(d.ents)-1]
	for i := range props {
		e.Properties[props[i].name] = props[i].val
		props[i] = namedValue{}
	}
	return e
}

// collect appends rec's properties (those d selects) to props, decoded.
func (d *decoder) collect(props []namedValue, rec codec.Record) ([]namedValue, error) {
	it := rec.Iter()
	for it.Next() {
		name := it.Name()
		if d.sel != nil && !selected(d.sel, name) {
			continue
		}
		props = append(props, namedValue{name: d.name(len(props), name), val: d.value(it.Value())})
	}
	return props, it.Err()
}

// name returns the string of the i-th property name of an entity: the
// previous entity's when it is the same, else a new one remembered for
// the next entity.
func (d *decoder) name(i int, b []byte) string {
	if d.owned {
		return unsafeString(b)
	}
	if i < len(d.names) && d.names[i] == string(b) {
		return d.names[i]
	}
	s := d.arena.String(b)
	if i < len(d.names) {
		d.names[i] = s
	} else if i == len(d.names) {
		d.names = append(d.names, s)
	}
	return s
}

// text returns b as a string: aliasing the record when it is owned, else
// a copy in the decoder's arena.
func (d *decoder) text(b []byte) string {
	if d.owned {
		return unsafeString(b)
	}
	return d.arena.String(b)
}

// value boxes one property value, copying what the record holds.
func (d *decoder) value(v filter.Value) any {
	switch v.Type {
	case filter.TypeString:
		return d.boxes.String(d.text(v.Bytes))
	case filter.TypeInt32:
		return d.boxes.Int32(int32(v.Int))
	case filter.TypeInt64:
		return d.boxes.Int64(v.Int)
	case filter.TypeDouble:
		return d.boxes.Float64(v.Float)
	case filter.TypeBoolean:
		return v.Int != 0 // the runtime boxes booleans without allocating
	case filter.TypeDateTime:
		return d.boxes.Time(edm.TimeFromTicks(v.Int))
	case filter.TypeGuid:
		var g GUID
		copy(g[:], v.Bytes)
		return d.boxes.GUID(g)
	case filter.TypeBinary:
		return d.boxes.Bytes(d.arena.Bytes(v.Bytes))
	}
	return nil
}

// slabSize is the length of the next slab after one of length prev:
// small at first, so one Get stays cheap, growing for long pages.
func slabSize(prev int) int {
	switch {
	case prev < 4:
		return 4
	case prev >= 256:
		return 256
	}
	return 2 * prev
}

func selected(sel []string, name []byte) bool {
	for _, s := range sel {
		if s == string(name) {
			return true
		}
	}
	return false
}

func corruptEntity(pk, rk string, err error) error {
	return mapError(&driver.CorruptError{Op: fmt.Sprintf("decode of entity (%s, %s)", quoteShort(pk), quoteShort(rk)), Err: err}, false)
}
