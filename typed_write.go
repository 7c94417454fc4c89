package tablestore

import (
	"context"
	"reflect"
	"time"
	"unsafe"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
	"github.com/tablestore/tablestore/internal/limits"
)

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

func (t *Table) writeStruct(ctx context.Context, typ ActionType, v any, ifMatch ETag) error {
	s := getScratch()
	defer putScratch(s)
	a, buf, _, r, err := prepareStruct(s.buf[:0], typ, v, ifMatch)
	s.buf = buf
	if err != nil {
		return err
	}
	if typ != ActionDelete {
		a.Record = buf
	}
	s.acts = append(s.acts[:0], a)
	res, err := t.drv.Commit(ctx, s.acts)
	if err != nil {
		return mapError(err, false)
	}
	r.setVersion(res.Timestamp, res.ETag)
	return nil
}

// structRef is a struct the typed write path reads fields from.
type structRef struct {
	p    *typedPlan
	base unsafe.Pointer // the struct: the caller's, or a copy of a value
	// owned reports that base is the caller's struct, whose Timestamp and
	// ETag fields a successful write sets.
	owned bool
}

// refStruct resolves v, a struct or a pointer to one. ok is false for
// anything else (a nil pointer, a map): the caller then answers with
// MarshalEntity, whose errors are the contract. err is the plan's error
// for a struct type the mapping rejects. last, if not nil, remembers the
// previous call's type and plan, sparing the shared cache's lookup when a
// transaction's structs are all of one type.
func refStruct(v any, last *lastPlan) (r structRef, ok bool, err error) {
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Struct:
		r.owned = true
	case rv.Kind() == reflect.Struct:
		cp := reflect.New(rv.Type())
		cp.Elem().Set(rv)
		rv = cp
	default:
		return r, false, nil
	}
	r.base = rv.UnsafePointer()
	t := rv.Type().Elem()
	if last != nil && last.typ == t {
		r.p = last.p
		return r, true, nil
	}
	r.p, err = typedPlanFor(t)
	if last != nil && err == nil {
		*last = lastPlan{typ: t, p: r.p}
	}
	return r, err == nil, err
}

// lastPlan is the struct type refStruct met last and its plan.
type lastPlan struct {
	typ reflect.Type
	p   *typedPlan
}

// keys returns the struct's PartitionKey and RowKey fields ("" when it
// has none).
func (r structRef) keys() (pk, rk string) {
	for i := range r.p.system {
		f := &r.p.system[i]
		switch f.system {
		case systemPartitionKey:
			pk = *(*string)(f.at(r.base))
		case systemRowKey:
			rk = *(*string)(f.at(r.base))
		}
	}
	return pk, rk
}

// setVersion sets the caller's Timestamp and ETag fields after a write;
// it does nothing for a struct passed by value.
func (r structRef) setVersion(ts time.Time, etag string) {
	if !r.owned {
		return
	}
	for i := range r.p.system {
		f := &r.p.system[i]
		switch f.system {
		case systemTimestamp:
			*(*time.Time)(f.at(r.base)) = ts
		case systemETag:
			*(*string)(f.at(r.base)) = etag
		}
	}
}

