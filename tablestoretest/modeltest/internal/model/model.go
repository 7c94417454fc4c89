// Package model is a plain in-memory reference implementation of the
// tablestore contract, used to check the engine: a seeded random workload
// runs against both and every result and error must agree.
//
// Simplicity wins over speed everywhere: tables live in a map keyed by the
// lowercased name, entities in a map keyed by (PartitionKey, RowKey) that
// is sorted whenever order matters. ETags are opaque counters (W/"m1",
// W/"m2", ...), unique across the whole model, so a test compares them with
// the engine's by behaviour, never by text.
//
// A Model is not safe for concurrent use.
package model

import (
	"fmt"
	"sort"
	"strings"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// Model is the reference store: a set of tables.
type Model struct {
	tables   map[string]*table // keyed by strings.ToLower(name)
	lastETag uint64
	clock        // see ttl.go
	commit   int // the last commit's number, for the change feed
}

// table is one table: its name as created, its entities, and its
// extensions: time-to-live (ttl.go), indexes (index.go) and change feed
// (feed.go).
type table struct {
	name    string
	rows    map[Key]*ts.Entity
	written map[Key]time.Duration // the clock's elapsed time at each entity's last write
	ttl     ts.TTL
	indexes []ts.IndexSpec
	feed    *feed // nil: off
}

// Key is an entity's primary key.
type Key struct{ PK, RK string }

// Less orders keys by PartitionKey, then RowKey, byte-wise.
func (k Key) Less(o Key) bool {
	if k.PK != o.PK {
		return k.PK < o.PK
	}
	return k.RK < o.RK
}

// New returns an empty model.
func New() *Model {
	return &Model{tables: map[string]*table{}}
}

// newETag returns an ETag no other version in the model has had.
func (m *Model) newETag() ts.ETag {
	m.lastETag++
	return ts.ETag(fmt.Sprintf(`W/"m%d"`, m.lastETag))
}

// CreateTable creates a table under Azure's naming rules.
func (m *Model) CreateTable(name string) error {
	if err := checkTableName(name); err != nil {
		return err
	}
	lower := strings.ToLower(name)
	if _, ok := m.tables[lower]; ok {
		return fail(edm.CodeTableAlreadyExists)
	}
	m.tables[lower] = &table{name: name, rows: map[Key]*ts.Entity{}, written: map[Key]time.Duration{}}
	return nil
}

// DeleteTable deletes a table and its entities.
func (m *Model) DeleteTable(name string) error {
	lower := strings.ToLower(name)
	if _, ok := m.tables[lower]; !ok {
		return fail(edm.CodeResourceNotFound)
	}
	delete(m.tables, lower)
	return nil
}

// TableNames returns every table name as created, sorted
// case-insensitively.
func (m *Model) TableNames() []string {
	var names []string
	for _, t := range m.tables {
		names = append(names, t.name)
	}
	sort.Slice(names, func(i, j int) bool {
		return strings.ToLower(names[i]) < strings.ToLower(names[j])
	})
	return names
}

// ListTables returns the names (as created, sorted case-insensitively)
// that start with prefix, compared case-insensitively. It is the whole
// listing: the test concatenates the engine's pages to compare.
func (m *Model) ListTables(prefix string, top int) ([]string, error) {
	if top < 0 || top > 1000 {
		return nil, fail(edm.CodeInvalidInput)
	}
	var names []string
	for _, n := range m.TableNames() {
		if strings.HasPrefix(strings.ToLower(n), strings.ToLower(prefix)) {
			names = append(names, n)
		}
	}
	return names, nil
}

// table returns the named table or TableNotFound.
func (m *Model) table(name string) (*table, error) {
	t, ok := m.tables[strings.ToLower(name)]
	if !ok {
		return nil, fail(edm.CodeTableNotFound)
	}
	m.expire(t)
	return t, nil
}

// sortedKeys returns the table's keys in (PartitionKey, RowKey) order.
func (t *table) sortedKeys() []Key {
	keys := make([]Key, 0, len(t.rows))
	for k := range t.rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	return keys
}

// Len returns the number of entities in the named table (0 if absent).
func (m *Model) Len(name string) int {
	t, err := m.table(name)
	if err != nil {
		return 0
	}
	return len(t.rows)
}

// Keys returns the keys of the named table in order (nil if absent).
func (m *Model) Keys(name string) []Key {
	t, err := m.table(name)
	if err != nil {
		return nil
	}
	return t.sortedKeys()
}
