package server

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
)

// testClock is a server clock a test moves forward.
type testClock struct{ offset atomic.Int64 }

func (c *testClock) now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *testClock) advance(d time.Duration) { c.offset.Add(int64(d)) }
func (c *testClock) sasTime(d time.Duration) string {
	return c.now().Add(d).UTC().Format("2006-01-02T15:04:05Z")
}

// pipeWriter is a ResponseWriter whose body a test reads as it is
// written, as a client reads a stream.
type pipeWriter struct {
	hd   http.Header
	code atomic.Int32
	pw   *io.PipeWriter
}

func (w *pipeWriter) Header() http.Header         { return w.hd }
func (w *pipeWriter) WriteHeader(code int)        { w.code.Store(int32(code)) }
func (w *pipeWriter) Write(b []byte) (int, error) { return w.pw.Write(b) }
func (w *pipeWriter) Flush()                      {}

// liveCall is a long-poll or stream running on a handler.
type liveCall struct {
	w      *pipeWriter
	events chan sseEvent // closed when the handler returned
	body   chan string   // a long-poll's body
}

// startLive runs r on h in the background: an event stream when sse,
// else a long-poll. The stream's events are delivered as they come.
func startLive(t *testing.T, h http.Handler, r *http.Request, sse bool) *liveCall {
	t.Helper()
	pr, pw := io.Pipe()
	c := &liveCall{w: &pipeWriter{hd: http.Header{}, pw: pw}, events: make(chan sseEvent, 64), body: make(chan string, 1)}
	ctx, cancel := context.WithCancel(r.Context())
	r = r.WithContext(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(c.w, r)
		pw.Close()
	}()
	t.Cleanup(func() { cancel(); pr.Close(); <-done })
	go func() {
		defer close(c.events)
		if !sse {
			b, _ := io.ReadAll(pr)
			c.body <- string(b)
			return
		}
		sr := &sseReader{sc: bufio.NewScanner(pr)}
		for {
			ev, ok := sr.next(t)
			if !ok {
				return
			}
			c.events <- ev
		}
	}()
	return c
}

// await reads events until the stream ends (its end event's reason, or
// "" when it ended without one) or d passes (fails the test).
func (c *liveCall) awaitEnd(t *testing.T, d time.Duration) string {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	reason := ""
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				return reason
			}
			if ev.event == "end" {
				var e struct{ Reason string }
				if err := json.Unmarshal([]byte(ev.data), &e); err != nil || ev.id == "" {
					t.Fatalf("end event %+v: %v", ev, err)
				}
				reason = e.Reason
			}
		case <-timer.C:
			t.Fatalf("the stream did not end within %s", d)
		}
	}
}

// awaitHeartbeat waits for the next heartbeat: the stream goes on.
func (c *liveCall) awaitHeartbeat(t *testing.T) {
	t.Helper()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok || ev.event == "end" {
				t.Fatalf("the stream ended (%+v), want it going on", ev)
			}
			if ev.comment {
				return
			}
		case <-timer.C:
			t.Fatal("no heartbeat within 5s")
		}
	}
}

// awaitAlive checks the call goes on over a few credential checks.
func (c *liveCall) awaitAlive(t *testing.T) {
	t.Helper()
	select {
	case b := <-c.body:
		t.Fatalf("the long-poll was answered: %s", b)
	case <-time.After(3 * credentialCheckInterval):
	}
	for range 2 { // a stream sends heartbeats every 0.2 s
		select {
		case ev, ok := <-c.events:
			if !ok || ev.event == "end" {
				t.Fatalf("the stream ended (%+v), want it going on", ev)
			}
		case <-time.After(time.Second):
		}
	}
}

// awaitStreams waits until h runs n long-polls or streams.
func awaitStreams(t *testing.T, h http.Handler, n int) {
	t.Helper()
	for i := 0; len(h.(*handler).streams) < n; i++ {
		if i > 500 {
			t.Fatalf("%d streams did not start", n)
		}
		time.Sleep(10 * time.Millisecond) // sleep: the handler's stream slots give no event to wait on
	}
}

// pollEnd waits for a long-poll's answer and returns its end field.
func (c *liveCall) pollEnd(t *testing.T, d time.Duration) string {
	t.Helper()
	select {
	case b := <-c.body:
		var p ChangesPageJSON
		if err := json.Unmarshal([]byte(b), &p); err != nil || c.w.code.Load() != http.StatusOK {
			t.Fatalf("long-poll answered %d %s", c.w.code.Load(), b)
		}
		return p.End
	case <-time.After(d):
		t.Fatalf("the long-poll was not answered within %s", d)
	}
	return ""
}

