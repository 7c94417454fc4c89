package tablestore

import (
	"context"
	"iter"
	"reflect"
	"time"
	"unsafe"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
)

// GetAs reads one entity straight into a new T, a struct type mapped by
// the field rules of MarshalEntity, without building an Entity or a
// property map. The result equals what Get followed by UnmarshalEntity
// into a zero T gives, and so do the errors: a T that UnmarshalEntity
// rejects whatever the entity (InvalidInput when T is not a struct, the
// field-plan errors) fails first, before anything is read; then the
// errors of Get; then InvalidValueType (or InvalidInput) naming the field
// when a property does not fit it. The plan of T is cached, as
// MarshalEntity's is; GetAs is safe for concurrent use.
// Strings in the result share one copy of the stored record.
func GetAs[T any](ctx context.Context, t *Table, partitionKey, rowKey string, opts *GetOptions) (T, error) {
	var v T
	p, err := planOf[T]()
	if err != nil {
		return v, err
	}
	sel, err := t.checkGet(ctx, partitionKey, rowKey, opts)
	if err != nil {
		return v, err
	}
	r, err := t.drv.Get(ctx, partitionKey, rowKey, sel)
	if err != nil {
		return v, mapError(err, false)
	}
	return decodeOne[T](&decoder{sel: sel, owned: true}, p, r)
}

// decodeOne is decodeInto for one T that it returns: the T stays on the
// stack unless a field needs reflection.
func decodeOne[T any](d *decoder, p *typedPlan, r driver.Row) (T, error) {
	var v T
	if done, err := d.intoFast(p, unsafe.Pointer(&v), r); done && err == nil {
		return v, nil
	}
	out := new(T)
	err := decodeInto(d, p, out, r)
	return *out, err
}

// PageAs is one page of a typed query: the entities as values of T, in
// (PartitionKey, RowKey) order, and the continuation as in Page.
type PageAs[T any] struct {
	Entities     []T
	Continuation string
}

// QueryPageAs is QueryPage reading each entity straight into a T, a struct
// type mapped by the field rules of MarshalEntity, without building
// entities or property maps. Each element equals what UnmarshalEntity
// gives for the page's entity into a zero T. Errors: as GetAs, a T that
// UnmarshalEntity rejects fails first; then those of QueryPage; then
// those of UnmarshalEntity for the first entity that fails, which ends
// the page. Strings of one page share a few large copies.
func QueryPageAs[T any](ctx context.Context, t *Table, q Query) (*PageAs[T], error) {
	p, err := planOf[T]()
	if err != nil {
		return nil, err
	}
	pq, err := t.prepareIn(ctx, q, nil)
	if err != nil {
		return nil, err
	}
	return readPageAs[T](ctx, t, p, pq)
}

// QueryAs is Query reading into values of T, as QueryPageAs does; it
// yields a pointer to each value, which stays valid and is not reused.
// On an error it yields (nil, err) and stops.
func QueryAs[T any](ctx context.Context, t *Table, q Query) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		p, err := planOf[T]()
		if err != nil {
			yield(nil, err)
			return
		}
		pq, err := t.prepareIn(ctx, q, nil)
		if err != nil {
			yield(nil, err)
			return
		}
		// Values live in slabs that are never moved, so yielded pointers
		// stay valid and a page costs no copying as it grows.
		var slab []T
		var rows []*T
		for {
			rows = rows[:0]
			d := &decoder{sel: pq.req.Select}
			cont, err := t.readRows(ctx, pq, func(r driver.Row) error {
				v := next(&slab)
				rows = append(rows, v)
				return decodeInto(d, p, v, r)
			})
			if err != nil {
				yield(nil, err)
				return
			}
			for _, v := range rows {
				if !yield(v, nil) {
					return
				}
			}
			if cont == "" {
				return
			}
			from, _, table, err := decodeContinuation(cont)
			if err != nil {
				yield(nil, err)
				return
			}
			pq.resume(from, table)
		}
	}
}

// readPageAs reads one page of a prepared query into values of T.
func readPageAs[T any](ctx context.Context, t *Table, p *typedPlan, pq *preparedQuery) (*PageAs[T], error) {
	page := &PageAs[T]{}
	if n := min(int(p.lastPage.Load()), pq.req.Top); n > 0 {
		page.Entities = make([]T, 0, n)
	}
	d := &decoder{sel: pq.req.Select}
	cont, err := t.readRows(ctx, pq, func(r driver.Row) error {
		if len(page.Entities) == cap(page.Entities) {
			page.Entities = growPage(page.Entities, pq.req.Top)
		}
		page.Entities = page.Entities[:len(page.Entities)+1]
		return decodeInto(d, p, &page.Entities[len(page.Entities)-1], r)
	})
	if err != nil {
		return nil, err
	}
	p.lastPage.Store(int32(len(page.Entities)))
	page.Continuation = cont
	return page, nil
}

// growPage makes room for one more element: doubling, at most to top.
func growPage[T any](s []T, top int) []T {
	n := min(max(2*cap(s), 16), max(top, cap(s)+1))
	out := make([]T, len(s), n)
	copy(out, s)
	return out
}

// decodeInto fills *v, a zero T, from r. When the fast decoding fails it
// decodes again the reflective way, through an Entity and
// UnmarshalEntity, so the error (or, should the two ever disagree, the
// value) is exactly theirs.
func decodeInto[T any](d *decoder, p *typedPlan, v *T, r driver.Row) error {
	if err := d.into(p, unsafe.Pointer(v), r); err != nil {
		var zero T
		*v = zero
		e, err := decodeRow(r, d.sel, false)
		if err != nil {
			return err
		}
		return UnmarshalEntity(e, v)
	}
	return nil
}

