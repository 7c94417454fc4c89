package server

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore"
)

// decodeEntity parses a JSON entity body with the library's wire format.
func decodeEntity(r *http.Request, body []byte) (*tablestore.Entity, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || strings.Contains(mt, "atom") || strings.Contains(mt, "xml") {
			return nil, apiError(http.StatusUnsupportedMediaType, "AtomFormatNotSupported", "Atom format is not supported.")
		}
		if mt != "application/json" {
			return nil, apiError(http.StatusUnsupportedMediaType, "JsonFormatNotSupported", "The content type "+mt+" is not supported; use application/json.")
		}
	}
	var e tablestore.Entity
	if strings.TrimSpace(string(body)) == "null" {
		return nil, &tablestore.Error{Code: tablestore.CodeInvalidInput, Message: "the body must be a JSON object"}
	}
	if err := e.UnmarshalJSON(body); err != nil {
		return nil, err
	}
	return &e, nil
}

// checkConditionalHeaders applies Azure's rules: If-None-Match is never
// accepted on entity writes, and never together with If-Match.
func checkConditionalHeaders(r *http.Request) error {
	if r.Header.Get("If-None-Match") != "" {
		return apiError(http.StatusBadRequest, "InvalidInput", "One of the request inputs is not valid: If-None-Match is not supported on this operation.")
	}
	return nil
}

func (q *request) insertEntity() {
	l, err := q.metadataLevel()
	if err != nil {
		q.fail(err)
		return
	}
	if err := checkConditionalHeaders(q.r); err != nil {
		q.fail(err)
		return
	}
	body, err := q.readBody()
	if err != nil {
		q.fail(err)
		return
	}
	e, err := decodeEntity(q.r, body)
	if err != nil {
		q.fail(err)
		return
	}
	if err := q.authorize(opInsert, q.res.table, e.PartitionKey, e.RowKey); err != nil {
		q.fail(err)
		return
	}
	if err := q.h.db.Table(q.res.table).Insert(q.r.Context(), e); err != nil {
		q.fail(err)
		return
	}
	hd := q.w.Header()
	loc := q.res.base + entityPath(q.res.table, e.PartitionKey, e.RowKey)
	setExact(hd, "ETag", string(e.ETag))
	hd.Set("Location", loc)
	if preferNoContent(q.r) {
		hd.Set("Preference-Applied", "return-no-content")
		hd.Set("DataServiceId", loc)
		hd.Set("Content-Length", "0")
		q.w.WriteHeader(http.StatusNoContent)
		return
	}
	hd.Set("Preference-Applied", "return-content")
	b, err := q.singleEntity(e, l, nil)
	if err != nil {
		q.fail(err)
		return
	}
	q.writeJSON(http.StatusCreated, l, b)
}

// singleEntity is the body of a one-entity response.
func (q *request) singleEntity(e *tablestore.Entity, l metaLevel, sel []string) ([]byte, error) {
	ej, err := q.entityJSON(e, l, sel)
	if err != nil {
		return nil, err
	}
	if l == metaNone {
		return ej, nil
	}
	b := []byte(`{"odata.metadata":`)
	b = appendString(b, q.res.base+"$metadata#"+q.res.table+"/@Element")
	b = append(b, ',')
	return append(b, ej[1:]...), nil
}

// selectList reads $select: comma-separated names, spaces trimmed.
func selectList(q *request) []string {
	s := q.res.query.Get("$select")
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []string
	for _, n := range strings.Split(s, ",") {
		if n = strings.TrimSpace(n); n != "" && n != "odata.etag" && n != "*" {
			out = append(out, n)
		} else if n == "*" {
			return nil
		}
	}
	return out
}

func (q *request) getEntity() {
	if err := q.authorize(opRead, q.res.table, q.res.pk, q.res.rk); err != nil {
		q.fail(err)
		return
	}
	l, err := q.metadataLevel()
	if err != nil {
		q.fail(err)
		return
	}
	sel := selectList(q)
	e, err := q.h.db.Table(q.res.table).Get(q.r.Context(), q.res.pk, q.res.rk, &tablestore.GetOptions{Select: sel})
	if err != nil {
		q.fail(err)
		return
	}
	b, err := q.singleEntity(e, l, sel)
	if err != nil {
		q.fail(err)
		return
	}
	setExact(q.w.Header(), "ETag", string(e.ETag))
	q.writeJSON(http.StatusOK, l, b)
}

