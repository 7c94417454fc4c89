package tablestore

import (
	"encoding/binary"
	"strconv"
	"unicode"
	"unicode/utf8"

	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
)

// Azure's limits on keys, names, values and entities.
const (
	maxKeyUTF16          = 1024    // UTF-16 code units in a PartitionKey or RowKey
	maxNameUTF16         = 255     // UTF-16 code units in a property name
	maxValueBytes        = 1 << 16 // String (as UTF-16) and Binary values
	maxUserProperties    = 252     // 255 minus PartitionKey, RowKey, Timestamp
	maxEntityBytes       = 1 << 20 // Azure's size formula, see entitySize
	quotedValuePrefixLen = 64      // bytes of a bad value quoted in messages
)

// The system property names. They never appear in Entity.Properties.
const (
	namePartitionKey = "PartitionKey"
	nameRowKey       = "RowKey"
	nameTimestamp    = "Timestamp"
)

// validateKey checks a PartitionKey or RowKey value; which names the key
// in messages. Errors:
//   - PropertiesNeedValue: v is empty. Azure may accept empty keys; we do
//     not, because an unset string field of a Go struct is empty too and
//     the two cannot be told apart.
//   - OutOfRangeInput: v contains '/', '\\', '#', '?', U+0000-U+001F,
//     U+007F-U+009F, or is not valid UTF-8.
//   - KeyValueTooLarge: v is longer than 1024 UTF-16 code units.
func validateKey(which, v string) error {
	if v == "" {
		return newError(CodePropertiesNeedValue, "the %s value is empty", which)
	}
	units := 0
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '/' || c == '\\' || c == '#' || c == '?' {
				return newError(CodeOutOfRangeInput, "the %s value %s is out of range: it contains the character %q",
					which, quoteShort(v), rune(c))
			}
			units++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && size == 1 {
			return newError(CodeOutOfRangeInput, "the %s value %s is out of range: it is not valid UTF-8", which, quoteShort(v))
		}
		if r <= 0x9f {
			return newError(CodeOutOfRangeInput, "the %s value %s is out of range: it contains the character %U",
				which, quoteShort(v), r)
		}
		units += utf16Units(r)
		i += size
	}
	if units > maxKeyUTF16 {
		return newError(CodeKeyValueTooLarge, "the %s value is %d UTF-16 code units long; the limit is %d",
			which, units, maxKeyUTF16)
	}
	return nil
}

// validatePropertyName checks a user property name against Azure's rules
// (C# identifiers): a letter or '_' first, then letters, decimal digits,
// '_' and the other Unicode connectors (Pc) and combining marks (Mn, Mc).
// Letters and digits are Unicode ones; '-' and '.' are rejected. These are
// the identifiers the filter scanner reads.
// Errors: PropertyNameInvalid, PropertyNameTooLong (over 255 UTF-16 code
// units).
func validatePropertyName(name string) error {
	if name == "" {
		return newError(CodePropertyNameInvalid, "the property name is empty")
	}
	if n := utf16Len(name); n > maxNameUTF16 {
		return newError(CodePropertyNameTooLong, "the property name %s is %d UTF-16 code units long; the limit is %d",
			quoteShort(name), n, maxNameUTF16)
	}
	if asciiIdentifier(name) {
		return nil
	}
	for i, r := range name {
		ok := r == '_' || unicode.IsLetter(r) ||
			(i > 0 && (unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Pc)))
		if r == utf8.RuneError || !ok {
			return newError(CodePropertyNameInvalid, "the property name %s is invalid: a name is a letter or '_' followed by letters, digits, '_' and combining marks",
				quoteShort(name))
		}
	}
	return nil
}

