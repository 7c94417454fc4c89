package tablestore

import (
	"context"
	"time"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// TTL is a table's time-to-live settings (see Table.SetTTL). The zero
// value turns expiry off.
type TTL struct {
	// Default is how long after its Timestamp (its last write) an entity
	// expires when it has no expiry property. 0: never.
	Default time.Duration
	// Property names an Edm.DateTime property holding the entity's own
	// expiry instant; an entity without it (or with a value of another
	// type) falls back to Default. "": none.
	Property string
}

// MaxTTLDefault is the longest TTL.Default accepted: 100 years.
const MaxTTLDefault = 100 * 365 * 24 * time.Hour

// SetTTL sets the table's time-to-live settings, which apply to every
// entity, stored or written later, from the moment SetTTL returns; the
// entities that have expired under the old settings are removed first,
// so they never come back. An
// entity expires at its Property's DateTime if it has one, otherwise at
// its Timestamp plus Default; with neither it never expires.
//
// An entity whose expiry is at or before the store's clock is absent at
// once for every read and precondition: Get answers ResourceNotFound,
// queries (index reads included) skip it, Insert over it succeeds,
// Update, Merge and a Delete answer as for an absent entity, transactions
// and the bulk writer see it absent. The clock is Options.Clock kept from
// going backwards (as for Timestamps, across restarts too), so an entity
// that has expired never comes back. A background sweeper later removes
// expired entities physically, at most Options.SweepRate per second.
// With the table's change feed on, each removal is recorded as a
// ChangeExpire change in the removing commit (see ChangeExpire).
//
// The embedded engine rebuilds the table's expiry index by a scan of the
// table inside SetTTL: on a large table it takes time in proportion, and
// writes to the table wait for it (writes to other tables, and reads, do
// not; neither do deletions of a partition's range).
//
// Errors: InvalidInput for a negative Default or one over MaxTTLDefault;
// PropertyNameInvalid or PropertyNameTooLong for a bad Property, or
// InvalidInput for one of the system properties; TableNotFound;
// NotImplemented for a driver without expiry (the remote Azure driver:
// Azure Table Storage has no expiry).
func (t *Table) SetTTL(ctx context.Context, s TTL) error {
	if err := t.db.checkContext(ctx); err != nil {
		return err
	}
	if s.Default < 0 || s.Default > MaxTTLDefault {
		return newError(edm.CodeInvalidInput, "the TTL default %s is not within 0 and %s", s.Default, MaxTTLDefault)
	}
	if s.Property != "" {
		switch s.Property {
		case "PartitionKey", "RowKey", "Timestamp":
			return newError(edm.CodeInvalidInput, "the TTL property cannot be the system property %s", s.Property)
		}
		if err := entityenc.ValidatePropertyName(s.Property); err != nil {
			return coded(err)
		}
	}
	tt, err := t.ttlTable()
	if err != nil {
		return err
	}
	if err := tt.SetTTL(ctx, driver.TTL(s)); err != nil {
		return mapError(err, false)
	}
	return nil
}

// TTL returns the table's time-to-live settings; the zero TTL when none
// are set. Errors: TableNotFound; NotImplemented for a driver without
// expiry.
func (t *Table) TTL(ctx context.Context) (TTL, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return TTL{}, err
	}
	tt, err := t.ttlTable()
	if err != nil {
		return TTL{}, err
	}
	s, err := tt.TTL(ctx)
	if err != nil {
		return TTL{}, mapError(err, false)
	}
	return TTL(s), nil
}

// ExpiredCount returns how many of the table's entities have expired but
// are still stored, awaiting the background sweeper. It reads only those
// entities' expiry index entries (after a DeleteRange, it may count
// entities the range deletion already removed, until the sweeper passes).
// Errors: TableNotFound; NotImplemented for a driver without expiry.
func (t *Table) ExpiredCount(ctx context.Context) (int64, error) {
	if err := t.db.checkContext(ctx); err != nil {
		return 0, err
	}
	es, ok := t.drv.(driver.ExpiryStats)
	if !ok {
		return 0, newError(edm.CodeNotImplemented, "the store's driver does not expire entities")
	}
	n, err := es.Expired(ctx)
	if err != nil {
		return 0, mapError(err, false)
	}
	return n, nil
}

func (t *Table) ttlTable() (driver.TTLTable, error) {
	tt, ok := t.drv.(driver.TTLTable)
	if !ok {
		return nil, newError(edm.CodeNotImplemented, "the store's driver does not expire entities")
	}
	return tt, nil
}
