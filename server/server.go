// Package server serves Azure Table Storage's REST API over one
// tablestore.DB, so the official Azure SDKs (aztables for Go,
// @azure/data-tables for JavaScript, and the others) work against it
// unchanged.
//
// New returns an http.Handler; NewHTTPServer wraps it in an http.Server
// with timeouts suited to a network listener:
//
//	db, _ := tablestore.Open(dir, nil)
//	h, _ := server.New(db, nil) // devstoreaccount1 and its well-known key
//	srv := server.NewHTTPServer("127.0.0.1:10002", h)
//	err := srv.ListenAndServe() // until srv.Shutdown
//
// Clients then use the emulator's connection string:
//
//	DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;
//	AccountKey=Eby8vdM0...==;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1
//
// Both path-style (/{account}/Tables) and host-style
// ({account}.table.example/Tables) addressing work. Requests are
// authenticated with SharedKey or SharedKeyLite, or with a service or
// account shared access signature, unless Options.Anonymous is set.
//
// The handler is safe for concurrent use. Every parse of a request reuses
// the library's own rules (filter parsing, validation, the JSON wire
// format of tablestore.Entity), so the server rejects exactly what the
// library rejects, with Azure's status codes and error bodies.
package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tablestore/tablestore"
	"golang.org/x/sync/semaphore"
)

// DevAccount and DevKey are Azure's well-known development storage
// account and key (Azurite's), the defaults of Options.
const (
	DevAccount = "devstoreaccount1"
	DevKey     = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)

// Limits applied when Options leave them zero.
const (
	DefaultMaxConcurrentRequests = 64
	DefaultMaxBodyBytes          = 4 << 20 // Azure's limit for a $batch body
	DefaultMaxHeaderBytes        = 64 << 10
	// DefaultQueueWait is how long a request waits for a free slot before
	// it is answered 503 ServerBusy.
	DefaultQueueWait = time.Second
)

// Options configure a handler. A nil *Options means all defaults.
type Options struct {
	// Account is the storage account name clients address. Default
	// DevAccount.
	Account string
	// Keys are the account's base64 keys; a request signed with any of
	// them (at most two) is accepted. Default: DevKey.
	Keys []string
	// Anonymous turns authentication off: every request is served whatever
	// its Authorization header or signature. For local development only.
	// Default false.
	Anonymous bool
	// Logger receives one line per request at level Info: method, path,
	// status, operation, account, table, request ids, bytes in and out,
	// duration, and why authentication failed (see ops.go). Default nil:
	// no logging.
	Logger *slog.Logger
	// MaxConcurrentRequests bounds the requests served at once; a request
	// that finds no free slot within QueueWait is answered 503 ServerBusy
	// with Retry-After. Default DefaultMaxConcurrentRequests.
	MaxConcurrentRequests int
	// QueueWait is how long a request waits for a slot. Default
	// DefaultQueueWait.
	QueueWait time.Duration
	// MaxBodyBytes bounds a request body; a larger one is answered 413
	// RequestBodyTooLarge. Default DefaultMaxBodyBytes (4 MiB).
	MaxBodyBytes int64
	// MaxHeaderBytes bounds the total size of a request's header names and
	// values; larger is answered 431 RequestHeaderFieldsTooLarge.
	// NewHTTPServer applies the same bound on the wire. Default
	// DefaultMaxHeaderBytes.
	MaxHeaderBytes int

	// Operations (see metrics.go, cors.go, bearer.go, accounts.go).

	// Metrics, if set, counts requests, bytes, latencies and admission
	// refusals, and reports the store's engine figures, labelled with
	// the account. One Metrics may serve several handlers. Default nil.
	Metrics *Metrics
	// Bearer, if set, accepts Microsoft Entra ID bearer tokens over TLS.
	// Default nil: bearer tokens are refused.
	Bearer *Bearer
}

// handler serves the Table REST API.
type handler struct {
	db      *tablestore.DB
	account string
	keys    [][]byte
	anon    bool
	log     *slog.Logger
	sem     *semaphore.Weighted
	wait    time.Duration
	maxBody int64
	maxHdr  int

	propsMu sync.Mutex
	props   []byte // service properties document set by PUT; nil: default

	ext handlerExt // operations: metrics, CORS, bearer tokens (see ops.go)
}

