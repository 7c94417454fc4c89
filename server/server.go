// Package server serves Azure Table Storage's REST API over one
// tablestore.DB, so the official Azure SDKs (aztables for Go,
// @azure/data-tables for JavaScript, and the others) work against it
// unchanged.
//
// New returns an http.Handler; NewHTTPServer wraps it in an http.Server
// with timeouts suited to a network listener, and NewListener gives
// net/http's own refusals Azure's error body:
//
//	db, _ := tablestore.Open(dir, nil)
//	h, _ := server.New(db, nil) // devstoreaccount1 and its well-known key
//	srv := server.NewHTTPServer("127.0.0.1:10002", h)
//	debug.SetMemoryLimit(server.RecommendedMemoryLimit(nil))
//	ln, _ := net.Listen("tcp", srv.Addr)
//	err := srv.Serve(server.NewListener(ln)) // until srv.Shutdown
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
// Requests are admitted in stages so that slow or unprivileged clients
// cannot starve others: credentials and permissions are checked from the
// URL and headers before any body is read; bodies arrive in upload slots
// of their own at a minimum rate; operations run in work slots; and
// bodies, the work on them and response pages share a memory budget
// (Options.MemoryBudget). What finds no slot or memory in time is
// answered 503 ServerBusy with Retry-After. XML and JSON bodies are
// checked strictly and refused, never repaired.
//
// The handler is safe for concurrent use. Every parse of a request reuses
// the library's own rules (filter parsing, validation, the JSON wire
// format of tablestore.Entity), so the server rejects exactly what the
// library rejects, with Azure's status codes and error bodies.
package server

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
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
	// DefaultQueueWait is how long a request waits for a free slot or
	// for memory before it is answered 503 ServerBusy.
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
	// MaxConcurrentRequests bounds the operations running at once (a
	// request's body is received before it takes one); a request that
	// finds no free slot within QueueWait is answered 503 ServerBusy with
	// Retry-After. Default DefaultMaxConcurrentRequests.
	MaxConcurrentRequests int
	// MaxConcurrentUploads bounds the request bodies being received at
	// once, apart from MaxConcurrentRequests, so clients that send bodies
	// slowly take upload slots, not the slots operations run in. Beyond
	// it a request waits up to QueueWait, then is answered 503
	// ServerBusy. Default 2 × MaxConcurrentRequests.
	MaxConcurrentUploads int
	// QueueWait is how long a request waits for a slot or for memory; a
	// request whose body has arrived waits ten times as long for its work
	// slot and memory, rather than have its upload thrown away. Default
	// DefaultQueueWait.
	QueueWait time.Duration
	// MaxBodyBytes bounds a request body; a larger one is answered 413
	// RequestBodyTooLarge. Default DefaultMaxBodyBytes (4 MiB).
	MaxBodyBytes int64
	// MaxHeaderBytes bounds the size of a request's target and header
	// lines; larger is answered 431 RequestHeaderFieldsTooLarge with
	// Azure's error body. NewHTTPServer sets the wire limit above it so
	// the handler answers first. Default DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MinBodyRate is the slowest, in bytes per second, a request body may
	// arrive after BodyGracePeriod; a slower one is answered 408
	// OperationTimedOut and its connection closed. Default
	// DefaultMinBodyRate.
	MinBodyRate int
	// BodyGracePeriod is how long a request body may take before
	// MinBodyRate applies. Default DefaultBodyGracePeriod.
	BodyGracePeriod time.Duration
	// MemoryBudget bounds the memory requests use at once, in bytes:
	// request bodies, the work of operations on them, and response pages,
	// with the garbage they leave. Reservations take at most four fifths
	// of it (the rest is room for garbage not yet collected), bodies at
	// most three quarters of that, so reads always find memory. A request
	// that cannot reserve what it needs in time is answered 503
	// ServerBusy with Retry-After. Default MaxBodyBytes ×
	// MaxConcurrentRequests (256 MiB by default). The store's block cache
	// (tablestore.Options.CacheSize) is not part of it. See
	// RecommendedMemoryLimit for the Go runtime's setting that goes with
	// it.
	MemoryBudget int64
	// KeepMemory leaves memory freed after a burst to the Go runtime's
	// own pace. By default, once the budget in use has reached an eighth
	// of MemoryBudget and then stayed near zero for a second, the handler
	// returns freed memory to the operating system
	// (runtime/debug.FreeOSMemory, which also collects garbage). Default
	// false.
	KeepMemory bool

	// Operations (see metrics.go, cors.go, bearer.go, accounts.go).

	// Metrics, if set, counts requests, bytes, latencies and admission
	// refusals, and reports the store's engine figures, labelled with
	// the account. One Metrics may serve several handlers. Default nil.
	Metrics *Metrics
	// Bearer, if set, accepts Microsoft Entra ID bearer tokens over TLS.
	// Default nil: bearer tokens are refused.
	Bearer *Bearer
	// PublicEndpoints are the service roots clients reach this server
	// by, as scheme://host[:port] (such as https://tables.example:10002).
	// A bearer token whose audience is an account's endpoint is accepted
	// only for an endpoint built from them: ENDPOINT/ACCOUNT, or ENDPOINT
	// itself when its host names the account host-style
	// (ACCOUNT.table.domain). The request's Host header is never
	// trusted for this. Default none: only StorageAudience and
	// Bearer.Audiences are accepted.
	PublicEndpoints []string

	// Now is the clock the handler judges time by: the Date header,
	// shared access signatures' st and se and stored policies' windows,
	// and bearer tokens' exp and nbf (unless Bearer.Now is set). The
	// SharedKey check of x-ms-date against clock skew keeps the wall
	// clock, as clients sign with theirs. Tests set it to a controllable
	// clock (tablestoretest.Clock). Default time.Now.
	Now func() time.Time

	// Cosmos, if set, answers as Cosmos DB for Table does where it
	// differs from Azure Table Storage (see cosmos.go). Default nil.
	Cosmos *Cosmos
}

