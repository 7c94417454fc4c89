package edm

// Type is one of the eight EDM property types.
type Type uint8

// The EDM types. The zero Type is invalid.
const (
	TypeString   Type = iota + 1 // Edm.String
	TypeInt32                    // Edm.Int32
	TypeInt64                    // Edm.Int64
	TypeDouble                   // Edm.Double
	TypeBoolean                  // Edm.Boolean
	TypeDateTime                 // Edm.DateTime
	TypeGuid                     // Edm.Guid
	TypeBinary                   // Edm.Binary
)

var typeNames = [...]string{
	TypeString:   "Edm.String",
	TypeInt32:    "Edm.Int32",
	TypeInt64:    "Edm.Int64",
	TypeDouble:   "Edm.Double",
	TypeBoolean:  "Edm.Boolean",
	TypeDateTime: "Edm.DateTime",
	TypeGuid:     "Edm.Guid",
	TypeBinary:   "Edm.Binary",
}

// String returns the EDM name of t, such as "Edm.Int64".
func (t Type) String() string {
	if t == 0 || int(t) >= len(typeNames) {
		return "Edm.Invalid"
	}
	return typeNames[t]
}

// ParseType returns the Type named name ("Edm.Int64"), matched exactly;
// ok is false for any other text.
func ParseType(name string) (t Type, ok bool) {
	for i, n := range typeNames {
		if i != 0 && n == name {
			return Type(i), true
		}
	}
	return 0, false
}

// Value is one typed value: a property of an entity or a literal of a
// filter. It is a plain struct so that comparing two values allocates
// nothing. Which field holds the value depends on Type:
//
//	String    Bytes (UTF-8)
//	Int32     Int
//	Int64     Int
//	Double    Float
//	Boolean   Int (0 or 1)
//	DateTime  Int (ticks: 100 ns units since 0001-01-01T00:00:00Z, UTC)
//	Guid      Bytes (16 bytes, in the order the canonical text shows them)
//	Binary    Bytes
//
// Bytes may alias the caller's buffer; a Value is valid only as long as the
// memory it came from.
type Value struct {
	Type  Type
	Int   int64
	Float float64
	Bytes []byte
}