// New returns a handler serving db. It is safe for concurrent use. Errors: a bad account name or a key
// that is not base64.
func New(db *tablestore.DB, opts *Options) (http.Handler, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if db == nil {
		return nil, errors.New("tablestore: server: nil DB")
	}
	if o.Account == "" {
		o.Account = DevAccount
	}
	if !validAccount(o.Account) {
		return nil, fmt.Errorf("tablestore: server: invalid account name %q", o.Account)
	}
	if len(o.Keys) == 0 {
		o.Keys = []string{DevKey}
	}
	if len(o.Keys) > 2 {
		return nil, fmt.Errorf("tablestore: server: %d keys given; an account has at most two", len(o.Keys))
	}
	h := &handler{
		db:      db,
		account: o.Account,
		anon:    o.Anonymous,
		log:     o.Logger,
		wait:    o.QueueWait,
		maxBody: o.MaxBodyBytes,
		maxHdr:  o.MaxHeaderBytes,
	}
	for _, k := range o.Keys {
		key, err := base64.StdEncoding.DecodeString(k)
		if err != nil || len(key) == 0 {
			return nil, fmt.Errorf("tablestore: server: account key is not base64")
		}
		h.keys = append(h.keys, key)
	}
	n := o.MaxConcurrentRequests
	if n <= 0 {
		n = DefaultMaxConcurrentRequests
	}
	if err := h.initExt(&o); err != nil {
		return nil, err
	}
	h.sem = semaphore.NewWeighted(int64(n))
	if h.wait <= 0 {
		h.wait = DefaultQueueWait
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.maxHdr <= 0 {
		h.maxHdr = DefaultMaxHeaderBytes
	}
	return h, nil
}

// validAccount applies Azure's account name rule: 3 to 24 lowercase
// letters and digits.
func validAccount(s string) bool {
	if len(s) < 3 || len(s) > 24 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// NewHTTPServer returns an http.Server for h on addr with timeouts that
// keep slow or idle clients from holding connections, and a header size
// bound. Start it with ListenAndServe; stop it with Shutdown.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    DefaultMaxHeaderBytes,
	}
}

// request is the per-request state shared by the operation handlers.
type request struct {
	h     *handler
	r     *http.Request
	w     http.ResponseWriter
	id    string
	start time.Time
	res   resource
	sas   *sasGrant // nil unless authorised by a shared access signature
	xml   bool      // errors are written as XML (ACL, service operations)

	ext requestExt // operations: log and metric fields, bearer grant (see ops.go)
}

// ServeHTTP serves one request.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusWriter{ResponseWriter: w}
	q := &request{h: h, r: r, w: rec, id: newRequestID(), start: start}
	q.begin()
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			if h.log != nil {
				h.log.Error("request panicked", "request_id", q.id, "panic", fmt.Sprint(p))
			}
			if rec.status == 0 {
				q.fail(errInternal)
			}
		}
		q.finish(rec)
	}()
	q.commonHeaders()
	if q.cors() {
		return
	}
	if !h.acquire(r.Context()) {
		q.refused()
		w.Header().Set("Retry-After", "1")
		q.fail(errServerBusy)
		return
	}
	defer h.sem.Release(1)
	q.serve()
}

func (h *handler) acquire(ctx context.Context) bool {
	if h.sem.TryAcquire(1) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, h.wait)
	defer cancel()
	return h.sem.Acquire(ctx, 1) == nil
}

// commonHeaders sets the headers every response carries.
func (q *request) commonHeaders() {
	hd := q.w.Header()
	hd.Set("x-ms-request-id", q.id)
	v := q.r.Header.Get("x-ms-version")
	if v == "" {
		v = "2019-02-02"
	}
	hd.Set("x-ms-version", v)
	if c := q.r.Header.Get("x-ms-client-request-id"); c != "" {
		hd.Set("x-ms-client-request-id", c)
	}
	hd.Set("Date", time.Now().UTC().Format(http.TimeFormat))
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Server", "tablestore")
}

// serve checks limits, routes, authenticates and runs the operation.
func (q *request) serve() {
	if headerBytes(q.r.Header) > q.h.maxHdr {
		q.fail(errHeadersTooLarge)
		return
	}
	if q.r.ContentLength > q.h.maxBody {
		q.fail(errBodyTooLarge)
		return
	}
	res, err := q.h.route(q.r)
	if err != nil {
		q.xml = res.kind == kindACL || res.kind == kindService
		q.fail(err)
		return
	}
	q.res = res
	q.xml = res.kind == kindACL || res.kind == kindService
	method, err := effectiveMethod(q.r)
	if err != nil {
		q.fail(err)
		return
	}
	if err := q.authenticate(); err != nil {
		q.fail(err)
		return
	}
	q.dispatch(method)
}

func headerBytes(h http.Header) int {
	n := 0
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// effectiveMethod applies verb tunnelling: POST with X-HTTP-Method.
func effectiveMethod(r *http.Request) (string, error) {
	xs := r.Header.Values("X-HTTP-Method")
	if len(xs) == 0 {
		return r.Method, nil
	}
	if r.Method != http.MethodPost {
		return "", errXMethodNotUsingPost
	}
	if len(xs) > 1 {
		return "", errXMethodIncorrectCount
	}
	switch m := strings.ToUpper(strings.TrimSpace(xs[0])); m {
	case "MERGE", "PATCH", "PUT", "DELETE":
		return m, nil
	}
	return "", errXMethodIncorrectValue
}

// readBody reads the whole body within the size limit.
func (q *request) readBody() ([]byte, error) {
	body := http.MaxBytesReader(q.w, q.r.Body, q.h.maxBody)
	b, err := readAll(body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errBodyTooLarge
		}
		return nil, apiError(http.StatusBadRequest, "InvalidInput", "the request body could not be read")
	}
	return b, nil
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}

// statusWriter remembers the status written, for the log line.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64 // body bytes written
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

func (s *statusWriter) code() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}
