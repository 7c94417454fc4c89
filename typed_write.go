package tablestore

import (
	"context"
	"reflect"
	"time"
	"unsafe"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
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
	res, err := t.commitOne(ctx, s, a, buf, err)
	if err == nil {
		r.setVersion(res.Timestamp, res.ETag)
	}
	return err
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
	if last != nil && last.ptr != nil && reflect.TypeOf(v) == last.ptr {
		// A pointer of the type met last: only nil needs the long way.
		if base := reflect.ValueOf(v).UnsafePointer(); base != nil {
			return structRef{p: last.p, base: base, owned: true}, true, nil
		}
	}
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
		if r.owned {
			last.ptr = reflect.TypeOf(v)
		}
	}
	return r, err == nil, err
}

// lastPlan is the struct type refStruct met last and its plan.
type lastPlan struct {
	ptr reflect.Type // the type of the pointer passed, if it was one
	typ reflect.Type // the struct type
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
	out, n, count, ok := appendFields(codec.AppendHeader(buf, 0), r.p, r.base)
	size += n
	if !ok || checkLimits(count, size) != nil {
		return a, buf, 0, false
	}
	return a, out, size, true
}

// appendFields appends the user properties of the struct at base, laid
// out as p says, and returns their share of the entity size and their
// count. It reports false for a value prepareAction would reject.
func appendFields(out []byte, p *typedPlan, base unsafe.Pointer) (_ []byte, size, count int, ok bool) {
	for i := range p.writes {
		w := &p.writes[i]
		fp := unsafe.Add(base, w.off)
		if w.special {
			if w.omitEmpty && p.props[i].value(base).IsZero() {
				continue
			}
			if w.pointer {
				if fp = *(*unsafe.Pointer)(fp); fp == nil {
					continue
				}
			}
		}
		out = append(out, w.head...)
		n := 0
		switch w.code {
		case writeString:
			s := *(*string)(fp)
			units, ok := stringUnits(s)
			if !ok {
				return out, 0, 0, false
			}
			out, n = codec.AppendBytesPayload(out, s), 4+2*units
		case writeInt8:
			out, n = codec.AppendIntPayload(out, filter.TypeInt32, int64(*(*int8)(fp))), 4
		case writeInt16:
			out, n = codec.AppendIntPayload(out, filter.TypeInt32, int64(*(*int16)(fp))), 4
		case writeInt32:
			out, n = codec.AppendIntPayload(out, filter.TypeInt32, int64(*(*int32)(fp))), 4
		case writeUint8:
			out, n = codec.AppendIntPayload(out, filter.TypeInt32, int64(*(*uint8)(fp))), 4
		case writeUint16:
			out, n = codec.AppendIntPayload(out, filter.TypeInt32, int64(*(*uint16)(fp))), 4
		case writeInt:
			out, n = codec.AppendIntPayload(out, filter.TypeInt64, int64(*(*int)(fp))), 8
		case writeInt64:
			out, n = codec.AppendIntPayload(out, filter.TypeInt64, *(*int64)(fp)), 8
		case writeUint32:
			out, n = codec.AppendIntPayload(out, filter.TypeInt64, int64(*(*uint32)(fp))), 8
		case writeFloat32:
			out, n = codec.AppendDoublePayload(out, float64(*(*float32)(fp))), 8
		case writeFloat64:
			out, n = codec.AppendDoublePayload(out, *(*float64)(fp)), 8
		case writeBool:
			out, n = appendBoolPayload(out, *(*bool)(fp)), 1
		case writeTime:
			t := *(*time.Time)(fp)
			if !edm.InAzureRange(t) {
				return out, 0, 0, false
			}
			out, n = codec.AppendIntPayload(out, filter.TypeDateTime, edm.TicksFromTime(t)), 8
		case writeGUID:
			out, n = append(out, (*GUID)(fp)[:]...), 16
		case writeBinary:
			b := *(*[]byte)(fp)
			if b == nil {
				out = out[:len(out)-len(w.head)] // a nil byte slice: no value
				continue
			}
			var ok bool
			if out, n, ok = appendBinaryPayload(out, b); !ok {
				return out, 0, 0, false
			}
		default:
			return out, 0, 0, false
		}
		size += int(w.nameSize) + n
		count++
	}
	return out, size, count, true
}
