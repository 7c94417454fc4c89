package tablestore

import (
	"context"
	"iter"
	"reflect"
	"unsafe"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/structmap"
)

// Go structs: MarshalEntity and UnmarshalEntity convert between a struct
// and an Entity; GetStruct, QueryStructPage and QueryStructs read records straight
// into structs, and InsertStruct, UpdateStruct, UpsertStruct (and
// StructEntity(v) wherever writes are collected) write structs straight into records,
// without a property map. The field rules are MarshalEntity's, and the
// mapping lives in internal/structmap.

func init() { structmap.Register(reflect.TypeFor[ETag]()) }

// MarshalEntity converts a struct, or a pointer to one, into an Entity.
//
// Each exported field becomes a property named after the field, or after
// its tag `table:"Name"`. The tag `table:"-"` skips a field and
// `table:",omitempty"` (or `table:"Name,omitempty"`) leaves out a zero
// value. Fields of embedded structs (not pointers to them) are promoted, as
// in encoding/json. Unexported fields are ignored.
//
// The fields named (or tagged) PartitionKey and RowKey (of string kind)
// and Timestamp (time.Time) fill the Entity's own fields, and so does a
// field of type ETag, whatever its name, for the entity's ETag. Any other
// field named ETag (a string, say) is an ordinary property named "ETag",
// which Azure allows. Other fields convert by type:
//
//	string kinds                 Edm.String
//	int32, int16, int8,
//	uint16, uint8                Edm.Int32
//	int64, int, uint32           Edm.Int64
//	float64, float32             Edm.Double
//	bool kinds                   Edm.Boolean
//	time.Time                    Edm.DateTime
//	GUID                         Edm.Guid
//	[]byte (any byte slice)      Edm.Binary; nil means no value
//
// and pointers to any of these, where nil means no value. Byte slices are
// not copied: the Entity shares them with v. A field's type fixes its
// property's type whatever the value (an int field is always an Int64),
// where a Go integer in a property map follows the integer rule (see
// Entity).
//
// A time.Time field must hold a time Azure can store, 1601-01-01 to
// 9999-12-31 UTC: a zero time.Time (year 1) fails here with
// OutOfRangeInput, as Insert would, unless the field is tagged omitempty
// (a zero value is then left out, as encoding/json leaves it out) or is a
// *time.Time left nil.
//
// Errors: InvalidValueType naming the field for any other field type (uint,
// uint64, maps, nested structs, ...), PropertyNameInvalid for a tag that is
// not a valid property name, DuplicatePropertiesSpecified when two fields
// map to one name, InvalidInput for a nil pointer, OutOfRangeInput naming
// the field for a time outside Azure's DateTime range. Per-type field plans are
// cached, so repeated calls for one type only read fields.
func MarshalEntity(v any) (*Entity, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return nil, newError(edm.CodeInvalidInput, "cannot marshal a nil %T into an entity", v)
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil, newError(edm.CodeInvalidValueType, "cannot marshal %T into an entity: it is not a struct", v)
	}
	k, props, err := structmap.Marshal(rv)
	if err != nil {
		return nil, coded(err)
	}
	return &Entity{PartitionKey: k.PartitionKey, RowKey: k.RowKey, Timestamp: k.Timestamp, ETag: ETag(k.ETag), Properties: props}, nil
}

// UnmarshalEntity fills the struct v points to from e, following the field
// rules of MarshalEntity. The PartitionKey, RowKey and Timestamp fields
// and the field of type ETag, where the struct has them, are always set
// from e. Properties absent from e (or nil) leave their
// fields unchanged; a pointer field gets a newly allocated value. Numbers
// convert between Int32, Int64 and Double and any numeric field type when
// the value fits exactly (an Int64 of 5 fills an int8 field, 2.5 does not
// fill an int field). Byte slices are shared with e, not copied.
//
// A string property fills a field whose type says what the string holds,
// as Azure's no-metadata JSON writes these types as strings: an Int64
// field kind (int, int64, uint32) takes a decimal integer, a float field
// "NaN", "Infinity", "-Infinity" or a number, a time.Time field an ISO 8601
// date and time, a GUID field the canonical form, a []byte field base64.
// The conversion is as strict as Azure's JSON decoding of that type.
//
// Errors: InvalidValueType naming the field when a property's type cannot
// be stored in it (or the value does not fit), InvalidInput (or
// OutOfRangeInput for a DateTime outside years 1 to 9999) naming the field
// when such a string is malformed, plus the field-plan errors of
// MarshalEntity; InvalidInput if v is not a non-nil pointer to a struct
// or e is nil. On error, fields before the failing one may have been set.
func UnmarshalEntity(e *Entity, v any) error {
	if e == nil {
		return newError(edm.CodeInvalidInput, "cannot unmarshal a nil entity")
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return newError(edm.CodeInvalidInput, "cannot unmarshal an entity into %T: need a non-nil pointer to a struct", v)
	}
	k := structmap.Keys{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Timestamp: e.Timestamp, ETag: string(e.ETag)}
	return coded(structmap.Unmarshal(k, e.Properties, rv.Elem()))
}

