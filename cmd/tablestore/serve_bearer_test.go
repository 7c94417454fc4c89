package main

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/tablestoretest"
)

const testTokenIssuer = "https://sts.windows.net/00000000-0000-0000-0000-00000000000a/"

// signRS256 returns a JWT of claims signed with key under kid.
func signRS256(t *testing.T, key *rsa.PrivateKey, kid string, claims map[string]any) string {
	t.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	head, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": kid})
	body, _ := json.Marshal(claims)
	signed := b64(head) + "." + b64(body)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	require.NoError(t, err)
	return signed + "." + b64(sig)
}

// writeJWKS writes a JWKS holding key's public half as kid.
func writeJWKS(t *testing.T, path string, key *rsa.PrivateKey, kid string) {
	t.Helper()
	b64 := base64.RawURLEncoding.EncodeToString
	out, _ := json.Marshal(map[string]any{"keys": []map[string]string{
		{"kty": "RSA", "kid": kid, "n": b64(key.N.Bytes()), "e": b64(big.NewInt(int64(key.E)).Bytes())}}})
	require.NoError(t, os.WriteFile(path, out, 0o600))
}

// TestServeBearerAccounts: with --accounts, bearer tokens are per
// account. A JSON accounts file maps principals on each account; a token
// valid on alpha is refused on beta (also its secondary endpoint and
// host-style), and an account-endpoint audience must name the address
// served, whatever Host the request sends.
func TestServeBearerAccounts(t *testing.T) {
	dir := t.TempDir()
	files := tablestoretest.NewTLSFiles(t, filepath.Join(dir, "tls"))
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	writeJWKS(t, filepath.Join(dir, "jwks.json"), key, "k1")
	k := base64.StdEncoding.EncodeToString([]byte("a key of 32 bytes, for the test."))
	accounts := `[
	  {"name": "alpha", "keys": ["` + k + `"], "bearer": {"principals": {"user-a": "Storage Table Data Contributor"}}},
	  {"name": "beta", "keys": ["` + k + `"], "bearer": {"jwks": "jwks.json", "principals": {"user-b": "Storage Table Data Reader"}}}
	]`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "accounts.json"), []byte(accounts), 0o600))
	p := startServe(t, nil, "--dir", filepath.Join(dir, "data"), "--create", "--accounts", filepath.Join(dir, "accounts.json"),
		"--addr", "127.0.0.1:0", "--cert", files.CertFile, "--key", files.KeyFile, "--log-level", "none",
		"--bearer-jwks", filepath.Join(dir, "jwks.json"), "--bearer-issuer", testTokenIssuer)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: files.Pool}}}
	token := func(aud, oid string, roles ...string) string {
		c := map[string]any{"iss": testTokenIssuer, "aud": aud, "exp": time.Now().Add(time.Hour).Unix(), "oid": oid}
		if len(roles) > 0 {
			c["roles"] = roles
		}
		return signRS256(t, key, "k1", c)
	}
	do := func(method, path, host, tok string) (int, string) {
		body := strings.NewReader("")
		if method == "POST" {
			body = strings.NewReader(`{"TableName":"fromtoken"}`)
		}
		req, err := http.NewRequest(method, "https://"+p.addr+path, body)
		require.NoError(t, err)
		if host != "" {
			req.Host = host
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-ms-version", "2019-02-02")
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("x-ms-error-code")
	}
	userA := token("https://storage.azure.com", "user-a")
	code, _ := do("POST", "/alpha/Tables", "", userA)
	require.Equal(t, 201, code)
	generic := token("https://storage.azure.com", "anyone", "Storage Table Data Contributor")
	for _, tok := range []string{userA, generic} {
		for _, rt := range []struct{ method, path, host string }{
			{"GET", "/beta/Tables", ""},
			{"POST", "/beta/Tables", ""},
			{"GET", "/beta-secondary/Tables", ""},
			{"GET", "/Tables", "beta.table.localhost"},
		} {
			code, ec := do(rt.method, rt.path, rt.host, tok)
			require.Equal(t, 403, code, "%s %s %s", rt.method, rt.path, rt.host)
			require.Equal(t, "AuthorizationPermissionMismatch", ec)
		}
	}
	code, _ = do("GET", "/beta/Tables", "", token("https://storage.azure.com", "user-b"))
	require.Equal(t, 200, code)
	// The account's endpoint as audience: the address served by default,
	// never what the Host header claims.
	code, _ = do("GET", "/alpha/Tables", "", token("https://"+p.addr+"/alpha", "app", "Storage Table Data Contributor"))
	require.Equal(t, 200, code)
	port := p.addr[strings.LastIndex(p.addr, ":")+1:]
	code, _ = do("GET", "/alpha/Tables", "localhost:"+port, token("https://localhost:"+port+"/alpha", "app", "Storage Table Data Contributor"))
	require.Equal(t, 200, code) // the certificate's DNS name
	code, ec := do("GET", "/alpha/Tables", "other.example:"+port, token("https://other.example:"+port+"/alpha", "app", "Storage Table Data Contributor"))
	require.Equal(t, 401, code)
	require.Equal(t, "InvalidAuthenticationInfo", ec)
}

// TestServeBearerAccountsUsage: per-account settings that cannot work
// are usage errors, and one principal map cannot cover every account.
func TestServeBearerAccountsUsage(t *testing.T) {
	dir := t.TempDir()
	files := tablestoretest.NewTLSFiles(t, filepath.Join(dir, "tls"))
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwks := filepath.Join(dir, "jwks.json")
	writeJWKS(t, jwks, key, "k1")
	roles := filepath.Join(dir, "roles.json")
	require.NoError(t, os.WriteFile(roles, []byte(`{"user-a":"Storage Table Data Contributor"}`), 0o600))
	k := base64.StdEncoding.EncodeToString([]byte("k"))
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	azurite := write("azurite", "alpha:"+k+";beta:"+k)
	noIssuer := write("noissuer.json", `[{"name":"alpha","keys":["`+k+`"],"bearer":{"jwks":"jwks.json"}}]`)
	unknown := write("unknown.json", `[{"name":"alpha","keys":["`+k+`"],"bearer":{"roles":{}}}]`)
	noKeys := write("nokeys.json", `[{"name":"alpha"}]`)
	withBearer := write("bearer.json", `[{"name":"alpha","keys":["`+k+`"],"bearer":{"jwks":"jwks.json","issuers":["x"]}}]`)
	tlsArgs := []string{"--cert", files.CertFile, "--key", files.KeyFile}
	for _, args := range [][]string{
		append([]string{"serve", "--dir", dir, "--accounts", azurite, "--bearer-jwks", jwks, "--bearer-issuer", "x", "--bearer-roles", roles}, tlsArgs...),
		append([]string{"serve", "--dir", dir, "--accounts", noIssuer}, tlsArgs...),
		append([]string{"serve", "--dir", dir, "--accounts", unknown}, tlsArgs...),
		append([]string{"serve", "--dir", dir, "--accounts", noKeys}, tlsArgs...),
		{"serve", "--dir", dir, "--accounts", withBearer}, // no TLS
		append([]string{"serve", "--dir", dir, "--accounts", withBearer, "--insecure-accept-any-bearer-token"}, tlsArgs...),
		{"serve", "--in-memory", "--addr", "127.0.0.1:0", "--public-endpoint", "tables.example"},
	} {
		r := cli(t, args...)
		require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
	}
}