// asciiIdentifier reports whether name is an ASCII identifier: a letter
// or '_', then letters, digits and '_'. It is the common case, checked
// without Unicode tables.
func asciiIdentifier(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// isSystemName reports whether name is one of the names Properties may
// not hold: PartitionKey, RowKey and Timestamp. ETag is an ordinary
// property name, as in Azure: the entity's own ETag travels apart from
// its properties (in odata.etag and the ETag header).
func isSystemName(name string) bool {
	switch name {
	case namePartitionKey, nameRowKey, nameTimestamp:
		return true
	}
	return false
}

// validateSelect checks the property names of a projection ($select).
// Each must be a valid property name or one of PartitionKey, RowKey and
// Timestamp. Repeated names are allowed. Errors: InvalidInput.
func validateSelect(names []string) error {
	for _, name := range names {
		switch name {
		case namePartitionKey, nameRowKey, nameTimestamp:
			continue
		}
		if err := validatePropertyName(name); err != nil {
			return newError(CodeInvalidInput, "cannot select property %s: %s", quoteShort(name), err.(*Error).Message)
		}
	}
	return nil
}

// checkEntityLimits checks a complete entity: TooManyProperties when it
// has more than 252 user properties, EntityTooLarge when entitySize
// exceeds 1 MiB.
func checkEntityLimits(pk, rk string, props []codec.Property) error {
	return checkLimits(len(props), entitySize(pk, rk, props))
}

// checkLimits is checkEntityLimits given the property count and the
// entity's size by Azure's formula.
func checkLimits(count, size int) error {
	if count > maxUserProperties {
		return newError(CodeTooManyProperties, "the entity has %d properties; the limit is %d user properties",
			count, maxUserProperties)
	}
	if size > maxEntityBytes {
		return newError(CodeEntityTooLarge, "the entity is %d bytes by Azure's size formula; the limit is %d",
			size, maxEntityBytes)
	}
	return nil
}

// entitySize returns the size of an entity by Azure's formula: 4 bytes,
// plus 2 bytes per UTF-16 code unit of both keys, plus for each property
// 8 bytes, 2 per UTF-16 code unit of its name, and its value's size
// (String 4 + 2 per code unit, Binary 4 + length, DateTime 8, Guid 16,
// Double 8, Int32 4, Int64 8, Boolean 1). Transactions sum it against their
// 4 MiB limit.
func entitySize(pk, rk string, props []codec.Property) int {
	n := 4 + 2*(utf16Len(pk)+utf16Len(rk))
	for i := range props {
		p := &props[i]
		n += 8 + 2*utf16Len(p.Name)
		switch p.Value.Type {
		case filter.TypeString:
			n += 4 + 2*utf16LenBytes(p.Value.Bytes)
		case filter.TypeBinary:
			n += 4 + len(p.Value.Bytes)
		case filter.TypeInt32:
			n += 4
		case filter.TypeBoolean:
			n++
		case filter.TypeGuid:
			n += 16
		default: // Int64, Double, DateTime
			n += 8
		}
	}
	return n
}

// utf16Len returns the number of UTF-16 code units of s. Invalid UTF-8
// bytes count one unit each.
func utf16Len(s string) int {
	n := asciiPrefixLen(readOnlyBytes(s))
	if n == len(s) {
		return n
	}
	for _, r := range s[n:] {
		n += utf16Units(r)
	}
	return n
}

// asciiPrefixLen returns the length of b's longest ASCII prefix, reading
// eight bytes at a time: ASCII text is one UTF-16 code unit a byte.
func asciiPrefixLen(b []byte) int {
	n := 0
	for ; n+8 <= len(b); n += 8 {
		if binary.LittleEndian.Uint64(b[n:])&0x8080808080808080 != 0 {
			break
		}
	}
	for n < len(b) && b[n] < utf8.RuneSelf {
		n++
	}
	return n
}

// utf16LenBytes is utf16Len for a byte slice.
func utf16LenBytes(b []byte) int {
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
		n += utf16Units(r)
		b = b[size:]
	}
	return n
}

func utf16Units(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// quoteShort quotes s for an error message, cutting it after
// quotedValuePrefixLen bytes.
func quoteShort(s string) string {
	if len(s) <= quotedValuePrefixLen {
		return strconv.Quote(s)
	}
	cut := quotedValuePrefixLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}
