package model

import (
	"errors"
	"slices"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

// Query returns every entity of the table that matches q.Filter, in
// (PartitionKey, RowKey) order (descending when q.Reverse), projected on
// q.Select. It ignores paging
// (Top only has to be valid, Continuation is not read): a test compares
// it with the concatenation of the engine's pages. Filters are compiled
// with filter.DefaultLimits and evaluated by filter's own Match, over
// every entity in turn.
func (m *Model) Query(tableName string, q ts.Query) ([]*ts.Entity, error) {
	// Like every operation, a query rejects bad input before it looks for
	// the table.
	if q.Top < 0 || q.Top > 1000 {
		return nil, fail(edm.CodeInvalidInput)
	}
	f, err := filter.Compile(q.Filter, &filter.DefaultLimits)
	if err != nil {
		var fe *filter.Error
		if errors.As(err, &fe) {
			return nil, fail(fe.Code)
		}
		return nil, fail(edm.CodeInvalidInput)
	}
	t, err := m.table(tableName)
	if err != nil {
		return nil, err
	}
	var out []*ts.Entity
	for _, k := range t.sortedKeys() {
		e := t.rows[k]
		if f.Match(properties{e}) {
			out = append(out, project(e, q.Select))
		}
	}
	if q.Reverse {
		slices.Reverse(out)
	}
	return out, nil
}

// properties gives the filter evaluator an entity's keys, its Timestamp
// (as recorded by SetTimestamp; absent if never recorded) and its user
// properties.
type properties struct{ e *ts.Entity }

func (p properties) Lookup(name string) (edm.Value, bool) {
	switch name {
	case "PartitionKey":
		return edm.Value{Type: edm.TypeString, Bytes: []byte(p.e.PartitionKey)}, true
	case "RowKey":
		return edm.Value{Type: edm.TypeString, Bytes: []byte(p.e.RowKey)}, true
	case "Timestamp":
		if p.e.Timestamp.IsZero() {
			return edm.Value{}, false
		}
		return ToValue(p.e.Timestamp)
	}
	v, ok := p.e.Properties[name]
	if !ok {
		return edm.Value{}, false
	}
	return ToValue(v)
}

// ticksAtUnixEpoch is 1970-01-01T00:00:00Z in ticks (100 ns units since
// 0001-01-01T00:00:00Z).
const ticksAtUnixEpoch = 621355968000000000

// ToValue converts a stored property value to a edm.Value.
func ToValue(v any) (edm.Value, bool) {
	switch v := v.(type) {
	case string:
		return edm.Value{Type: edm.TypeString, Bytes: []byte(v)}, true
	case int32:
		return edm.Value{Type: edm.TypeInt32, Int: int64(v)}, true
	case int64:
		return edm.Value{Type: edm.TypeInt64, Int: v}, true
	case float64:
		return edm.Value{Type: edm.TypeDouble, Float: v}, true
	case bool:
		b := int64(0)
		if v {
			b = 1
		}
		return edm.Value{Type: edm.TypeBoolean, Int: b}, true
	case time.Time:
		// Unix seconds fit int64 over Azure's whole range, where
		// UnixNano would overflow.
		ticks := v.Unix()*10_000_000 + int64(v.Nanosecond()/100) + ticksAtUnixEpoch
		return edm.Value{Type: edm.TypeDateTime, Int: ticks}, true
	case ts.GUID:
		return edm.Value{Type: edm.TypeGuid, Bytes: v[:]}, true
	case []byte:
		return edm.Value{Type: edm.TypeBinary, Bytes: v}, true
	}
	return edm.Value{}, false
}