// writeEntity serves PUT (Replace) and MERGE/PATCH (Merge): an update
// with If-Match, an upsert without.
func (q *request) writeEntity(mode tablestore.UpdateMode) {
	if err := checkConditionalHeaders(q.r); err != nil {
		q.fail(err)
		return
	}
	ifMatch := tablestore.ETag(q.r.Header.Get("If-Match"))
	op := opUpsert
	if ifMatch != "" {
		op = opUpdate
	}
	if err := q.authorize(op, q.res.table, q.res.pk, q.res.rk); err != nil {
		q.fail(err)
		return
	}
	body, err := q.readBody()
	if err != nil {
		q.fail(err)
		return
	}
	e, err := decodeEntity(q.r, withKeys(body, q.res.pk, q.res.rk))
	if err != nil {
		q.fail(err)
		return
	}
	// The URL names the entity; the body's keys are ignored.
	e.PartitionKey, e.RowKey = q.res.pk, q.res.rk
	t := q.h.db.Table(q.res.table)
	if ifMatch != "" {
		err = t.Update(q.r.Context(), e, mode, ifMatch)
	} else {
		err = t.Upsert(q.r.Context(), e, mode)
	}
	if err != nil {
		q.fail(err)
		return
	}
	setExact(q.w.Header(), "ETag", string(e.ETag))
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusNoContent)
}

func (q *request) deleteEntity() {
	if err := checkConditionalHeaders(q.r); err != nil {
		q.fail(err)
		return
	}
	if err := q.authorize(opDelete, q.res.table, q.res.pk, q.res.rk); err != nil {
		q.fail(err)
		return
	}
	ifMatch := tablestore.ETag(q.r.Header.Get("If-Match"))
	if ifMatch == "" {
		q.fail(apiError(http.StatusBadRequest, "MissingRequiredHeader", "An HTTP header that's mandatory for this request is not specified: If-Match."))
		return
	}
	if err := q.h.db.Table(q.res.table).Delete(q.r.Context(), q.res.pk, q.res.rk, ifMatch); err != nil {
		q.fail(err)
		return
	}
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusNoContent)
}

// queryEntities serves Query Entities: $filter, $select, $top and the
// NextPartitionKey/NextRowKey continuation.
func (q *request) queryEntities() {
	if err := q.authorizeQuery(q.res.table); err != nil {
		q.fail(err)
		return
	}
	l, err := q.metadataLevel()
	if err != nil {
		q.fail(err)
		return
	}
	top, given, err := parseTop(q)
	if err != nil {
		q.fail(err)
		return
	}
	flt, err := q.restrictFilter(q.res.query.Get("$filter"))
	if err != nil {
		q.fail(err)
		return
	}
	cont, err := continuationFromQuery(q.res.query.Get("NextPartitionKey"), q.res.query.Get("NextRowKey"))
	if err != nil {
		q.fail(err)
		return
	}
	sel := selectList(q)
	query := tablestore.Query{Filter: flt, Select: sel, Top: top, Continuation: cont}
	if given && top == 0 {
		query.Top = 1 // $top=0 returns no entities; the query is still checked
	}
	page, err := q.h.db.Table(q.res.table).QueryPage(q.r.Context(), query)
	if err != nil {
		q.fail(err)
		return
	}
	if given && top == 0 {
		page = &tablestore.Page{}
	}
	var b []byte
	b = append(b, '{')
	if l != metaNone {
		md := q.res.base + "$metadata#" + q.res.table
		if len(sel) > 0 {
			md += "&$select=" + strings.Join(sel, ",")
		}
		b = append(b, `"odata.metadata":`...)
		b = appendString(b, md)
		b = append(b, ',')
	}
	b = append(b, `"value":[`...)
	for i, e := range page.Entities {
		if i > 0 {
			b = append(b, ',')
		}
		ej, err := q.entityJSON(e, l, sel)
		if err != nil {
			q.fail(err)
			return
		}
		b = append(b, ej...)
	}
	b = append(b, "]}"...)
	if page.Continuation != "" {
		hd := q.w.Header()
		setExact(hd, "x-ms-continuation-NextPartitionKey", encodeNextKey(page.NextPartitionKey()))
		setExact(hd, "x-ms-continuation-NextRowKey", encodeNextKey(page.NextRowKey()))
	}
	q.writeJSON(http.StatusOK, l, b)
}

// withKeys adds PartitionKey and RowKey to a JSON object body that lacks
// them, as bodies of URL-addressed writes may. Anything that is not a
// JSON object is returned unchanged for the decoder to reject.
func withKeys(body []byte, pk, rk string) []byte {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil {
		return body
	}
	_, hasPK := top["PartitionKey"]
	_, hasRK := top["RowKey"]
	if hasPK && hasRK {
		return body
	}
	rest := bytes.TrimSpace(body)[1:] // after '{'
	out := []byte{'{'}
	if !hasPK {
		out = append(out, `"PartitionKey":`...)
		out = appendString(out, pk)
		out = append(out, ',')
	}
	if !hasRK {
		out = append(out, `"RowKey":`...)
		out = appendString(out, rk)
		out = append(out, ',')
	}
	if r := bytes.TrimSpace(rest); len(r) > 0 && r[0] == '}' {
		out = out[:len(out)-1]
	}
	return append(out, rest...)
}

func readAll(r io.Reader) ([]byte, error) { return io.ReadAll(r) }

func itoa(n int) string { return strconv.Itoa(n) }
