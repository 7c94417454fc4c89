// Package limits holds Azure Table Storage's size limits and its entity
// size formula, shared by the root package's validation and by the
// embedded engine, which checks the result of a merge against them.
package limits

import (
	"encoding/binary"
	"fmt"
	"github.com/tablestore/tablestore/driver"
	"unicode/utf8"
	"unsafe"

	"github.com/tablestore/tablestore/edm"
)

// Azure's limits on keys, names, values and entities.
const (
	MaxKeyUTF16       = 1024    // UTF-16 code units in a PartitionKey or RowKey
	MaxNameUTF16      = 255     // UTF-16 code units in a property name
	MaxValueBytes     = 1 << 16 // String (as UTF-16) and Binary values
	MaxUserProperties = 252     // 255 minus PartitionKey, RowKey, Timestamp
	MaxEntityBytes    = 1 << 20 // Azure's size formula, see EntitySize
)

// Check checks a complete entity given its user property count and its
// size by EntitySize. It returns "" when both fit, else Azure's code
// (TooManyProperties over 252 properties, EntityTooLarge over 1 MiB) and a
// lowercase message.
func Check(count, size int) (code edm.Code, message string) {
	if count > MaxUserProperties {
		return edm.CodeTooManyProperties, fmt.Sprintf("the entity has %d properties; the limit is %d user properties",
			count, MaxUserProperties)
	}
	if size > MaxEntityBytes {
		return edm.CodeEntityTooLarge, fmt.Sprintf("the entity is %d bytes by Azure's size formula; the limit is %d",
			size, MaxEntityBytes)
	}
	return "", ""
}

// KeysSize is EntitySize's share for keys of pkUnits and rkUnits UTF-16
// code units.
func KeysSize(pkUnits, rkUnits int) int { return 4 + 2*(pkUnits+rkUnits) }

// NameSize is EntitySize's share for a property name of units UTF-16 code
// units, its value aside.
func NameSize(units int) int { return 8 + 2*units }

// EntitySize returns the size of an entity by Azure's formula: 4 bytes,
// plus 2 bytes per UTF-16 code unit of both keys, plus for each property
// 8 bytes, 2 per UTF-16 code unit of its name, and its value's size
// (String 4 + 2 per code unit, Binary 4 + length, DateTime 8, Guid 16,
// Double 8, Int32 4, Int64 8, Boolean 1). Transactions sum it against their
// 4 MiB limit.
func EntitySize(pk, rk string, props []driver.Property) int {
	n := KeysSize(UTF16Len(pk), UTF16Len(rk))
	for i := range props {
		p := &props[i]
		n += NameSize(UTF16Len(p.Name))
		switch p.Value.Type {
		case edm.TypeString:
			n += 4 + 2*UTF16LenBytes(p.Value.Bytes)
		case edm.TypeBinary:
			n += 4 + len(p.Value.Bytes)
		case edm.TypeInt32:
			n += 4
		case edm.TypeBoolean:
			n++
		case edm.TypeGuid:
			n += 16
		default: // Int64, Double, DateTime
			n += 8
		}
	}
	return n
}

// UTF16Len returns the number of UTF-16 code units of s. Invalid UTF-8
// bytes count one unit each.
func UTF16Len(s string) int {
	// The bytes are only read: s's memory is never written through them.
	n := asciiPrefixLen(unsafe.Slice(unsafe.StringData(s), len(s)))
	if n == len(s) {
		return n
	}
	for _, r := range s[n:] {
		n += UTF16Units(r)
	}
	return n
}

// UTF16LenValid returns the number of UTF-16 code units of s and whether
// s is valid UTF-8, reading ASCII text once.
func UTF16LenValid(s string) (n int, valid bool) {
	// The bytes are only read: s's memory is never written through them.
	n = asciiPrefixLen(unsafe.Slice(unsafe.StringData(s), len(s)))
	if n == len(s) {
		return n, true
	}
	if !utf8.ValidString(s[n:]) {
		return 0, false
	}
	for _, r := range s[n:] {
		n += UTF16Units(r)
	}
	return n, true
}

// UTF16LenBytes is UTF16Len for a byte slice.
func UTF16LenBytes(b []byte) int {
	n := asciiPrefixLen(b)
	b = b[n:]
	for len(b) > 0 {
		c := b[0]
		if c < utf8.RuneSelf {
			n++
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		n += UTF16Units(r)
		b = b[size:]
	}
	return n
}

// asciiPrefixLen returns the length of b's longest ASCII prefix, reading
// eight bytes at a time: ASCII text is one UTF-16 code unit a byte. When
// every full word is ASCII, one more word, the last eight bytes
// (overlapping), settles the tail; shorter b is read byte by byte. Words
// are loaded without bounds checks, always inside b.
func asciiPrefixLen(b []byte) int {
	const high = 0x8080808080808080
	n, i := len(b), 0
	if n >= 8 {
		p := unsafe.Pointer(unsafe.SliceData(b))
		for ; i+8 <= n; i += 8 {
			if word(p, i)&high != 0 {
				break
			}
		}
		if i+8 > n && word(p, n-8)&high == 0 {
			return n
		}
	}
	for i < n && b[i] < utf8.RuneSelf {
		i++
	}
	return i
}

// word loads the eight bytes at p+i, little-endian. It goes through a byte
// array, whose alignment is one, so it is valid at any address.
func word(p unsafe.Pointer, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, i))[:])
}

// UTF16Units returns the UTF-16 code units of r: 2 above the BMP, else 1.
func UTF16Units(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}
