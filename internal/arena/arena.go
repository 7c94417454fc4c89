// Package arena hands out copies of byte slices from chunks it allocates,
// so the many short strings of a query page cost one allocation per chunk
// instead of one each.
//
// Memory handed out is never written again, which is what makes the
// strings built over it (with unsafe.String) immutable, as Go requires. A
// chunk stays alive as long as any string or slice in it: a string kept
// from a page keeps its chunk (at most ChunkSize bytes) alive.
package arena

import (
	"strings"
	"unsafe"
)

// Chunks start at firstChunk bytes and double up to ChunkSize, so one small
// entity costs little and a long page few allocations; values longer than
// a quarter of ChunkSize get an allocation of their own.
const (
	firstChunk = 512
	ChunkSize  = 16 << 10
)

// Arena is a source of copies. The zero Arena is ready to use. An Arena is
// used by one goroutine; what it hands out may be shared freely.
type Arena struct {
	text []byte // the current chunk for strings: len used, cap total
	bin  []byte // the current chunk for byte slices, apart from text
	// want is what is left of the text Expect announced that no chunk
	// holds yet: the next text chunk is sized for it (up to ChunkSize)
	// rather than doubled from the last.
	want int
}

// Expect tells the arena that about n bytes of text are to come, so the
// text chunks it starts next hold them (up to ChunkSize each) at once
// instead of growing there by doubling, the last one no larger than the
// rest of n needs. It changes only chunk sizes, never what String returns.
func (a *Arena) Expect(n int) { a.want = n }

// String returns a copy of b as a string.
func (a *Arena) String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if a.want > 0 && cap(a.text)-len(a.text) < len(b) && len(b) <= ChunkSize/4 {
		// A new chunk is due: size it for the text announced.
		n := max(min(a.want, ChunkSize), firstChunk, len(b))
		a.text, a.want = newText(n), a.want-n
	}
	return String(take(&a.text, b, newText))
}

// Bytes returns a copy of b whose capacity is its length, so appending to
// it never reaches memory handed out for another value. The copy of an
// empty b is empty but not nil. Byte slices come from chunks apart from
// strings', so writing into a returned slice never changes a string.
func (a *Arena) Bytes(b []byte) []byte {
	if len(b) == 0 {
		return []byte{}
	}
	return take(&a.bin, b, newBytes)
}

// take copies b to the end of *chunk, starting a new chunk (of alloc)
// when it is full, and returns the copy.
func take(chunk *[]byte, b []byte, alloc func(n int) []byte) []byte {
	c := *chunk
	if cap(c)-len(c) < len(b) {
		if len(b) > ChunkSize/4 {
			return append(alloc(len(b)), b...)
		}
		c = alloc(max(min(2*cap(c), ChunkSize), firstChunk, len(b)))
	}
	start := len(c)
	c = append(c, b...)
	*chunk = c
	return c[start:len(c):len(c)]
}

// newBytes returns an empty slice of capacity n, zeroed.
func newBytes(n int) []byte { return make([]byte, 0, n) }

// newText returns an empty slice of capacity n that is not zeroed: every
// byte of a text chunk is written before a string covers it, so clearing
// it first is wasted work. strings.Builder.Grow is the standard library's
// way to get such memory; the builder is dropped at once and its one
// byte, the only string made over the memory, is never seen.
func newText(n int) []byte {
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteByte(0)
	return unsafe.Slice(unsafe.StringData(sb.String()), n)[:0]
}

// String returns b as a string without copying it (unsafe.String).
//
// REQUIRES: nothing writes b's bytes again, for as long as the string
// lives. Arena's chunks satisfy this, and so does a record a driver has
// handed over for good (driver.Table.Get's).
func String(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// StringBytes returns s's bytes without copying them (unsafe.Slice), for
// reading only.
//
// REQUIRES: nothing writes the returned bytes.
func StringBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
