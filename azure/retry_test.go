package azure_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/edm"
)

// faultyServer is tablestore's server behind a handler that refuses the
// first tries of one extension request (method and path suffix), then
// lets them through, counting the tries it saw.
type faultyServer struct {
	h  http.Handler
	cs string // its connection string

	mu     sync.Mutex
	method string // the request to fault; "" faults none
	suffix string
	fail   int    // tries still to refuse
	status int    // the refusal's status; 0 closes the connection
	after  string // its Retry-After
	tries  int    // tries of the request seen
}

func newFaultyServer(t *testing.T) *faultyServer {
	t.Helper()
	f := &faultyServer{}
	f.cs = serveWrapped(t, func(h http.Handler) http.Handler { f.h = h; return f })
	return f
}

func (f *faultyServer) connectionString() string { return f.cs }

// arm faults the next fail tries of method on a path ending in suffix
// with status (0: a closed connection) and Retry-After after.
func (f *faultyServer) arm(method, suffix string, fail, status int, after string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.method, f.suffix, f.fail, f.status, f.after, f.tries = method, suffix, fail, status, after, 0
}

// seen reports the tries of the armed request, and disarms.
func (f *faultyServer) seen() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.tries
	f.method = ""
	return n
}

func (f *faultyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	match := f.method != "" && r.Method == f.method && strings.Contains(r.URL.Path, "/$tablestore/") &&
		strings.HasSuffix(r.URL.Path, f.suffix)
	refuse := false
	status, after := f.status, f.after
	if match {
		f.tries++
		if f.fail > 0 {
			f.fail--
			refuse = true
		}
	}
	f.mu.Unlock()
	if !refuse {
		f.h.ServeHTTP(w, r)
		return
	}
	if status == 0 {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	code := map[int]string{400: "InvalidInput", 408: "OperationTimedOut", 429: "TooManyRequests", 500: "InternalError", 503: "ServerBusy"}[status]
	if after != "" {
		w.Header().Set("Retry-After", after)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `{"odata.error":{"code":"`+code+`","message":{"lang":"en-US","value":"refused by the test."}}}`)
}

// openRetrying opens the driver with short retry delays.
func openRetrying(t *testing.T, cs string, retry policy.RetryOptions) *ts.DB {
	t.Helper()
	if retry.RetryDelay == 0 {
		retry.RetryDelay = time.Millisecond
	}
	if retry.MaxRetryDelay == 0 {
		retry.MaxRetryDelay = 20 * time.Millisecond
	}
	db, err := azure.Open(cs, &azure.Options{Client: azcore.ClientOptions{Retry: retry}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// retryFixture is a table with a feed, an index, a TTL and an entity,
// through a driver that has read the capability document.
func retryFixture(t *testing.T, retry policy.RetryOptions) (*faultyServer, *ts.Table) {
	t.Helper()
	ctx := context.Background()
	f := newFaultyServer(t)
	db := openRetrying(t, f.connectionString(), retry)
	tb, err := db.CreateTable(ctx, "Retried")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Color": "red"}}); err != nil {
		t.Fatal(err)
	}
	if err := tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := tb.CreateIndex(ctx, ts.IndexSpec{Name: "ByColor", Properties: []string{"Color"}}); err != nil {
		t.Fatal(err)
	}
	return f, tb
}

// extOp is an extension operation, with its request and whether it is
// safe to send again.
type extOp struct {
	name, method, suffix string
	idempotent           bool
	do                   func(context.Context) error
	calls                int // requests the operation sends; 0: one
}

func extOps(tb *ts.Table) []extOp {
	one := func(name, method, suffix string, idempotent bool, do func(context.Context) error) extOp {
		return extOp{name: name, method: method, suffix: suffix, idempotent: idempotent, do: do}
	}
	indexes := one("Indexes", "GET", "/indexes", true, func(ctx context.Context) error { _, err := tb.Indexes(ctx); return err })
	indexes.calls = 2 // Table.Indexes lists the indexes, then their sizes
	return []extOp{
		one("ChangeFeed", "GET", "/changefeed", true, func(ctx context.Context) error { _, err := tb.ChangeFeed(ctx); return err }),
		one("EnableChangeFeed", "PUT", "/changefeed", true, func(ctx context.Context) error {
			return tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{Images: ts.ImagesNew})
		}),
		one("ReadChanges", "GET", "/changes", true, func(ctx context.Context) error {
			_, err := tb.ReadChanges(ctx, ts.ChangesQuery{Top: 10})
			return err
		}),
		indexes,
		one("IndexQuery", "GET", "/query", true, func(ctx context.Context) error {
			_, err := tb.QueryPage(ctx, ts.Query{Index: "ByColor"})
			return err
		}),
		one("CreateIndex", "PUT", "/indexes/Second", false, func(ctx context.Context) error {
			return tb.CreateIndex(ctx, ts.IndexSpec{Name: "Second", Properties: []string{"Color"}})
		}),
		one("SetTTL", "PUT", "/ttl", true, func(ctx context.Context) error { return tb.SetTTL(ctx, ts.TTL{Default: time.Hour}) }),
		one("TTL", "GET", "/ttl", true, func(ctx context.Context) error { _, err := tb.TTL(ctx); return err }),
		one("Stats", "GET", "/stats", true, func(ctx context.Context) error { _, err := tb.Stats(ctx); return err }),
		one("DeleteRange", "DELETE", "/partition", true, func(ctx context.Context) error {
			return tb.Partition("q").DeleteRange(ctx, "a", "z")
		}),
		one("DropIndex", "DELETE", "/indexes/ByColor", false, func(ctx context.Context) error { return tb.DropIndex(ctx, "ByColor") }),
		one("DisableChangeFeed", "DELETE", "/changefeed", true, func(ctx context.Context) error { return tb.DisableChangeFeed(ctx) }),
	}
}

// TestExtensionRetries refuses the first two tries of each extension
// request with 503 ServerBusy: a request safe to send again succeeds on
// the third try, one that is not (creating or dropping an index) fails
// at once with ServerBusy.
func TestExtensionRetries(t *testing.T) {
	ctx := context.Background()
	f, tb := retryFixture(t, policy.RetryOptions{})
	for _, op := range extOps(tb) {
		f.arm(op.method, op.suffix, 2, http.StatusServiceUnavailable, "0")
		err := op.do(ctx)
		tries := f.seen()
		if op.idempotent {
			if want := 2 + max(op.calls, 1); err != nil || tries != want {
				t.Errorf("%s: %v after %d tries, want success after %d", op.name, err, tries, want)
			}
			continue
		}
		var te *ts.Error
		if !errors.As(err, &te) || te.Code != edm.CodeServerBusy || !errors.Is(err, ts.ErrServerBusy) || tries != 1 {
			t.Errorf("%s: %v after %d tries, want ServerBusy after one", op.name, err, tries)
		}
	}
	// The refused drop left the index.
	if ixs, err := tb.Indexes(ctx); err != nil || len(ixs) != 1 || ixs[0].Name != "ByColor" {
		t.Fatalf("indexes after a refused drop: %+v %v", ixs, err)
	}
}

// TestExtensionRetriesClosedConnection drops the connection of the
// first tries: reads and idempotent writes are sent again.
func TestExtensionRetriesClosedConnection(t *testing.T) {
	ctx := context.Background()
	f, tb := retryFixture(t, policy.RetryOptions{})
	// DELETE is not one the HTTP transport replays by itself, so the
	// server sees exactly the driver's tries.
	f.arm("DELETE", "/partition", 2, 0, "")
	if err := tb.Partition("p").DeleteAll(ctx); err != nil {
		t.Fatalf("range delete over dropped connections: %v", err)
	}
	if n := f.seen(); n != 3 {
		t.Fatalf("range delete: the server saw %d tries, want 3", n)
	}
	if _, err := tb.Get(ctx, "p", "r", nil); !errors.Is(err, ts.ErrResourceNotFound) {
		t.Fatalf("the entity after the retried delete: %v", err)
	}
	f.arm("GET", "/query", 2, 0, "")
	if _, err := tb.QueryPage(ctx, ts.Query{Index: "ByColor"}); err != nil {
		t.Fatalf("index query over dropped connections: %v", err)
	}
	if n := f.seen(); n < 3 {
		t.Fatalf("index query: the server saw %d tries, want at least 3", n)
	}
	f.arm("PUT", "/indexes/Second", 1, 0, "")
	if err := tb.CreateIndex(ctx, ts.IndexSpec{Name: "Second", Properties: []string{"Color"}}); err == nil {
		t.Fatal("an index create over a dropped connection succeeded")
	}
	if n := f.seen(); n != 1 {
		t.Fatalf("index create: the server saw %d tries, want 1", n)
	}
}

// TestExtensionRetryOptions holds the retries to Options.Client.Retry:
// MaxRetries, StatusCodes, and no 4xx but 408 and 429.
func TestExtensionRetryOptions(t *testing.T) {
	ctx := context.Background()
	stats := func(tb *ts.Table) error { _, err := tb.Stats(ctx); return err }
	for _, c := range []struct {
		name          string
		retry         policy.RetryOptions
		status, fail  int
		wantTries     int
		wantCode      edm.Code // "": success
		wantErrSubstr string
	}{
		{name: "default retries 503 three times", status: 503, fail: 3, wantTries: 4},
		{name: "default gives up after three retries", status: 503, fail: 5, wantTries: 4, wantCode: edm.CodeServerBusy},
		{name: "MaxRetries 1", retry: policy.RetryOptions{MaxRetries: 1}, status: 503, fail: 5, wantTries: 2, wantCode: edm.CodeServerBusy},
		{name: "MaxRetries negative", retry: policy.RetryOptions{MaxRetries: -1}, status: 503, fail: 5, wantTries: 1, wantCode: edm.CodeServerBusy},
		{name: "408 retried", status: 408, fail: 1, wantTries: 2},
		{name: "429 retried", status: 429, fail: 1, wantTries: 2},
		{name: "500 retried", status: 500, fail: 1, wantTries: 2},
		{name: "400 never", status: 400, fail: 1, wantTries: 1, wantCode: edm.CodeInvalidInput},
		{name: "400 never, even listed", retry: policy.RetryOptions{StatusCodes: []int{400, 503}}, status: 400, fail: 1, wantTries: 1, wantCode: edm.CodeInvalidInput},
		{name: "StatusCodes replace the defaults", retry: policy.RetryOptions{StatusCodes: []int{503}}, status: 500, fail: 1, wantTries: 1, wantCode: edm.CodeInternalError},
		{name: "StatusCodes listed", retry: policy.RetryOptions{StatusCodes: []int{503}}, status: 503, fail: 1, wantTries: 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, tb := retryFixture(t, c.retry)
			f.arm("GET", "/stats", c.fail, c.status, "0")
			err := stats(tb)
			tries := f.seen()
			if tries != c.wantTries {
				t.Errorf("the server saw %d tries, want %d (%v)", tries, c.wantTries, err)
			}
			if c.wantCode == "" {
				if err != nil {
					t.Errorf("got %v, want success", err)
				}
				return
			}
			var te *ts.Error
			if !errors.As(err, &te) || te.Code != c.wantCode {
				t.Errorf("got %v, want %s", err, c.wantCode)
			}
		})
	}
}

// cancelOnRefusal is a transport that, once a refused extension answer
// has been read whole, cancels the context of the call.
type cancelOnRefusal struct {
	cancel   context.CancelFunc
	mu       sync.Mutex
	refusals int
}

func (c *cancelOnRefusal) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(req.URL.Path, "/$tablestore/") {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	c.mu.Lock()
	c.refusals++
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return resp, nil
}

// TestExtensionRetryCancelledDuringBackoff cancels a call as a refusal
// asking for a minute's wait arrives, then lets a call's deadline pass
// during that wait: each returns its context's error at once, without
// another try.
func TestExtensionRetryCancelledDuringBackoff(t *testing.T) {
	f := newFaultyServer(t)
	tr := &cancelOnRefusal{}
	db, err := azure.Open(f.connectionString(), &azure.Options{Client: azcore.ClientOptions{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := db.CreateTable(context.Background(), "Cancelled")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.TTL(context.Background()); err != nil { // reads the capability document
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr.mu.Lock()
	tr.cancel = cancel
	tr.mu.Unlock()
	f.arm("GET", "/ttl", 5, http.StatusServiceUnavailable, "60")
	start := time.Now()
	_, err = tb.TTL(ctx)
	elapsed := time.Since(start)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the context's error", err)
	}
	if elapsed > 10*time.Second {
		t.Fatalf("returned %v after the cancel, want at once", elapsed)
	}
	if n := f.seen(); n != 1 {
		t.Fatalf("the server saw %d tries, want 1", n)
	}

	// A deadline that passes during the minute's wait ends it.
	tr.mu.Lock()
	tr.cancel = nil
	tr.mu.Unlock()
	dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
	defer dcancel()
	f.arm("GET", "/ttl", 5, http.StatusServiceUnavailable, "60")
	start = time.Now()
	_, err = tb.TTL(dctx)
	elapsed = time.Since(start)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want the deadline's error", err)
	}
	if elapsed > 10*time.Second {
		t.Fatalf("returned after %v, want at the deadline", elapsed)
	}
	if n := f.seen(); n != 1 {
		t.Fatalf("the server saw %d tries before the deadline, want 1", n)
	}
}

// deadlineRecorder is a transport that reports, for each long-poll of
// the feed, how long its try may last.
type deadlineRecorder struct {
	polls chan time.Duration
}

func (d *deadlineRecorder) Do(req *http.Request) (*http.Response, error) {
	if strings.HasSuffix(req.URL.Path, "/changes") && req.URL.Query().Get("wait") != "" {
		left := time.Duration(-1)
		if dl, ok := req.Context().Deadline(); ok {
			left = time.Until(dl)
		}
		select {
		case d.polls <- left:
		default:
		}
	}
	return http.DefaultTransport.RoundTrip(req)
}

// TestExtensionLongPollTryTimeout gives a long-poll its wait on top of
// TryTimeout, so a per-try timeout shorter than the wait does not end
// every poll early (and retry it at once), while it still bounds the
// try.
func TestExtensionLongPollTryTimeout(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFaultyServer(t)
	rec := &deadlineRecorder{polls: make(chan time.Duration, 1)}
	const tryTimeout = 2 * time.Second
	db, err := azure.Open(f.connectionString(), &azure.Options{Client: azcore.ClientOptions{
		Transport: rec, Retry: policy.RetryOptions{TryTimeout: tryTimeout}}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Polled")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		page *ts.ChangesPage
		err  error
	}
	done := make(chan result, 1)
	go func() {
		page, err := tb.ReadChanges(ctx, ts.ChangesQuery{From: ts.CursorNow(), Follow: true, Top: 10})
		done <- result{page, err}
	}()
	left := <-rec.polls
	// The driver's long-poll waits 25 s; the try may last that plus
	// TryTimeout, and no more.
	if left < 25*time.Second || left > 25*time.Second+tryTimeout {
		t.Fatalf("a long-poll's try may last %v, want 25s plus at most %v", left, tryTimeout)
	}
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || len(r.page.Changes) != 1 {
		t.Fatalf("the followed read: %+v %v", r.page, r.err)
	}
}