// GetStruct reads one entity straight into a new T, a struct type mapped
// by the field rules of MarshalEntity, without building an Entity or a
// property map. The result equals what Get followed by UnmarshalEntity
// into a zero T gives, and so do the errors: a T that UnmarshalEntity
// rejects whatever the entity (InvalidInput when T is not a struct, the
// field-plan errors) fails first, before anything is read; then the
// errors of Get; then InvalidValueType (or InvalidInput) naming the field
// when a property does not fit it. The plan of T is cached, as
// MarshalEntity's is; GetStruct is safe for concurrent use.
// Strings in the result share one copy of the stored record.
func GetStruct[T any](ctx context.Context, t *Table, partitionKey, rowKey string, opts *GetOptions) (T, error) {
	var v T
	p, err := planOf[T]()
	if err != nil {
		return v, err
	}
	r, sel, err := t.get(ctx, partitionKey, rowKey, opts)
	if err != nil {
		return v, err
	}
	return decodeOne[T](&structmap.Decoder{Select: sel, Owned: true}, p, r)
}

// decodeOne is decodeInto for one T that it returns: the T stays on the
// stack unless a field needs reflection.
func decodeOne[T any](d *structmap.Decoder, p *structmap.Plan, r driver.Row) (T, error) {
	var v T
	row := structRow(r)
	if d.IntoFast(p, unsafe.Pointer(&v), &row) {
		return v, nil
	}
	out := new(T)
	err := decodeInto(d, p, out, r)
	return *out, err
}

// StructPage is one page of a typed query: the entities as values of T,
// in (PartitionKey, RowKey) order, and the continuation as in Page.
type StructPage[T any] struct {
	Entities     []T
	Continuation string
	PageCost
}

// QueryStructPage is QueryPage reading each entity straight into a T, a
// struct type mapped by the field rules of MarshalEntity, without
// building entities or property maps. Each element equals what
// UnmarshalEntity gives for the page's entity into a zero T. Errors: as
// GetStruct, a T that UnmarshalEntity rejects fails first; then those of
// QueryPage; then those of UnmarshalEntity for the first entity that
// fails, which ends the page. Strings of one page share a few large copies.
func QueryStructPage[T any](ctx context.Context, t *Table, q Query) (*StructPage[T], error) {
	p, err := planOf[T]()
	if err != nil {
		return nil, err
	}
	pq, err := t.prepareStructs(ctx, q, p)
	if err != nil {
		return nil, err
	}
	return readStructPage[T](ctx, t, p, pq)
}

