package modeltest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/tablestoretest/modeltest/internal/model"
)

// This file compares the store's answers with the model's: errors by
// code, entities by keys and typed values, and ETags by behaviour (the
// model's are counters, the store's derive from Timestamps).

// sentinelOf maps a code to its sentinel, to check errors.Is.
var sentinelOf = map[ts.Code]error{
	edm.CodeTableAlreadyExists:                      ts.ErrTableAlreadyExists,
	edm.CodeTableNotFound:                           ts.ErrTableNotFound,
	edm.CodeResourceNotFound:                        ts.ErrResourceNotFound,
	edm.CodeEntityAlreadyExists:                     ts.ErrEntityAlreadyExists,
	edm.CodeUpdateConditionNotSatisfied:             ts.ErrUpdateConditionNotSatisfied,
	edm.CodePropertiesNeedValue:                     ts.ErrPropertiesNeedValue,
	edm.CodeInvalidInput:                            ts.ErrInvalidInput,
	edm.CodeOutOfRangeInput:                         ts.ErrOutOfRangeInput,
	edm.CodeInvalidResourceName:                     ts.ErrInvalidResourceName,
	edm.CodePropertyValueTooLarge:                   ts.ErrPropertyValueTooLarge,
	edm.CodeEntityTooLarge:                          ts.ErrEntityTooLarge,
	edm.CodeTooManyProperties:                       ts.ErrTooManyProperties,
	edm.CodeKeyValueTooLarge:                        ts.ErrKeyValueTooLarge,
	edm.CodePropertyNameInvalid:                     ts.ErrPropertyNameInvalid,
	edm.CodePropertyNameTooLong:                     ts.ErrPropertyNameTooLong,
	edm.CodeDuplicatePropertiesSpecified:            ts.ErrDuplicatePropertiesSpecified,
	edm.CodeInvalidValueType:                        ts.ErrInvalidValueType,
	edm.CodeInvalidDuplicateRow:                     ts.ErrInvalidDuplicateRow,
	edm.CodeCommandsInBatchActOnDifferentPartitions: ts.ErrCommandsInBatchActOnDifferentPartitions,
	edm.CodeNotImplemented:                          ts.ErrNotImplemented,
	edm.CodeRequestBodyTooLarge:                     ts.ErrRequestBodyTooLarge,
}

// sameError checks the store's error against the model's: both nil, or
// the same code (and errors.Is its sentinel) and, for a transaction, a
// *BatchError with the same failing index. checkIndex false compares only
// the code.
func (r *runner) sameError(got, want error, checkIndex bool) {
	if want == nil {
		r.outcomes[r.kind+":ok"]++
	} else if we, ok := want.(*model.Error); ok {
		r.outcomes[r.kind+":"+string(we.Code)]++
	}
	switch {
	case got == nil && want == nil:
		return
	case want == nil:
		r.failf("store failed, model succeeded: %v", got)
	case got == nil:
		r.failf("store succeeded, model failed with %v", want)
	}
	var we *model.Error
	if !errors.As(want, &we) {
		r.failf("model returned a foreign error %v", want)
	}
	code := ts.ErrorCode(got)
	if code != we.Code {
		r.failf("store error %q (%v), model %s", code, got, we)
	}
	if sentinelOf[code] == nil || !errors.Is(got, sentinelOf[code]) {
		r.failf("store error %v does not match sentinel %v with errors.Is", got, sentinelOf[code])
	}
	if we.Index >= 0 {
		var be *ts.BatchError
		if !errors.As(got, &be) {
			r.failf("store transaction error %v is not a *BatchError (model %s)", got, we)
		}
		if checkIndex && be.Index != we.Index {
			r.failf("store failed at action %d (%v), model at %d (%s)", be.Index, got, we.Index, we)
		}
	}
}

// sameValue reports whether a store value equals a model value: the same
// Go type and the same value (times by instant, NaN equal to NaN, -0 and
// 0 apart).
func sameValue(got, want any) bool {
	switch w := want.(type) {
	case time.Time:
		g, ok := got.(time.Time)
		return ok && g.Equal(w)
	case []byte:
		g, ok := got.([]byte)
		return ok && bytes.Equal(g, w)
	case float64:
		g, ok := got.(float64)
		return ok && (g == w || (math.IsNaN(g) && math.IsNaN(w))) && math.Signbit(g) == math.Signbit(w)
	}
	return got == want
}

