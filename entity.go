package tablestore

import (
	"fmt"
	"time"

	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/codec"
)

// Entity is one row of a table: its key, the system properties the engine
// sets, and up to 252 user properties.
//
// Property values must have one of eight Go types, one per EDM type:
//
//	string     Edm.String
//	int32      Edm.Int32
//	int64      Edm.Int64
//	float64    Edm.Double
//	bool       Edm.Boolean
//	time.Time  Edm.DateTime (stored in UTC at 100 ns precision)
//	GUID       Edm.Guid
//	[]byte     Edm.Binary
//
// Any other type (including int) is rejected with InvalidValueType; a nil
// value means "no value": Insert and Replace drop it, Merge ignores it, as
// Azure does with JSON null. Int32 and Int64 stay distinct, as they do in
// Azure, because filters compare them differently.
type Entity struct {
	PartitionKey string
	RowKey       string
	// Timestamp is set by the engine on every write and strictly increases
	// per entity. Any value the caller sets is ignored.
	Timestamp time.Time
	// ETag identifies this version of the entity, for If-Match. The engine
	// sets it together with Timestamp.
	ETag ETag
	// Properties maps property names to values. It never holds
	// PartitionKey, RowKey or Timestamp. It may hold a user property named
	// ETag, as Azure allows: that is data, unrelated to the ETag field.
	Properties map[string]any
}

// ETag is an entity version in Azure's form,
// W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'". Compare ETags as opaque
// strings.
//
// As an If-Match value an ETag must be well-formed: ETagAny, or an HTTP
// entity-tag (an optional W/ and a double-quoted string of visible ASCII
// characters other than '"'). A well-formed ETag that is not the entity's
// current one fails with UpdateConditionNotSatisfied; anything else (no
// quotes, spaces, "abc") fails with InvalidInput before the entity is
// read. Azure's older ETags, W/"0x8D...", are well-formed.
type ETag string

// ETagAny is the If-Match wildcard: it matches any existing entity.
const ETagAny ETag = "*"

// etagFor returns the ETag of an entity written at ts:
// W/"datetime'2006-01-02T15%3A04%3A05.0000000Z'".
func etagFor(ts time.Time) ETag { return ETag(codec.FormatETag(ts)) }

// GUID is an Edm.Guid value: 16 bytes in the order the canonical text
// form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx shows them.
type GUID = edm.GUID

// ParseGUID parses the canonical text form (either case). Errors:
// InvalidInput.
func ParseGUID(s string) (GUID, error) {
	g, ok := edm.ParseGUID(s)
	if !ok {
		return GUID{}, newError(CodeInvalidInput, "malformed guid %q", s)
	}
	return g, nil
}

// UpdateMode says how an update or upsert treats the stored entity.
type UpdateMode uint8

const (
	// Merge changes or adds the properties given and keeps the others.
	Merge UpdateMode = iota + 1
	// Replace stores exactly the properties given.
	Replace
)

func (m UpdateMode) String() string {
	switch m {
	case Merge:
		return "merge"
	case Replace:
		return "replace"
	}
	return fmt.Sprintf("UpdateMode(%d)", uint8(m))
}