// QueryStructs is Query reading into values of T, as QueryStructPage
// does; it yields a pointer to each value, which stays valid and is not
// reused.
// Like Query it reads page after page (q.Top is the page size) and stops
// after q.Limit entities when that is not 0. On an error it yields (nil,
// err) and stops.
func QueryStructs[T any](ctx context.Context, t *Table, q Query) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		p, err := planOf[T]()
		if err != nil {
			yield(nil, err)
			return
		}
		pq, err := t.prepareStructs(ctx, q, p)
		if err != nil {
			yield(nil, err)
			return
		}
		// Values live in slabs that are never moved, so yielded pointers
		// stay valid and a page costs no copying as it grows. The state
		// and the callback are made once for every page.
		var st struct {
			slab []T
			rows []*T
			d    structmap.Decoder
		}
		st.d.Select = pq.req.Select
		emit := func(r driver.Row) error {
			v := slabElem(&st.slab)
			st.rows = append(st.rows, v)
			return decodeInto(&st.d, p, v, r)
		}
		lim := pq.limiter(q.Limit)
		for {
			lim.sizePage()
			top := pq.req.Top
			if st.rows == nil {
				st.rows = make([]*T, 0, min(top, maxSlab))
			}
			st.rows = st.rows[:0]
			if top <= maxSlab && cap(st.slab)-len(st.slab) < top {
				// A short page (a Limit's) gets room for all it may hold at once.
				st.slab = make([]T, 0, top)
			}
			st.d.Rows = top
			cont, _, err := t.readRows(ctx, pq, emit)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, v := range st.rows {
				if !yield(v, nil) || lim.done() {
					return
				}
			}
			if cont == "" {
				return
			}
			if pq.index != nil && pq.index.req.Scan.Order {
				if err := pq.resumeIndex(cont); err != nil {
					yield(nil, err)
					return
				}
				continue
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

// prepareStructs is prepareIn for a query read into the struct type of
// p: the rows carry no ETag when the struct has no field for it.
func (t *Table) prepareStructs(ctx context.Context, q Query, p *structmap.Plan) (*preparedQuery, error) {
	pq, err := t.prepareIn(ctx, q, nil)
	if err != nil {
		return nil, err
	}
	pq.req.NoETag = !p.HasETag()
	return pq, nil
}

// readStructPage reads one page of a prepared query into values of T.
func readStructPage[T any](ctx context.Context, t *Table, p *structmap.Plan, pq *preparedQuery) (*StructPage[T], error) {
	page := &StructPage[T]{}
	if n := min(p.LastPage(), pq.req.Top); n > 0 {
		page.Entities = make([]T, 0, n)
	}
	d := &structmap.Decoder{Select: pq.req.Select, Rows: pq.req.Top}
	cont, cost, err := t.readRows(ctx, pq, func(r driver.Row) error {
		if len(page.Entities) == cap(page.Entities) {
			page.Entities = growPage(page.Entities, pq.req.Top)
		}
		page.Entities = page.Entities[:len(page.Entities)+1]
		return decodeInto(d, p, &page.Entities[len(page.Entities)-1], r)
	})
	if err != nil {
		return nil, err
	}
	p.SetLastPage(len(page.Entities))
	page.Continuation, page.PageCost = cont, cost
	return page, nil
}

// growPage makes room for one more element: doubling, at most to top.
func growPage[T any](s []T, top int) []T {
	n := min(max(2*cap(s), 16), max(top, cap(s)+1))
	out := make([]T, len(s), n)
	copy(out, s)
	return out
}

// slabElem returns a pointer to a fresh element of *slab, starting a new slab
// when it is full. Elements once returned are never moved.
func slabElem[E any](slab *[]E) *E {
	s := *slab
	if len(s) == cap(s) {
		s = make([]E, 0, slabSize(cap(s)))
	}
	s = s[:len(s)+1]
	*slab = s
	return &s[len(s)-1]
}

// decodeInto fills *v, a zero T, from r. When the direct decoding fails
// it decodes again the reflective way, through an Entity and
// UnmarshalEntity, so the error (or, should the two ever disagree, the
// value) is exactly theirs.
func decodeInto[T any](d *structmap.Decoder, p *structmap.Plan, v *T, r driver.Row) error {
	row := structRow(r)
	if !d.Into(structmap.Ref{Plan: p, Base: unsafe.Pointer(v)}, &row) {
		var zero T
		*v = zero
		e, err := decodeRow(r, d.Select, false)
		if err != nil {
			return err
		}
		return UnmarshalEntity(e, v)
	}
	return nil
}

// structRow is a driver's row as package structmap reads it.
func structRow(r driver.Row) structmap.Row {
	return structmap.Row{PartitionKey: r.PartitionKey, RowKey: r.RowKey, Record: r.Record, ETag: r.ETag}
}

// planOf returns the plan of T, which must be a struct type; the errors
// are UnmarshalEntity's for a *T.
func planOf[T any]() (*structmap.Plan, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, newError(edm.CodeInvalidInput, "cannot unmarshal an entity into %T: need a non-nil pointer to a struct", (*T)(nil))
	}
	p, err := structmap.PlanFor(t)
	return p, coded(err)
}

// InsertStruct inserts the entity v describes: a struct, or a pointer to
// one, mapped by the field rules of MarshalEntity. It encodes the fields
// straight into the stored form without building a property map; the
// result, the stored bytes and every error are those of MarshalEntity
// followed by Insert. When v is a pointer, its Timestamp and ETag fields
// (where the struct has them) are set on success.
func (t *Table) InsertStruct(ctx context.Context, v any) error {
	return t.writeStruct(ctx, ActionInsert, v, "")
}

// UpdateStruct is Update for the entity v describes, as InsertStruct
// encodes it; errors are those of MarshalEntity followed by Update.
func (t *Table) UpdateStruct(ctx context.Context, v any, mode UpdateMode, ifMatch ETag) error {
	typ, err := modeAction(mode, ActionUpdateMerge, ActionUpdateReplace)
	if err != nil {
		return err
	}
	return t.writeStruct(ctx, typ, v, ifMatch)
}

// UpsertStruct is Upsert for the entity v describes, as InsertStruct
// encodes it; errors are those of MarshalEntity followed by Upsert.
func (t *Table) UpsertStruct(ctx context.Context, v any, mode UpdateMode) error {
	typ, err := modeAction(mode, ActionUpsertMerge, ActionUpsertReplace)
	if err != nil {
		return err
	}
	return t.writeStruct(ctx, typ, v, "")
}

// DeleteStruct is Delete for the entity whose keys are the PartitionKey
// and RowKey fields of the struct v (a struct or a pointer to one); its
// other fields are not read and v is not changed. Errors are those of Delete, and MarshalEntity's for a v
// that is not such a struct.
func (t *Table) DeleteStruct(ctx context.Context, v any, ifMatch ETag) error {
	return t.writeStruct(ctx, ActionDelete, v, ifMatch)
}

func (t *Table) writeStruct(ctx context.Context, typ ActionType, v any, ifMatch ETag) error {
	s := getScratch()
	defer putScratch(s)
	a, buf, _, r, err := prepareStruct(s.buf[:0], typ, v, ifMatch)
	res, err := t.commitOne(ctx, s, a, buf, err)
	if err == nil && r.Plan != nil && typ != ActionDelete {
		r.SetVersion(res.Timestamp, res.ETag)
	}
	return err
}

// prepareStruct validates and encodes the entity v describes, appending
// its record to buf as prepareAction does. Any failure of the direct
// encoding is answered by MarshalEntity and prepareAction, so errors are
// exactly theirs.
func prepareStruct(buf []byte, typ ActionType, v any, ifMatch ETag) (driver.Action, []byte, int, structmap.Ref, error) {
	r, ok, err := structmap.Resolve(v, nil)
	if err != nil {
		return driver.Action{}, buf, 0, r, coded(err)
	}
	if ok {
		pk, rk := r.Keys()
		if a, out, n, ok := encodeStruct(buf, typ, r, pk, rk, ifMatch); ok {
			return a, out, n, r, nil
		}
	}
	a, out, n, err := prepareStructSlow(buf, typ, v, ifMatch)
	return a, out, n, r, err
}

// prepareStructSlow is the reference: MarshalEntity, then prepareAction.
func prepareStructSlow(buf []byte, typ ActionType, v any, ifMatch ETag) (driver.Action, []byte, int, error) {
	e, err := MarshalEntity(v)
	if err != nil {
		return driver.Action{}, buf, 0, err
	}
	return prepareAction(buf, typ, e, ifMatch, nil)
}

// encodeStruct builds the action for the struct r, whose keys r.Keys
// returned as pk and rk, appending its record to buf as prepareAction
// does, and reports false (buf's contents past its length undefined) on
// anything prepareAction would reject. The fields come sorted by name, so
// the properties need no sorting.
func encodeStruct(buf []byte, typ ActionType, r structmap.Ref, pk, rk string, ifMatch ETag) (driver.Action, []byte, int, bool) {
	var a driver.Action
	buf, size, ok := encodeStructInto(&a, buf, typ, r, pk, rk, ifMatch, nil)
	return a, buf, size, ok
}

// encodeStructInto is encodeStruct setting all of *a in place; keys is
// as prepareKeysInto's.
func encodeStructInto(a *driver.Action, buf []byte, typ ActionType, r structmap.Ref, pk, rk string, ifMatch ETag, keys *keyMemo) ([]byte, int, bool) {
	size, err := prepareKeysInto(a, typ, pk, rk, ifMatch, keys)
	if err != nil {
		return buf, 0, false
	}
	if typ == ActionDelete {
		return buf, size, true
	}
	out, n, count, ok := r.AppendFields(driver.AppendHeader(buf, 0))
	size += n
	if !ok || entityenc.CheckLimits(count, size) != nil {
		return buf, 0, false
	}
	return out, size, true
}
