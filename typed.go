package tablestore

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
	"github.com/tablestore/tablestore/internal/limits"
)

// typedPlan is a struct type's field plan in the form the typed path
// reads and writes fields by: memory offsets instead of index paths, user
// properties sorted by name as records store them. It is derived from the
// struct plan MarshalEntity and UnmarshalEntity use, so the field rules
// are the same.
type typedPlan struct {
	typ    reflect.Type
	props  []typedField // user properties, sorted by name
	system []typedField // PartitionKey, RowKey, Timestamp, ETag fields
	writes []writeOp    // how to encode props, in the same order
	err    error
	// lastPage is the length of the last page QueryPageAs read into this
	// type: the next page's first capacity, so pages of a steady size
	// never grow and copy.
	lastPage atomic.Int32
}

// typedField is one field: its plan, where it lies and its Go kind.
type typedField struct {
	*fieldPlan
	off      uintptr
	typ      reflect.Type // the field's type
	base     reflect.Kind // kind of the field's type, or of its element for pointers
	nameSize int          // the name's share of Azure's entity size
}

// writeOp is how encodeStruct writes one user property: in one compact
// entry, the field's offset, what its Go value is, and the property's
// encoding up to its payload (codec.AppendName).
type writeOp struct {
	off       uintptr
	head      string
	nameSize  int32
	code      writeCode
	pointer   bool // the field points to its value; nil is no property
	omitEmpty bool
	special   bool // pointer || omitEmpty
}

// writeCode is the Go type of a field's value as encodeStruct reads it.
type writeCode uint8

const (
	writeUnsupported writeCode = iota // answered by MarshalEntity
	writeString
	writeInt8
	writeInt16
	writeInt32
	writeUint8
	writeUint16
	writeInt
	writeInt64
	writeUint32
	writeFloat32
	writeFloat64
	writeBool
	writeTime
	writeGUID
	writeBinary
)

// writeCodeOf is the writeCode of a field of kind k whose value's Go kind
// is base.
func writeCodeOf(k fieldKind, base reflect.Kind) writeCode {
	switch k {
	case fieldString:
		return writeString
	case fieldInt32:
		switch base {
		case reflect.Int8:
			return writeInt8
		case reflect.Int16:
			return writeInt16
		case reflect.Int32:
			return writeInt32
		case reflect.Uint8:
			return writeUint8
		case reflect.Uint16:
			return writeUint16
		}
	case fieldInt64:
		switch base {
		case reflect.Int:
			return writeInt
		case reflect.Int64:
			return writeInt64
		case reflect.Uint32:
			return writeUint32
		}
	case fieldDouble:
		if base == reflect.Float32 {
			return writeFloat32
		}
		return writeFloat64
	case fieldBoolean:
		return writeBool
	case fieldDateTime:
		return writeTime
	case fieldGuid:
		return writeGUID
	case fieldBinary:
		return writeBinary
	}
	return writeUnsupported
}

// kindType is the EDM type of each field kind.
var kindType = [...]filter.Type{
	fieldString:   filter.TypeString,
	fieldInt32:    filter.TypeInt32,
	fieldInt64:    filter.TypeInt64,
	fieldDouble:   filter.TypeDouble,
	fieldBoolean:  filter.TypeBoolean,
	fieldDateTime: filter.TypeDateTime,
	fieldGuid:     filter.TypeGuid,
	fieldBinary:   filter.TypeBinary,
}

var typedPlans sync.Map // reflect.Type -> *typedPlan

// typedPlanFor returns the cached typed plan of struct type t.
func typedPlanFor(t reflect.Type) (*typedPlan, error) {
	if p, ok := typedPlans.Load(t); ok {
		p := p.(*typedPlan)
		return p, p.err
	}
	p := &typedPlan{typ: t}
	sp, err := structPlanFor(t)
	if err != nil {
		p.err = err
	} else {
		for i := range sp.fields {
			f := &sp.fields[i]
			tf := typedField{fieldPlan: f, nameSize: limits.NameSize(utf16Len(f.name))}
			cur := t
			for _, idx := range f.index {
				sf := cur.Field(idx)
				tf.off += sf.Offset
				cur = sf.Type
			}
			tf.typ, tf.base = cur, cur.Kind()
			if f.pointer {
				tf.base = cur.Elem().Kind()
			}
			if f.system != systemNone {
				p.system = append(p.system, tf)
			} else {
				p.props = append(p.props, tf)
			}
		}
		slices.SortFunc(p.props, func(a, b typedField) int { return strings.Compare(a.name, b.name) })
		for _, f := range p.props {
			p.writes = append(p.writes, writeOp{
				off: f.off, head: string(codec.AppendName(nil, f.name, kindType[f.kind])),
				nameSize: int32(f.nameSize), code: writeCodeOf(f.kind, f.base),
				pointer: f.pointer, omitEmpty: f.omitEmpty, special: f.pointer || f.omitEmpty,
			})
		}
	}
	actual, _ := typedPlans.LoadOrStore(t, p)
	p = actual.(*typedPlan)
	return p, p.err
}

// planOf returns the typed plan of T, which must be a struct type; the
// errors are UnmarshalEntity's for a *T.
func planOf[T any]() (*typedPlan, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, newError(CodeInvalidInput, "cannot unmarshal an entity into %T: need a non-nil pointer to a struct", (*T)(nil))
	}
	return typedPlanFor(t)
}

// at returns the address of field f in the struct at base.
func (f *typedField) at(base unsafe.Pointer) unsafe.Pointer { return unsafe.Add(base, f.off) }

// value returns field f of the struct at base as an addressable
// reflect.Value, for the rare conversions the typed path leaves to the
// reflective code.
func (f *typedField) value(base unsafe.Pointer) reflect.Value {
	return reflect.NewAt(f.typ, f.at(base)).Elem()
}