// budgetSize is the memory budget o (with defaults applied) asks for.
func (o *Options) budgetSize() int64 {
	if o.MemoryBudget > 0 {
		return o.MemoryBudget
	}
	return o.MaxBodyBytes * int64(o.MaxConcurrentRequests)
}

// withDefaults returns o with every zero limit set to its default.
func (o Options) withDefaults() Options {
	if o.MaxConcurrentRequests <= 0 {
		o.MaxConcurrentRequests = DefaultMaxConcurrentRequests
	}
	if o.MaxConcurrentUploads <= 0 {
		o.MaxConcurrentUploads = 2 * o.MaxConcurrentRequests
	}
	if o.QueueWait <= 0 {
		o.QueueWait = DefaultQueueWait
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if o.MinBodyRate <= 0 {
		o.MinBodyRate = DefaultMinBodyRate
	}
	if o.BodyGracePeriod <= 0 {
		o.BodyGracePeriod = DefaultBodyGracePeriod
	}
	o.MemoryBudget = o.budgetSize()
	return o
}

// memoryLimitHeadroom is what RecommendedMemoryLimit adds to the budget:
// the runtime, the store's own memory in the Go heap, and garbage not
// yet collected.
const memoryLimitHeadroom = 32 << 20

// RecommendedMemoryLimit returns the Go runtime memory limit (GOMEMLIMIT,
// runtime/debug.SetMemoryLimit) that suits a process serving a handler
// made with opts (nil: defaults): its MemoryBudget plus 32 MiB. Under the
// default garbage collector settings the heap may grow to twice what is
// live before it is collected, so a burst that fills the budget can take
// twice the budget; with this limit the collector runs early instead and
// the process stays near the budget. It is advice: New does not set it,
// as the limit is the whole process's (tablestore serve sets it unless
// GOMEMLIMIT is set).
func RecommendedMemoryLimit(opts *Options) int64 {
	var o Options
	if opts != nil {
		o = *opts
	}
	o = o.withDefaults()
	return o.MemoryBudget + memoryLimitHeadroom
}

// handler serves the Table REST API.
type handler struct {
	db      *tablestore.DB
	account string
	keys    atomic.Pointer[[][]byte] // SetKeys replaces them
	macs    sync.Pool                // *keyMACs for verify (auth.go)
	anon    bool
	log     *slog.Logger
	work    slots // operations running
	uploads slots // bodies being received
	streams slots // long-polls and event streams (ext_changes.go)
	mem     *budget
	wait    time.Duration
	maxBody int64
	maxHdr  int
	minRate int
	grace   time.Duration
	now     func() time.Time // Options.Now
	// closing is closed when the server shuts down: streams and
	// long-polls end (ext_live.go).
	closing   chan struct{}
	closeOnce sync.Once

	propsMu sync.Mutex
	props   []byte // the service properties document; nil: the defaults
	// propsSetMu serializes Set Service Properties' read, merge and
	// write (service.go).
	propsSetMu sync.Mutex

	metrics *Metrics // Options.Metrics; nil: none (ops.go)
	bearer  *Bearer  // Options.Bearer; nil: no bearer tokens (bearer.go)
	// endpoints are the account's endpoints as token audiences,
	// normalized (see normAudience), from Options.PublicEndpoints.
	endpoints []string
	// bearerScoped: the handler is one of several accounts (NewAccounts),
	// so a token's roles claim counts only with an audience that names
	// this account.
	bearerScoped bool
	// bearerShared: bearer also serves other accounts, so its Audiences
	// do not name this account.
	bearerShared bool
	// cors is the parsed CORS rules of the stored service properties;
	// nil or empty: no CORS headers (cors.go).
	cors atomic.Pointer[corsRules]
	// cosmos is the Cosmos DB flavor; nil: Storage's (cosmos.go).
	cosmos *cosmosState
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
	o = o.withDefaults()
	h := &handler{
		db:      db,
		account: o.Account,
		anon:    o.Anonymous,
		log:     o.Logger,
		work:    make(slots, o.MaxConcurrentRequests),
		uploads: make(slots, o.MaxConcurrentUploads),
		streams: make(slots, o.MaxConcurrentRequests),
		mem:     newBudget(o.MemoryBudget, o.KeepMemory),
		wait:    o.QueueWait,
		maxBody: o.MaxBodyBytes,
		maxHdr:  o.MaxHeaderBytes,
		minRate: o.MinBodyRate,
		grace:   o.BodyGracePeriod,
		now:     o.Now,
		closing: make(chan struct{}),
	}
	if h.now == nil {
		h.now = time.Now
	}
	if o.Cosmos != nil {
		h.cosmos = newCosmosState(o.Cosmos, h.now)
	}
	if err := h.setKeys(o.Keys); err != nil {
		return nil, err
	}
	if err := h.initOps(&o); err != nil {
		return nil, err
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
// keep slow or idle clients from holding connections, and a wire limit on
// request headers twice DefaultMaxHeaderBytes, so the handler, whose
// limit is lower, answers oversized headers with Azure's error body.
// Start it with Serve(NewListener(ln)), which also gives Azure's body to
// headers beyond the wire limit, or ListenAndServe; stop it with
// Shutdown, which ends h's event streams and long-polls (EndStreams).
//
// ReadTimeout bounds the request line, headers and a body the handler
// does not read; the handler reads bodies at MinBodyRate, with deadlines
// of its own.
func NewHTTPServer(addr string, h http.Handler) *http.Server {
	srv := &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      120 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    wireHeaderBytes,
	}
	srv.RegisterOnShutdown(func() { EndStreams(h) })
	return srv
}

// wireHeaderBytes is NewHTTPServer's MaxHeaderBytes.
const wireHeaderBytes = 2 * DefaultMaxHeaderBytes

// request is the per-request state shared by the operation handlers.
type request struct {
	h     *handler
	r     *http.Request
	w     http.ResponseWriter
	id    string
	start time.Time
	res   resource
	sas   *sasGrant // nil unless authorised by a shared access signature
	// signed is what the account key signed (SharedKey or a SAS), which a
	// stream verifies again while it runs (ext_live.go).
	signed signature
	xml    bool // errors are written as XML (ACL, service operations)
	// body is the request body, read by receiveBody before the operation
	// runs; bodyDone says it was read whole (or there was none).
	body     []byte
	bodyDone bool
	// bodyBuf is the buffer body was read into, returned to its pool by
	// releaseBody.
	bodyBuf []byte
	// respBuf is a response's buffer (a query page, a batch response),
	// returned to its pool once the response holding it has been sent.
	respBuf []byte
	// bodyMem and workMem are the bytes reserved from the memory budget
	// for the body and for the operation's work; releaseMemory releases
	// them.
	bodyMem, workMem int64

	// The request log's and the metrics' fields (ops.go).
	in      *countingBody // the request body, counted; nil without one
	why     string        // an authentication failure's detail, for the log only
	code    string        // the error code answered, if any
	bearer  *bearerGrant  // set when a bearer token authorised the request
	preflit bool          // a CORS preflight
	cq      *cosmosReq    // the Cosmos flavor's state; nil on Storage's
}

// ServeHTTP serves one request through the admission stages described in
// admission.go.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &statusWriter{}
	q := &request{h: h, r: r, w: rec, id: newRequestID(), start: start}
	rec.ResponseWriter = q.cosmosWire(w) // cosmos_wire.go
	q.begin()
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				q.releaseMemory()
				panic(p)
			}
			if h.log != nil {
				h.log.Error("request panicked", "request_id", q.id, "panic", fmt.Sprint(p))
			}
			if rec.status == 0 {
				q.answer(errInternal)
			}
		}
		q.releaseMemory()
		q.finish(rec)     // ops.go: metrics and the log line
		q.reportOutcome() // cosmos_ru.go
	}()
	q.commonHeaders()
	if q.r.Method == http.MethodOptions && q.corsOn() {
		q.answer(q.preflight()) // cors.go
		return
	}
	if q.corsOn() {
		q.cors() // cors.go: the CORS headers of a cross-origin response
	}
	q.answer(q.serve())
	if q.respBuf != nil { // sent: the response no longer holds it
		responseBuffers.put(q.respBuf)
		q.respBuf = nil
	}
	if !q.bodyDone && r.ContentLength != 0 {
		// A body left unread is not waited for: net/http would read up
		// to 256 KiB of it, at the client's pace, before closing.
		_ = http.NewResponseController(rec).SetReadDeadline(time.Now())
	}
}

