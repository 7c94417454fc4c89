package entityenc

import (
	"encoding/binary"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/limits"
)

// quotedValuePrefixLen is how many bytes of a bad value messages quote.
const quotedValuePrefixLen = 64

// The system property names. They never appear in a property map.
const (
	NamePartitionKey = "PartitionKey"
	NameRowKey       = "RowKey"
	NameTimestamp    = "Timestamp"
)

// ValidateKey checks a PartitionKey or RowKey value; which names the key
// in messages. The empty string is a valid key, as on Azure; a missing
// key is the caller's to refuse (PropertiesNeedValue). Errors:
//   - OutOfRangeInput: v contains '/', '\\', '#', '?', U+0000-U+001F,
//     U+007F-U+009F, or is not valid UTF-8.
//   - KeyValueTooLarge: v is longer than 1024 UTF-16 code units.
func ValidateKey(which, v string) error {
	_, err := KeyUnits(which, v)
	return err
}

// KeyUnits is ValidateKey that also returns v's length in UTF-16 code
// units.
func KeyUnits(which, v string) (int, error) {
	if len(v) <= limits.MaxKeyUTF16 && plainKey(v) {
		return len(v), nil // ASCII: a unit per byte
	}
	units := 0
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || c == '/' || c == '\\' || c == '#' || c == '?' {
				return 0, Errorf(edm.CodeOutOfRangeInput, "the %s value %s is out of range: it contains the character %q",
					which, QuoteShort(v), rune(c))
			}
			units++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		if r == utf8.RuneError && size == 1 {
			return 0, Errorf(edm.CodeOutOfRangeInput, "the %s value %s is out of range: it is not valid UTF-8", which, QuoteShort(v))
		}
		if r <= 0x9f {
			return 0, Errorf(edm.CodeOutOfRangeInput, "the %s value %s is out of range: it contains the character %U",
				which, QuoteShort(v), r)
		}
		units += limits.UTF16Units(r)
		i += size
	}
	if units > limits.MaxKeyUTF16 {
		return 0, Errorf(edm.CodeKeyValueTooLarge, "the %s value is %d UTF-16 code units long; the limit is %d",
			which, units, limits.MaxKeyUTF16)
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
// sends KeyUnits to its exact checks, so a false negative costs time,
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

// ValidatePropertyName checks a user property name against Azure's rules
// (C# identifiers): a letter or '_' first, then letters, decimal digits,
// '_' and the other Unicode connectors (Pc) and combining marks (Mn, Mc).
// Letters and digits are Unicode ones; '-' and '.' are rejected. These are
// the identifiers the filter scanner reads.
// Errors: PropertyNameInvalid, PropertyNameTooLong (over 255 UTF-16 code
// units).
func ValidatePropertyName(name string) error {
	_, err := PropertyNameUnits(name)
	return err
}

// PropertyNameUnits is ValidatePropertyName that also returns the name's
// length in UTF-16 code units, checking a short ASCII identifier, the
// common case, in one pass.
func PropertyNameUnits(name string) (int, error) {
	if name != "" && len(name) <= limits.MaxNameUTF16 && asciiIdentifier(name) {
		return len(name), nil
	}
	if name == "" {
		return 0, Errorf(edm.CodePropertyNameInvalid, "the property name is empty")
	}
	n := limits.UTF16Len(name)
	if n > limits.MaxNameUTF16 {
		return 0, Errorf(edm.CodePropertyNameTooLong, "the property name %s is %d UTF-16 code units long; the limit is %d",
			QuoteShort(name), n, limits.MaxNameUTF16)
	}
	for i, r := range name {
		ok := r == '_' || unicode.IsLetter(r) ||
			(i > 0 && (unicode.IsDigit(r) || unicode.In(r, unicode.Mn, unicode.Mc, unicode.Pc)))
		if r == utf8.RuneError || !ok {
			return 0, Errorf(edm.CodePropertyNameInvalid, "the property name %s is invalid: a name is a letter or '_' followed by letters, digits, '_' and combining marks",
				QuoteShort(name))
		}
	}
	return n, nil
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

// IsSystemName reports whether name is one of the names a property map
// may not hold: PartitionKey, RowKey and Timestamp. ETag is an ordinary
// property name, as in Azure: the entity's own ETag travels apart from
// its properties (in odata.etag and the ETag header).
func IsSystemName(name string) bool {
	switch name {
	case NamePartitionKey, NameRowKey, NameTimestamp:
		return true
	}
	return false
}

// CheckPropertyName is PropertyNameUnits that also refuses the system
// names: InvalidInput for PartitionKey, RowKey and Timestamp, which live
// in an entity's own fields.
func CheckPropertyName(name string) (int, error) {
	if IsSystemName(name) {
		return 0, Errorf(edm.CodeInvalidInput, "the property name %q is reserved for the entity's own field", name)
	}
	return PropertyNameUnits(name)
}

// ValidateSelect checks the property names of a projection ($select).
// Each must be a valid property name or one of PartitionKey, RowKey and
// Timestamp. Repeated names are allowed. Errors: InvalidInput.
func ValidateSelect(names []string) error {
	for _, name := range names {
		if IsSystemName(name) {
			continue
		}
		if err := ValidatePropertyName(name); err != nil {
			return Errorf(edm.CodeInvalidInput, "cannot select property %s: %s", QuoteShort(name), err.(*Error).Message)
		}
	}
	return nil
}

// CheckLimits checks a complete entity given its user property count and
// its size by Azure's formula (limits.EntitySize): TooManyProperties over
// 252 properties, EntityTooLarge over 1 MiB.
func CheckLimits(count, size int) error {
	if code, msg := limits.Check(count, size); code != "" {
		return &Error{Code: code, Message: msg}
	}
	return nil
}

// ValidateTableName applies Azure's rules: ^[A-Za-z][A-Za-z0-9]{2,62}$,
// and "tables" is reserved. Errors: OutOfRangeInput (length),
// InvalidResourceName (characters), InvalidInput (the reserved name).
func ValidateTableName(name string) error {
	if len(name) < 3 || len(name) > 63 {
		return Errorf(edm.CodeOutOfRangeInput, "table name %q must be 3 to 63 characters long", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
		digit := c >= '0' && c <= '9'
		if !letter && !(digit && i > 0) {
			return Errorf(edm.CodeInvalidResourceName, "table name %q must start with a letter and hold only letters and digits", name)
		}
	}
	if strings.EqualFold(name, "tables") {
		return Errorf(edm.CodeInvalidInput, "table name %q is reserved", name)
	}
	return nil
}

// maxPageSize is the largest $top, for entities and for table listings.
const maxPageSize = 1000

// PageSize validates a Top value: 0 means 1000; 1..1000 are accepted.
// Errors: InvalidInput.
func PageSize(top int) (int, error) {
	switch {
	case top == 0:
		return maxPageSize, nil
	case top < 0 || top > maxPageSize:
		return 0, Errorf(edm.CodeInvalidInput, "top must be between 1 and %d, got %d", maxPageSize, top)
	}
	return top, nil
}

// CheckIfMatch checks the syntax of an If-Match value. A well-formed
// value is "*" or an HTTP entity-tag (RFC 9110, section 8.8.3): an
// optional weak prefix W/ (or w/, which Azure takes as weak too; see
// NormalizeIfMatch), then a double-quoted string of visible ASCII
// characters other than '"' (non-ASCII bytes are allowed too, as the
// RFC's obs-text). That covers every ETag this library issues,
// W/"datetime'2026-11-22T10%3A00%3A00.1234567Z'", and every form an Azure
// store has issued (W/"0x8D...", "0x8D..."), so an ETag read from Azure is
// never refused as malformed; it simply does not match ours.
// Errors: InvalidInput for anything else (no quotes, an empty value,
// spaces, a quote inside).
func CheckIfMatch(tag string) error {
	if tag == "*" {
		return nil
	}
	s := tag
	if len(s) >= 2 && (s[0] == 'W' || s[0] == 'w') && s[1] == '/' {
		s = s[2:]
	}
	ok := len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"'
	for i := 1; ok && i < len(s)-1; i++ {
		c := s[i]
		ok = c == 0x21 || (c >= 0x23 && c <= 0x7e) || c >= 0x80
	}
	if !ok {
		return Errorf(edm.CodeInvalidInput, "the if-match value %s is not an etag: want * or an HTTP entity-tag such as W/\"...\"",
			QuoteShort(tag))
	}
	return nil
}

// NormalizeIfMatch returns a well-formed If-Match value with a weak
// prefix w/ spelled W/, as the ETags it is compared with are.
func NormalizeIfMatch(tag string) string {
	if strings.HasPrefix(tag, "w/") {
		return "W/" + tag[2:]
	}
	return tag
}

// QuoteShort quotes s for an error message, cutting it after 64 bytes.
func QuoteShort(s string) string {
	if len(s) <= quotedValuePrefixLen {
		return strconv.Quote(s)
	}
	cut := quotedValuePrefixLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "..."
}
