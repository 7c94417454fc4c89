package server

import (
	"bytes"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/wire"
)

// bodyEntity is a decoded write body: raw, its stored form, or with
// mapBodies m, its property map.
type bodyEntity struct {
	raw *tablestore.RawEntity
	m   *tablestore.Entity
}

// mapBodiesKey, as a request context's value, makes the handler decode
// write bodies into property maps (tablestore.Entity), the path they took
// before RawEntity. Only tests set it: FuzzBodyPaths holds the two paths
// to the same responses and the same stored entities.
type mapBodiesKey struct{}

// mapBodies reports whether r decodes its bodies into property maps.
func mapBodies(r *http.Request) bool { return r.Context().Value(mapBodiesKey{}) != nil }

func (b bodyEntity) entity() tablestore.ActionEntity {
	if b.m != nil {
		return b.m
	}
	return b.raw
}

// keys are the entity's keys.
func (b bodyEntity) keys() (pk, rk string) {
	if b.m != nil {
		return b.m.PartitionKey, b.m.RowKey
	}
	return b.raw.PartitionKey, b.raw.RowKey
}

func (b bodyEntity) setKeys(pk, rk string) {
	if b.m != nil {
		b.m.PartitionKey, b.m.RowKey = pk, rk
		return
	}
	b.raw.PartitionKey, b.raw.RowKey = pk, rk
}

// etag is the ETag a write set.
func (b bodyEntity) etag() tablestore.ETag {
	if b.m != nil {
		return b.m.ETag
	}
	return b.raw.ETag
}

// appendJSON appends the entity as a write left it, at o.
func (b bodyEntity) appendJSON(dst []byte, o *tablestore.JSONOptions) ([]byte, error) {
	if b.m != nil {
		return tablestore.AppendEntityJSON(dst, b.m, o)
	}
	return b.raw.AppendJSON(dst, o)
}

// decodeBody decodes an entity's JSON into raw, or with asMap into a new
// property map. Errors: the decoders', and InvalidInput for the literal
// null, which they take for no change.
func decodeBody(body []byte, raw *tablestore.RawEntity, asMap bool) (bodyEntity, error) {
	if string(bytes.TrimSpace(body)) == "null" {
		return bodyEntity{}, &tablestore.Error{Code: edm.CodeInvalidInput, Message: "the body must be a JSON object"}
	}
	if asMap {
		m := new(tablestore.Entity)
		if err := m.UnmarshalJSON(body); err != nil {
			return bodyEntity{}, err
		}
		return bodyEntity{m: m}, nil
	}
	if err := raw.UnmarshalJSON(body); err != nil {
		return bodyEntity{}, err
	}
	return bodyEntity{raw: raw}, nil
}

// decodeEntity parses a JSON entity body with the library's wire format,
// straight into the entity's stored form (see mapBodiesKey).
func decodeEntity(r *http.Request, body []byte) (bodyEntity, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || strings.Contains(mt, "atom") || strings.Contains(mt, "xml") {
			return bodyEntity{}, apiError(http.StatusUnsupportedMediaType, edm.CodeAtomFormatNotSupported, "Atom format is not supported.")
		}
		if mt != "application/json" {
			return bodyEntity{}, apiError(http.StatusUnsupportedMediaType, edm.CodeJSONFormatNotSupported, "The content type "+mt+" is not supported; use application/json.")
		}
	}
	if err := checkMembers(body); err != nil {
		return bodyEntity{}, err
	}
	return decodeBody(body, new(tablestore.RawEntity), mapBodies(r))
}

// writeAction is the action of a write addressed to an entity's URL:
// PUT replaces and MERGE merges, an update with If-Match and an upsert
// without.
func writeAction(replace bool, ifMatch tablestore.ETag) tablestore.ActionType {
	switch {
	case ifMatch != "" && replace:
		return tablestore.ActionUpdateReplace
	case ifMatch != "":
		return tablestore.ActionUpdateMerge
	case replace:
		return tablestore.ActionUpsertReplace
	}
	return tablestore.ActionUpsertMerge
}