// releaseMemory releases the memory the request reserved.
func (q *request) releaseMemory() {
	q.h.mem.release(q.bodyMem, true)
	q.h.mem.release(q.workMem, false)
	q.bodyMem, q.workMem = 0, 0
	q.releaseBody()
}

// releaseBody lets the request body go, once the operation holds copies
// of what it needs: its buffer returns to bodyBuffers (a large one to the
// collector).
func (q *request) releaseBody() {
	q.body = nil
	if q.bodyBuf != nil {
		bodyBuffers.put(q.bodyBuf)
		q.bodyBuf = nil
	}
}

// commonHeaders sets the headers every response carries.
func (q *request) commonHeaders() {
	// Canonical keys, and the values every response shares as slices of
	// their own: setting them costs no key canonicalization and no
	// allocation per request. (A later Set or Add replaces or copies a
	// shared slice; nothing writes into one.)
	hd := q.w.Header()
	hd["X-Ms-Request-Id"] = []string{q.id}
	if v := q.r.Header.Get("X-Ms-Version"); headerVersion[v] {
		hd["X-Ms-Version"] = []string{v}
	} else {
		hd["X-Ms-Version"] = defaultVersion
	}
	if c := q.r.Header.Get("X-Ms-Client-Request-Id"); c != "" {
		hd["X-Ms-Client-Request-Id"] = []string{c}
	}
	hd["Date"] = httpDate(q.h.now())
	hd["Cache-Control"] = noCache
	hd["X-Content-Type-Options"] = noSniff
	hd["Server"] = serverName
}

