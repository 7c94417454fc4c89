package main

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/server"
)

// TestServeCosmos: serve --cosmos prints the emulator's connection string
// (localhost, host-style, the emulator's account and key) and answers
// in Cosmos DB's shape.
func TestServeCosmos(t *testing.T) {
	p := startServe(t, nil, "--cosmos", "--in-memory", "--addr", "127.0.0.1:0", "--log-level", "none")
	p.waitOutput(t, `connection string: `)
	port := p.addr[strings.LastIndexByte(p.addr, ':')+1:]
	require.Contains(t, p.output(), "serve: connection string: DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey="+
		server.CosmosDevKey+";TableEndpoint=http://localhost:"+port+"/;")
	resp, err := http.Get("http://" + p.addr + "/Tables") // unsigned
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Empty(t, resp.Header.Get("x-ms-version"), "Cosmos DB sends no x-ms-version")
	require.Equal(t, "application/json; odata=minimalmetadata", resp.Header.Get("Content-Type"))
}

// TestServeCosmosFlags: the --cosmos-* flags need --cosmos and valid
// values.
func TestServeCosmosFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--cosmos-order", "seeded"}, "--cosmos-order needs --cosmos"},
		{[]string{"--cosmos", "--cosmos-order", "random"}, `unknown --cosmos-order "random"`},
		{[]string{"--cosmos", "--cosmos-ru-per-table"}, "--cosmos-ru-per-table needs --cosmos-ru-per-second"},
		{[]string{"--cosmos", "--cosmos-ru-per-second", "-1"}, "must not be negative"},
	} {
		r := cli(t, append([]string{"serve", "--in-memory"}, tc.args...)...)
		require.Equal(t, exitUsage, r.code, "%v: %s", tc.args, r.stderr)
		require.Regexp(t, regexp.QuoteMeta(tc.want), r.stderr)
	}
}
