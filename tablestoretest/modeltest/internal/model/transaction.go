package model

import (
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// Transaction limits: actions, and data bytes (see dataSize).
const (
	maxActions = 100
	maxPayload = 4 << 20
)

// SubmitTransaction applies 1 to 100 actions on one partition, all or
// nothing, with Azure's rules:
//
//   - a missing table fails at index 0 (TableNotFound);
//   - zero or more than 100 actions is InvalidInput;
//   - the first action whose PartitionKey differs from action 0's fails
//     with CommandsInBatchActOnDifferentPartitions;
//   - the second action on a RowKey fails with InvalidDuplicateRow;
//   - an invalid entity, a missing IfMatch on an update or delete, or an
//     IfMatch on an insert or upsert fails with the usual code;
//   - the action that takes the data (the sum of dataSize) over 4 MiB
//     fails with RequestBodyTooLarge;
//   - then, in order, each action's precondition is checked against the
//     state before the transaction (no two actions touch one entity), and
//     the first that fails names its index.
//
// When an input breaks several of these rules in form (not precondition),
// the model reports the first in this list; the contract does not fix
// that order, so tests build inputs with at most one fault in form.
//
// On success it returns the new ETag of each action's entity ("" for a
// delete).
func (m *Model) SubmitTransaction(tableName string, actions []ts.TransactionAction) ([]ts.ETag, error) {
	t, err := m.table(tableName)
	if err != nil {
		return nil, failAt(edm.CodeTableNotFound, 0)
	}
	if len(actions) == 0 || len(actions) > maxActions {
		return nil, failAt(edm.CodeInvalidInput, 0)
	}
	seen := map[string]bool{}
	size := 0
	for i, a := range actions {
		e := entityOf(a)
		if e == nil {
			return nil, failAt(edm.CodeInvalidInput, i)
		}
		if e.PartitionKey != entityOf(actions[0]).PartitionKey {
			return nil, failAt(edm.CodeCommandsInBatchActOnDifferentPartitions, i)
		}
		if seen[e.RowKey] {
			return nil, failAt(edm.CodeInvalidDuplicateRow, i)
		}
		seen[e.RowKey] = true
		if err := checkAction(a); err != nil {
			return nil, failAt(err.(*Error).Code, i)
		}
		size += dataSize(e, a.Type == ts.ActionDelete)
		if size > maxPayload {
			return nil, failAt(edm.CodeRequestBodyTooLarge, i)
		}
	}
	// Check every precondition before changing anything.
	for i, a := range actions {
		e := entityOf(a)
		old, exists := t.rows[Key{e.PartitionKey, e.RowKey}]
		switch a.Type {
		case ts.ActionInsert:
			if exists {
				return nil, failAt(edm.CodeEntityAlreadyExists, i)
			}
		case ts.ActionUpdateMerge, ts.ActionUpdateReplace, ts.ActionDelete:
			if !exists {
				return nil, failAt(edm.CodeResourceNotFound, i)
			}
			if a.IfMatch != ts.ETagAny && weakUpper(a.IfMatch) != old.ETag {
				return nil, failAt(edm.CodeUpdateConditionNotSatisfied, i)
			}
		}
	}
	// Apply.
	etags := make([]ts.ETag, len(actions))
	m.commit++
	for i, a := range actions {
		e := entityOf(a)
		k := Key{e.PartitionKey, e.RowKey}
		switch a.Type {
		case ts.ActionDelete:
			m.removeIn(t, k)
		case ts.ActionInsert, ts.ActionUpsertReplace, ts.ActionUpdateReplace:
			m.putIn(t, k, m.write(t.rows[k], e, ts.Replace), ts.ChangeOp(a.Type))
			etags[i] = t.rows[k].ETag
		case ts.ActionUpsertMerge, ts.ActionUpdateMerge:
			m.putIn(t, k, m.write(t.rows[k], e, ts.Merge), ts.ChangeOp(a.Type))
			etags[i] = t.rows[k].ETag
		}
	}
	return etags, nil
}

// entityOf returns a's entity, which the model takes only as an
// *Entity; nil for any other.
func entityOf(a ts.TransactionAction) *ts.Entity {
	e, _ := a.Entity.(*ts.Entity)
	return e
}

// checkAction checks one action on its own: its type, its IfMatch and,
// except for a delete (which reads only the keys), its entity.
func checkAction(a ts.TransactionAction) error {
	switch a.Type {
	case ts.ActionInsert, ts.ActionUpsertMerge, ts.ActionUpsertReplace:
		if a.IfMatch != "" {
			return fail(edm.CodeInvalidInput)
		}
		return checkEntity(entityOf(a))
	case ts.ActionUpdateMerge, ts.ActionUpdateReplace:
		if !wellFormedETag(a.IfMatch) {
			return fail(edm.CodeInvalidInput)
		}
		return checkEntity(entityOf(a))
	case ts.ActionDelete:
		if !wellFormedETag(a.IfMatch) {
			return fail(edm.CodeInvalidInput)
		}
		if err := checkKey(entityOf(a).PartitionKey); err != nil {
			return err
		}
		return checkKey(entityOf(a).RowKey)
	}
	return fail(edm.CodeInvalidInput)
}
