package tablestoretest

import (
	"net/url"
	"testing"

	"github.com/tablestore/tablestore/server"
)

// NewCosmosServer starts a server that answers as Cosmos DB for Table
// (server.Cosmos, every difference on) for the Cosmos DB emulator's
// account and key (server.CosmosDevAccount, server.CosmosDevKey), on a
// loopback port, with the same state, fault, clock and request controls
// as NewServer. Its Cosmos clock is the server's Clock, so throttling
// follows Clock.Advance. Use CosmosConnectionString to reach it.
func NewCosmosServer(t testing.TB) *Server {
	t.Helper()
	return NewCosmosServerWithOptions(t, nil)
}

// NewCosmosServerWithOptions is NewCosmosServer with the Cosmos
// flavor's options (nil: all differences on, no throughput limit).
func NewCosmosServerWithOptions(t testing.TB, c *server.Cosmos) *Server {
	t.Helper()
	if c == nil {
		c = &server.Cosmos{}
	}
	return NewServerWithOptions(t, &server.Options{Account: server.CosmosDevAccount, Keys: []string{server.CosmosDevKey}, Cosmos: c})
}

// CosmosConnectionString returns the connection string in the Cosmos
// DB emulator's shape: the service root at localhost, addressed by
// host, so the SDKs take the server for Cosmos DB.
func (s *Server) CosmosConnectionString() string {
	u, err := url.Parse(s.URL())
	if err != nil {
		s.t.Fatalf("tablestoretest: %v", err)
	}
	return "DefaultEndpointsProtocol=" + u.Scheme + ";AccountName=" + s.Account() + ";AccountKey=" + s.Key() +
		";TableEndpoint=" + u.Scheme + "://localhost:" + u.Port() + "/;"
}