// into fills the struct at base, laid out as p says, from r.
func (d *decoder) into(p *typedPlan, base unsafe.Pointer, r driver.Row) error {
	it, err := d.start(p, base, r)
	if err != nil {
		return err
	}
	for j := 0; it.Next(); {
		// Records of one type mostly hold its fields in order: the
		// expected field is tested here, seekField does the rest.
		f, name := (*typedField)(nil), it.Name()
		if j < len(p.props) && d.sel == nil && p.props[j].name == string(name) {
			f, j = &p.props[j], j+1
		} else if f = d.seekField(p, &j, name); f == nil {
			continue
		}
		if v := it.Value(); !d.setFast(f, base, v) {
			if err := setField(f.fieldPlan, f.value(base), decodeValue(v)); err != nil {
				return err
			}
		}
	}
	return iterErr(&it, r)
}

// intoFast is into for fields that setFast fills. It reports false,
// leaving the struct partly filled, at the first field that needs
// reflection. It never hands base to reflect, so base does not escape.
func (d *decoder) intoFast(p *typedPlan, base unsafe.Pointer, r driver.Row) (bool, error) {
	it, err := d.start(p, base, r)
	if err != nil {
		return true, err
	}
	for j := 0; it.Next(); {
		f, name := (*typedField)(nil), it.Name() // as in into
		if j < len(p.props) && d.sel == nil && p.props[j].name == string(name) {
			f, j = &p.props[j], j+1
		} else if f = d.seekField(p, &j, name); f == nil {
			continue
		}
		if !d.setFast(f, base, it.Value()) {
			return false, nil
		}
	}
	return true, iterErr(&it, r)
}

// start fills the system fields at base and returns an iterator over
// the record's properties.
func (d *decoder) start(p *typedPlan, base unsafe.Pointer, r driver.Row) (codec.Iter, error) {
	ticks, err := r.Record.Timestamp()
	if err != nil {
		return codec.Iter{}, corruptEntity(r.PartitionKey, r.RowKey, err)
	}
	ts := edm.TimeFromTicks(ticks)
	for i := range p.system {
		f := &p.system[i]
		switch f.system {
		case systemPartitionKey:
			*(*string)(f.at(base)) = r.PartitionKey
		case systemRowKey:
			*(*string)(f.at(base)) = r.RowKey
		case systemTimestamp:
			*(*time.Time)(f.at(base)) = ts
		case systemETag:
			etag := r.ETag
			if etag == "" {
				etag = string(etagFor(ts))
			}
			*(*string)(f.at(base)) = etag
		}
	}
	return r.Record.Iter(), nil
}

// seekField returns the field of p that property name fills, or nil when
// no field maps it or the selection leaves it out. *j is the first field
// not yet matched (0 for a record's first property) and is moved past the
// fields ordered before name: names are unique on both sides, so a field
// once matched is passed.
func (d *decoder) seekField(p *typedPlan, j *int, name []byte) *typedField {
	props, k := p.props, *j
	for k < len(props) && props[k].name < string(name) {
		k++
	}
	if k == len(props) || props[k].name != string(name) {
		*j = k
		return nil
	}
	*j = k + 1
	if d.sel != nil && !selected(d.sel, name) {
		return nil
	}
	return &props[k]
}

// iterErr is the decoding error of r's properties, if the record is
// corrupt.
func iterErr(it *codec.Iter, r driver.Row) error {
	if err := it.Err(); err != nil {
		return corruptEntity(r.PartitionKey, r.RowKey, err)
	}
	return nil
}

// intIs64 reports whether int is 64 bits wide.
const intIs64 = unsafe.Sizeof(int(0)) == 8

// setFast stores v in field f when the field's type holds v's type
// without conversion (string kinds, int32, int64, int, float64, bool
// kinds, time.Time, GUID, byte slices), and reports whether it did.
// Everything else goes through setField.
func (d *decoder) setFast(f *typedField, base unsafe.Pointer, v filter.Value) bool {
	if f.pointer {
		return false
	}
	p := f.at(base)
	switch v.Type {
	case filter.TypeString:
		if f.base != reflect.String {
			return false
		}
		*(*string)(p) = d.text(v.Bytes)
	case filter.TypeInt32, filter.TypeInt64:
		switch {
		case f.base == reflect.Int64 || f.base == reflect.Int && intIs64:
			*(*int64)(p) = v.Int
		case f.base == reflect.Int32 && v.Type == filter.TypeInt32:
			*(*int32)(p) = int32(v.Int)
		default:
			return false
		}
	case filter.TypeDouble:
		if f.base != reflect.Float64 {
			return false
		}
		*(*float64)(p) = v.Float
	case filter.TypeBoolean:
		if f.base != reflect.Bool {
			return false
		}
		*(*bool)(p) = v.Int != 0
	case filter.TypeDateTime:
		if f.typ != timeType {
			return false
		}
		*(*time.Time)(p) = edm.TimeFromTicks(v.Int)
	case filter.TypeGuid:
		if f.typ != guidType {
			return false
		}
		copy((*GUID)(p)[:], v.Bytes)
	case filter.TypeBinary:
		if f.kind != fieldBinary {
			return false
		}
		*(*[]byte)(p) = d.arena.Bytes(v.Bytes)
	default:
		return false
	}
	return true
}
