package filter

import "github.com/tablestore/tablestore/edm"

// Type is one of the eight EDM property types (package edm).
type Type = edm.Type

// The EDM types, as package edm defines them.
const (
	TypeString   = edm.TypeString
	TypeInt32    = edm.TypeInt32
	TypeInt64    = edm.TypeInt64
	TypeDouble   = edm.TypeDouble
	TypeBoolean  = edm.TypeBoolean
	TypeDateTime = edm.TypeDateTime
	TypeGuid     = edm.TypeGuid
	TypeBinary   = edm.TypeBinary
)

// Value is one typed value: a property of an entity or a literal of a
// filter (package edm describes its fields).
type Value = edm.Value

// Properties gives the evaluator access to one entity's properties,
// including the system properties PartitionKey, RowKey (strings) and
// Timestamp (DateTime). Lookup reports ok=false for an absent property.
// Implementations may decode lazily; Lookup must not retain name.
type Properties interface {
	Lookup(name string) (v Value, ok bool)
}
