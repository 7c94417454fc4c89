package model

import (
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
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

// DeleteRange deletes the entities of partition pk whose RowKey lies in
// [from, to), "" leaving a side unbounded, the plain way: entity by
// entity. Errors are those of Partition.DeleteRange.
func (m *Model) DeleteRange(tableName, pk, from, to string) error {
	if err := checkKey(pk); err != nil {
		return err
	}
	for _, k := range []string{from, to} {
		if k != "" {
			if err := checkKey(k); err != nil {
				return err
			}
		}
	}
	if from != "" && to != "" && from > to {
		return fail(edm.CodeInvalidInput)
	}
	t, err := m.table(tableName)
	if err != nil {
		return err
	}
	for k := range t.rows {
		if k.PK == pk && k.RK >= from && (to == "" || k.RK < to) {
			delete(t.rows, k)
			delete(t.written, k)
		}
	}
	if from != "" && from == to {
		return nil // an empty range: nothing is committed, nor recorded
	}
	m.commit++
	t.record(m.commit, Change{Op: ts.ChangeDeleteRange, PK: pk, RK: from, ToRK: to})
	return nil
}