// writeOne writes e with one action of type typ: the single write's
// validation, preconditions and errors (a transaction's error is
// unwrapped to the action's).
func (q *request) writeOne(typ tablestore.ActionType, e tablestore.ActionEntity, ifMatch tablestore.ETag) error {
	err := q.h.db.Table(q.res.table).SubmitTransaction(q.r.Context(),
		[]tablestore.TransactionAction{{Type: typ, Entity: e, IfMatch: ifMatch}})
	var be *tablestore.BatchError
	if as(err, &be) {
		return be.Err
	}
	return err
}

// checkConditionalHeaders applies Azure's rules: If-None-Match is never
// accepted on entity writes, and never together with If-Match.
func checkConditionalHeaders(r *http.Request) error {
	if r.Header.Get("If-None-Match") != "" {
		return apiError(http.StatusBadRequest, edm.CodeInvalidInput, "One of the request inputs is not valid: If-None-Match is not supported on this operation.")
	}
	return nil
}

func (q *request) insertEntity() error {
	if preferNoContent(q.r) {
		// Azure says so on a failed insert too (a 400 was recorded).
		q.w.Header().Set("Preference-Applied", "return-no-content")
	}
	l, err := q.metadataLevel()
	if err != nil {
		return err
	}
	if err := checkConditionalHeaders(q.r); err != nil {
		return err
	}
	e, err := decodeEntity(q.r, q.body)
	if err != nil {
		return err
	}
	q.releaseBody() // e holds copies
	pk, rk := e.keys()
	if err := q.authorize(opInsert, q.res.table, pk, rk); err != nil {
		return err
	}
	if err := q.writeOne(tablestore.ActionInsert, e.entity(), ""); err != nil {
		return err
	}
	hd := q.w.Header()
	loc := q.res.base + wire.EntityPath(q.res.table, pk, rk)
	setExact(hd, "ETag", string(e.etag()))
	hd.Set("Location", loc)
	if preferNoContent(q.r) {
		hd.Set("DataServiceId", loc)
		hd.Set("Content-Length", "0")
		q.w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if q.r.Header.Get("Prefer") != "" {
		hd.Set("Preference-Applied", "return-content") // Azure sends none to a request without Prefer
	}
	o := q.jsonOptions(l)
	b, err := q.oneEntity(l, func(b []byte) ([]byte, error) { return e.appendJSON(b, &o) })
	if err != nil {
		return err
	}
	q.writeJSON(http.StatusCreated, l, b)
	return nil
}

// oneEntity is the body of a one-entity response at level l: at minimal
// and full metadata `{"odata.metadata":"…",` and the members of the
// entity appendEntity appends; without metadata the entity alone.
func (q *request) oneEntity(l tablestore.JSONMetadata, appendEntity func([]byte) ([]byte, error)) ([]byte, error) {
	if l == tablestore.NoMetadata {
		return appendEntity(nil)
	}
	b := make([]byte, 0, 512)
	b = append(b, `{"odata.metadata":`...)
	b = appendString(b, q.res.base+"$metadata#"+q.res.table+"/@Element")
	b = append(b, ',')
	mark := len(b)
	b, err := appendEntity(b)
	if err != nil {
		return nil, err
	}
	return append(b[:mark], b[mark+1:]...), nil // the entity's members follow
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

func (q *request) getEntity() error {
	l, err := q.metadataLevel()
	if err != nil {
		return err
	}
	b, etag, err := q.readEntity(l)
	if err != nil {
		return err
	}
	if !q.needMemory(int64(len(b))) {
		q.busy()
		return nil
	}
	setExact(q.w.Header(), "ETag", string(etag))
	q.writeJSON(http.StatusOK, l, b)
	return nil
}

// readEntity returns the body of Get Entity for the entity q.res names,
// at level l and with q.res's $select, and the entity's ETag.
func (q *request) readEntity(l tablestore.JSONMetadata) (b []byte, etag tablestore.ETag, err error) {
	o := q.jsonOptions(l)
	o.Select = selectList(q)
	b, err = q.oneEntity(l, func(b []byte) (out []byte, err error) {
		var tag string
		out, tag, err = root.GetJSON(q.h.db.Table(q.res.table), q.r.Context(), b, q.res.pk, q.res.rk, o)
		etag = tablestore.ETag(tag)
		return out, err
	})
	return b, etag, err
}

// writeEntity serves PUT (Replace) and MERGE/PATCH (Merge): an update
// with If-Match, an upsert without.
func (q *request) writeEntity(mode tablestore.UpdateMode) error {
	if err := checkConditionalHeaders(q.r); err != nil {
		return err
	}
	ifMatch := tablestore.ETag(q.r.Header.Get("If-Match"))
	e, err := decodeEntity(q.r, withKeys(q.body, q.res.pk, q.res.rk))
	if err != nil {
		return err
	}
	q.releaseBody() // e holds copies
	// The URL names the entity; the body's keys are ignored.
	e.setKeys(q.res.pk, q.res.rk)
	if err = q.writeOne(writeAction(mode == tablestore.Replace, ifMatch), e.entity(), ifMatch); err != nil {
		return err
	}
	setExact(q.w.Header(), "ETag", string(e.etag()))
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

func (q *request) deleteEntity() error {
	if err := checkConditionalHeaders(q.r); err != nil {
		return err
	}
	ifMatch := tablestore.ETag(q.r.Header.Get("If-Match"))
	if ifMatch == "" {
		return apiError(http.StatusBadRequest, edm.CodeMissingRequiredHeader, "An HTTP header that's mandatory for this request is not specified: If-Match.")
	}
	if err := q.h.db.Table(q.res.table).Delete(q.r.Context(), q.res.pk, q.res.rk, ifMatch); err != nil {
		return err
	}
	q.w.Header().Set("Content-Length", "0")
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}

// entityQueryArgs reads Query Entities' metadata level, $top (given
// tells whether the request had one) and $filter (within a SAS's key
// ranges).
func (q *request) entityQueryArgs() (l tablestore.JSONMetadata, top int, given bool, flt string, err error) {
	if l, err = q.metadataLevel(); err != nil {
		return
	}
	if top, given, err = parseTop(q); err != nil {
		return
	}
	flt, err = q.restrictFilter(q.res.query.Get("$filter"))
	return
}

// queryEntities serves Query Entities: $filter, $select, $top and the
// NextPartitionKey/NextRowKey continuation.
func (q *request) queryEntities() error {
	l, top, given, flt, err := q.entityQueryArgs()
	if err != nil {
		return err
	}
	cont, err := continuationFromQuery(q.res.query.Get("NextPartitionKey"), q.res.query.Get("NextRowKey"))
	if err != nil {
		return err
	}
	sel := selectList(q)
	empty := given && top == 0
	shape := pageShape(q.r)
	if empty {
		shape = PageAsIs
	}
	switch shape {
	case PageOne:
		top = 1
	case PageEmpty:
		empty = true // the query is still checked
	}
	b, next, err := q.queryPage(l, tablestore.Query{Filter: flt, Select: sel, Top: top, Continuation: cont}, empty)
	if err != nil {
		return err
	}
	if shape == PageEmpty {
		next = &[2]string{decodeNextKey(q.res.query.Get("NextPartitionKey")), decodeNextKey(q.res.query.Get("NextRowKey"))}
	}
	if next != nil {
		hd := q.w.Header()
		setExact(hd, "x-ms-continuation-NextPartitionKey", encodeNextKey(next[0]))
		setExact(hd, "x-ms-continuation-NextRowKey", encodeNextKey(next[1]))
	}
	q.writeJSON(http.StatusOK, l, b)
	q.respBuf = b // back to the pool once the response is sent
	return nil
}

// Limits of one page of Query Entities, beyond $top.
const (
	// pageBytes ends a page, with a continuation, once its JSON passes
	// it; a page holds at least one entity.
	pageBytes = 4 << 20
	// pageTime ends a page, as Azure does, after this long, at one of
	// every pageTimeEvery entities.
	pageTime      = 5 * time.Second
	pageTimeEvery = 16
)

// queryPage builds one page of query results as JSON at level l, written
// straight from the stored entities. The page ends, with next set
// to the keys it resumes at, after query.Top (or 1000) entities, after
// pageBytes of JSON, after pageTime, where the store ends a page early,
// or when the memory budget grants no more for it; it holds at least one
// entity unless the store's page held none. empty ($top=0) checks the
// query and returns no entities and no continuation.
func (q *request) queryPage(l tablestore.JSONMetadata, query tablestore.Query, empty bool) (body []byte, next *[2]string, err error) {
	sel := query.Select
	b := responseBuffers.get()
	b = append(b, '{')
	if l != tablestore.NoMetadata {
		md := q.res.base + "$metadata#" + q.res.table
		if len(sel) > 0 {
			md += "&$select=" + strings.Join(sel, ",")
		}
		b = append(b, `"odata.metadata":`...)
		b = appendString(b, md)
		b = append(b, ',')
	}
	remaining := query.Top
	if remaining == 0 {
		remaining = 1000
	}
	if empty {
		remaining = 1 // the query is still checked
	}
	opts := q.jsonOptions(l)
	query.Top = remaining
	b = append(b, `"value":[`...)
	prefix := len(b)
	var cut *partitionCut
	if pageShape(q.r) == PagePartition {
		cut = new(partitionCut)
	}
	keep := func(page []byte, n int) bool {
		if empty || cut != nil && !cut.keep(page, n) {
			return false
		}
		// A page holds at least one entity; it ends before one that takes
		// it past pageBytes or the memory budget, or that comes after
		// pageTime. The clock is read every pageTimeEvery entities: a
		// reading costs as much as the rest of the test.
		size := prefix + len(page)
		return n == 1 || size <= pageBytes && q.needMemory(int64(size)) && (n%pageTimeEvery != 0 || time.Since(q.start) <= pageTime)
	}
	b, page, err := root.AppendPageJSON(q.h.db.Table(q.res.table), q.r.Context(), b, query, opts, keep)
	if err != nil || empty || page.Continuation == "" {
		return append(b, "]}"...), nil, err
	}
	return append(b, "]}"...), &[2]string{page.NextPartitionKey(), page.NextRowKey()}, nil
}

// needMemory grows the request's work reservation to at least n bytes if
// the budget has them free now, and reports whether it holds n.
func (q *request) needMemory(n int64) bool {
	if n <= q.workMem {
		return true
	}
	more := max(n-q.workMem, q.workMem) // grow by doubling
	if !q.h.mem.tryAcquire(more) {
		if more = n - q.workMem; !q.h.mem.tryAcquire(more) {
			return false
		}
	}
	q.workMem += more
	return true
}

// withKeys adds PartitionKey and RowKey to a JSON object body that lacks
// them at its top level, as bodies of URL-addressed writes may. Anything
// that is not a JSON object is returned unchanged for the decoder to
// reject. The body is copied only when a key is added.
func withKeys(body []byte, pk, rk string) []byte {
	top, ok := wire.TopMembers(body)
	hasPK, hasRK := top.PartitionKey, top.RowKey
	if !ok || hasPK && hasRK {
		return body
	}
	rest := bytes.TrimSpace(body)[1:] // after '{'
	out := make([]byte, 0, len(body)+len(pk)+len(rk)+32)
	out = append(out, '{')
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

// maxMembers bounds the members of an entity's JSON object: 255
// properties with their type annotations, and room for odata.* members.
// More is TooManyProperties before the body is decoded, so a body of
// tiny members cannot make the decoder build a map far larger than it.
const maxMembers = 2*255 + 16

// minObjectBytes is the least JSON text an object of n members takes:
// braces, and per member an empty key, a colon and a one-digit value,
// with commas between members.
func minObjectBytes(n int) int { return 2 + 4*n + n - 1 }

// checkMembers refuses a JSON object with more than maxMembers members.
// A body too short to hold that many, as entities' bodies are, is not
// scanned. Errors: TooManyProperties.
func checkMembers(b []byte) error {
	if len(b) < minObjectBytes(maxMembers+1) {
		return nil
	}
	if info, ok := wire.TopMembers(b); ok && info.Members > maxMembers {
		return &tablestore.Error{Code: edm.CodeTooManyProperties,
			Message: "the entity has " + itoa(info.Members) + " members; an entity has at most 255 properties"}
	}
	return nil
}

func itoa(n int) string { return strconv.Itoa(n) }