var (
	defaultVersion = []string{"2019-02-02"}
	noCache        = []string{"no-cache"}
	noSniff        = []string{"nosniff"}
	serverName     = []string{"tablestore"}
)

// lastDate is the Date header of the current second, formatted once.
var lastDate atomic.Pointer[dateHeader]

type dateHeader struct {
	unix  int64
	value []string
}

// httpDate returns the Date header for now, shared by the responses of
// one second.
func httpDate(now time.Time) []string {
	sec := now.Unix()
	if d := lastDate.Load(); d != nil && d.unix == sec {
		return d.value
	}
	d := &dateHeader{unix: sec, value: []string{now.UTC().Format(http.TimeFormat)}}
	lastDate.Store(d)
	return d.value
}

// serve runs the stages: headers (limits, route, authentication and
// authorization), the body, then the operation in a work slot.
func (q *request) serve() error {
	if requestHeaderBytes(q.r) > q.h.maxHdr {
		return errHeadersTooLarge
	}
	if q.r.ContentLength > q.h.maxBody {
		return errBodyTooLarge
	}
	res, err := q.h.route(q.r)
	q.xml = res.kind == kindACL || res.kind == kindService
	if err != nil {
		return err
	}
	q.res = res
	if err := q.checkVersion(); err != nil {
		return err
	}
	method, err := effectiveMethod(q.r)
	if err != nil {
		return err
	}
	if err := q.authenticate(); err != nil {
		return err
	}
	o, err := q.resolve(method)
	if err != nil {
		return err
	}
	if err := q.authorizeOperation(o); err != nil {
		return err
	}
	if !o.body && q.r.ContentLength != 0 {
		q.w.Header().Set("Connection", "close") // the body is not read
	}
	if o.stream {
		return q.serveStream(o) // ext_changes.go
	}
	if o.body {
		if err := q.receiveBody(); err != nil {
			return err
		}
	}
	if q.cosmosOn() {
		if err := q.cosmosBefore(&o); err != nil { // cosmos.go
			return err
		}
	}
	ctx := q.r.Context()
	wait := q.h.wait
	if len(q.body) > 0 {
		wait *= bodyWorkWait // the upload is not thrown away lightly
	}
	if !q.h.work.acquire(ctx, wait) {
		return q.busy()
	}
	n := int64(len(q.body)) * bodyWorkFactor
	if n == 0 {
		n = readReserve
	}
	// With its body's memory, a request never needs more than the whole
	// budget: alone, it always runs.
	n = min(n, q.h.mem.size-q.bodyMem)
	got, ok := q.h.mem.acquire(ctx, n, false, wait)
	if !ok {
		q.h.work.release()
		return q.busy()
	}
	q.workMem += got
	// The response waits in memory (reserved) until the work slot is
	// free again, so a client slow to read holds no slot.
	dw := &deferredWriter{ResponseWriter: q.w}
	func() {
		defer q.h.work.release()
		q.w = dw
		defer func() { q.w = dw.ResponseWriter }()
		q.answer(o.run(q))
		q.cosmosAfter(o, dw)
	}()
	q.send(dw)
	return nil
}

