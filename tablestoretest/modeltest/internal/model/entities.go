package model

import (
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// Insert adds a new entity and returns its ETag.
func (m *Model) Insert(tableName string, e *ts.Entity) (ts.ETag, error) {
	t, err := m.table(tableName)
	if err != nil {
		return "", err
	}
	if err := checkEntity(e); err != nil {
		return "", err
	}
	k := Key{e.PartitionKey, e.RowKey}
	if _, ok := t.rows[k]; ok {
		return "", fail(edm.CodeEntityAlreadyExists)
	}
	s := stored(e, m.newETag())
	m.put(t, k, s, ts.ChangeInsert)
	return s.ETag, nil
}

// Get returns a copy of one entity, restricted to the selected properties
// when sel is not nil (a selected property the entity lacks is absent).
func (m *Model) Get(tableName, pk, rk string, sel []string) (*ts.Entity, error) {
	if err := checkKey(pk); err != nil {
		return nil, err
	}
	if err := checkKey(rk); err != nil {
		return nil, err
	}
	t, err := m.table(tableName)
	if err != nil {
		return nil, err
	}
	s, ok := t.rows[Key{pk, rk}]
	if !ok {
		return nil, fail(edm.CodeResourceNotFound)
	}
	return project(s, sel), nil
}

// project returns a copy of s holding only the properties in sel (all of
// them when sel is nil).
func project(s *ts.Entity, sel []string) *ts.Entity {
	c := clone(s)
	if sel == nil {
		return c
	}
	keep := map[string]bool{}
	for _, name := range sel {
		keep[name] = true
	}
	for name := range c.Properties {
		if !keep[name] {
			delete(c.Properties, name)
		}
	}
	return c
}

// Update changes an existing entity whose ETag matches ifMatch ("*"
// matches any) and returns the new ETag.
func (m *Model) Update(tableName string, e *ts.Entity, mode ts.UpdateMode, ifMatch ts.ETag) (ts.ETag, error) {
	if !wellFormedETag(ifMatch) || (mode != ts.Merge && mode != ts.Replace) {
		return "", fail(edm.CodeInvalidInput)
	}
	t, err := m.table(tableName)
	if err != nil {
		return "", err
	}
	if err := checkEntity(e); err != nil {
		return "", err
	}
	k := Key{e.PartitionKey, e.RowKey}
	old, ok := t.rows[k]
	if !ok {
		return "", fail(edm.CodeResourceNotFound)
	}
	if ifMatch != ts.ETagAny && weakUpper(ifMatch) != old.ETag {
		return "", fail(edm.CodeUpdateConditionNotSatisfied)
	}
	s := m.write(old, e, mode)
	m.put(t, k, s, ts.ChangeOp(map[ts.UpdateMode]ts.ActionType{ts.Merge: ts.ActionUpdateMerge, ts.Replace: ts.ActionUpdateReplace}[mode]))
	return s.ETag, nil
}

// Upsert inserts the entity or updates it in the given mode, and returns
// the new ETag.
func (m *Model) Upsert(tableName string, e *ts.Entity, mode ts.UpdateMode) (ts.ETag, error) {
	if mode != ts.Merge && mode != ts.Replace {
		return "", fail(edm.CodeInvalidInput)
	}
	t, err := m.table(tableName)
	if err != nil {
		return "", err
	}
	if err := checkEntity(e); err != nil {
		return "", err
	}
	k := Key{e.PartitionKey, e.RowKey}
	s := m.write(t.rows[k], e, mode)
	m.put(t, k, s, ts.ChangeOp(map[ts.UpdateMode]ts.ActionType{ts.Merge: ts.ActionUpsertMerge, ts.Replace: ts.ActionUpsertReplace}[mode]))
	return s.ETag, nil
}

// write returns the new version of an entity: e itself for Replace or
// when old is nil, else old's properties overlaid with e's non-nil ones.
func (m *Model) write(old, e *ts.Entity, mode ts.UpdateMode) *ts.Entity {
	s := stored(e, m.newETag())
	if mode == ts.Merge && old != nil {
		for name, v := range old.Properties {
			if _, ok := s.Properties[name]; !ok {
				s.Properties[name] = normalize(v)
			}
		}
	}
	return s
}

// Delete removes an entity whose ETag matches ifMatch.
func (m *Model) Delete(tableName, pk, rk string, ifMatch ts.ETag) error {
	if !wellFormedETag(ifMatch) {
		return fail(edm.CodeInvalidInput)
	}
	t, err := m.table(tableName)
	if err != nil {
		return err
	}
	k := Key{pk, rk}
	old, ok := t.rows[k]
	if !ok {
		return fail(edm.CodeResourceNotFound)
	}
	if ifMatch != ts.ETagAny && weakUpper(ifMatch) != old.ETag {
		return fail(edm.CodeUpdateConditionNotSatisfied)
	}
	m.remove(t, k)
	return nil
}

// SetTimestamp records the Timestamp the engine gave the entity's current
// version. The model has no clock of its own; it keeps the value only so
// that filters on Timestamp can be evaluated.
func (m *Model) SetTimestamp(tableName, pk, rk string, stamp time.Time) {
	t, err := m.table(tableName)
	if err != nil {
		return
	}
	if e, ok := t.rows[Key{pk, rk}]; ok {
		e.Timestamp = stamp
	}
}
