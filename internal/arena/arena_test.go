package arena

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCopiesStayApart checks the contract the strings built over the
// arena rely on: a copy never changes when its source does, appending to
// a byte slice handed out never reaches another value, and strings and
// byte slices never share a chunk.
func TestCopiesStayApart(t *testing.T) {
	var a Arena
	src := []byte("hello")
	s := a.String(src)
	b := a.Bytes(src)
	src[0] = 'j'
	require.Equal(t, "hello", s)
	require.Equal(t, []byte("hello"), b)

	b2 := a.Bytes([]byte("next"))
	require.Equal(t, len(b), cap(b), "a slice's capacity is its length")
	b = append(b, '!') // must reallocate, not write over b2
	require.Equal(t, []byte("next"), b2)
	b[0] = 'X'
	require.Equal(t, "hello", s, "writing a byte slice never reaches a string")

	require.Equal(t, "", a.String(nil))
	require.NotNil(t, a.Bytes(nil))
	require.Empty(t, a.Bytes(nil))
	require.Equal(t, "", String(nil))
}

// TestChunks checks that many short copies share chunks and that a long
// value gets its own allocation, all copied exactly.
func TestChunks(t *testing.T) {
	var a Arena
	var out []string
	for i := range 2000 {
		out = append(out, a.String(bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%40)))
	}
	for i, s := range out {
		require.Equal(t, string(bytes.Repeat([]byte{byte('a' + i%26)}, 1+i%40)), s)
	}
	allocs := testing.AllocsPerRun(10, func() {
		var a Arena
		for range 1000 {
			a.String([]byte("sixteen bytes..."))
		}
	})
	require.LessOrEqual(t, allocs, float64(1000*16/ChunkSize+6), "one allocation per chunk")
	long := bytes.Repeat([]byte{7}, ChunkSize)
	require.Equal(t, long, a.Bytes(long))
	require.Equal(t, string(long), a.String(long))
}

func TestExpect(t *testing.T) {
	var a Arena
	a.Expect(8 << 10)
	first := a.String([]byte("abc"))
	require.Equal(t, "abc", first)
	require.Equal(t, 8<<10, cap(a.text), "the first chunk holds the text announced")
	allocs := testing.AllocsPerRun(10, func() {
		var a Arena
		a.Expect(1000 * 16)
		for range 1000 {
			a.String([]byte("sixteen bytes..."))
		}
	})
	require.LessOrEqual(t, allocs, float64(1000*16/ChunkSize+1), "no doubling from a small chunk")
	var c Arena
	c.Expect(ChunkSize + 1000)
	c.String(make([]byte, ChunkSize/4))
	require.Equal(t, ChunkSize, cap(c.text))
	for cap(c.text) == ChunkSize {
		c.String([]byte("sixteen bytes..."))
	}
	require.Equal(t, 1000, cap(c.text), "the last chunk is sized for the rest announced")
	var b Arena
	b.Expect(1 << 30)
	b.String([]byte("x"))
	require.Equal(t, ChunkSize, cap(b.text), "an announcement never makes a chunk over ChunkSize")
	b.String(make([]byte, ChunkSize))
	require.Equal(t, ChunkSize, cap(b.text), "a long value still gets its own allocation")
}
