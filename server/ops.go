package server

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// This file holds the operations features' hooks into the request path:
// the per-request log line and metrics (begin, finish, refused), the
// reasons behind authentication failures (failed), and the operation
// names both use. metrics.go, cors.go and bearer.go hold the features.

// initOps sets up the operations features from o; New calls it.
func (h *handler) initOps(o *Options) error {
	h.metrics = o.Metrics
	h.bearer = o.Bearer
	eps, err := accountEndpoints(o.PublicEndpoints, h.account)
	if err != nil {
		return err
	}
	h.endpoints = eps
	if o.Bearer != nil {
		if err := o.Bearer.init(); err != nil {
			return err
		}
		if o.Bearer.InsecureAcceptAnyToken && h.log != nil {
			h.log.Warn("INSECURE: every bearer token is accepted as Storage Table Data Contributor, unverified; for local development only",
				"account", h.account)
		}
	}
	h.loadServiceProperties()
	if o.Metrics != nil {
		o.Metrics.addStore(h.account, h.db)
	}
	return nil
}

// begin starts a request: in-flight gauge, body byte counting.
func (q *request) begin() {
	if m := q.h.metrics; m != nil {
		m.inFlight.Inc()
	}
	if b := q.r.Body; b != nil && b != http.NoBody {
		q.in = &countingBody{rc: b}
		q.r.Body = q.in
	}
}

// refused counts an admission refusal (503 ServerBusy).
func (q *request) refused() {
	if m := q.h.metrics; m != nil {
		m.refusals.WithLabelValues(q.h.account).Inc()
	}
}

// genericAuthMessage is Azure's message for every authentication
// failure; the detail goes to the log only.
const genericAuthMessage = "Server failed to authenticate the request. Make sure the value of Authorization header is formed correctly including the signature."

// failed notes the error answered: its code for the log and, for an
// authentication failure, its detail, replaced by Azure's generic text
// in what the client sees.
func (q *request) failed(ae *apiErr) *apiErr {
	q.code = string(ae.code)
	if ae.code == edm.CodeAuthenticationFailed || ae.code == edm.CodeInvalidAuthenticationInfo {
		if q.why == "" {
			q.why = ae.msg
		}
		if ae.code == edm.CodeAuthenticationFailed && ae.msg != genericAuthMessage {
			return apiError(ae.status, ae.code, genericAuthMessage)
		}
	}
	return ae
}

