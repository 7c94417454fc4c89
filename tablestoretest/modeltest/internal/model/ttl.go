package model

import (
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// clock is the model's idea of the store's clock: Origin, a lower bound
// of the store's clock when the workload starts, plus the time the
// workload has moved it forward (Advance). The store's own clock also
// runs a little between operations; a workload that expects the model to
// predict expiry keeps its durations far from ties with that drift (see
// Model.Advance).
type clock struct {
	origin  time.Time
	elapsed time.Duration
}

// SetOrigin sets the instant the model takes the store's clock to start
// at, against which expiry properties (absolute DateTimes) are compared.
func (m *Model) SetOrigin(t time.Time) { m.origin = t }

// Advance moves the model's clock forward by d. An entity written when
// the clock had elapsed w expires by Default once elapsed-w >= Default;
// one with a DateTime in the table's TTL property once the property is
// at or before origin+elapsed. The model applies expiry at the start of
// every operation on a table, as if it removed the expired entities then:
// reads and preconditions find them absent, as the contract has it.
func (m *Model) Advance(d time.Duration) { m.elapsed += d }

// now is the model's estimate of the store's clock.
func (m *Model) now() time.Time { return m.origin.Add(m.elapsed) }

// expired reports whether entity k of t has expired.
func (m *Model) expired(t *table, k Key, e *ts.Entity) bool {
	if t.ttl.Property != "" {
		if v, ok := e.Properties[t.ttl.Property].(time.Time); ok {
			return !v.After(m.now())
		}
	}
	return t.ttl.Default > 0 && m.elapsed-t.written[k] >= t.ttl.Default
}

// expire removes t's expired entities. The change feed records no
// expiry: a workload that turns the feed on turns expiry off on that
// table (the store records expiries when it sweeps, at a time of its
// own).
func (m *Model) expire(t *table) {
	if t.ttl == (ts.TTL{}) {
		return
	}
	for k, e := range t.rows {
		if m.expired(t, k, e) {
			delete(t.rows, k)
			delete(t.written, k)
		}
	}
}

// SetTTL sets a table's time-to-live settings (see Table.SetTTL): the
// entities expired under the old settings are removed first, then the new
// ones apply to every entity.
func (m *Model) SetTTL(tableName string, s ts.TTL) error {
	if s.Default < 0 || s.Default > ts.MaxTTLDefault {
		return fail(edm.CodeInvalidInput)
	}
	if s.Property != "" {
		switch s.Property {
		case "PartitionKey", "RowKey", "Timestamp":
			return fail(edm.CodeInvalidInput)
		}
		if err := checkPropertyName(s.Property); err != nil {
			return err
		}
	}
	t, err := m.table(tableName)
	if err != nil {
		return err
	}
	t.ttl = s
	m.expire(t)
	return nil
}

// TTL returns a table's time-to-live settings.
func (m *Model) TTL(tableName string) (ts.TTL, error) {
	t, err := m.table(tableName)
	if err != nil {
		return ts.TTL{}, err
	}
	return t.ttl, nil
}