// Describe formats an entity for failure messages: keys, then each
// property's name, Go type and value (long values cut), in name order.
func Describe(e *ts.Entity) string {
	if e == nil {
		return "<nil>"
	}
	names := make([]string, 0, len(e.Properties))
	for n := range e.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "(%q,%q){", e.PartitionKey, e.RowKey)
	for i, n := range names {
		if i > 0 {
			b.WriteString(" ")
		}
		v := e.Properties[n]
		if s, ok := v.(string); ok && len(s) > 20 {
			v = fmt.Sprintf("%q...(%d)", s[:20], len(s))
		}
		if s, ok := v.([]byte); ok && len(s) > 20 {
			v = fmt.Sprintf("%x...(%d)", s[:20], len(s))
		}
		fmt.Fprintf(&b, "%s:%T=%v", n, e.Properties[n], v)
	}
	b.WriteString("}")
	return b.String()
}

// sameEntity checks a store entity against the model's: keys and
// properties (a nil store value counts as absent), the Timestamp the
// model recorded, and the ETag by behaviour (see observe).
func (r *runner) sameEntity(table string, got, want *ts.Entity) {
	if got == nil {
		r.failf("store returned a nil entity, model %s", Describe(want))
	}
	if got.PartitionKey != want.PartitionKey || got.RowKey != want.RowKey {
		r.failf("store entity %s, model %s", Describe(got), Describe(want))
	}
	if name, same := compareProperties(got, want); name != "" {
		r.failf("property %s differs: store %s, model %s", name, Describe(got), Describe(want))
	} else if !same {
		r.failf("property sets differ: store %s, model %s", Describe(got), Describe(want))
	}
	if !want.Timestamp.IsZero() && !got.Timestamp.Equal(want.Timestamp) {
		r.failf("entity %s: store Timestamp %v, written with %v", Describe(want), got.Timestamp, want.Timestamp)
	}
	for _, name := range []string{"PartitionKey", "RowKey", "Timestamp"} {
		if _, ok := got.Properties[name]; ok {
			r.failf("store entity holds system property %s in Properties", name)
		}
	}
	r.observe(idOf(table, want.PartitionKey, want.RowKey), got.ETag, got.Timestamp, want.ETag, false)
}

// sameEntities compares a query result, in order.
func (r *runner) sameEntities(table string, got, want []*ts.Entity) {
	for i := 0; i < len(got) || i < len(want); i++ {
		switch {
		case i >= len(got):
			r.failf("query: store returned %d entities, model %d; first missing %s", len(got), len(want), Describe(want[i]))
		case i >= len(want):
			r.failf("query: store returned %d entities, model %d; first extra %s", len(got), len(want), Describe(got[i]))
		}
		if got[i].PartitionKey != want[i].PartitionKey || got[i].RowKey != want[i].RowKey {
			r.failf("query result %d: store %s, model %s", i, Describe(got[i]), Describe(want[i]))
		}
		r.sameEntity(table, got[i], want[i])
	}
}

// etagOf is the ETag Azure derives from a Timestamp.
func etagOf(tm time.Time) ts.ETag {
	s := tm.UTC().Format("2006-01-02T15:04:05.0000000Z")
	return ts.ETag(`W/"datetime'` + strings.ReplaceAll(s, ":", "%3A") + `'"`)
}

// staleETag is well formed but older than every ETag the test clock makes.
const staleETag ts.ETag = `W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`

// ifMatch resolves ref for entity id to the store's ETag and the model's,
// naming the same version. A version whose store ETag was never seen
// resolves to a stale ETag on both sides.
func (r *runner) ifMatch(id entityID, ref ifMatch) (store, model ts.ETag) {
	m, real := r.ref.modelETag(id, ref)
	switch {
	case !real && m == neverETag:
		return staleETag, neverETag
	case !real:
		return m, m // "", "*", "garbage"
	}
	if v := r.eng[id]; v != nil && v.toEngine[m] != "" {
		return v.toEngine[m], m
	}
	return staleETag, neverETag
}

