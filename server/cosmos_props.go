package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
)

// Property order in the Cosmos flavor: Cosmos DB gives an entity's
// properties in the order they were written, a merge's new ones
// appended, Timestamp last (the recorded answers), where Storage gives
// PartitionKey, RowKey, Timestamp, then the rest by name. The handler
// remembers each entity's order as written through it, in memory;
// entities it has no order for keep Storage's.

// member is one top-level member of a JSON object, its value as written.
type member struct {
	name string
	raw  json.RawMessage
}

// objectMembers splits a JSON object into its top-level members, in
// order; false if b is not an object.
func objectMembers(b []byte) ([]member, bool) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var ms []member
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false
		}
		name, _ := t.(string)
		var raw json.RawMessage
		if d.Decode(&raw) != nil {
			return nil, false
		}
		ms = append(ms, member{name, raw})
	}
	return ms, true
}

// memberNames returns the names of an entity body's properties in
// order, without odata annotations and Timestamp; nil if b is not an
// object.
func memberNames(b []byte) []string {
	ms, ok := objectMembers(b)
	if !ok {
		return nil
	}
	names := []string{}
	for _, m := range ms {
		if !strings.HasPrefix(m.name, "odata.") && !strings.HasSuffix(m.name, "@odata.type") && m.name != "Timestamp" {
			names = append(names, m.name)
		}
	}
	return names
}

// cosmosWritten notes the property order of the entity body a write
// carries, before it runs (its body is released during the run).
func (q *request) cosmosWritten() {
	if q.h.cosmos.opt.StoragePropertyOrder {
		return
	}
	switch {
	case q.res.kind == kindEntities && q.r.Method == http.MethodPost,
		q.res.kind == kindEntity && q.r.Method != http.MethodGet && q.r.Method != http.MethodDelete && q.r.Method != http.MethodHead:
		q.cq.props = memberNames(q.body)
		q.cq.merge = q.r.Method == "MERGE" || q.r.Method == http.MethodPatch ||
			strings.EqualFold(strings.TrimSpace(q.r.Header.Get("X-HTTP-Method")), "MERGE")
	}
}

// noteProps remembers the property order of the entity key a write
// stored: a merge appends the names the entity did not have.
// REQUIRES: c.mu held.
func (c *cosmosState) noteProps(key string, names []string, merge bool) {
	if names == nil {
		return
	}
	old := c.props[key]
	if !merge || old == nil {
		c.props[key] = names
		return
	}
	out := append([]string(nil), old...)
	for _, n := range names {
		if !containsString(out, n) {
			out = append(out, n)
		}
	}
	c.props[key] = out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// propsOf returns the remembered property order of an entity; nil if
// none.
func (c *cosmosState) propsOf(key string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.props[key]
}

// reorderEntity rewrites a JSON entity object with its members in order:
// odata members first, then order's names, then any others as they
// were, Timestamp last. It returns obj unchanged if it cannot read it or
// order is nil.
func reorderEntity(obj []byte, order []string) []byte {
	if order == nil {
		return obj
	}
	ms, ok := objectMembers(obj)
	if !ok {
		return obj
	}
	rank := func(m member) int {
		base := strings.TrimSuffix(m.name, "@odata.type")
		switch {
		case strings.HasPrefix(m.name, "odata."):
			return -1
		case base == "Timestamp":
			return len(order) + 1
		}
		for i, n := range order {
			if n == base {
				return i
			}
		}
		return len(order)
	}
	sorted := make([]member, len(ms))
	copy(sorted, ms)
	// Stable: a property's @odata.type stays before its value, the
	// others keep their places.
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && rank(sorted[j]) < rank(sorted[j-1]); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	out := make([]byte, 0, len(obj))
	out = append(out, '{')
	for i, m := range sorted {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(out, m.name)
		out = append(out, ':')
		out = append(out, m.raw...)
	}
	return append(out, '}')
}

// cosmosReorder puts the properties of a one-entity answer (a point
// read, an insert's echo) in the entity's remembered order.
func (q *request) cosmosReorder(d *deferredWriter, status int) {
	if q.h.cosmos.opt.StoragePropertyOrder {
		return
	}
	var key string
	switch {
	case q.res.kind == kindEntity && q.r.Method == http.MethodGet && status == http.StatusOK:
		key = seqKey(q.res.table, q.res.pk, q.res.rk, true)
	case q.res.kind == kindEntities && q.r.Method == http.MethodPost && status == http.StatusCreated && len(q.cq.touched) == 1:
		key = q.cq.touched[0].key
	default:
		return
	}
	order := q.h.cosmos.propsOf(key)
	if order == nil || len(d.chunks) == 0 {
		return
	}
	body := reorderEntity(bytes.Join(d.chunks, nil), order)
	d.chunks = [][]byte{body}
	q.w.Header().Set("Content-Length", itoa(len(body)))
}
