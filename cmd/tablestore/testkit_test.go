package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTestkitUsage: --testkit is refused without a loopback admin
// address, with a store directory, and --seed on a store on disk.
func TestTestkitUsage(t *testing.T) {
	for args, want := range map[string]string{
		"--testkit":                                                   "--admin-addr",
		"--testkit --admin-addr 0.0.0.0:0":                            "loopback",
		"--testkit --admin-addr :0":                                   "loopback",
		"--testkit --admin-addr example.com:0":                        "loopback",
		"--testkit --admin-addr 127.0.0.1:0 --dir x":                  "--dir",
		"--testkit --admin-addr 127.0.0.1:0 --console":                "--console",
		"--dir x --seed y":                                            "--seed",
		"--in-memory --seed /nonexistent-seed-dir --addr 127.0.0.1:0": "--seed",
	} {
		r := cli(t, append([]string{"serve"}, strings.Fields(args)...)...)
		require.Equal(t, exitUsage, r.code, "%s: %s", args, r.stderr)
		require.Contains(t, r.stderr, want, args)
	}
}

func adminDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestTestkitServe: without --testkit /testkit answers 404 and --seed
// loads an in-memory store; with it, a seeded table survives a snapshot,
// a reset empties the store, a restore brings the table back, a fault
// set over the admin listener hits the data listener, and a cross-site
// request or a foreign Host is refused.
func TestTestkitServe(t *testing.T) {
	seed := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(seed, "Seeded.jsonl"),
		[]byte(`{"PartitionKey":"p","RowKey":"1","n@odata.type":"Edm.Int64","n":"7"}`+"\n"), 0o644))

	plain := startServe(t, nil, "--in-memory", "--addr", "127.0.0.1:0", "--anonymous", "--admin-addr", "127.0.0.1:0", "--seed", seed)
	code, _ := adminDo(t, "POST", "http://"+plain.adminAddr(t)+"/testkit/reset", "")
	require.Equal(t, http.StatusNotFound, code)
	code, body := adminDo(t, "GET", "http://"+plain.addr+"/devstoreaccount1/Seeded(PartitionKey='p',RowKey='1')", "")
	require.Equal(t, http.StatusOK, code, body)

	p := startServe(t, nil, "--testkit", "--addr", "127.0.0.1:0", "--anonymous", "--admin-addr", "127.0.0.1:0", "--seed", seed)
	admin := "http://" + p.adminAddr(t) + "/testkit"
	entity := "http://" + p.addr + "/devstoreaccount1/Seeded(PartitionKey='p',RowKey='1')"
	code, body = adminDo(t, "GET", entity, "")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"n":"7"`)

	code, body = adminDo(t, "PUT", admin+"/snapshots/seeded", "")
	require.Equal(t, http.StatusCreated, code, body)
	code, body = adminDo(t, "POST", admin+"/reset", "")
	require.Equal(t, http.StatusOK, code, body)
	code, _ = adminDo(t, "GET", entity, "")
	require.Equal(t, http.StatusNotFound, code)
	code, body = adminDo(t, "POST", admin+"/snapshots/seeded/restore", "")
	require.Equal(t, http.StatusOK, code, body)
	code, _ = adminDo(t, "GET", entity, "")
	require.Equal(t, http.StatusOK, code)
	code, body = adminDo(t, "POST", admin+"/snapshots/other/restore", "")
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, `\"other\"`)

	code, body = adminDo(t, "POST", admin+"/faults", `{"operation":"QueryEntity","status":503,"times":1}`)
	require.Equal(t, http.StatusCreated, code, body)
	code, _ = adminDo(t, "GET", entity, "")
	require.Equal(t, http.StatusServiceUnavailable, code)
	code, _ = adminDo(t, "GET", entity, "")
	require.Equal(t, http.StatusOK, code)
	code, body = adminDo(t, "POST", admin+"/faults", `{"operation":"QueryEntity","status":999}`)
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, body, "Fault.Status")

	req, _ := http.NewRequest("POST", admin+"/reset", nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, "AuthorizationFailure", resp.Header.Get("x-ms-error-code"))
	req, _ = http.NewRequest("POST", admin+"/reset", nil)
	req.Host = "evil.example"
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
	code, _ = adminDo(t, "GET", entity, "")
	require.Equal(t, http.StatusOK, code, "a refused reset changed the store")
}
