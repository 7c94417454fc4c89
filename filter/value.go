package filter

import "github.com/tablestore/tablestore/edm"

// Properties gives the evaluator access to one entity's properties,
// including the system properties PartitionKey, RowKey (strings) and
// Timestamp (DateTime). Lookup reports ok=false for an absent property.
// Implementations may decode lazily; Lookup must not retain name.
type Properties interface {
	Lookup(name string) (v edm.Value, ok bool)
}
