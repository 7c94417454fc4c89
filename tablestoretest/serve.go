package tablestoretest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/server"
)

// recorder notes what a response carried, for the request log.
type recorder struct {
	http.ResponseWriter
	status  int
	bytes   int64
	dropped bool
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap gives http.ResponseController the connection's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// countedBody counts the bytes read from a request body.
type countedBody struct {
	io.ReadCloser
	n atomic.Int64
}

func (c *countedBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countedBody) count() int64 {
	if c == nil {
		return 0
	}
	return c.n.Load()
}

// countBody wraps r's body in a counter; nil without a body.
func countBody(r *http.Request) *countedBody {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	c := &countedBody{ReadCloser: r.Body}
	r.Body = c
	return c
}

// abort ends the request without an answer: net/http closes the
// connection, InProcessClient's RoundTrip returns an error.
func abort(w *recorder) {
	w.dropped = true
	panic(http.ErrAbortHandler)
}

// applyFault acts out f on a request it hit.
func (k *Kit) applyFault(f Fault, st *state, w *recorder, r *http.Request, info server.RequestInfo) {
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			abort(w)
		}
	}
	switch code := f.code(); {
	case f.Drop == DropBefore:
		abort(w)
	case f.Drop == DropAfter:
		st.h.ServeHTTP(httptest.NewRecorder(), r)
		abort(w)
	case code == string(edm.CodeUpdateConditionNotSatisfied):
		competingWrite(r.Context(), st.db, info)
		st.h.ServeHTTP(w, r)
	case code != "":
		k.writeFault(w, r, info, code, f.RetryAfter)
	case f.Page != "":
		st.h.ServeHTTP(w, r.WithContext(server.WithPageShape(r.Context(), pageShapes[f.Page])))
	default:
		st.h.ServeHTTP(w, r)
	}
}

// competingWrite rewrites the entity a request addresses, unchanged but
// with a new ETag, so the request's If-Match no longer matches. An
// absent entity is left absent.
func competingWrite(ctx context.Context, db *tablestore.DB, info server.RequestInfo) {
	t := db.Table(info.Table)
	e, err := t.Get(ctx, info.PartitionKey, info.RowKey, nil)
	if err != nil {
		return
	}
	_ = t.Update(ctx, e, tablestore.Replace, tablestore.ETagAny)
}

// xmlOperations answer errors in XML, as Azure's service and ACL
// operations do.
var xmlOperations = map[string]bool{
	"GetTableServiceProperties": true, "SetTableServiceProperties": true,
	"GetTableServiceStats": true, "GetTableACL": true, "SetTableACL": true,
}

// writeFault answers Azure's error for code: status, headers and body as
// the service sends them.
func (k *Kit) writeFault(w http.ResponseWriter, r *http.Request, info server.RequestInfo, code string, retryAfter *time.Duration) {
	fe := faultErrors[code]
	id := newRequestID()
	now := k.clock.Now().UTC()
	hd := w.Header()
	hd.Set("x-ms-request-id", id)
	v := r.Header.Get("x-ms-version")
	if v == "" {
		v = "2019-02-02"
	}
	hd.Set("x-ms-version", v)
	if c := r.Header.Get("x-ms-client-request-id"); c != "" {
		hd.Set("x-ms-client-request-id", c)
	}
	hd.Set("Date", now.Format(http.TimeFormat))
	hd.Set("x-ms-error-code", code)
	hd.Set("Cache-Control", "no-cache")
	setRetryAfter(hd, fe.status, retryAfter)
	if r.ContentLength != 0 {
		hd.Set("Connection", "close") // the body is not read
	}
	msg := fe.msg + "\nRequestId:" + id + "\nTime:" + edm.FormatDateTimeJSON(now)
	var body []byte
	if xmlOperations[info.Operation] {
		var b bytes.Buffer
		b.WriteString(`<?xml version="1.0" encoding="utf-8"?><m:error xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><m:code>`)
		_ = xml.EscapeText(&b, []byte(code))
		b.WriteString(`</m:code><m:message xml:lang="en-US">`)
		_ = xml.EscapeText(&b, []byte(msg))
		b.WriteString(`</m:message></m:error>`)
		hd.Set("Content-Type", "application/xml")
		body = b.Bytes()
	} else {
		type message struct {
			Lang  string `json:"lang"`
			Value string `json:"value"`
		}
		type odataError struct {
			Code    string  `json:"code"`
			Message message `json:"message"`
		}
		body, _ = json.Marshal(map[string]odataError{"odata.error": {Code: code, Message: message{Lang: "en-US", Value: msg}}})
		hd.Set("Content-Type", "application/json;odata=minimalmetadata;streaming=true;charset=utf-8")
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(fe.status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}

// setRetryAfter sets the wait an error asks for (see Fault.RetryAfter).
func setRetryAfter(hd http.Header, status int, wait *time.Duration) {
	cosmos := status == http.StatusTooManyRequests
	if wait == nil {
		if !cosmos {
			return
		}
		d := time.Second
		wait = &d
	}
	if *wait%time.Second == 0 {
		hd.Set("Retry-After", strconv.FormatInt(int64(*wait/time.Second), 10))
	}
	if cosmos || *wait%time.Second != 0 {
		hd.Set("x-ms-retry-after-ms", strconv.FormatInt(wait.Milliseconds(), 10))
	}
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// pageShapes are the server's shapes of Fault.Page's values.
var pageShapes = map[string]server.PageShape{PageEmpty: server.PageEmpty, PageShort: server.PageOne, PagePartition: server.PagePartition}
