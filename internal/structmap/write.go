package structmap

import (
	"encoding/binary"
	"reflect"
	"slices"
	"time"
	"unsafe"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// writeOp is how AppendFields writes one user property: in one compact
// entry, the field's offset, what its Go value is, and the property's
// encoding up to its payload (driver.AppendName).
type writeOp struct {
	off  uintptr
	head string
	// headWords holds head, zero-padded, when it fits in 16 bytes
	// (shortHead): AppendFields then stores it as two words, not as a copy.
	headWords [2]uint64
	shortHead bool
	nameSize  int32
	code      writeCode
	pointer   bool // the field points to its value; nil is no property
	omitEmpty bool
	special   bool // pointer || omitEmpty
}

// writeCode is the Go type of a field's value as AppendFields reads it.
type writeCode uint8

const (
	writeUnsupported writeCode = iota // answered by the reflective path
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
	case kindString:
		return writeString
	case kindInt32:
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
	case kindInt64:
		switch base {
		case reflect.Int:
			return writeInt
		case reflect.Int64:
			return writeInt64
		case reflect.Uint32:
			return writeUint32
		}
	case kindDouble:
		if base == reflect.Float32 {
			return writeFloat32
		}
		return writeFloat64
	case kindBoolean:
		return writeBool
	case kindDateTime:
		return writeTime
	case kindGuid:
		return writeGUID
	case kindBinary:
		return writeBinary
	}
	return writeUnsupported
}

// Ref is a struct the typed path reads fields from, or fills.
type Ref struct {
	Plan *Plan
	Base unsafe.Pointer // the struct: the caller's, or a copy of a value
	// Owned reports that Base is the caller's struct, whose Timestamp and
	// ETag fields a successful write sets.
	Owned bool
}

// Last is the struct type Resolve met last and its plan, sparing the
// shared cache's lookup when a transaction's structs are all of one
// type. The zero Last has met none.
type Last struct {
	ptr reflect.Type // the type of the pointer passed, if it was one
	typ reflect.Type // the struct type
	p   *Plan
}

// Resolve resolves v, a struct or a non-nil pointer to one. ok is false
// for anything else (a nil pointer, a map): the caller then answers as
// the reflective path does, whose errors are the contract. err is the
// plan's error for a struct type the field rules reject. last, if not
// nil, remembers the previous call's type and plan.
func Resolve(v any, last *Last) (r Ref, ok bool, err error) {
	if last != nil && last.ptr != nil && reflect.TypeOf(v) == last.ptr {
		// A pointer of the type met last: only nil needs the long way.
		if base := reflect.ValueOf(v).UnsafePointer(); base != nil {
			return Ref{Plan: last.p, Base: base, Owned: true}, true, nil
		}
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.Kind() == reflect.Pointer && !rv.IsNil() && rv.Elem().Kind() == reflect.Struct:
		r.Owned = true
	case rv.Kind() == reflect.Struct:
		cp := reflect.New(rv.Type())
		cp.Elem().Set(rv)
		rv = cp
	default:
		return r, false, nil
	}
	r.Base = rv.UnsafePointer()
	t := rv.Type().Elem()
	if last != nil && last.typ == t {
		r.Plan = last.p
		return r, true, nil
	}
	r.Plan, err = PlanFor(t)
	if last != nil && err == nil {
		*last = Last{typ: t, p: r.Plan}
		if r.Owned {
			last.ptr = reflect.TypeOf(v)
		}
	}
	return r, err == nil, err
}

// Keys returns the struct's PartitionKey and RowKey fields ("" when it
// has none).
func (r Ref) Keys() (pk, rk string) {
	if off := r.Plan.sysOff[systemPartitionKey]; off != 0 {
		pk = *(*string)(unsafe.Add(r.Base, off-1))
	}
	if off := r.Plan.sysOff[systemRowKey]; off != 0 {
		rk = *(*string)(unsafe.Add(r.Base, off-1))
	}
	return pk, rk
}

// SetVersion sets the caller's Timestamp and ETag fields after a write;
// it does nothing for a struct passed by value.
func (r Ref) SetVersion(ts time.Time, etag string) {
	if !r.Owned {
		return
	}
	if off := r.Plan.sysOff[systemTimestamp]; off != 0 {
		*(*time.Time)(unsafe.Add(r.Base, off-1)) = ts
	}
	if off := r.Plan.sysOff[systemETag]; off != 0 {
		*(*string)(unsafe.Add(r.Base, off-1)) = etag
	}
}

// headSlack is the spare capacity a short head is stored into.
const headSlack = 16

