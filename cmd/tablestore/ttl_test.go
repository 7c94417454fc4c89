package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTTLCommand(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	ok(t, "tables", "--store", store, "create", "Sessions")
	require.Equal(t, "off: entities never expire\n", ok(t, "ttl", "--store", store, "Sessions").stdout)
	require.Equal(t, "default 24h0m0s after the last write\n", ok(t, "ttl", "--store", store, "Sessions", "--default", "24h").stdout)
	require.Equal(t, "property ExpiresAt, else default 24h0m0s after the last write\n",
		ok(t, "ttl", "--store", store, "Sessions", "--property", "ExpiresAt").stdout)
	require.Equal(t, "property ExpiresAt, else default 24h0m0s after the last write\n", ok(t, "ttl", "--store", store, "Sessions").stdout)
	// An entity that expired long ago is absent and awaits the sweeper.
	ok(t, "put", "--store", store, "Sessions", `{"PartitionKey":"u","RowKey":"1","ExpiresAt":"2001-01-01T00:00:00Z","ExpiresAt@odata.type":"Edm.DateTime"}`)
	r := cli(t, "get", "--store", store, "Sessions", "u", "1")
	require.NotEqual(t, exitOK, r.code)
	require.Contains(t, r.stderr, "ResourceNotFound")
	r = ok(t, "stats", "--store", store, "--json", "Sessions")
	require.Regexp(t, `"awaitingSweep":[01]`, r.stdout) // the sweeper may have run
	require.Equal(t, "off: entities never expire\n", ok(t, "ttl", "--store", store, "Sessions", "--off").stdout)

	require.Equal(t, exitUsage, cli(t, "ttl", "--store", store).code)
	require.Equal(t, exitUsage, cli(t, "ttl", "--store", store, "Sessions", "--off", "--default", "1h").code)
	r = cli(t, "ttl", "--store", store, "Sessions", "--default", "-1h")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "InvalidInput")
	require.Equal(t, exitFail, cli(t, "ttl", "--store", store, "Nope").code)
}
