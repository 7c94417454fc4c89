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
