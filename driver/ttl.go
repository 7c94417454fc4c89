package driver

import (
	"context"
	"time"
)

// TTL is a table's time-to-live settings. The zero value turns expiry
// off.
type TTL struct {
	// Default is how long after its Timestamp an entity expires when it
	// has no expiry property; 0: never.
	Default time.Duration
	// Property names an Edm.DateTime property holding an entity's own
	// expiry instant; an entity whose property is absent or of another
	// type falls back to Default. "": none.
	Property string
}

// Enabled reports whether any entity can expire under s.
func (s TTL) Enabled() bool { return s.Default > 0 || s.Property != "" }

// TTLTable is a Table whose store can expire entities. Optional: package
// tablestore answers NotImplemented when a Table lacks it. The remote
// Azure driver does not implement it: Azure Table Storage has no expiry.
type TTLTable interface {
	// SetTTL replaces the table's settings; they apply to every entity,
	// stored or written later, from the moment SetTTL returns. The caller
	// has validated s (Default >= 0; Property a valid property name or
	// ""). Errors: TableNotFound.
	SetTTL(ctx context.Context, s TTL) error
	// TTL returns the table's settings (the zero TTL when none are set).
	// Errors: TableNotFound.
	TTL(ctx context.Context) (TTL, error)
}

// ExpiryStats is a TTLTable that can count the entities that have expired
// but are still stored, awaiting the background sweeper.
type ExpiryStats interface {
	// Expired returns the number of expired entities not yet removed.
	// Errors: TableNotFound.
	Expired(ctx context.Context) (int64, error)
}