// finish ends a request: the metrics and the log line. It runs deferred
// in ServeHTTP, after a recovered panic has been answered.
func (q *request) finish(rec *statusWriter) {
	d := time.Since(q.start)
	status := rec.code()
	op := q.operation()
	var in int64
	if q.in != nil {
		in = q.in.n.Load()
	}
	if m := q.h.metrics; m != nil {
		m.inFlight.Dec()
		m.observe(q.h.account, op, status, d, in, rec.bytes)
	}
	if q.h.log == nil {
		return
	}
	attrs := make([]slog.Attr, 0, 14)
	attrs = append(attrs,
		slog.String("method", q.r.Method),
		slog.String("path", q.r.URL.Path),
		slog.Int("status", status),
		slog.String("operation", op),
		slog.String("account", q.h.account),
	)
	if q.res.table != "" {
		attrs = append(attrs, slog.String("table", q.res.table))
	}
	attrs = append(attrs, slog.String("request_id", q.id))
	if c := q.r.Header.Get("X-Ms-Client-Request-Id"); c != "" {
		attrs = append(attrs, slog.String("client_request_id", truncate(c, 128)))
	}
	attrs = append(attrs, slog.Int64("bytes_in", in), slog.Int64("bytes_out", rec.bytes), slog.Duration("duration", d))
	if q.code != "" {
		attrs = append(attrs, slog.String("error_code", q.code))
	}
	if q.why != "" {
		attrs = append(attrs, slog.String("auth_error", q.why))
	}
	if q.bearer != nil {
		attrs = append(attrs, slog.String("principal", q.bearer.principal))
	}
	q.h.log.LogAttrs(q.r.Context(), slog.LevelInfo, "request", attrs...)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// operation names the request's operation as Azure's storage logs do
// (QueryEntities, InsertOrMergeEntity, ...): a small fixed set, used as
// a metrics label. Unroutable requests are "Unknown".
func (q *request) operation() string {
	if q.preflit {
		return "Preflight"
	}
	res := q.res
	if res.kind == 0 { // refused before routing
		res, _ = q.h.route(q.r)
	}
	return operationName(q.r, res)
}

// RequestInfo is what a request asks for, as the request log and the
// metrics name it.
type RequestInfo struct {
	// Operation is Azure's name for the operation, as Storage Analytics
	// logs it: InsertEntity, UpdateEntity, MergeEntity, DeleteEntity,
	// InsertOrReplaceEntity, InsertOrMergeEntity, QueryEntity,
	// QueryEntities, QueryTables, QueryTable, CreateTable, DeleteTable,
	// EntityGroupTransaction, GetTableACL, SetTableACL,
	// GetTableServiceProperties, SetTableServiceProperties,
	// GetTableServiceStats; Tablestore... for the extension endpoints
	// (TablestoreReadChanges, TablestoreSetIndex, ...); Preflight for a
	// CORS preflight; Unknown for a request that names no operation.
	Operation string
	// Table is the table the request addresses, if any (for CreateTable,
	// the name is in the body and Table is empty).
	Table string
	// PartitionKey and RowKey are set for the single-entity operations.
	PartitionKey, RowKey string
}

// Operations lists every RequestInfo.Operation value but Unknown.
var Operations = []string{
	"InsertEntity", "UpdateEntity", "MergeEntity", "DeleteEntity",
	"InsertOrReplaceEntity", "InsertOrMergeEntity", "QueryEntity",
	"QueryEntities", "QueryTables", "QueryTable", "CreateTable",
	"DeleteTable", "EntityGroupTransaction", "GetTableACL", "SetTableACL",
	"GetTableServiceProperties", "SetTableServiceProperties",
	"GetTableServiceStats", "Preflight",
	// The extension endpoints' (ext.go).
	"TablestoreCapabilities", "TablestoreReadChanges", "TablestoreGetChangeFeed",
	"TablestoreSetChangeFeed", "TablestoreListIndexes", "TablestoreGetIndex",
	"TablestoreSetIndex", "TablestoreGetTTL", "TablestoreSetTTL",
	"TablestoreDeleteRange", "TablestoreTableStats", "TablestoreQueryIndex",
}

// Classify names the operation r asks of a handler serving account
// (path-style or host-style addressing), by the same routing the
// handler uses; it reads only the method, URL and headers, never the
// body, and checks no credentials.
func Classify(r *http.Request, account string) RequestInfo {
	if r.Method == http.MethodOptions {
		return RequestInfo{Operation: "Preflight"}
	}
	h := &handler{account: account}
	res, _ := h.route(r)
	info := RequestInfo{Operation: operationName(r, res), Table: res.table}
	if res.kind == kindEntity {
		info.PartitionKey, info.RowKey = res.pk, res.rk
	}
	return info
}

// ClassifyBatch names the sub-operations of a $batch request, given its
// Content-Type and body, for a handler serving account: one RequestInfo
// a sub-request, in order, as Classify names a request sent alone, with
// the keys of the entity each addresses (an insert's from its body). It
// checks no credentials. Errors: a body the handler refuses as a batch
// (InvalidInput).
func ClassifyBatch(contentType string, body []byte, account string) ([]RequestInfo, error) {
	h := &handler{account: account}
	subs, err := h.parseBatch(contentType, body, new(batchScratch))
	if err != nil {
		return nil, publicError(err)
	}
	infos := make([]RequestInfo, len(subs))
	var raw tablestore.RawEntity
	for i := range subs {
		s := &subs[i]
		a, _, err := s.action(&raw, false)
		if err != nil {
			return nil, publicError(err)
		}
		pk, rk, _ := actionKeys(a.Entity)
		infos[i] = RequestInfo{Operation: operationOf(s.method, s.ifMatch != "", s.res), Table: s.res.table, PartitionKey: pk, RowKey: rk}
	}
	return infos, nil
}

// publicError is err as the library's *tablestore.Error when it is the
// handler's own answer.
func publicError(err error) error {
	var e *apiErr
	if errors.As(err, &e) {
		return &tablestore.Error{Code: e.code, Message: e.msg}
	}
	return err
}

// operationName names the operation of r, routed as res.
func operationName(r *http.Request, res resource) string {
	method, err := effectiveMethod(r)
	if err != nil {
		return "Unknown"
	}
	return operationOf(method, r.Header.Get("If-Match") != "", res)
}

// operationOf names the operation of a request sent with method (and
// with If-Match when ifMatch), routed as res.
func operationOf(method string, ifMatch bool, res resource) string {
	switch res.kind {
	case kindService:
		switch {
		case res.comp == "stats":
			return "GetTableServiceStats"
		case method == http.MethodPut:
			return "SetTableServiceProperties"
		}
		return "GetTableServiceProperties"
	case kindTables:
		if method == http.MethodPost {
			return "CreateTable"
		}
		return "QueryTables"
	case kindTable:
		if method == http.MethodDelete {
			return "DeleteTable"
		}
		return "QueryTable"
	case kindACL:
		if method == http.MethodPut {
			return "SetTableACL"
		}
		return "GetTableACL"
	case kindBatch:
		return "EntityGroupTransaction"
	case kindEntities:
		if method == http.MethodPost {
			return "InsertEntity"
		}
		return "QueryEntities"
	case kindExt:
		return extOperationName(method, res.ext) // ext.go
	case kindEntity:
		switch strings.ToUpper(method) {
		case http.MethodGet:
			return "QueryEntity"
		case http.MethodPut:
			if ifMatch {
				return "UpdateEntity"
			}
			return "InsertOrReplaceEntity"
		case "MERGE", http.MethodPatch:
			if ifMatch {
				return "MergeEntity"
			}
			return "InsertOrMergeEntity"
		case http.MethodDelete:
			return "DeleteEntity"
		}
	}
	return "Unknown"
}

// countingBody counts the bytes read from a request body.
type countingBody struct {
	rc io.ReadCloser
	n  atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.rc.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingBody) Close() error { return c.rc.Close() }
