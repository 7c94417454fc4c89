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
	"net/http/httptest"
	"testing"

	"github.com/tablestore/tablestore/server"
)

// Server is a running test server over an in-memory store: a Kit served
// on a loopback listener and through InProcessClient. Its methods are
// safe for concurrent use; those taking no testing.TB fail the test given
// to NewServer. The Kit's error-returning methods are there too.
type Server struct {
	*Kit
	t   testing.TB
	srv *httptest.Server // nil for a TLS server (see tls.go)
	url string
	tls *TLSFiles // set for a TLS server
}

// NewServer starts a server for the development account
// (server.DevAccount, server.DevKey) on a loopback port. It fails t if
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
	ts := httptest.NewUnstartedServer(s.Handler())
	hs := server.NewHTTPServer("", nil)
	ts.Config.ReadHeaderTimeout = hs.ReadHeaderTimeout
	ts.Config.ReadTimeout = hs.ReadTimeout
	ts.Config.WriteTimeout = hs.WriteTimeout
	ts.Config.IdleTimeout = hs.IdleTimeout
	ts.Config.MaxHeaderBytes = hs.MaxHeaderBytes
	ts.Start()
	s.srv, s.url = ts, ts.URL
	t.Cleanup(func() {
		ts.Close()
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
	return &Server{Kit: k, t: t}
}

func (s *Server) closeWorld() {
	if err := s.Close(); err != nil {
		s.t.Errorf("tablestoretest: close store: %v", err)
	}
}

// URL is the server's root, such as http://127.0.0.1:41234; the table
// endpoint is URL() + "/" + account.
func (s *Server) URL() string { return s.url }

// ConnectionString returns an Azure storage connection string for the
// server's account, in the explicit form aztables'
// NewServiceClientFromConnectionString accepts; https for a TLS server.
func (s *Server) ConnectionString() string {
	proto := "http"
	if s.tls != nil {
		proto = "https"
	}
	return "DefaultEndpointsProtocol=" + proto + ";AccountName=" + s.account +
		";AccountKey=" + s.key +
		";TableEndpoint=" + s.url + "/" + s.account
}

// Snapshot copies the server's whole state (see Snapshot). It fails the
// test on error.
func (s *Server) Snapshot() *Snapshot {
	s.t.Helper()
	snap, err := s.TakeSnapshot()
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
	if err := s.RestoreSnapshot(snap); err != nil {
		s.t.Fatalf("tablestoretest: restore: %v", err)
	}
}

// Reset replaces the server's state with an empty store, as NewServer
// starts with. The store is opened ahead in the background after the
// first Reset, so later ones cost a swap. Faults, the Clock and the
// request log are kept. It fails the test on error.
func (s *Server) Reset() {
	s.t.Helper()
	if err := s.ResetState(); err != nil {
		s.t.Fatalf("tablestoretest: reset: %v", err)
	}
}

// InjectFault adds a fault rule (see Fault) and returns a function that
// removes it; rules also end with the test. An invalid rule fails the
// test with a message naming the field.
func (s *Server) InjectFault(f Fault) (remove func()) {
	s.t.Helper()
	remove, err := s.AddFault(f)
	if err != nil {
		s.t.Fatalf("tablestoretest: InjectFault: %v", err)
	}
	return remove
}
