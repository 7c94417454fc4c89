package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	ok(t, "tables", "--store", store, "create", "People")
	ok(t, "put", "--store", store, "People", `{"PartitionKey":"p","RowKey":"1","Name":"Ana"}`)

	r := ok(t, "check", "--store", store)
	require.Contains(t, r.stdout, ": 0 damaged")

	// A WAL record damaged with intact records after it cannot be a
	// write torn by a crash: check must report it.
	r = cliInput(t, `{"PartitionKey":"p","RowKey":"2","Name":"Bo"}`+"\n"+`{"PartitionKey":"p","RowKey":"3","Name":"Cy"}`+"\n",
		"put", "--store", store, "People", "-")
	require.Equal(t, exitOK, r.code, "stderr: %s", r.stderr)
	logs, err := filepath.Glob(filepath.Join(store, "*.log"))
	require.NoError(t, err)
	require.Len(t, logs, 1)
	b, err := os.ReadFile(logs[0])
	require.NoError(t, err)
	require.Greater(t, len(b), 64)
	b[20] ^= 0xff
	require.NoError(t, os.WriteFile(logs[0], b, 0o644))

	r = cli(t, "check", "--store", store)
	require.Equal(t, exitFail, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "damaged wal "+logs[0])
	require.Contains(t, r.stderr, "1 damaged files")

	r = cli(t, "check", "--store", store, "extra")
	require.Equal(t, exitUsage, r.code)
}
