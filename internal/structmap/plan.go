// Package structmap maps Go structs to entities and back: the field rules
// (names, tags, types, the system fields), the reflective conversion to
// and from property maps, and the typed fast path that encodes a struct's
// fields straight into a stored record and decodes a record straight
// into a struct, without a property map.
//
// It holds no JSON: strings a no-metadata body leaves in a property map
// are read by entityenc.ParseText. It sits below the root package and
// never imports it; errors are *entityenc.Error values.
//
// The typed path reads and writes fields through their offsets
// (unsafe.Add from the struct's address), each as a value of its own
// field type; it never builds or changes a runtime value of another type.
package structmap

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/limits"
)

// ETag is the root package's ETag type. A field of this type, whatever
// its name, holds the entity's ETag; Register sets it.
var etagType reflect.Type

// Register tells the package the Go type of the root package's ETag,
// which it cannot import. It is called once, from the root package's
// initialization, before any plan is built.
func Register(etag reflect.Type) { etagType = etag }

var (
	timeType = reflect.TypeFor[time.Time]()
	guidType = reflect.TypeFor[edm.GUID]()
)

// fieldKind is the EDM type a struct field converts to.
type fieldKind uint8

const (
	kindString fieldKind = iota + 1
	kindInt32
	kindInt64
	kindDouble
	kindBoolean
	kindDateTime
	kindGuid
	kindBinary
)

// edm returns the EDM type of a field kind: the kinds are numbered as the
// EDM types are.
func (k fieldKind) edm() edm.Type { return edm.Type(k) }

// systemField marks a field that maps to one of the entity's own fields.
type systemField uint8

// The system fields.
const (
	systemNone systemField = iota
	systemPartitionKey
	systemRowKey
	systemTimestamp
	systemETag
)

// field says how one struct field maps to a property, and where it lies.
type field struct {
	index     []int  // for reflect.Value.FieldByIndex
	name      string // property name
	goName    string // dotted Go path, for messages
	system    systemField
	kind      fieldKind // for user properties
	pointer   bool      // the field is a pointer to the kind's type
	omitEmpty bool

	off      uintptr      // offset in the struct
	typ      reflect.Type // the field's type
	base     reflect.Kind // kind of the field's type, or of its element for pointers
	nameSize int          // the name's share of Azure's entity size
}

// Plan is the cached mapping of one struct type: its fields in the order
// the reflective conversions visit them, and the typed path's view of
// the same fields, user properties sorted by name as records store them.
type Plan struct {
	typ    reflect.Type
	fields []field  // every mapped field, in declaration order
	props  []*field // user properties, sorted by name
	system []*field // PartitionKey, RowKey, Timestamp, ETag fields
	// sysOff is, by systemField, the offset of that system field plus
	// one, or 0 when the struct has none: a write reads its keys and
	// sets its version without a loop.
	sysOff [systemETag + 1]uintptr
	writes []writeOp // how to encode props, in the same order
	err    error
	// lastPage is the length of the last page read into this type: the
	// next page's first capacity, so pages of a steady size never grow
	// and copy.
	lastPage atomic.Int32
}

// HasETag reports whether the struct has an ETag field.
func (p *Plan) HasETag() bool { return p.sysOff[systemETag] != 0 }

// LastPage returns the length of the last page read into the plan's
// type (0 before the first).
func (p *Plan) LastPage() int { return int(p.lastPage.Load()) }

// SetLastPage records the length of a page read into the plan's type.
func (p *Plan) SetLastPage(n int) { p.lastPage.Store(int32(n)) }

var plans sync.Map // reflect.Type -> *Plan

// PlanFor returns the cached plan of struct type t, or the error of the
// field rules for it (the same error every time).
//
// Errors: InvalidValueType naming the field for a field type with no EDM
// type (uint, uint64, maps, nested structs, ...), or a PartitionKey,
// RowKey or Timestamp field of the wrong type; PropertyNameInvalid (or
// PropertyNameTooLong) for a tag that is not a valid property name;
// DuplicatePropertiesSpecified when two fields map to one name, or two
// fields are of type ETag.
func PlanFor(t reflect.Type) (*Plan, error) {
	if p, ok := plans.Load(t); ok {
		p := p.(*Plan)
		return p, p.err
	}
	p := &Plan{typ: t}
	p.fields, p.err = buildFields(t, nil, "", 0, map[string]string{})
	if p.err == nil {
		for i := range p.fields {
			f := &p.fields[i]
			if f.system != systemNone {
				p.system = append(p.system, f)
				p.sysOff[f.system] = f.off + 1
			} else {
				p.props = append(p.props, f)
			}
		}
		slices.SortFunc(p.props, func(a, b *field) int { return strings.Compare(a.name, b.name) })
		for _, f := range p.props {
			p.writes = append(p.writes, newWriteOp(f))
		}
	}
	actual, _ := plans.LoadOrStore(t, p)
	p = actual.(*Plan)
	return p, p.err
}

