package structmap

import (
	"math"
	"reflect"
	"time"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// Keys are an entity's own fields as a struct holds them.
type Keys struct {
	PartitionKey, RowKey string
	Timestamp            time.Time
	ETag                 string
}

// Marshal converts the struct rv (not a pointer) into the entity's own
// fields and a property map, by the field rules (see the root package's
// MarshalEntity): omitempty fields holding their zero value, nil pointers
// and nil byte slices are left out; byte slices are shared, not copied.
//
// Errors: PlanFor's, and OutOfRangeInput naming the field for a time
// outside Azure's DateTime range.
func Marshal(rv reflect.Value) (Keys, map[string]any, error) {
	var k Keys
	plan, err := PlanFor(rv.Type())
	if err != nil {
		return k, nil, err
	}
	props := make(map[string]any, len(plan.fields))
	for i := range plan.fields {
		f := &plan.fields[i]
		fv := rv.FieldByIndex(f.index)
		switch f.system {
		case systemPartitionKey:
			k.PartitionKey = fv.String()
			continue
		case systemRowKey:
			k.RowKey = fv.String()
			continue
		case systemTimestamp:
			k.Timestamp = fv.Interface().(time.Time)
			continue
		case systemETag:
			k.ETag = fv.String()
			continue
		}
		if f.omitEmpty && fv.IsZero() {
			continue
		}
		if f.pointer {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		if f.kind == kindBinary && fv.IsNil() {
			continue
		}
		v := marshalField(fv, f.kind)
		if f.kind == kindDateTime {
			if _, _, err := entityenc.EncodeValue(f.name, v); err != nil {
				return k, nil, entityenc.Prefix(err, "field %s", f.goName)
			}
		}
		props[f.name] = v
	}
	return k, props, nil
}

// marshalField converts one field value (pointers already followed).
func marshalField(fv reflect.Value, kind fieldKind) any {
	switch kind {
	case kindString:
		return fv.String()
	case kindInt32:
		if fv.CanInt() {
			return int32(fv.Int())
		}
		return int32(fv.Uint())
	case kindInt64:
		if fv.CanInt() {
			return fv.Int()
		}
		return int64(fv.Uint())
	case kindDouble:
		return fv.Float()
	case kindBoolean:
		return fv.Bool()
	case kindDateTime:
		return fv.Interface().(time.Time)
	case kindGuid:
		return fv.Interface().(edm.GUID)
	case kindBinary:
		return fv.Bytes()
	}
	return nil
}

// Unmarshal fills the struct rv (addressable, not a pointer) from an
// entity's own fields and its property map, by the rules of the root
// package's UnmarshalEntity: the system fields are always set, absent
// (or nil) properties leave their fields unchanged, numbers convert when
// exact, strings convert by ParseText for fields whose kind has a text
// form. On error, fields before the failing one may have been set.
//
// Errors: PlanFor's; InvalidValueType naming the field when a property
// does not fit it; ParseText's, naming the field.
func Unmarshal(k Keys, props map[string]any, rv reflect.Value) error {
	plan, err := PlanFor(rv.Type())
	if err != nil {
		return err
	}
	for i := range plan.fields {
		f := &plan.fields[i]
		fv := rv.FieldByIndex(f.index)
		switch f.system {
		case systemPartitionKey:
			fv.SetString(k.PartitionKey)
			continue
		case systemRowKey:
			fv.SetString(k.RowKey)
			continue
		case systemTimestamp:
			fv.Set(reflect.ValueOf(k.Timestamp))
			continue
		case systemETag:
			fv.SetString(k.ETag)
			continue
		}
		val, ok := props[f.name]
		if !ok || val == nil {
			continue
		}
		if err := setField(f, fv, val); err != nil {
			return err
		}
	}
	return nil
}

// textKinds are the field kinds whose values a no-metadata body writes as
// strings; a string property fills such a field by ParseText. Int32 and
// Boolean values are never strings there, so their fields refuse one.
var textKinds = [...]bool{kindInt64: true, kindDouble: true, kindDateTime: true, kindGuid: true, kindBinary: true}

// setField stores a property value in the field fv that f describes, by
// Unmarshal's rules.
func setField(f *field, fv reflect.Value, val any) error {
	if s, ok := val.(string); ok && textKinds[f.kind] {
		var err error
		if val, err = entityenc.ParseText(f.name, f.kind.edm(), s); err != nil {
			return entityenc.Prefix(err, "field %s", f.goName)
		}
	}
	dst := fv
	if f.pointer {
		dst = reflect.New(fv.Type().Elem()).Elem()
	}
	if !unmarshalField(dst, f.kind, val) {
		return entityenc.Errorf(edm.CodeInvalidValueType, "field %s: property %q holds %s %v, which does not fit the field's type %s",
			f.goName, f.name, entityenc.TypeName(val), val, fv.Type())
	}
	if f.pointer {
		fv.Set(dst.Addr())
	}
	return nil
}

// unmarshalField stores val in dst if its type matches kind, converting
// numbers when exact. It reports false on a mismatch or a loss.
func unmarshalField(dst reflect.Value, kind fieldKind, val any) bool {
	switch kind {
	case kindString:
		s, ok := val.(string)
		if ok {
			dst.SetString(s)
		}
		return ok
	case kindBoolean:
		b, ok := val.(bool)
		if ok {
			dst.SetBool(b)
		}
		return ok
	case kindDateTime:
		t, ok := val.(time.Time)
		if ok {
			dst.Set(reflect.ValueOf(t))
		}
		return ok
	case kindGuid:
		g, ok := val.(edm.GUID)
		if ok {
			dst.Set(reflect.ValueOf(g))
		}
		return ok
	case kindBinary:
		b, ok := val.([]byte)
		if ok {
			dst.SetBytes(b)
		}
		return ok
	case kindInt32, kindInt64:
		n, ok := entityenc.ExactInt(val)
		if !ok {
			return false
		}
		if dst.CanInt() {
			if dst.OverflowInt(n) {
				return false
			}
			dst.SetInt(n)
			return true
		}
		if n < 0 || dst.OverflowUint(uint64(n)) {
			return false
		}
		dst.SetUint(uint64(n))
		return true
	case kindDouble:
		f, ok := entityenc.ExactFloat(val)
		if !ok {
			return false
		}
		if dst.Kind() == reflect.Float32 && float64(float32(f)) != f && !math.IsNaN(f) {
			return false
		}
		dst.SetFloat(f)
		return true
	}
	return false
}