// busy counts a request admission could not fit in (ops.go) and
// returns the error it is answered with, 503 ServerBusy.
func (q *request) busy() error {
	q.refused()
	return errServerBusy
}

// deferredWriter keeps an operation's response: its status, and the
// slices written, which the handlers do not touch again after writing.
// Headers go to the underlying writer's map.
type deferredWriter struct {
	http.ResponseWriter
	status int
	chunks [][]byte
}

func (d *deferredWriter) WriteHeader(code int) {
	if d.status == 0 {
		d.status = code
	}
}

func (d *deferredWriter) Write(b []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	d.chunks = append(d.chunks, b)
	return len(b), nil
}

// send writes a deferred response, at MinBodyRate or faster once
// BodyGracePeriod has passed: a client that reads slower loses its
// connection.
func (q *request) send(d *deferredWriter) {
	size := 0
	for _, c := range d.chunks {
		size += len(c)
	}
	due := time.Duration(float64(size) / float64(q.h.minRate) * float64(time.Second))
	_ = http.NewResponseController(q.w).SetWriteDeadline(time.Now().Add(q.h.grace + due))
	if d.status == 0 {
		d.status = http.StatusOK
	}
	q.w.WriteHeader(d.status)
	for _, c := range d.chunks {
		if _, err := q.w.Write(c); err != nil {
			return
		}
	}
}

// requestHeaderBytes is the size of the request line and header lines
// as they came on the wire (CRLFs included), which the wire limit also
// counts.
func requestHeaderBytes(r *http.Request) int {
	n := len(r.Method) + len(r.RequestURI) + len(r.Proto) + 4
	if r.RequestURI == "" {
		n += len(r.URL.String())
	}
	n += len(r.Host) + len("Host: \r\n")
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// effectiveMethod applies verb tunnelling: POST with X-HTTP-Method.
func effectiveMethod(r *http.Request) (string, error) {
	xs := r.Header.Values("X-Http-Method") // canonical: no key to make
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

func newRequestID() string {
	var g edm.GUID
	_, _ = rand.Read(g[:])
	g[6] = g[6]&0x0f | 0x40 // a version 4 (random) UUID
	g[8] = g[8]&0x3f | 0x80
	return g.String()
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

// Unwrap gives http.ResponseController the connection's writer, for the
// body's read deadlines.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func (s *statusWriter) code() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}
