package modeltest

import (
	"strconv"
	"strings"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/tablestoretest/modeltest/internal/model"
)

// entityID names one entity; table is lowercased.
type entityID struct{ table, pk, rk string }

func idOf(table, pk, rk string) entityID { return entityID{strings.ToLower(table), pk, rk} }

// neverETag is a well-formed model ETag that no version has.
const neverETag ts.ETag = `W/"never-existed"`

// reference is the side of the workload the store is checked against:
// the model, and the model ETag of each version of every entity's
// current lifetime (from its creation to its deletion), oldest first,
// which the vN If-Match values name. The generator keeps one to choose
// operations that suit the state (existing tables and keys); the runner
// keeps another beside the store. Both change it through the same
// methods, on the same results, so they hold the same state after the
// same operations.
type reference struct {
	m    *model.Model
	life map[entityID][]ts.ETag
}

func newReference() reference {
	m := model.New()
	m.SetOrigin(clockStart)
	return reference{m: m, life: map[entityID][]ts.ETag{}}
}

// modelETag resolves ref for entity id to a model ETag. real reports that
// it names a version the model has had (current, or vN of the lifetime);
// current and vN that name none resolve to neverETag.
func (r *reference) modelETag(id entityID, ref ifMatch) (etag ts.ETag, real bool) {
	switch ref {
	case "":
		return "", false
	case "*":
		return ts.ETagAny, false
	case "stale":
		return neverETag, false
	case "garbage":
		return "garbage", false
	case "current":
		if cur, err := r.m.Get(id.table, id.pk, id.rk, nil); err == nil {
			return cur.ETag, true
		}
		return neverETag, false
	}
	k, err := strconv.Atoi(strings.TrimPrefix(string(ref), "v"))
	if list := r.life[id]; err == nil && k >= 0 && k < len(list) {
		return list[k], true
	}
	return neverETag, false
}

// wrote records a new version of the entity id, written with model ETag
// etag.
func (r *reference) wrote(id entityID, etag ts.ETag) {
	r.life[id] = append(r.life[id], etag)
}

// forget ends the lifetime of an entity (it was deleted).
func (r *reference) forget(id entityID) { delete(r.life, id) }

// forgetTable ends the lifetime of every entity of a table (it was
// created or deleted).
func (r *reference) forgetTable(table string) {
	lower := strings.ToLower(table)
	for id := range r.life {
		if id.table == lower {
			delete(r.life, id)
		}
	}
}

// forgetRange ends the lifetime of every entity of partition pk with a
// RowKey in [from, to) (to "" has no end): a partition delete.
func (r *reference) forgetRange(table, pk, from, to string) {
	lower := strings.ToLower(table)
	for id := range r.life {
		if inRange(id, lower, pk, from, to) {
			delete(r.life, id)
		}
	}
}

// inRange reports whether id is in table (lowercase), partition pk, with
// a RowKey in [from, to).
func inRange(id entityID, table, pk, from, to string) bool {
	return id.table == table && id.pk == pk && id.rk >= from && (to == "" || id.rk < to)
}

// committed records a transaction the model committed, etags being the
// model's new ETag of each action.
func (r *reference) committed(table string, actions []action, etags []ts.ETag) {
	for i, a := range actions {
		id := idOf(table, a.entity.PartitionKey, a.entity.RowKey)
		if a.typ == ts.ActionDelete {
			r.forget(id)
		} else {
			r.wrote(id, etags[i])
		}
	}
}

// copyEntity returns a deep copy, so the store, the model and the
// operation never share maps or byte slices.
func copyEntity(e *ts.Entity) *ts.Entity {
	c := *e
	if e.Properties != nil {
		c.Properties = make(map[string]any, len(e.Properties))
		for k, v := range e.Properties {
			if b, ok := v.([]byte); ok {
				v = append([]byte{}, b...)
			}
			c.Properties[k] = v
		}
	}
	return &c
}
