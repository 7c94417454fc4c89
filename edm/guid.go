package edm

import "encoding/hex"

// GUID is an Edm.Guid value: 16 bytes in the order its canonical text
// shows them.
type GUID [16]byte

// String returns the canonical lowercase text form,
// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func (g GUID) String() string {
	var b [36]byte
	hex.Encode(b[0:8], g[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], g[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], g[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], g[8:10])
	b[23] = '-'
	hex.Encode(b[24:36], g[10:16])
	return string(b[:])
}

// ParseGUID parses the canonical 8-4-4-4-12 hex form, either case. ok is
// false for any other text.
func ParseGUID(s string) (g GUID, ok bool) {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return GUID{}, false
	}
	for j, i := range guidDigits {
		hi, lo := unhex(s[i]), unhex(s[i+1])
		if hi > 15 || lo > 15 {
			return GUID{}, false
		}
		g[j] = hi<<4 | lo
	}
	return g, true
}

// guidDigits holds where each byte's two hex digits start in the text.
var guidDigits = [16]int{0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34}

// unhex returns the value of hex digit c, or 255 for any other byte.
func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 255
}
