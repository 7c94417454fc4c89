// Package wire is Azure Table Storage's JSON wire format for entities, in
// one place: the writer of the three metadata levels (no, minimal and
// full metadata) and the decoder that reads an entity body and infers
// types as Azure does. The root package's Entity.MarshalJSON,
// Entity.UnmarshalJSON and AppendEntityJSON are this package, and the
// REST server, the command and the remote driver reach it through them.
// DecodeRecord reads a body as Decode does but straight into the stored
// record of its properties, for writes, without a property map; both
// read with one scanner.
//
// AppendRecord writes the same JSON straight from a stored record
// (driver.Record), without a property map, for query pages. The package
// also holds the one JSON string writer (AppendString), the one builder
// of an entity's path for its links and Location headers
// (AppendEntityPath), and reads numbers with the one number grammar
// (entityenc.NumberEnd).
//
// The decoder refuses what it cannot read exactly: malformed JSON,
// invalid UTF-8 anywhere in a string (raw bytes, or a \u escape of a lone
// UTF-16 surrogate), nested objects and arrays; it never repairs input.
// Errors are *entityenc.Error values with Azure's codes.
package wire

import (
	"time"

	"github.com/tablestore/tablestore/internal/entityenc"
)

// Entity is an entity as the wire format carries it. Properties holds
// values of the Go types package entityenc encodes.
type Entity struct {
	PartitionKey, RowKey string
	Timestamp            time.Time // zero when absent
	ETag                 string    // "" when absent
	Properties           map[string]any
}

// The reserved keys and suffixes of the format.
const (
	etagKey    = "odata.etag"
	typeSuffix = "@odata.type"
)

// AppendString appends s to dst as a JSON string: '"' and '\\' are
// escaped, and so is every control character (\n, \r and \t by their
// short forms, the others as \u00XX); every other byte is copied as it
// is, so valid UTF-8 stays valid, and invalid UTF-8 stays invalid, for a
// strict decoder to refuse, rather than being repaired.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s)
	return append(dst, '"')
}

// appendEscaped is AppendString without the quotes.
func appendEscaped(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}

// isSystem reports whether name is one of the entity's own fields.
func isSystem(name string) bool { return entityenc.IsSystemName(name) }
