package server

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/wire"
)

// The shape of the Cosmos flavor's answers, as the recorded answers of
// a Cosmos DB for Table account show it: no Cache-Control, Server,
// x-ms-version, X-Content-Type-Options or DataServiceId headers; JSON
// content types without streaming and charset; error bodies with lang
// en-us and RequestID, without Time, and no x-ms-error-code header;
// Create Table answers with an ETag; a PUT's 204 has Content-Type
// application/json; a batch's parts carry fewer headers, in another
// order, and its failed part its own error shape (appendCosmosParts,
// cosmosErrorPart).

// cosmosStorageOnly are the headers Storage sends and Cosmos does not.
var cosmosStorageOnly = []string{"Cache-Control", "Server", "X-Ms-Version", "X-Content-Type-Options", "DataServiceId"}

// cosmosWriter gives a response Cosmos's headers as it starts.
type cosmosWriter struct {
	http.ResponseWriter
	q       *request
	started bool
}

// cosmosWire wraps w when the handler answers in Cosmos's shape.
func (q *request) cosmosWire(w http.ResponseWriter) http.ResponseWriter {
	if q.h.cosmos == nil || q.h.cosmos.opt.StorageWire {
		return w
	}
	return &cosmosWriter{ResponseWriter: w, q: q}
}