// testLiveCredentials checks that a stream or long-poll of the feed
// ends, with a reason that is not a shutdown's, as soon as its
// credential would no longer authorize a new request: the SAS's expiry
// passes, its stored access policy changes or goes, the bearer token
// expires (past the same skew as new requests are allowed), the account
// keys rotate; and that it goes on while the credential holds.
func testLiveCredentials(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	type setup struct {
		h   http.Handler
		db  *tablestore.DB
		clk *testClock
	}
	newSetup := func(t *testing.T) setup {
		clk := &testClock{}
		db := extFixture(t)
		h, err := New(db, &Options{Now: clk.now, Bearer: &Bearer{JWKS: testJWKS(rk, ek), Issuers: []string{testIssuer}}})
		if err != nil {
			t.Fatal(err)
		}
		return setup{h, db, clk}
	}
	token := func(clk *testClock, ttl time.Duration) string {
		now := clk.now()
		tk := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": testIssuer, "aud": StorageAudience,
			"exp": now.Add(ttl).Unix(), "nbf": now.Add(-time.Minute).Unix(), "oid": "user-1", "roles": []string{RoleTableDataReader}})
		tk.Header["kid"] = "rsa1"
		s, err := tk.SignedString(rk)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	request := func(s setup, sse bool, sign func(r *http.Request)) *http.Request {
		q := "from=now&heartbeat=0.2"
		if !sse {
			q = "from=now&wait=30"
		}
		r := httptest.NewRequest("GET", "http://127.0.0.1:10002/"+DevAccount+"/$tablestore/tables/things/changes?"+q, nil)
		r.RequestURI = ""
		if sse {
			r.Header.Set("Accept", "text/event-stream")
		}
		sign(r)
		return r
	}
	policy := []driver.AccessPolicy{{ID: "followers", Permission: "r"}}
	cases := []struct {
		name string
		// sign signs the request; end then makes the credential
		// invalid; want is the reason the stream ends with.
		sign func(s setup) func(r *http.Request)
		end  func(t *testing.T, s setup, call *liveCall)
		want string
	}{
		{"SAS expiry passes", func(s setup) func(r *http.Request) {
			q := signServiceSAS(map[string]string{"sv": "2019-02-02", "tn": "things", "sp": "r", "se": s.clk.sasTime(time.Hour)})
			return func(r *http.Request) { addQuery(r, q) }
		}, func(t *testing.T, s setup, _ *liveCall) { s.clk.advance(time.Hour + time.Minute) }, EndCredentialExpired},
		{"stored policy changes", func(s setup) func(r *http.Request) {
			q := signServiceSAS(map[string]string{"sv": "2019-02-02", "tn": "things", "si": "followers", "se": s.clk.sasTime(time.Hour)})
			return func(r *http.Request) { addQuery(r, q) }
		}, func(t *testing.T, s setup, _ *liveCall) {
			if err := root.SetAccessPolicies(s.db.Table("things"), context.Background(), []driver.AccessPolicy{{ID: "followers", Permission: "a"}}); err != nil {
				t.Fatal(err)
			}
		}, EndPolicyChanged},
		{"stored policy removed", func(s setup) func(r *http.Request) {
			q := signServiceSAS(map[string]string{"sv": "2019-02-02", "tn": "things", "si": "followers", "se": s.clk.sasTime(time.Hour)})
			return func(r *http.Request) { addQuery(r, q) }
		}, func(t *testing.T, s setup, _ *liveCall) {
			if err := root.SetAccessPolicies(s.db.Table("things"), context.Background(), nil); err != nil {
				t.Fatal(err)
			}
		}, EndPolicyChanged},
		{"bearer token expires", func(s setup) func(r *http.Request) {
			tok := token(s.clk, time.Hour)
			return func(r *http.Request) {
				r.TLS = &tls.ConnectionState{}
				r.Header.Set("Authorization", "Bearer "+tok)
			}
		}, func(t *testing.T, s setup, call *liveCall) {
			// Within the skew, the token still opens new requests: the
			// stream goes on too.
			s.clk.advance(time.Hour + DefaultBearerSkew - 10*time.Second)
			call.awaitAlive(t)
			s.clk.advance(20 * time.Second)
		}, EndCredentialExpired},
		{"account keys rotate (SharedKey)", func(s setup) func(r *http.Request) {
			return sharedKeyCred(true).sign
		}, func(t *testing.T, s setup, _ *liveCall) {
			if err := SetKeys(s.h, DevAccount, []string{otherTestKey}); err != nil {
				t.Fatal(err)
			}
		}, EndKeysRotated},
		{"account keys rotate (account SAS)", func(s setup) func(r *http.Request) {
			q := signAccountSAS("r", "o", "2019-02-02")
			return func(r *http.Request) { addQuery(r, q) }
		}, func(t *testing.T, s setup, _ *liveCall) {
			if err := SetKeys(s.h, DevAccount, []string{otherTestKey}); err != nil {
				t.Fatal(err)
			}
		}, EndKeysRotated},
	}
	for _, c := range cases {
		for _, sse := range []bool{true, false} {
			name := c.name + "/long-poll"
			if sse {
				name = c.name + "/SSE"
			}
			t.Run(name, func(t *testing.T) {
				s := newSetup(t)
				if err := root.SetAccessPolicies(s.db.Table("things"), context.Background(), policy); err != nil {
					t.Fatal(err)
				}
				sign := c.sign(s)
				call := startLive(t, s.h, request(s, sse, sign), sse)
				if sse {
					call.awaitHeartbeat(t)
				}
				awaitStreams(t, s.h, 1)
				c.end(t, s, call)
				var got string
				if sse {
					got = call.awaitEnd(t, 2*time.Second)
				} else {
					got = call.pollEnd(t, 2*time.Second)
				}
				if got != c.want {
					t.Fatalf("ended with %q, want %q", got, c.want)
				}
				// A new request with the same credential is refused.
				r := request(s, false, sign)
				r.URL.RawQuery = strings.Replace(r.URL.RawQuery, "wait=30", "wait=0", 1)
				w := serve(s.h, r)
				if w.Code < 400 {
					t.Fatalf("a new request with the ended credential: %d %s", w.Code, w.Body)
				}
			})
		}
	}

	t.Run("credential holds: the stream goes on", func(t *testing.T) {
		s := newSetup(t)
		tok := token(s.clk, time.Hour)
		call := startLive(t, s.h, request(s, true, func(r *http.Request) {
			r.TLS = &tls.ConnectionState{}
			r.Header.Set("Authorization", "Bearer "+tok)
		}), true)
		call.awaitHeartbeat(t)
		// Keys rotated with the signing key kept, time within the token's
		// life: nothing ends.
		if err := SetKeys(s.h, DevAccount, []string{otherTestKey, DevKey}); err != nil {
			t.Fatal(err)
		}
		s.clk.advance(30 * time.Minute)
		for range 3 {
			call.awaitHeartbeat(t)
		}
	})
}

