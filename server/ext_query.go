package server

import (
	"net/http"

	"github.com/tablestore/tablestore"
)

// A query read through a secondary index in the index's own order
// (tablestore.Query.Index), which Azure's Query Entities cannot ask for:
// GET /{account}/$tablestore/tables/{t}/query?index=NAME&$filter=&$select=&$top=&continuation=
// answers {"value":[entities...],"continuation":"..."} (no continuation
// on the last page), the entities in the wire form of Query Entities'
// (minimal metadata). The continuation is the library's token, opaque.

// QueryPageJSON is one page of an index-order read.
type QueryPageJSON struct {
	Value        []any  `json:"value"`
	Continuation string `json:"continuation,omitempty"`
}

func (q *request) extQuery() error {
	v := q.res.query
	if v.Get("index") == "" {
		return badParam("The query needs index, the name of the index to read in its order.")
	}
	top, _, err := parseTop(q)
	if err != nil {
		return err
	}
	flt, err := q.restrictFilter(v.Get("$filter"))
	if err != nil {
		return err
	}
	t := q.h.db.Table(q.res.table)
	page, err := t.QueryPage(q.r.Context(), tablestore.Query{Filter: flt, Select: selectList(q), Top: top,
		Index: v.Get("index"), Continuation: v.Get("continuation")})
	if err != nil {
		return extError(err)
	}
	b := responseBuffers.get()
	b = append(b, `{"value":[`...)
	for i, e := range page.Entities {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = tablestore.AppendEntityJSON(b, e, nil); err != nil {
			return err
		}
		if !q.needMemory(int64(len(b))) {
			return q.busy()
		}
	}
	b = append(b, ']')
	if page.Continuation != "" {
		b = append(b, `,"continuation":`...)
		b = appendString(b, page.Continuation)
	}
	b = append(b, '}')
	hd := q.w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Content-Length", itoa(len(b)))
	q.w.WriteHeader(http.StatusOK)
	_, _ = q.w.Write(b)
	q.respBuf = b // back to the pool once the response is sent
	return nil
}
