// Package tablestoretest runs a tablestore REST server inside a Go test,
// so code written against Azure's SDKs (aztables) can be tested without
// Azurite or an Azure account:
//
//	func TestSomething(t *testing.T) {
//		srv := tablestoretest.NewServer(t)
//		client, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), nil)
//		...
//	}
//
// The server listens on a loopback address, keeps its data in memory, and
// is closed by t.Cleanup.
package tablestoretest

import (
	"net/http/httptest"
	"testing"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// Server is a running test server over an in-memory store.
type Server struct {
	db      *tablestore.DB
	srv     *httptest.Server // nil for a TLS server (see tls.go)
	url     string
	account string
	key     string
	tls     *TLSFiles // set for a TLS server
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
// Anonymous, limits). Options' zero fields take server's defaults.
func NewServerWithOptions(t testing.TB, opts *server.Options) *Server {
	t.Helper()
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		t.Fatalf("tablestoretest: open store: %v", err)
	}
	h, err := server.New(db, opts)
	if err != nil {
		_ = db.Close()
		t.Fatalf("tablestoretest: %v", err)
	}
	ts := httptest.NewUnstartedServer(h)
	hs := server.NewHTTPServer("", h)
	ts.Config.ReadHeaderTimeout = hs.ReadHeaderTimeout
	ts.Config.ReadTimeout = hs.ReadTimeout
	ts.Config.WriteTimeout = hs.WriteTimeout
	ts.Config.IdleTimeout = hs.IdleTimeout
	ts.Config.MaxHeaderBytes = hs.MaxHeaderBytes
	ts.Start()
	s := &Server{db: db, srv: ts, url: ts.URL}
	s.setAccount(opts)
	t.Cleanup(func() {
		ts.Close()
		if err := db.Close(); err != nil {
			t.Errorf("tablestoretest: close store: %v", err)
		}
	})
	return s
}

// URL is the server's root, such as http://127.0.0.1:41234; the table
// endpoint is URL() + "/" + account.
func (s *Server) URL() string { return s.url }

func (s *Server) setAccount(opts *server.Options) {
	s.account, s.key = server.DevAccount, server.DevKey
	if opts != nil && opts.Account != "" {
		s.account = opts.Account
	}
	if opts != nil && len(opts.Keys) > 0 {
		s.key = opts.Keys[0]
	}
}

// Account is the account name clients address.
func (s *Server) Account() string { return s.account }

// Key is the (first) account key.
func (s *Server) Key() string { return s.key }

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

// DB is the store behind the server, for seeding data or checking it
// directly.
func (s *Server) DB() *tablestore.DB { return s.db }