const otherTestKey = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="

// TestExtShutdownEndsStreams checks that http.Server.Shutdown on
// NewHTTPServer's server ends an event stream and a long-poll at once,
// each with its final word naming the shutdown, and returns without
// error well within a second.
func TestExtShutdownEndsStreams(t *testing.T) {
	db := extFixture(t)
	h, err := New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewHTTPServer("127.0.0.1:0", h)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(NewListener(ln)) }()
	base := "http://" + ln.Addr().String() + "/" + DevAccount + "/$tablestore/tables/things/changes?from=now"
	get := func(query string, sse bool) *http.Response {
		r, _ := http.NewRequest("GET", base+query, nil)
		if sse {
			r.Header.Set("Accept", "text/event-stream")
		}
		sharedKeyCred(true).sign(r)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	stream := get("&heartbeat=5", true)
	sr := &sseReader{sc: bufio.NewScanner(stream.Body)}
	if ev, ok := sr.next(t); !ok || !ev.comment {
		t.Fatalf("first event %+v", ev)
	}
	poll := make(chan *http.Response, 1)
	go func() {
		r, _ := http.NewRequest("GET", base+"&wait=60", nil)
		sharedKeyCred(true).sign(r)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			poll <- nil
			return
		}
		poll <- resp
	}()
	awaitStreams(t, h, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v after %s", err, time.Since(start))
	}
	ev, ok := sr.next(t)
	if !ok || ev.event != "end" || ev.data != `{"reason":"shutdown"}` {
		t.Fatalf("the stream's last event %+v, want the shutdown's end", ev)
	}
	resp := <-poll
	if resp == nil {
		t.Fatal("the long-poll failed")
	}
	defer resp.Body.Close()
	var p ChangesPageJSON
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || p.End != EndShutdown {
		t.Fatalf("long-poll: %+v, %v", p, err)
	}
	if err := <-served; err != http.ErrServerClosed {
		t.Fatal(err)
	}
}
