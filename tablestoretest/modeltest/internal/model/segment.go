package model

import (
	ts "github.com/tablestore/tablestore"
)

// QuerySegment is Query restricted to the positions of segment s: those
// not before its start and, when it has an end, before its end.
func (m *Model) QuerySegment(tableName string, s *ts.Segment, q ts.Query) ([]*ts.Entity, error) {
	q.Segment = nil
	all, err := m.Query(tableName, q)
	if err != nil {
		return nil, err
	}
	spk, srk := s.Start()
	epk, erk, bounded := s.End()
	start, end := Key{spk, srk}, Key{epk, erk}
	var out []*ts.Entity
	for _, e := range all {
		k := Key{e.PartitionKey, e.RowKey}
		if !k.Less(start) && (!bounded || k.Less(end)) {
			out = append(out, e)
		}
	}
	return out, nil
}
