package tablestore

import (
	"math"
	"reflect"
	"strings"
	"sync"
	"time"
)

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
// not copied: the Entity shares them with v.
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
			return nil, newError(CodeInvalidInput, "cannot marshal a nil %T into an entity", v)
		}
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil, newError(CodeInvalidValueType, "cannot marshal %T into an entity: it is not a struct", v)
	}
	plan, err := structPlanFor(rv.Type())
	if err != nil {
		return nil, err
	}
	e := &Entity{Properties: make(map[string]any, len(plan.fields))}
	for i := range plan.fields {
		f := &plan.fields[i]
		fv := rv.FieldByIndex(f.index)
		switch f.system {
		case systemPartitionKey:
			e.PartitionKey = fv.String()
			continue
		case systemRowKey:
			e.RowKey = fv.String()
			continue
		case systemTimestamp:
			e.Timestamp = fv.Interface().(time.Time)
			continue
		case systemETag:
			e.ETag = ETag(fv.String())
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
		if f.kind == fieldBinary && fv.IsNil() {
			continue
		}
		v := marshalField(fv, f.kind)
		if f.kind == fieldDateTime {
			if err := checkTimeField(f, v); err != nil {
				return nil, err
			}
		}
		e.Properties[f.name] = v
	}
	return e, nil
}

// marshalField converts one field value (pointers already followed).
func marshalField(fv reflect.Value, kind fieldKind) any {
	switch kind {
	case fieldString:
		return fv.String()
	case fieldInt32:
		if fv.CanInt() {
			return int32(fv.Int())
		}
		return int32(fv.Uint())
	case fieldInt64:
		if fv.CanInt() {
			return fv.Int()
		}
		return int64(fv.Uint())
	case fieldDouble:
		return fv.Float()
	case fieldBoolean:
		return fv.Bool()
	case fieldDateTime:
		return fv.Interface().(time.Time)
	case fieldGuid:
		return fv.Interface().(GUID)
	case fieldBinary:
		return fv.Bytes()
	}
	return nil
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
		return newError(CodeInvalidInput, "cannot unmarshal a nil entity")
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return newError(CodeInvalidInput, "cannot unmarshal an entity into %T: need a non-nil pointer to a struct", v)
	}
	rv = rv.Elem()
	plan, err := structPlanFor(rv.Type())
	if err != nil {
		return err
	}
	for i := range plan.fields {
		f := &plan.fields[i]
		fv := rv.FieldByIndex(f.index)
		switch f.system {
		case systemPartitionKey:
			fv.SetString(e.PartitionKey)
			continue
		case systemRowKey:
			fv.SetString(e.RowKey)
			continue
		case systemTimestamp:
			fv.Set(reflect.ValueOf(e.Timestamp))
			continue
		case systemETag:
			fv.SetString(string(e.ETag))
			continue
		}
		val, ok := e.Properties[f.name]
		if !ok || val == nil {
			continue
		}
		if s, ok := val.(string); ok && f.kind != fieldString {
			if val, err = stringField(f, s); err != nil {
				return err
			}
		}
		dst := fv
		if f.pointer {
			dst = reflect.New(fv.Type().Elem()).Elem()
		}
		if !unmarshalField(dst, f.kind, val) {
			return newError(CodeInvalidValueType, "field %s: property %q holds %s %v, which does not fit the field's type %s",
				f.goName, f.name, edmTypeName(val), val, fv.Type())
		}
		if f.pointer {
			fv.Set(dst.Addr())
		}
	}
	return nil
}

