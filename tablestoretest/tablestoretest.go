// Package tablestoretest runs a tablestore REST server inside a Go test,
// so code written against Azure's SDKs (aztables) can be tested without
// Azurite or an Azure account:
//
//	func TestSomething(t *testing.T) {
//		srv := tablestoretest.NewServer(t)
//		client, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(),
//			&aztables.ClientOptions{ClientOptions: policy.ClientOptions{Transport: srv.InProcessClient()}})
//		...
//	}
//
// The server listens on a loopback address, keeps its data in memory, and
// is closed by t.Cleanup. InProcessClient reaches it without a socket.
// Beyond serving, a Server controls its test's world: Snapshot, Restore
// and Reset its state, Load fixtures and compare tables with Golden
// files, inject Azure's failures (InjectFault), move its Clock, and list
// the Requests it served. NewDB gives the same controls over an embedded
// store, without a server. See docs/testing.md.
package tablestoretest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// Server is a running test server over an in-memory store: a Kit served
// on a loopback listener and through InProcessClient. Its methods are
// safe for concurrent use; those taking no testing.TB fail the test given
// to NewServer. Kit gives the error-returning methods.
type Server struct {
	kit *Kit
	t   testing.TB
	// listen opens the listener on its first call and returns its URL.
	listen func() string
	mu     sync.Mutex
	srv    *httptest.Server // the listener once open; nil for a TLS server
	tls    *TLSFiles        // set for a TLS server
}

// NewServer starts a server for the development account
// (server.DevAccount, server.DevKey), on a loopback port opened when URL
// or ConnectionString is first asked for. It fails t if
// the store or the server cannot start, and closes both when the test
// ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	return NewServerWithOptions(t, nil)
}

// NewServerWithOptions is NewServer with handler options (account, keys,
// Anonymous, limits). Options' zero fields take server's defaults; a nil
// Options.Now is set to the server's Clock.
func NewServerWithOptions(t testing.TB, opts *server.Options) *Server {
	t.Helper()
	s := newServer(t, opts)
	s.listen = func() string {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.srv == nil {
			ts := httptest.NewUnstartedServer(s.Handler())
			hs := server.NewHTTPServer("", nil)
			ts.Config.ReadHeaderTimeout = hs.ReadHeaderTimeout
			ts.Config.ReadTimeout = hs.ReadTimeout
			ts.Config.WriteTimeout = hs.WriteTimeout
			ts.Config.IdleTimeout = hs.IdleTimeout
			ts.Config.MaxHeaderBytes = hs.MaxHeaderBytes
			ts.Start()
			s.srv = ts
		}
		return s.srv.URL
	}
	t.Cleanup(func() {
		s.mu.Lock()
		if s.srv != nil {
			s.srv.Close()
		}
		s.mu.Unlock()
		s.closeWorld()
	})
	return s
}

// newServer opens the kit; the caller starts serving.
func newServer(t testing.TB, opts *server.Options) *Server {
	t.Helper()
	k, err := NewKit(opts)
	if err != nil {
		t.Fatalf("tablestoretest: %v", err)
	}
	return &Server{kit: k, t: t}
}

func (s *Server) closeWorld() {
	if err := s.kit.Close(); err != nil {
		s.t.Errorf("tablestoretest: close store: %v", err)
	}
}

// URL is the server's root, such as http://127.0.0.1:41234; the table
// endpoint is URL() + "/" + account. The server opens its loopback
// listener on the first call of URL (or ConnectionString): a test that
// only uses InProcessClient, with an endpoint of its own, binds no port.
func (s *Server) URL() string { return s.listen() }

// ConnectionString returns an Azure storage connection string for the
// server's account, in the explicit form aztables'
// NewServiceClientFromConnectionString accepts; https for a TLS server.
func (s *Server) ConnectionString() string {
	proto := "http"
	if s.tls != nil {
		proto = "https"
	}
	return "DefaultEndpointsProtocol=" + proto + ";AccountName=" + s.kit.account +
		";AccountKey=" + s.kit.key +
		";TableEndpoint=" + s.URL() + "/" + s.kit.account
}

// Kit is the server's machinery, whose methods return errors instead of
// failing the test.
func (s *Server) Kit() *Kit { return s.kit }

// Handler serves the REST API (see Kit.Handler).
func (s *Server) Handler() http.Handler { return s.kit.Handler() }

// Account is the account name clients address.
func (s *Server) Account() string { return s.kit.account }

// Key is the (first) account key.
func (s *Server) Key() string { return s.kit.key }

// DB is the store served now. Restore and Reset replace it (and close
// the one replaced): call DB again after either.
func (s *Server) DB() *tablestore.DB { return s.kit.DB() }

// Clock is the server's clock (see Clock).
func (s *Server) Clock() *Clock { return s.kit.clock }

// Requests returns the requests the server has answered so far (see
// Kit.Requests).
func (s *Server) Requests() []RequestRecord { return s.kit.Requests() }

// RequestsDropped is how many old records Requests no longer holds.
func (s *Server) RequestsDropped() int64 { return s.kit.RequestsDropped() }

// ClearRequests empties the request log.
func (s *Server) ClearRequests() { s.kit.ClearRequests() }

// Snapshot copies the server's whole state (see Snapshot). It fails the
// test on error.
func (s *Server) Snapshot() *Snapshot {
	s.t.Helper()
	snap, err := s.kit.Snapshot()
	if err != nil {
		s.t.Fatalf("tablestoretest: snapshot: %v", err)
	}
	return snap
}

// Restore replaces the server's state with snap's: requests that start
// afterwards see exactly the snapshot (requests in flight finish on the
// state they began on). Faults, the Clock and the request log are kept.
// From the second Restore of one snapshot on, the next copy of it is
// opened in the background, so restoring it again costs a swap once that
// copy is open. It fails the test on error.
func (s *Server) Restore(snap *Snapshot) {
	s.t.Helper()
	if err := s.kit.Restore(snap); err != nil {
		s.t.Fatalf("tablestoretest: restore: %v", err)
	}
}

// SetBaseline makes Reset return the state to a copy of snap instead of
// an empty store (nil: an empty store again), as `tablestore serve
// --seed` does with its fixture.
func (s *Server) SetBaseline(snap *Snapshot) { s.kit.SetBaseline(snap) }

// Reset gives the test a clean slate: the state back to the baseline
// (an empty store, as NewServer starts with, or SetBaseline's snapshot),
// every fault removed, the Clock back to the wall clock, the request log
// empty. Given parts, it resets only those (Reset(ResetState) keeps
// faults, clock and log). A store still untouched since the last Reset
// stays; otherwise the next copy, opened in the background after each
// Reset, is swapped in. It fails the test on error.
func (s *Server) Reset(parts ...ResetPart) {
	s.t.Helper()
	if err := s.kit.Reset(parts...); err != nil {
		s.t.Fatalf("tablestoretest: reset: %v", err)
	}
}

// InjectFault adds a fault rule (see Fault) and returns a function that
// removes it; rules also end with the test (and with Reset). An invalid
// rule fails the test with a message naming the field.
func (s *Server) InjectFault(f Fault) (remove func()) {
	s.t.Helper()
	remove, err := s.kit.InjectFault(f)
	if err != nil {
		s.t.Fatalf("tablestoretest: InjectFault: %v", err)
	}
	return remove
}