// prepareStruct validates and encodes the entity v describes, appending
// its record to buf as prepareAction does. Any failure of the direct
// encoding is answered by MarshalEntity and prepareAction, so errors are
// exactly theirs.
func prepareStruct(buf []byte, typ ActionType, v any, ifMatch ETag) (driver.Action, []byte, int, structRef, error) {
	r, ok, err := refStruct(v, nil)
	if err != nil {
		return driver.Action{}, buf, 0, r, err
	}
	if ok {
		if a, out, n, ok := encodeStruct(buf, typ, r, ifMatch); ok {
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

// encodeStruct builds the action for the struct r, appending its record
// to buf as prepareAction does, and reports false (buf's contents past
// its length undefined) on anything prepareAction would reject. The
// fields come sorted by name, so the properties need no sorting.
func encodeStruct(buf []byte, typ ActionType, r structRef, ifMatch ETag) (driver.Action, []byte, int, bool) {
	pk, rk := r.keys()
	a, size, err := prepareKeys(typ, pk, rk, ifMatch)
	if err != nil {
		return a, buf, 0, false
	}
	if typ == ActionDelete {
		return a, buf, size, true
	}
	p, base := r.p, r.base
	start := len(buf)
	out := codec.AppendHeader(buf, 0)
	count := 0
	for i := range p.props {
		f := &p.props[i]
		fp := f.at(base)
		if f.omitEmpty && f.value(base).IsZero() {
			continue
		}
		if f.pointer {
			if fp = *(*unsafe.Pointer)(fp); fp == nil {
				continue
			}
		}
		var n int
		var ok bool
		if out, n, ok = appendField(out, f, fp); !ok {
			return a, out[:start], 0, false
		}
		if n < 0 {
			continue // a nil byte slice: no value
		}
		size += f.nameSize + n
		count++
	}
	if checkLimits(count, size) != nil {
		return a, out[:start], 0, false
	}
	return a, out, size, true
}

// appendField appends the property of field f, whose value is at fp
// (pointers followed), as the map path would encode it, and returns its
// value's size by Azure's formula; n < 0 means no value (a nil byte
// slice). It reports false for a value encodeValue rejects.
func appendField(out []byte, f *typedField, fp unsafe.Pointer) (_ []byte, n int, ok bool) {
	switch f.kind {
	case fieldString:
		s := *(*string)(fp)
		u, valid := limits.UTF16LenValid(s)
		if !valid || 2*u > maxValueBytes {
			return out, 0, false
		}
		return codec.AppendBytesPayload(append(out, f.head...), s), 4 + 2*u, true
	case fieldInt32:
		var x int32
		switch f.base {
		case reflect.Int8:
			x = int32(*(*int8)(fp))
		case reflect.Int16:
			x = int32(*(*int16)(fp))
		case reflect.Int32:
			x = *(*int32)(fp)
		case reflect.Uint8:
			x = int32(*(*uint8)(fp))
		case reflect.Uint16:
			x = int32(*(*uint16)(fp))
		default:
			return out, 0, false
		}
		return codec.AppendIntPayload(append(out, f.head...), filter.TypeInt32, int64(x)), 4, true
	case fieldInt64:
		var x int64
		switch f.base {
		case reflect.Int:
			x = int64(*(*int)(fp))
		case reflect.Int64:
			x = *(*int64)(fp)
		case reflect.Uint32:
			x = int64(*(*uint32)(fp))
		default:
			return out, 0, false
		}
		return codec.AppendIntPayload(append(out, f.head...), filter.TypeInt64, x), 8, true
	case fieldDouble:
		var x float64
		if f.base == reflect.Float32 {
			x = float64(*(*float32)(fp))
		} else {
			x = *(*float64)(fp)
		}
		return codec.AppendDoublePayload(append(out, f.head...), x), 8, true
	case fieldBoolean:
		b := int64(0)
		if *(*bool)(fp) {
			b = 1
		}
		return codec.AppendIntPayload(append(out, f.head...), filter.TypeBoolean, b), 1, true
	case fieldDateTime:
		t := (*(*time.Time)(fp)).UTC()
		if y := t.Year(); y < minDateTimeYear || y > maxDateTimeYear {
			return out, 0, false
		}
		return codec.AppendIntPayload(append(out, f.head...), filter.TypeDateTime, ticksFromTime(t)), 8, true
	case fieldGuid:
		return append(append(out, f.head...), (*GUID)(fp)[:]...), 16, true
	case fieldBinary:
		b := *(*[]byte)(fp)
		if b == nil {
			return out, -1, true
		}
		if len(b) > maxValueBytes {
			return out, 0, false
		}
		return codec.AppendBytesPayload(append(out, f.head...), b), 4 + len(b), true
	}
	return out, 0, false
}
