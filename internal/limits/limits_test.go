package limits

import (
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestUTF16Len(t *testing.T) {
	tests := []struct {
		s    string
		want int
	}{
		{"", 0},
		{"abc", 3},
		{"é", 1},
		{"世界", 2},
		{"😀", 2},    // U+1F600 needs a surrogate pair
		{"a😀b", 4},  // mixed
		{"\xff", 1}, // invalid byte: one unit (U+FFFD)
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, UTF16Len(tc.s), "%q", tc.s)
		require.Equal(t, tc.want, UTF16LenBytes([]byte(tc.s)), "%q", tc.s)
		n, valid := UTF16LenValid(tc.s)
		require.Equal(t, utf8.ValidString(tc.s), valid, "%q", tc.s)
		if valid {
			require.Equal(t, tc.want, n, "%q", tc.s)
		}
	}
	for _, s := range []string{"abcdefgh\xff", "abcdefghé\xc3", "abcdefghij😀", "\xed\xa0\x80"} {
		n, valid := UTF16LenValid(s)
		require.Equal(t, utf8.ValidString(s), valid, "%q", s)
		if valid {
			require.Equal(t, UTF16Len(s), n, "%q", s)
		}
	}
}

func TestEntitySize(t *testing.T) {
	// Worked by hand from Azure's formula.
	props := []driver.Property{
		{Name: "Bin", Value: edm.Value{Type: edm.TypeBinary, Bytes: make([]byte, 10)}}, // 8+6+4+10 = 28
		{Name: "Bool", Value: edm.Value{Type: edm.TypeBoolean, Int: 1}},                // 8+8+1 = 17
		{Name: "D", Value: edm.Value{Type: edm.TypeDouble}},                            // 8+2+8 = 18
		{Name: "Dt", Value: edm.Value{Type: edm.TypeDateTime}},                         // 8+4+8 = 20
		{Name: "G", Value: edm.Value{Type: edm.TypeGuid, Bytes: make([]byte, 16)}},     // 8+2+16 = 26
		{Name: "I", Value: edm.Value{Type: edm.TypeInt32}},                             // 8+2+4 = 14
		{Name: "L", Value: edm.Value{Type: edm.TypeInt64}},                             // 8+2+8 = 18
		{Name: "S", Value: edm.Value{Type: edm.TypeString, Bytes: []byte("h😀")}},       // 8+2+4+6 = 20
		{Name: "é", Value: edm.Value{Type: edm.TypeString, Bytes: []byte{}}},           // 8+2+4 = 14
	}
	// 4 + 2*(2+4) = 16 for the keys "pk" and "rk😀" (the emoji is two units).
	require.Equal(t, 16+28+17+18+20+26+14+18+20+14, EntitySize("pk", "rk😀", props))
	require.Equal(t, 4, EntitySize("", "", nil))
}

// TestASCIIPrefixLen checks the word-at-a-time scan against a byte loop
// for every length up to 40 and every position of one non-ASCII byte,
// reaching each whole word, the overlapping last word and short input.
func TestASCIIPrefixLen(t *testing.T) {
	byteLoop := func(b []byte) int {
		n := 0
		for n < len(b) && b[n] < utf8.RuneSelf {
			n++
		}
		return n
	}
	for size := 0; size <= 40; size++ {
		b := make([]byte, size)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		require.Equal(t, size, asciiPrefixLen(b), "all ASCII, length %d", size)
		for at := range b {
			for _, c := range []byte{0x80, 0xc3, 0xff} {
				b[at] = c
				require.Equal(t, byteLoop(b), asciiPrefixLen(b), "length %d, %#x at %d", size, c, at)
				b[at] = 'a' + byte(at%26)
			}
		}
	}
}