func (c *cosmosWriter) WriteHeader(code int) {
	if !c.started {
		c.started = true
		c.fix(code)
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *cosmosWriter) Write(b []byte) (int, error) {
	if !c.started {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap gives http.ResponseController the connection's writer.
func (c *cosmosWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// fix rewrites the headers of a response starting with status code.
func (c *cosmosWriter) fix(code int) {
	hd := c.Header()
	for _, k := range cosmosStorageOnly {
		hd.Del(k)
	}
	if ct := hd.Get("Content-Type"); strings.HasPrefix(ct, "application/json;odata=") {
		level, _, _ := strings.Cut(strings.TrimPrefix(ct, "application/json;odata="), ";")
		hd["Content-Type"] = []string{"application/json; odata=" + level}
	}
	if code >= 400 {
		hd.Del("Preference-Applied") // Storage says it on a failed insert; Cosmos's recorded errors do not
	}
	q := c.q
	switch {
	case q.res.kind == kindTables && q.r.Method == http.MethodPost && code < 300:
		setExact(hd, "ETag", cosmosETag(q))
	case q.res.kind == kindEntity && q.r.Method == http.MethodPut && code == http.StatusNoContent:
		hd.Set("Content-Type", "application/json")
	}
}

// cosmosETag is a weak ETag of the time now, in Cosmos's form.
func cosmosETag(q *request) string {
	t := edm.FormatDateTimeJSON(q.h.now())
	return `W/"datetime'` + url.QueryEscape(t) + `'"`
}

// cosmosMessages are Cosmos DB's texts where they differ from Storage's.
var cosmosMessages = map[edm.Code]string{
	edm.CodeTableAlreadyExists:  "The specified table already exists.",
	edm.CodePropertiesNeedValue: "PartitionKey/RowKey cannot be empty",
}

// cosmosActivity are the codes whose Cosmos messages carry an ActivityId
// line, as the recorded answers show.
var cosmosActivity = map[edm.Code]bool{edm.CodePropertiesNeedValue: true, edm.CodeInvalidDuplicateRow: true}

// cosmosAnswer writes an error in Cosmos's shape and reports true; false
// when the handler answers in Storage's (then answer writes it).
func (q *request) cosmosAnswer(ae *apiErr) bool {
	if q.h.cosmos == nil || q.h.cosmos.opt.StorageWire || q.xml {
		return false
	}
	hd := q.w.Header()
	if ae.status == http.StatusServiceUnavailable {
		hd.Set("Retry-After", "1")
	}
	if !q.bodyDone && q.r.ContentLength != 0 {
		hd.Set("Connection", "close")
	}
	body := cosmosErrorJSON(ae.code, q.cosmosText(ae)+"\nRequestID:"+q.id+"\n")
	hd.Set("Content-Type", cosmosErrorType(q))
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	q.w.WriteHeader(ae.status)
	if q.r.Method != http.MethodHead {
		_, _ = q.w.Write(body)
	}
	return true
}

// cosmosText is ae's message as Cosmos DB words it: its own text where it
// differs from Storage's, and an ActivityId line where recorded. The
// RequestID line follows it.
func (q *request) cosmosText(ae *apiErr) string {
	msg := ae.msg
	if m, ok := cosmosMessages[ae.code]; ok {
		msg = m
	}
	if cosmosActivity[ae.code] {
		msg += "\r\nActivityId: " + q.id + ", documentdb-dotnet-sdk/2.14.0 Host/64-bit MicrosoftWindowsNT/10.0.19041.0"
	}
	return msg
}

// cosmosErrorJSON is Cosmos's error body: Storage's shape, lang en-us.
func cosmosErrorJSON(code edm.Code, msg string) []byte {
	return bytes.Replace(errorJSON(code, msg), []byte(`"lang":"en-US"`), []byte(`"lang":"en-us"`), 1)
}

// cosmosErrorType is an error's content type: full metadata for the
// entity writes, minimal for the rest.
func cosmosErrorType(q *request) string {
	switch q.res.kind {
	case kindEntities, kindEntity, kindBatch:
		if q.r.Method != http.MethodGet && q.r.Method != http.MethodHead {
			return "application/json; odata=fullmetadata"
		}
	}
	return "application/json; odata=minimalmetadata"
}

// cosmosFailure answers a batch operation's failure in Cosmos DB's shape
// and reports whether it did (false: Storage's shape is asked for). A
// repeated row refuses the whole batch, 400 InvalidDuplicateRow with the
// operation's index before the message, not a 202 with a failed part;
// any other failure is a 202 whose one part is cosmosErrorPart's.
func (q *request) cosmosFailure(f *opFailure) bool {
	if q.h.cosmos == nil || q.h.cosmos.opt.StorageWire {
		return false
	}
	ae := toAPIError(f.err)
	if ae.code == edm.CodeInvalidDuplicateRow {
		q.code = string(ae.code)
		return q.cosmosAnswer(apiError(http.StatusBadRequest, ae.code, itoa(f.index)+":"+ae.msg))
	}
	q.writeFailedPart(q.cosmosErrorPart(itoa(f.index)+":", ae))
	return true
}

// cosmosErrorPart is the part of a batch answer for an operation that
// failed with ae, as recorded for Cosmos DB: its status line, only
// Content-Type application/json;odata=fullmetadata, and the error body,
// whose message is prefix and cosmosText's, then a blank line before
// RequestID (Storage: more headers, minimal metadata, RequestId and
// Time).
func (q *request) cosmosErrorPart(prefix string, ae *apiErr) string {
	msg := prefix + q.cosmosText(ae) + "\n\nRequestID:" + q.id + "\n"
	return statusLine(ae.status) + "Content-Type: application/json;odata=fullmetadata\r\n\r\n" +
		string(cosmosErrorJSON(ae.code, msg)) + "\r\n"
}

// appendCosmosParts appends the response parts of a successful
// changeset's actions to b in Cosmos DB's shape, each after lead, as
// recorded: a 204 whose headers are, for an insert, ETag,
// Preference-Applied, Location (base and the entity's path) and
// Content-ID; for an upsert (no If-Match), ETag, Content-Type
// application/json and Content-ID; for an update, ETag and Content-ID;
// for a delete, Content-ID alone. Each ends with the header block's blank
// line and the part's CRLF.
func appendCosmosParts(b []byte, lead, base string, actions []tablestore.TransactionAction, subs []subRequest) []byte {
	for i := range actions {
		a := &actions[i]
		pk, rk, etag := actionKeys(a.Entity)
		b = append(b, lead...)
		b = append(b, "HTTP/1.1 204 No Content\r\n"...)
		if a.Type != tablestore.ActionDelete {
			b = append(append(append(b, "ETag: "...), etag...), "\r\n"...)
		}
		switch a.Type {
		case tablestore.ActionInsert:
			b = append(append(b, "Preference-Applied: return-no-content\r\nLocation: "...), base...)
			b = append(wire.AppendEntityPath(b, subs[i].res.table, pk, rk), "\r\n"...)
		case tablestore.ActionUpsertMerge, tablestore.ActionUpsertReplace:
			b = append(b, "Content-Type: application/json\r\n"...)
		}
		b = appendPartContentID(append(b, "Content-ID: "...), &subs[i], i)
		b = append(b, "\r\n\r\n\r\n"...)
	}
	return b
}

// appendPartContentID appends the Content-ID of the answer to s, the
// changeset's part at index i: s's own, else i+1, as Cosmos DB numbers
// the parts of requests that give none.
func appendPartContentID(b []byte, s *subRequest, i int) []byte {
	if s.contentID != "" {
		return append(b, s.contentID...)
	}
	return strconv.AppendInt(b, int64(i+1), 10)
}