// buildFields collects the fields of t (and of its embedded structs);
// index, prefix and off locate t within the outer struct, seen maps
// property names to the Go field already using them.
func buildFields(t reflect.Type, index []int, prefix string, off uintptr, seen map[string]string) ([]field, error) {
	var out []field
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
			inner, err := buildFields(sf.Type, idx, goName+".", off+sf.Offset, seen)
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
			return nil, entityenc.Errorf(edm.CodeDuplicatePropertiesSpecified, "fields %s and %s of %s both map to property %q",
				prev, goName, t, name)
		}
		seen[name] = goName
		if sf.Type == etagType {
			if prev, dup := seen["\x00etag"]; dup {
				return nil, entityenc.Errorf(edm.CodeDuplicatePropertiesSpecified, "fields %s and %s of %s are both of type ETag",
					prev, goName, t)
			}
			seen["\x00etag"] = goName
		}
		f := field{index: idx, name: name, goName: goName, omitEmpty: hasTagOption(opts, "omitempty"),
			off: off + sf.Offset, typ: sf.Type, base: sf.Type.Kind()}
		if err := planField(&f, sf.Type); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// hasTagOption reports whether the comma-separated options of a `table:`
// tag (the part after the name) include opt.
func hasTagOption(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

// planField sets the system or kind of f from the field's type.
func planField(f *field, ft reflect.Type) error {
	if ft == etagType {
		f.system = systemETag
		return nil
	}
	switch f.name {
	case entityenc.NamePartitionKey, entityenc.NameRowKey:
		if ft.Kind() != reflect.String {
			return entityenc.Errorf(edm.CodeInvalidValueType, "field %s maps to %s and must be a string, not %s", f.goName, f.name, ft)
		}
		f.system = systemRowKey
		if f.name == entityenc.NamePartitionKey {
			f.system = systemPartitionKey
		}
		return nil
	case entityenc.NameTimestamp:
		if ft != timeType {
			return entityenc.Errorf(edm.CodeInvalidValueType, "field %s maps to Timestamp and must be a time.Time, not %s", f.goName, ft)
		}
		f.system = systemTimestamp
		return nil
	}
	units, err := entityenc.PropertyNameUnits(f.name)
	if err != nil {
		return entityenc.Prefix(err, "field %s", f.goName)
	}
	f.nameSize = limits.NameSize(units)
	base := ft
	if ft.Kind() == reflect.Pointer {
		f.pointer = true
		base = ft.Elem()
		f.base = base.Kind()
	}
	f.kind = kindOf(base)
	if f.kind == 0 {
		return entityenc.Errorf(edm.CodeInvalidValueType,
			"field %s has type %s, which has no EDM type; use a string, integer of at most 32 bits, int, int64, float, bool, time.Time, GUID or []byte kind",
			f.goName, ft)
	}
	return nil
}

// kindOf returns the EDM kind for a (non-pointer) field type, or 0.
func kindOf(t reflect.Type) fieldKind {
	switch t {
	case timeType:
		return kindDateTime
	case guidType:
		return kindGuid
	}
	switch t.Kind() {
	case reflect.String:
		return kindString
	case reflect.Bool:
		return kindBoolean
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16:
		return kindInt32
	case reflect.Int, reflect.Int64, reflect.Uint32:
		return kindInt64
	case reflect.Float32, reflect.Float64:
		return kindDouble
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return kindBinary
		}
	}
	return 0
}

// at returns the address of field f in the struct at base.
func (f *field) at(base unsafe.Pointer) unsafe.Pointer { return unsafe.Add(base, f.off) }

// value returns field f of the struct at base as an addressable
// reflect.Value, for the rare conversions the typed path leaves to the
// reflective code.
func (f *field) value(base unsafe.Pointer) reflect.Value {
	return reflect.NewAt(f.typ, f.at(base)).Elem()
}