// newWriteOp returns the writeOp of f, a user property.
func newWriteOp(f *field) writeOp {
	head := driver.AppendName(nil, f.name, f.kind.edm())
	w := writeOp{
		off: f.off, head: string(head), nameSize: int32(f.nameSize), code: writeCodeOf(f.kind, f.base),
		pointer: f.pointer, omitEmpty: f.omitEmpty, special: f.pointer || f.omitEmpty,
	}
	if len(head) <= headSlack {
		var b [headSlack]byte
		copy(b[:], head)
		w.headWords = [2]uint64{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
		w.shortHead = true
	}
	return w
}

// AppendFields appends the user properties of the struct r, encoded as
// entityenc.AppendProperties encodes the map Marshal would give (sorted
// by name, the same bytes), and returns their share of the entity size
// and their count. It reports false, dst's contents past its length then
// undefined, for a value the map path would reject: the caller answers
// it the reflective way, whose errors are the contract. Like append it
// may write into out's spare capacity, also past the result's length.
func (r Ref) AppendFields(out []byte) (_ []byte, size, count int, ok bool) {
	p, base := r.Plan, r.Base
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
		if w.shortHead {
			if cap(out)-len(out) < headSlack {
				out = slices.Grow(out, headSlack)
			}
			at := len(out)
			spare := out[at : at+headSlack]
			binary.LittleEndian.PutUint64(spare, w.headWords[0])
			binary.LittleEndian.PutUint64(spare[8:], w.headWords[1])
			out = out[:at+len(w.head)]
		} else {
			out = append(out, w.head...)
		}
		n := 0
		switch w.code {
		case writeString:
			s := *(*string)(fp)
			units, ok := entityenc.StringUnits(s)
			if !ok {
				return out, 0, 0, false
			}
			out, n = driver.AppendBytesPayload(out, s), 4+2*units
		case writeInt8:
			out, n = driver.AppendIntPayload(out, edm.TypeInt32, int64(*(*int8)(fp))), 4
		case writeInt16:
			out, n = driver.AppendIntPayload(out, edm.TypeInt32, int64(*(*int16)(fp))), 4
		case writeInt32:
			out, n = driver.AppendIntPayload(out, edm.TypeInt32, int64(*(*int32)(fp))), 4
		case writeUint8:
			out, n = driver.AppendIntPayload(out, edm.TypeInt32, int64(*(*uint8)(fp))), 4
		case writeUint16:
			out, n = driver.AppendIntPayload(out, edm.TypeInt32, int64(*(*uint16)(fp))), 4
		case writeInt:
			out, n = driver.AppendIntPayload(out, edm.TypeInt64, int64(*(*int)(fp))), 8
		case writeInt64:
			out, n = driver.AppendIntPayload(out, edm.TypeInt64, *(*int64)(fp)), 8
		case writeUint32:
			out, n = driver.AppendIntPayload(out, edm.TypeInt64, int64(*(*uint32)(fp))), 8
		case writeFloat32:
			out, n = driver.AppendDoublePayload(out, float64(*(*float32)(fp))), 8
		case writeFloat64:
			out, n = driver.AppendDoublePayload(out, *(*float64)(fp)), 8
		case writeBool:
			out, n = entityenc.AppendBoolPayload(out, *(*bool)(fp)), 1
		case writeTime:
			t := *(*time.Time)(fp)
			if !edm.InAzureRange(t) {
				return out, 0, 0, false
			}
			out, n = driver.AppendIntPayload(out, edm.TypeDateTime, edm.TicksFromTime(t)), 8
		case writeGUID:
			out, n = append(out, (*edm.GUID)(fp)[:]...), 16
		case writeBinary:
			b := *(*[]byte)(fp)
			if b == nil {
				out = out[:len(out)-len(w.head)] // a nil byte slice: no value
				continue
			}
			var ok bool
			if out, n, ok = entityenc.AppendBinaryPayload(out, b); !ok {
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

// SetPartitionKey sets the struct's PartitionKey field to pk and reports
// whether the struct has one.
func (r Ref) SetPartitionKey(pk string) bool {
	for _, f := range r.Plan.system {
		if f.system == systemPartitionKey {
			*(*string)(f.at(r.Base)) = pk
			return true
		}
	}
	return false
}

// Pointer returns a pointer to the struct r reads, as an interface value
// of the pointer type (the struct's own type, not a forged one).
func (r Ref) Pointer() any {
	return reflect.NewAt(r.Plan.typ, r.Base).Interface()
}
