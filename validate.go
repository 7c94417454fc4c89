package tablestore

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/tablestore/tablestore/internal/codec"
	"github.com/tablestore/tablestore/internal/limits"
)

// Azure's limits on keys, names, values and entities (see internal/limits).
const (
	maxKeyUTF16          = limits.MaxKeyUTF16
	maxNameUTF16         = limits.MaxNameUTF16
	maxValueBytes        = limits.MaxValueBytes
	maxUserProperties    = limits.MaxUserProperties
	maxEntityBytes       = limits.MaxEntityBytes
	quotedValuePrefixLen = 64 // bytes of a bad value quoted in messages
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
	_, err := keyUnits(which, v)
	return err
}

// keyUnits is validateKey that also returns v's length in UTF-16 code
// units.
func keyUnits(which, v string) (int, error) {
	if v == "" {
		return 0, newError(CodePropertiesNeedValue, "the %s value is empty", which)
	}
	if len(v) <= maxKeyUTF16 && plainKey(v) {
		return len(v), nil // ASCII: a unit per byte
	}
	units := 0
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '/' || c == '\\' || c == '#' || c == '?' {
				return 0, newError(CodeOutOfRangeInput, "the %s value %s is out of range: it contains the character %q",
					which, quoteShort(v), rune(c))
			}
			units++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && size == 1 {
			return 0, newError(CodeOutOfRangeInput, "the %s value %s is out of range: it is not valid UTF-8", which, quoteShort(v))
		}
		if r <= 0x9f {
			return 0, newError(CodeOutOfRangeInput, "the %s value %s is out of range: it contains the character %U",
				which, quoteShort(v), r)
		}
		units += limits.UTF16Units(r)
		i += size
	}
	if units > maxKeyUTF16 {
		return 0, newError(CodeKeyValueTooLarge, "the %s value is %d UTF-16 code units long; the limit is %d",
			which, units, maxKeyUTF16)
	}
	return units, nil
}

// plainKeyByte holds the bytes plainKey accepts: printable ASCII but '/',
// '\\', '#' and '?'.
var plainKeyByte = func() (ok [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		ok[c] = c != '/' && c != '\\' && c != '#' && c != '?'
	}
	return ok
}()

// plainKey reports whether v is ASCII without a character keys forbid,
// byte by byte when short, else reading eight bytes at a time; false
// sends validateKey to its exact checks, so a false negative costs time,
// never a wrong answer.
func plainKey(v string) bool {
	if len(v) < 16 {
		for i := 0; i < len(v); i++ {
			if !plainKeyByte[v[i]] {
				return false
			}
		}
		return true
	}
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	// has reports whether some byte of x (all below 0x80) is below n.
	has := func(x, n uint64) bool { return (x-ones*n)&^x&highs != 0 }
	whole := unsafe.Slice(unsafe.StringData(v), len(v)) // only read
	for b := whole; len(b) > 0; {
		var x uint64
		switch {
		case len(b) >= 8:
			x = binary.LittleEndian.Uint64(b)
			b = b[8:]
		case len(whole) >= 8:
			// The last eight bytes, some of them checked already.
			x = binary.LittleEndian.Uint64(whole[len(whole)-8:])
			b = nil
		default:
			// Fewer than eight bytes in all: above them, 'a's.
			x = ones * 'a'
			for i := len(b) - 1; i >= 0; i-- {
				x = x<<8 | uint64(b[i])
			}
			b = nil
		}
		if x&highs != 0 || has(x, 0x20) || has(x^ones*0x7f, 1) || has(x^ones*'/', 1) ||
			has(x^ones*'\\', 1) || has(x^ones*'#', 1) || has(x^ones*'?', 1) {
			return false
		}
	}
	return true
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
	if code, msg := limits.Check(count, size); code != "" {
		return newError(code, "%s", msg)
	}
	return nil
}

// entitySize returns the size of an entity by Azure's formula (see
// limits.EntitySize).
func entitySize(pk, rk string, props []codec.Property) int {
	return limits.EntitySize(pk, rk, props)
}

// utf16Len returns the number of UTF-16 code units of s.
func utf16Len(s string) int { return limits.UTF16Len(s) }

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

// validateTableName applies Azure's rules: ^[A-Za-z][A-Za-z0-9]{2,62}$,
// and "tables" is reserved.
func validateTableName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return newError(CodeOutOfRangeInput, "table name %q must be 3 to 63 characters long", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		digit := c >= '0' && c <= '9'
		if !letter && !(digit && i > 0) {
			return newError(CodeInvalidResourceName, "table name %q must start with a letter and hold only letters and digits", name)
		}
	}
	if strings.EqualFold(name, "tables") {
		return newError(CodeInvalidInput, "table name %q is reserved", name)
	}
	return nil
}

// maxPageSize is the largest $top, for entities and for table listings.
const maxPageSize = 1000

// pageSize validates a Top value: 0 means 1000; 1..1000 are accepted.
func pageSize(top int) (int, error) {
	switch {
	case top == 0:
		return maxPageSize, nil
	case top < 0 || top > maxPageSize:
		return 0, newError(CodeInvalidInput, "top must be between 1 and %d, got %d", maxPageSize, top)
	}
	return top, nil
}
