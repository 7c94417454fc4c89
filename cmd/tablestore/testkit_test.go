package main

import (
	"io"
	"net"
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
		"--testkit":                        "--admin-addr",
		"--testkit --admin-addr 0.0.0.0:0": "loopback",
		"--testkit --admin-addr 0.0.0.0:0 --testkit-token-file /nonexistent-token": "--testkit-token-file",
		"--in-memory --testkit-token-file x":                                       "needs --testkit",
		"--testkit --admin-addr :0":                                                "loopback",
		"--testkit --admin-addr example.com:0":                                     "loopback",
		"--testkit --admin-addr 127.0.0.1:0 --dir x":                               "--dir",
		"--testkit --admin-addr 127.0.0.1:0 --console":                             "--console",
		"--dir x --seed y":                                                         "--seed",
		"--in-memory --seed /nonexistent-seed-dir --addr 127.0.0.1:0":              "--seed",
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
// loads an in-memory store; with it, the banner names /testkit/, a
// seeded table survives a snapshot, a reset returns to the seed (and
// removes faults), ?only=state empties nothing else, a restore brings
// back a snapshot, a fault
// set over the admin listener hits the data listener, and a cross-site
// request or a foreign Host is refused.
func TestTestkitServe(t *testing.T) {
	seed := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(seed, "Seeded.jsonl"),
		[]byte(`{"PartitionKey":"p","RowKey":"1","n@odata.type":"Edm.Int64","n":"7"}`+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(seed, "Explored.csv"),
		[]byte("PartitionKey,RowKey,Timestamp,n,n@type\r\np,1,2024-05-01T10:00:00.123Z,8,Edm.Int64\r\n"), 0o644))

	plain := startServe(t, nil, "--in-memory", "--addr", "127.0.0.1:0", "--anonymous", "--admin-addr", "127.0.0.1:0", "--seed", seed)
	code, _ := adminDo(t, "POST", "http://"+plain.adminAddr(t)+"/testkit/reset", "")
	require.Equal(t, http.StatusNotFound, code)
	code, body := adminDo(t, "GET", "http://"+plain.addr+"/devstoreaccount1/Seeded(PartitionKey='p',RowKey='1')", "")
	require.Equal(t, http.StatusOK, code, body)

	p := startServe(t, nil, "--testkit", "--addr", "127.0.0.1:0", "--anonymous", "--admin-addr", "127.0.0.1:0", "--seed", seed)
	admin := "http://" + p.adminAddr(t) + "/testkit"
	p.waitOutput(t, `(?m)^serve: admin listening on \S+ \(.*/testkit/\)$`)
	entity := "http://" + p.addr + "/devstoreaccount1/Seeded(PartitionKey='p',RowKey='1')"
	code, body = adminDo(t, "GET", entity, "")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"n":"7"`)
	code, body = adminDo(t, "GET", "http://"+p.addr+"/devstoreaccount1/Explored(PartitionKey='p',RowKey='1')", "")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"n@odata.type":"Edm.Int64","n":"8"`)

	code, body = adminDo(t, "DELETE", entity, "")
	require.Equal(t, http.StatusBadRequest, code, body) // no If-Match
	code, body = adminDo(t, "POST", admin+"/faults", `{"operation":"QueryTables","code":"ServerBusy"}`)
	require.Equal(t, http.StatusCreated, code, body)
	req, _ := http.NewRequest("DELETE", entity, nil)
	req.Header.Set("If-Match", "*")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode)
	code, body = adminDo(t, "PUT", admin+"/snapshots/deleted", "")
	require.Equal(t, http.StatusCreated, code, body)
	code, body = adminDo(t, "POST", admin+"/reset", "")
	require.Equal(t, http.StatusOK, code, body)
	code, body = adminDo(t, "GET", entity, "")
	require.Equal(t, http.StatusOK, code, "the reset did not return to the seed: %s", body)
	code, body = adminDo(t, "GET", admin+"/faults", "")
	require.Equal(t, http.StatusOK, code, body)
	require.JSONEq(t, `{"faults":[]}`, body)
	code, body = adminDo(t, "POST", admin+"/snapshots/deleted/restore", "")
	require.Equal(t, http.StatusOK, code, body)
	code, _ = adminDo(t, "GET", entity, "")
	require.Equal(t, http.StatusNotFound, code)
	code, body = adminDo(t, "POST", admin+"/reset?only=state", "")
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

	req, _ = http.NewRequest("POST", admin+"/reset", nil)
	req.Header.Set("Origin", "https://evil.example")
	resp, err = http.DefaultClient.Do(req)
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

// TestTestkitToken: with a token (from a file or the environment) the
// controls listen beyond loopback, and every /testkit/ request needs the
// token: none is 401, another 403, both with Azure's JSON error body;
// the Host and cross-site checks still apply.
func TestTestkitToken(t *testing.T) {
	const token = "s3cret-token-for-tests"
	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte(token+"\n"), 0o600))
	for name, start := range map[string]func() *servedProcess{
		"file": func() *servedProcess {
			return startServe(t, nil, "--testkit", "--addr", "127.0.0.1:0", "--anonymous", "--admin-addr", "0.0.0.0:0", "--testkit-token-file", file)
		},
		"env": func() *servedProcess {
			return startServe(t, []string{testkitTokenEnv + "=" + token}, "--testkit", "--addr", "127.0.0.1:0", "--anonymous", "--admin-addr", "127.0.0.1:0")
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := start()
			_, port, err := net.SplitHostPort(p.adminAddr(t))
			require.NoError(t, err)
			p.waitOutput(t, `(?m)^serve: admin listening on \S+ \(.*/testkit/ with its token\)$`)
			url := "http://127.0.0.1:" + port + "/testkit/clock"
			do := func(auth, origin, host string) (*http.Response, string) {
				req, _ := http.NewRequest("POST", url, strings.NewReader(`{"advance":"1h"}`))
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				if origin != "" {
					req.Header.Set("Origin", origin)
				}
				if host != "" {
					req.Host = host
				}
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp, string(b)
			}
			for _, tc := range []struct {
				auth, origin, host string
				status             int
				code               string
			}{
				{"", "", "", http.StatusUnauthorized, "NoAuthenticationInformation"},
				{"Bearer wrong", "", "", http.StatusForbidden, "AuthenticationFailed"},
				{"Bearer " + token + "x", "", "", http.StatusForbidden, "AuthenticationFailed"},
				{"Basic " + token, "", "", http.StatusUnauthorized, "NoAuthenticationInformation"},
				{"Bearer " + token, "https://evil.example", "", http.StatusForbidden, "AuthorizationFailure"},
				{"Bearer " + token, "", "evil.example", http.StatusMisdirectedRequest, "AuthorizationFailure"},
				{"Bearer " + token, "", "", http.StatusOK, ""},
			} {
				resp, body := do(tc.auth, tc.origin, tc.host)
				require.Equal(t, tc.status, resp.StatusCode, "%+v: %s", tc, body)
				require.Equal(t, tc.code, resp.Header.Get("x-ms-error-code"), "%+v", tc)
				if tc.code != "" {
					require.Contains(t, body, `"odata.error"`)
					require.Contains(t, body, tc.code)
				}
			}
		})
	}
}