// wrote records a write both sides made: the model's new version and the
// store's (see observe).
func (r *runner) wrote(id entityID, storeETag ts.ETag, stamp time.Time, modelETag ts.ETag) {
	r.ref.wrote(id, modelETag)
	r.observe(id, storeETag, stamp, modelETag, true)
}

// forget ends the lifetime of an entity (it was deleted).
func (r *runner) forget(id entityID) {
	r.ref.forget(id)
	delete(r.eng, id)
}

// forgetTable ends the lifetime of every entity of a table.
func (r *runner) forgetTable(table string) {
	r.ref.forgetTable(table)
	lower := strings.ToLower(table)
	for id := range r.eng {
		if id.table == lower {
			delete(r.eng, id)
		}
	}
}

// forgetRange ends the lifetimes a partition delete ended.
func (r *runner) forgetRange(table, pk, from, to string) {
	r.ref.forgetRange(table, pk, from, to)
	lower := strings.ToLower(table)
	for id := range r.eng {
		if inRange(id, lower, pk, from, to) {
			delete(r.eng, id)
		}
	}
}

// observe checks that the store's (ETag, Timestamp) and the model's ETag
// name the same version: one store ETag per model version and back. A
// write must also carry a Timestamp later than every earlier one of the
// same lifetime, and an ETag derived from it; the model records that
// Timestamp, for filters on it.
func (r *runner) observe(id entityID, storeETag ts.ETag, stamp time.Time, modelETag ts.ETag, write bool) {
	if storeETag == "" {
		r.failf("entity %v: store returned an empty ETag", id)
	}
	if want := etagOf(stamp); storeETag != want {
		r.failf("entity %v: ETag %s does not match Timestamp %s (want %s)", id, storeETag, stamp.Format(time.RFC3339Nano), want)
	}
	v := r.eng[id]
	if v == nil {
		v = &engineVersions{toModel: map[ts.ETag]ts.ETag{}, toEngine: map[ts.ETag]ts.ETag{}, stamp: map[ts.ETag]time.Time{}}
		r.eng[id] = v
	}
	if m, ok := v.toModel[storeETag]; ok && m != modelETag {
		r.failf("entity %v: store ETag %s names two versions (model %s and %s)", id, storeETag, m, modelETag)
	}
	if e, ok := v.toEngine[modelETag]; ok && e != storeETag {
		r.failf("entity %v: one version (model %s) has two store ETags: %s then %s", id, modelETag, e, storeETag)
	}
	if s, ok := v.stamp[storeETag]; ok && !s.Equal(stamp) {
		r.failf("entity %v: ETag %s came with Timestamp %v, now %v", id, storeETag, s, stamp)
	}
	r.pair(id, storeETag, modelETag)
	if _, ok := v.toModel[storeETag]; ok {
		return
	}
	if write && !stamp.After(v.last) {
		r.failf("entity %v: Timestamp %v of a new version is not after %v", id, stamp, v.last)
	}
	if write {
		r.ref.m.SetTimestamp(id.table, id.pk, id.rk, stamp)
	}
	v.toModel[storeETag] = modelETag
	v.toEngine[modelETag] = storeETag
	v.stamp[storeETag] = stamp
	if stamp.After(v.last) {
		v.last = stamp
	}
}

// pair records, or checks, that the store's version (id, storeETag) is
// the model's version modelETag, across lifetimes: one model version per
// store version and back.
func (r *runner) pair(id entityID, storeETag, modelETag ts.ETag) {
	sv := storeVersion{id, storeETag}
	if m, ok := r.pairs[sv]; ok && m != modelETag {
		r.failf("entity %v: store version %s is model versions %s and %s", id, storeETag, m, modelETag)
	}
	if s, ok := r.pairsBack[modelETag]; ok && s != sv {
		r.failf("model version %s is store versions %v and %v", modelETag, s, sv)
	}
	r.pairs[sv] = modelETag
	r.pairsBack[modelETag] = sv
}

// compareProperties reports whether two entities have equal user
// properties, a nil store value counting as absent; when a property of
// got is missing from want or differs, name is one such property.
func compareProperties(got, want *ts.Entity) (name string, same bool) {
	n := 0
	for name, g := range got.Properties {
		if g == nil {
			continue
		}
		n++
		if w, ok := want.Properties[name]; !ok || !sameValue(g, w) {
			return name, false
		}
	}
	return "", n == len(want.Properties)
}
