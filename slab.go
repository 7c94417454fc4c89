package tablestore

import (
	"time"
	"unsafe"
)

// arena hands out copies of byte slices from chunks it allocates, so many
// short strings cost one allocation per chunk. Memory handed out is never
// written again: strings from it stay immutable. A chunk lives as long as
// any string or slice in it.
type arena struct {
	text []byte // the current chunk for strings: len used, cap total
	bin  []byte // the current chunk for Binary values, apart from text
}

// Chunks start at arenaFirst bytes and double up to arenaChunk, so one
// small entity costs little and a long page few allocations; values
// longer than a quarter of arenaChunk get their own.
const (
	arenaFirst = 512
	arenaChunk = 16 << 10
)

// String returns a copy of b as a string.
func (a *arena) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafeString(a.take(&a.text, b))
}

// Bytes returns a copy of b whose capacity is its length, so appending to
// it never reaches memory handed out to another value. The copy of an
// empty b is empty but not nil.
func (a *arena) Bytes(b []byte) []byte {
	if len(b) == 0 {
		return []byte{}
	}
	return a.take(&a.bin, b)
}

func (a *arena) take(chunk *[]byte, b []byte) []byte {
	c := *chunk
	if cap(c)-len(c) < len(b) {
		if len(b) > arenaChunk/4 {
			return append(make([]byte, 0, len(b)), b...)
		}
		c = make([]byte, 0, max(min(2*cap(c), arenaChunk), arenaFirst, len(b)))
	}
	start := len(c)
	c = append(c, b...)
	*chunk = c
	return c[start:len(c):len(c)]
}

// unsafeString returns b as a string without copying. The caller
// guarantees b is never written again.
func unsafeString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// boxes makes interface values whose data lives in slabs, one per Go
// type, instead of one allocation per boxed value. An interface value is
// a type word and a pointer to an immutable value; boxes builds that pair
// itself, pointing into a slab element that is never written again. This
// is what the runtime does when it boxes, with the allocation shared.
type boxes struct {
	strs  []string
	words []uint64 // int32, int64 and float64 values
	times []time.Time
	guids []GUID
	blobs [][]byte
}

// eface is the layout of an interface value with no methods.
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func typeWord(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

var (
	stringWord  = typeWord("")
	int32Word   = typeWord(int32(0))
	int64Word   = typeWord(int64(0))
	float64Word = typeWord(float64(0))
	timeWord    = typeWord(time.Time{})
	guidWord    = typeWord(GUID{})
	bytesWord   = typeWord([]byte(nil))
)

// boxed returns the interface value of type word typ holding *p.
func boxed(typ, p unsafe.Pointer) (v any) {
	*(*eface)(unsafe.Pointer(&v)) = eface{typ: typ, data: p}
	return v
}

// next returns a pointer to a fresh element of *slab, starting a new slab
// when it is full. Elements once returned are never moved.
func next[E any](slab *[]E) *E {
	s := *slab
	if len(s) == cap(s) {
		s = make([]E, 0, slabSize(cap(s)))
	}
	s = s[:len(s)+1]
	*slab = s
	return &s[len(s)-1]
}

func (b *boxes) String(s string) any {
	if s == "" {
		return "" // boxed without allocating
	}
	p := next(&b.strs)
	*p = s
	return boxed(stringWord, unsafe.Pointer(p))
}

func (b *boxes) Int32(x int32) any {
	p := next(&b.words)
	*(*int32)(unsafe.Pointer(p)) = x
	return boxed(int32Word, unsafe.Pointer(p))
}

func (b *boxes) Int64(x int64) any {
	p := next(&b.words)
	*(*int64)(unsafe.Pointer(p)) = x
	return boxed(int64Word, unsafe.Pointer(p))
}

func (b *boxes) Float64(x float64) any {
	p := next(&b.words)
	*(*float64)(unsafe.Pointer(p)) = x
	return boxed(float64Word, unsafe.Pointer(p))
}

func (b *boxes) Time(t time.Time) any {
	p := next(&b.times)
	*p = t
	return boxed(timeWord, unsafe.Pointer(p))
}

func (b *boxes) GUID(g GUID) any {
	p := next(&b.guids)
	*p = g
	return boxed(guidWord, unsafe.Pointer(p))
}

func (b *boxes) Bytes(v []byte) any {
	p := next(&b.blobs)
	*p = v
	return boxed(bytesWord, unsafe.Pointer(p))
}
