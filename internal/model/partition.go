package model

import (
	ts "github.com/tablestore/tablestore"
)

// QueryPartition is Query restricted to partition pk: the entities of pk
// that match q.Filter, in RowKey order. An invalid pk fails as a key does.
func (m *Model) QueryPartition(tableName, pk string, q ts.Query) ([]*ts.Entity, error) {
	if err := checkKey(pk); err != nil {
		return nil, err
	}
	all, err := m.Query(tableName, q)
	if err != nil {
		return nil, err
	}
	var out []*ts.Entity
	for _, e := range all {
		if e.PartitionKey == pk {
			out = append(out, e)
		}
	}
	return out, nil
}
