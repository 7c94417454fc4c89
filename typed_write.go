package tablestore

import (
	"context"
	"reflect"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/tablestore/tablestore/driver"
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
	a, base, p, err := prepareStruct(typ, v, ifMatch)
	if err != nil {
		return err
	}
	res, err := t.drv.Commit(ctx, []driver.Action{a})
	if err != nil {
		return mapError(err, false)
	}
	if base != nil {
		for i := range p.system {
			f := &p.system[i]
			switch f.system {
			case systemTimestamp:
				*(*time.Time)(f.at(base)) = res.Timestamp
			case systemETag:
				*(*string)(f.at(base)) = res.ETag
			}
		}
	}
	return nil
}

// prepareStruct validates and encodes the entity v describes. base is the
// address of the caller's struct when v is a pointer, else nil. Any
// failure of the direct encoding is answered by MarshalEntity and
// prepareAction, so errors are exactly theirs.
func prepareStruct(typ ActionType, v any, ifMatch ETag) (driver.Action, unsafe.Pointer, *typedPlan, error) {
	rv := reflect.ValueOf(v)
	var base unsafe.Pointer
	switch {
	case rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Struct:
		base = rv.UnsafePointer()
	case rv.Kind() == reflect.Struct:
		cp := reflect.New(rv.Type())
		cp.Elem().Set(rv)
		rv = cp
	default:
		a, err := prepareStructSlow(typ, v, ifMatch)
		return a, nil, nil, err
	}
	p, err := typedPlanFor(rv.Type().Elem())
	if err != nil {
		return driver.Action{}, nil, nil, err
	}
	a, ok := encodeStruct(typ, p, rv.UnsafePointer(), ifMatch)
	if !ok {
		a, err = prepareStructSlow(typ, v, ifMatch)
	}
	return a, base, p, err
}

// prepareStructSlow is the reference: MarshalEntity, then prepareAction.
func prepareStructSlow(typ ActionType, v any, ifMatch ETag) (driver.Action, error) {
	e, err := MarshalEntity(v)
	if err != nil {
		return driver.Action{}, err
	}
	a, _, err := prepareAction(typ, e, ifMatch)
	return a, err
}

// encodeStruct builds the action for the struct at base, reporting false
// on anything prepareAction would reject. The fields come sorted by name,
// so the properties need no sorting.
func encodeStruct(typ ActionType, p *typedPlan, base unsafe.Pointer, ifMatch ETag) (driver.Action, bool) {
	var pk, rk string
	for i := range p.system {
		f := &p.system[i]
		switch f.system {
		case systemPartitionKey:
			pk = *(*string)(f.at(base))
		case systemRowKey:
			rk = *(*string)(f.at(base))
		}
	}
	a, size, err := prepareKeys(typ, pk, rk, ifMatch)
	if err != nil {
		return a, false
	}
	if typ == ActionDelete {
		return a, true
	}
	props := make([]codec.Property, 0, len(p.props))
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
		val, n, ok := fieldValue(f, fp)
		if !ok {
			return a, false
		}
		if n < 0 {
			continue // a nil byte slice: no value
		}
		size += f.nameSize + n
		props = append(props, codec.Property{Name: f.name, Value: val})
	}
	if checkLimits(len(props), size) != nil {
		return a, false
	}
	a.Properties = props
	return a, true
}

// fieldValue reads the field value at fp (pointers followed) as the map
// path would store it, with its size by Azure's formula; n < 0 means no
// value. It reports false for a value encodeValue rejects.
func fieldValue(f *typedField, fp unsafe.Pointer) (v filter.Value, n int, ok bool) {
	switch f.kind {
	case fieldString:
		s := *(*string)(fp)
		if !utf8.ValidString(s) {
			return v, 0, false
		}
		u := utf16Len(s)
		if 2*u > maxValueBytes {
			return v, 0, false
		}
		return filter.Value{Type: filter.TypeString, Bytes: readOnlyBytes(s)}, 4 + 2*u, true
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
			return v, 0, false
		}
		return filter.Value{Type: filter.TypeInt32, Int: int64(x)}, 4, true
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
			return v, 0, false
		}
		return filter.Value{Type: filter.TypeInt64, Int: x}, 8, true
	case fieldDouble:
		var x float64
		if f.base == reflect.Float32 {
			x = float64(*(*float32)(fp))
		} else {
			x = *(*float64)(fp)
		}
		return filter.Value{Type: filter.TypeDouble, Float: x}, 8, true
	case fieldBoolean:
		b := int64(0)
		if *(*bool)(fp) {
			b = 1
		}
		return filter.Value{Type: filter.TypeBoolean, Int: b}, 1, true
	case fieldDateTime:
		t := (*(*time.Time)(fp)).UTC()
		if y := t.Year(); y < minDateTimeYear || y > maxDateTimeYear {
			return v, 0, false
		}
		return filter.Value{Type: filter.TypeDateTime, Int: ticksFromTime(t)}, 8, true
	case fieldGuid:
		return filter.Value{Type: filter.TypeGuid, Bytes: (*GUID)(fp)[:]}, 16, true
	case fieldBinary:
		b := *(*[]byte)(fp)
		if b == nil {
			return v, -1, true
		}
		if len(b) > maxValueBytes {
			return v, 0, false
		}
		return filter.Value{Type: filter.TypeBinary, Bytes: b}, 4 + len(b), true
	}
	return v, 0, false
}