// unmarshalField stores val in dst if its type matches kind, converting
// numbers when exact. It reports false on a mismatch or a loss.
func unmarshalField(dst reflect.Value, kind fieldKind, val any) bool {
	switch kind {
	case fieldString:
		s, ok := val.(string)
		if ok {
			dst.SetString(s)
		}
		return ok
	case fieldBoolean:
		b, ok := val.(bool)
		if ok {
			dst.SetBool(b)
		}
		return ok
	case fieldDateTime:
		t, ok := val.(time.Time)
		if ok {
			dst.Set(reflect.ValueOf(t))
		}
		return ok
	case fieldGuid:
		g, ok := val.(GUID)
		if ok {
			dst.Set(reflect.ValueOf(g))
		}
		return ok
	case fieldBinary:
		b, ok := val.([]byte)
		if ok {
			dst.SetBytes(b)
		}
		return ok
	case fieldInt32, fieldInt64:
		n, ok := exactInt(val)
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
	case fieldDouble:
		f, ok := exactFloat(val)
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

// twoTo63 is 2^63, the first float64 above the int64 range.
const twoTo63 = float64(1 << 63)

// exactInt returns an Int32, Int64 or integral in-range Double as int64.
func exactInt(val any) (int64, bool) {
	switch x := val.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if x != math.Trunc(x) || x < -twoTo63 || x >= twoTo63 {
			return 0, false // fraction, infinity, NaN or out of range
		}
		return int64(x), true
	}
	return 0, false
}

// exactFloat returns a Double, an Int32, or an Int64 that float64 holds
// exactly, as float64.
func exactFloat(val any) (float64, bool) {
	switch x := val.(type) {
	case float64:
		return x, true
	case int32:
		return float64(x), true
	case int64:
		f := float64(x)
		if f >= twoTo63 || int64(f) != x {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// edmTypeName names the EDM type of a property value for messages.
func edmTypeName(val any) string {
	switch val.(type) {
	case string:
		return "Edm.String"
	case int32:
		return "Edm.Int32"
	case int64:
		return "Edm.Int64"
	case float64:
		return "Edm.Double"
	case bool:
		return "Edm.Boolean"
	case time.Time:
		return "Edm.DateTime"
	case GUID:
		return "Edm.Guid"
	case []byte:
		return "Edm.Binary"
	}
	return reflect.TypeOf(val).String()
}

// fieldKind is the EDM type a struct field converts to.
type fieldKind uint8

const (
	fieldString fieldKind = iota + 1
	fieldInt32
	fieldInt64
	fieldDouble
	fieldBoolean
	fieldDateTime
	fieldGuid
	fieldBinary
)

// systemField marks a field that maps to one of Entity's own fields.
type systemField uint8

const (
	systemNone systemField = iota
	systemPartitionKey
	systemRowKey
	systemTimestamp
	systemETag
)

// fieldPlan says how one struct field maps to a property.
type fieldPlan struct {
	index     []int  // for reflect.Value.FieldByIndex
	name      string // property name
	goName    string // dotted Go path, for messages
	system    systemField
	kind      fieldKind // for user properties
	pointer   bool      // the field is a pointer to the kind's type
	omitEmpty bool
}

// structPlan is the cached mapping of one struct type.
type structPlan struct {
	fields []fieldPlan
	err    error
}

// structPlans caches *structPlan by reflect.Type.
var structPlans sync.Map

var (
	timeType = reflect.TypeFor[time.Time]()
	guidType = reflect.TypeFor[GUID]()
	etagType = reflect.TypeFor[ETag]()
)

func structPlanFor(t reflect.Type) (*structPlan, error) {
	if p, ok := structPlans.Load(t); ok {
		p := p.(*structPlan)
		return p, p.err
	}
	p := &structPlan{}
	p.fields, p.err = buildFields(t, nil, "", map[string]string{})
	actual, _ := structPlans.LoadOrStore(t, p)
	p = actual.(*structPlan)
	return p, p.err
}

// buildFields collects the fields of t (and of its embedded structs);
// index and prefix locate t within the outer struct, seen maps property
// names to the Go field already using them.
func buildFields(t reflect.Type, index []int, prefix string, seen map[string]string) ([]fieldPlan, error) {
	var out []fieldPlan
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("table")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		goName := prefix + sf.Name
		idx := append(append([]int(nil), index...), i)
		if sf.Anonymous && name == "" && sf.Type.Kind() == reflect.Struct && sf.Type != timeType {
			inner, err := buildFields(sf.Type, idx, goName+".", seen)
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
			continue
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if prev, dup := seen[name]; dup {
			return nil, newError(CodeDuplicatePropertiesSpecified, "fields %s and %s of %s both map to property %q",
				prev, goName, t, name)
		}
		seen[name] = goName
		if sf.Type == etagType {
			if prev, dup := seen["\x00etag"]; dup {
				return nil, newError(CodeDuplicatePropertiesSpecified, "fields %s and %s of %s are both of type ETag",
					prev, goName, t)
			}
			seen["\x00etag"] = goName
		}
		f := fieldPlan{index: idx, name: name, goName: goName, omitEmpty: hasTagOption(opts, "omitempty")}
		if err := planField(&f, sf.Type); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// planField sets the system or kind of f from the field's type.
func planField(f *fieldPlan, ft reflect.Type) error {
	if ft == etagType {
		f.system = systemETag
		return nil
	}
	switch f.name {
	case namePartitionKey, nameRowKey:
		if ft.Kind() != reflect.String {
			return newError(CodeInvalidValueType, "field %s maps to %s and must be a string, not %s", f.goName, f.name, ft)
		}
		f.system = map[string]systemField{namePartitionKey: systemPartitionKey, nameRowKey: systemRowKey}[f.name]
		return nil
	case nameTimestamp:
		if ft != timeType {
			return newError(CodeInvalidValueType, "field %s maps to Timestamp and must be a time.Time, not %s", f.goName, ft)
		}
		f.system = systemTimestamp
		return nil
	}
	if err := validatePropertyName(f.name); err != nil {
		return newError(err.(*Error).Code, "field %s: %s", f.goName, err.(*Error).Message)
	}
	base := ft
	if ft.Kind() == reflect.Pointer {
		f.pointer = true
		base = ft.Elem()
	}
	f.kind = kindOf(base)
	if f.kind == 0 {
		return newError(CodeInvalidValueType,
			"field %s has type %s, which has no EDM type; use a string, integer of at most 32 bits, int, int64, float, bool, time.Time, GUID or []byte kind",
			f.goName, ft)
	}
	return nil
}

// kindOf returns the EDM kind for a (non-pointer) field type, or 0.
func kindOf(t reflect.Type) fieldKind {
	switch t {
	case timeType:
		return fieldDateTime
	case guidType:
		return fieldGuid
	}
	switch t.Kind() {
	case reflect.String:
		return fieldString
	case reflect.Bool:
		return fieldBoolean
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16:
		return fieldInt32
	case reflect.Int, reflect.Int64, reflect.Uint32:
		return fieldInt64
	case reflect.Float32, reflect.Float64:
		return fieldDouble
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return fieldBinary
		}
	}
	return 0
}
