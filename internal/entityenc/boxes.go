package entityenc

import (
	"math"
	"time"
	"unsafe"

	"github.com/tablestore/tablestore/edm"
)

// Boxes makes the interface values of decoded properties with their
// data in shared chunks, where Go's own boxing allocates for each
// string, Int64, Double, DateTime, Guid and Int32 from 256 up: a decoded
// entity's values cost two allocations (string headers, and the words of
// the others), a page's a few per chunk.
//
// An interface value is a type word and a pointer to its data; the
// values made here point into a chunk. Nothing writes a slot of a chunk
// after its value is made, so the values are as immutable as Go's own
// boxes. Strings' headers live in a []string chunk, which the collector
// scans; the other values have no pointers (a DateTime only when its
// Location is UTC, as decoded DateTimes are; others are boxed the usual
// way) and live in a []uint64 chunk. A value kept keeps its chunk, at
// most maxStringBoxes strings or maxWordBoxes words, alive.
//
// The zero Boxes is ready to use; it is used by one goroutine.
type Boxes struct {
	strs  []string // len used, cap total
	words []uint64
}

// Chunk limits: chunks grow from what the first entity needs, doubling,
// up to these many slots.
const (
	maxStringBoxes = 256
	maxWordBoxes   = 1024
)

// eface is the layout of an interface value with no methods (any).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func typeWord(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	stringType   = typeWord("")
	int32Type    = typeWord(int32(0))
	int64Type    = typeWord(int64(0))
	float64Type  = typeWord(float64(0))
	dateTimeType = typeWord(time.Time{})
	guidType     = typeWord(edm.GUID{})
)

// timeWords is how many words a time.Time takes.
const timeWords = int(unsafe.Sizeof(time.Time{}) / 8)

// boxedLayout reports whether the values this file makes have the layout
// Go gives interface values and time.Time, checked once: where it does
// not, every value is boxed the usual way.
var boxedLayout = func() bool {
	if unsafe.Sizeof(any(nil)) != unsafe.Sizeof(eface{}) || unsafe.Sizeof(time.Time{})%8 != 0 {
		return false
	}
	var b Boxes
	b.Reserve(1, 2+1+timeWords)
	ts := edm.TimeFromTicks(638_000_000_000_000_000)
	v, ok := b.dateTime(ts)
	return b.str("x") == any("x") && b.int64(-5) == any(int64(-5)) &&
		b.int32(1<<20) == any(int32(1<<20)) && ok && v == any(ts)
}()

// Reserve makes room for strs strings and words words (see Words) in the
// current chunks, starting new ones where they lack it.
func (b *Boxes) Reserve(strs, words int) {
	if cap(b.strs)-len(b.strs) < strs {
		b.strs = make([]string, 0, max(strs, min(2*cap(b.strs), maxStringBoxes)))
	}
	if cap(b.words)-len(b.words) < words {
		b.words = make([]uint64, 0, max(words, min(2*cap(b.words), maxWordBoxes)))
	}
}

// Words returns how many chunk words Scalar takes for v (0: none, it is
// boxed without allocating or the usual way).
func Words(v edm.Value) int {
	switch v.Type {
	case edm.TypeInt32:
		if uint32(v.Int) < 256 {
			return 0
		}
		return 1
	case edm.TypeInt64, edm.TypeDouble:
		return 1
	case edm.TypeDateTime:
		return timeWords
	case edm.TypeGuid:
		return 2
	}
	return 0
}

// String boxes s.
func (b *Boxes) String(s string) any {
	if !boxedLayout {
		return s
	}
	return b.str(s)
}

func (b *Boxes) str(s string) any {
	if len(b.strs) == cap(b.strs) {
		b.Reserve(1, 0)
	}
	b.strs = append(b.strs, s)
	return forge(stringType, unsafe.Pointer(&b.strs[len(b.strs)-1]))
}

// Scalar boxes a value of any type but String and Binary, as scalar does.
func (b *Boxes) Scalar(v edm.Value) any {
	if !boxedLayout {
		return scalar(v)
	}
	switch v.Type {
	case edm.TypeInt32:
		return b.int32(int32(v.Int))
	case edm.TypeInt64:
		return b.int64(v.Int)
	case edm.TypeDouble:
		return forge(float64Type, b.word(math.Float64bits(v.Float)))
	case edm.TypeDateTime:
		t := edm.TimeFromTicks(v.Int)
		if x, ok := b.dateTime(t); ok {
			return x
		}
		return t
	case edm.TypeGuid:
		if len(v.Bytes) != len(edm.GUID{}) {
			return scalar(v)
		}
		p := b.take(2)
		copy(unsafe.Slice((*byte)(p), 16), v.Bytes)
		return forge(guidType, p)
	}
	return scalar(v)
}

func (b *Boxes) int32(v int32) any {
	if uint32(v) < 256 {
		return v // Go boxes these without allocating
	}
	p := b.take(1)
	*(*int32)(p) = v
	return forge(int32Type, p)
}

func (b *Boxes) int64(v int64) any { return forge(int64Type, b.word(uint64(v))) }

// dateTime boxes t if its Location pointer is nil (UTC), which the
// pointer-free chunk requires.
func (b *Boxes) dateTime(t time.Time) (any, bool) {
	w := unsafe.Slice((*uint64)(unsafe.Pointer(&t)), timeWords)
	if w[timeWords-1] != 0 {
		return nil, false
	}
	p := b.take(timeWords)
	copy(unsafe.Slice((*uint64)(p), timeWords), w)
	return forge(dateTimeType, p), true
}

// word stores w in a new slot and returns the slot.
func (b *Boxes) word(w uint64) unsafe.Pointer {
	p := b.take(1)
	*(*uint64)(p) = w
	return p
}

// take returns n new zero words of the current chunk.
func (b *Boxes) take(n int) unsafe.Pointer {
	if cap(b.words)-len(b.words) < n {
		b.Reserve(0, n)
	}
	start := len(b.words)
	b.words = b.words[:start+n]
	return unsafe.Pointer(&b.words[start])
}

// forge returns the interface value of type typ whose data is at data.
func forge(typ, data unsafe.Pointer) (v any) {
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = typ, data
	return v
}
