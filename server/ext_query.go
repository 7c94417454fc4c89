package server

import (
	"net/http"
	"strconv"

	"github.com/tablestore/tablestore"
)

// The reads Azure's Query Entities cannot ask for:
// GET /{account}/$tablestore/tables/{t}/query?index=NAME&$filter=&$select=&$top=&continuation=
// reads through a secondary index in the index's own order
// (tablestore.Query.Index), and the same with reverse=true instead of
// index, in descending (PartitionKey, RowKey) order (Query.Reverse). It
// answers {"value":[entities...],"continuation":"..."} (no continuation
// on the last page), the entities in the wire form of Query Entities'
// (minimal metadata). The continuation is the library's token, opaque.
//
// GET /{account}/$tablestore/tables/{t}/segments?n=N answers
// {"splits":[{"pk":"...","rk":"..."},...]}: the N-1 positions at which
// Table.Segments splits the table into N segments, in ascending order.

// QueryPageJSON is one page of an index-order read.
type QueryPageJSON struct {
	Value        []any  `json:"value"`
	Continuation string `json:"continuation,omitempty"`
}

func (q *request) extQuery() error {
	v := q.res.query
	reverse := false
	switch r := v.Get("reverse"); r {
	case "", "false":
	case "true":
		reverse = true
	default:
		return badParam("reverse is true or false.")
	}
	if (v.Get("index") == "") == !reverse {
		return badParam("The query needs either index, the name of the index to read in its order, or reverse=true.")
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
		Index: v.Get("index"), Reverse: reverse, Continuation: v.Get("continuation")})
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

// SegmentsJSON is the answer of the segments endpoint.
type SegmentsJSON struct {
	Splits []SplitJSON `json:"splits"`
}

// SplitJSON is one split position.
type SplitJSON struct {
	PartitionKey string `json:"pk"`
	RowKey       string `json:"rk"`
}

func (q *request) extSegments() error {
	if err := q.refuseKeyRange(); err != nil {
		return err // the split positions are keys of every partition
	}
	n, err := strconv.Atoi(q.res.query.Get("n"))
	if err != nil {
		return badParam("n, the number of segments, is an integer.")
	}
	segs, err := q.h.db.Table(q.res.table).Segments(q.r.Context(), n)
	if err != nil {
		return extError(err)
	}
	out := SegmentsJSON{Splits: make([]SplitJSON, 0, len(segs))}
	for _, s := range segs {
		if pk, rk, bounded := s.End(); bounded {
			out.Splits = append(out.Splits, SplitJSON{PartitionKey: pk, RowKey: rk})
		}
	}
	return q.writeExtJSON(http.StatusOK, out)
}
