package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/tablestoretest"
)

// servedProcess is a `tablestore serve` process started by startServe.
type servedProcess struct {
	cmd  *exec.Cmd
	addr string // the data listener
	mu   sync.Mutex
	log  []string      // stderr lines so far
	more chan struct{} // closed and replaced when a line arrives
	done chan struct{}
}

// startServe runs the binary with serve and args (plus env), waits at
// most 30 s for its "listening on" line, and kills it at the end of the
// test.
func startServe(t *testing.T, env []string, args ...string) *servedProcess {
	t.Helper()
	cmd := exec.Command(buildBinary(t), append([]string{"serve"}, args...)...)
	cmd.Env = append(cmd.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	p := &servedProcess{cmd: cmd, more: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
		_ = cmd.Wait()
	})
	addrc := make(chan string, 1)
	go func() {
		defer close(p.done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			l := sc.Text()
			p.mu.Lock()
			p.log = append(p.log, l)
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
			if m := regexp.MustCompile(`^serve: listening on (\S+)$`).FindStringSubmatch(l); m != nil {
				addrc <- m[1]
			}
		}
	}()
	select {
	case p.addr = <-addrc:
	case <-p.done:
		t.Fatalf("serve exited:\n%s", p.output())
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start:\n%s", p.output())
	}
	return p
}

// output is the stderr read so far.
func (p *servedProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.log, "\n")
}

// waitOutput waits at most 10 s for stderr to match re, looking again
// each time a line arrives.
func (p *servedProcess) waitOutput(t *testing.T, re string) {
	t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.After(10 * time.Second)
	for {
		p.mu.Lock()
		matched := rx.MatchString(strings.Join(p.log, "\n"))
		more := p.more
		p.mu.Unlock()
		if matched {
			return
		}
		select {
		case <-more:
		case <-p.done:
			if !rx.MatchString(p.output()) {
				t.Fatalf("serve ended without %q in:\n%s", re, p.output())
			}
			return
		case <-deadline:
			t.Fatalf("no %q in:\n%s", re, p.output())
		}
	}
}

// TestServeTLS serves https with --cert and --key: a client trusting the
// CA is answered, the connection string says https, and plain http to
// the port is not served.
func TestServeTLS(t *testing.T) {
	files := tablestoretest.NewTLSFiles(t, t.TempDir())
	p := startServe(t, nil, "--in-memory", "--addr", "127.0.0.1:0", "--anonymous", "--cert", files.CertFile, "--key", files.KeyFile)
	p.waitOutput(t, `DefaultEndpointsProtocol=https;AccountName=devstoreaccount1;.*TableEndpoint=https://`+regexp.QuoteMeta(p.addr)+`/devstoreaccount1`)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: files.Pool}}}
	resp, err := client.Get("https://" + p.addr + "/devstoreaccount1/Tables")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("x-ms-request-id"))
	resp, err = http.Get("http://" + p.addr + "/devstoreaccount1/Tables")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Equal(t, "InvalidInput", resp.Header.Get("x-ms-error-code"))
}

func TestServeTLSUsage(t *testing.T) {
	files := tablestoretest.NewTLSFiles(t, t.TempDir())
	for _, args := range [][]string{
		{"serve", "--in-memory", "--cert", files.CertFile},
		{"serve", "--in-memory", "--cert", files.CertFile, "--key", files.CertFile},
		{"serve", "--in-memory", "--cert", files.CertFile, "--key", files.KeyFile, "--key", files.KeyFile},
	} {
		r := cli(t, args...)
		require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
	}
}

// adminAddr waits for the admin listener's address line.
func (p *servedProcess) adminAddr(t *testing.T) string {
	t.Helper()
	p.waitOutput(t, `serve: admin listening on \S+`)
	m := regexp.MustCompile(`serve: admin listening on (\S+)`).FindStringSubmatch(p.output())
	return m[1]
}

// TestServeAdmin runs serve with the admin listener and JSON logs:
// metrics after a request, readiness, and a backup through
// `tablestore backup --server` that opens with the table in it.
func TestServeAdmin(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "store")
	backups := filepath.Join(dir, "backups")
	p := startServe(t, nil, "--dir", store, "--create", "--addr", "127.0.0.1:0", "--anonymous", "--log-format", "json",
		"--admin-addr", "127.0.0.1:0", "--backup-dir", backups)
	admin := "http://" + p.adminAddr(t)
	req, _ := http.NewRequest("POST", "http://"+p.addr+"/devstoreaccount1/Tables", strings.NewReader(`{"TableName":"Kept"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-ms-client-request-id", "cli-test-1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	p.waitOutput(t, `"msg":"request".*"operation":"CreateTable".*"request_id":"`+resp.Header.Get("x-ms-request-id")+`","client_request_id":"cli-test-1"`)

	get := func(path string) (int, string) {
		resp, err := http.Get(admin + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, text := get("/metrics")
	require.Equal(t, 200, code)
	require.Contains(t, text, `tablestore_requests_total{account="devstoreaccount1",operation="CreateTable",status="201"} 1`)
	require.Contains(t, text, `tablestore_tables{account="devstoreaccount1"} 1`)
	code, _ = get("/readyz")
	require.Equal(t, 200, code)
	code, _ = get("/debug/pprof/")
	require.Equal(t, 404, code)

	r := ok(t, "backup", "--server", admin, "nightly")
	require.Equal(t, filepath.Join(backups, "nightly"), strings.TrimSpace(r.stdout))
	db, err := tablestore.Open(filepath.Join(backups, "nightly"), nil)
	require.NoError(t, err)
	exists, err := db.TableExists(context.Background(), "Kept")
	require.NoError(t, err)
	require.True(t, exists)
	require.NoError(t, db.Close())
	r = cli(t, "backup", "--server", admin, "nightly")
	require.Equal(t, exitFail, r.code)
	require.Contains(t, r.stderr, "exists")
	r = cli(t, "backup", "--server", "ftp://x", "n")
	require.Equal(t, exitUsage, r.code)
}

// TestServeAccounts serves two accounts from an --accounts file and
// from $AZURITE_ACCOUNTS: each has its own store directory, and a table
// made in one is not in the other.
func TestServeAccounts(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "accounts")
	k1 := base64.StdEncoding.EncodeToString([]byte("key one"))
	k2 := base64.StdEncoding.EncodeToString([]byte("key two"))
	require.NoError(t, os.WriteFile(file, []byte("# the accounts\nalpha:"+k1+"\nbeta:"+k2+":"+k1+"\n"), 0o600))
	for _, tc := range []struct {
		name string
		env  []string
		args []string
	}{
		{"file", nil, []string{"--accounts", file}},
		{"env", []string{"AZURITE_ACCOUNTS=alpha:" + k1 + ";beta:" + k2}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "store")
			p := startServe(t, tc.env, append([]string{"--dir", store, "--create", "--addr", "127.0.0.1:0", "--anonymous"}, tc.args...)...)
			p.waitOutput(t, `connection string: .*AccountName=beta;.*TableEndpoint=http://`+regexp.QuoteMeta(p.addr)+`/beta`)
			require.Contains(t, p.output(), "AccountName=alpha;")
			post := func(account, table string) int {
				resp, err := http.Post("http://"+p.addr+"/"+account+"/Tables", "application/json", strings.NewReader(`{"TableName":"`+table+`"}`))
				require.NoError(t, err)
				resp.Body.Close()
				return resp.StatusCode
			}
			list := func(account string) string {
				resp, err := http.Get("http://" + p.addr + "/" + account + "/Tables")
				require.NoError(t, err)
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return string(b)
			}
			require.Equal(t, 201, post("alpha", "OnlyAlpha"))
			require.Equal(t, 201, post("beta", "OnlyBeta"))
			require.Contains(t, list("alpha"), "OnlyAlpha")
			require.NotContains(t, list("alpha"), "OnlyBeta")
			require.Contains(t, list("beta"), "OnlyBeta")
			require.NotContains(t, list("beta"), "OnlyAlpha")
			for _, a := range []string{"alpha", "beta"} {
				_, err := os.Stat(filepath.Join(store, a))
				require.NoError(t, err, "store of %s", a)
			}
		})
	}
}

func TestServeAccountsUsage(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	require.NoError(t, os.WriteFile(bad, []byte("alpha:notbase64!"), 0o600))
	dup := filepath.Join(dir, "dup")
	k := base64.StdEncoding.EncodeToString([]byte("k"))
	require.NoError(t, os.WriteFile(dup, []byte("alpha:"+k+";alpha:"+k), 0o600))
	for _, args := range [][]string{
		{"serve", "--dir", dir, "--accounts", bad},
		{"serve", "--dir", dir, "--accounts", dup},
		{"serve", "--dir", dir, "--accounts", dup, "--account", "other"},
	} {
		r := cli(t, args...)
		require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
	}
}

func TestExposureWarnings(t *testing.T) {
	lo := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1}
	any := &net.TCPAddr{IP: net.IPv4zero, Port: 10002}
	require.Empty(t, exposureWarnings(lo, true, true, false))
	w := strings.Join(exposureWarnings(any, true, false, false), "\n")
	require.Contains(t, w, "ANYONE WHO CAN REACH THIS ADDRESS")
	require.Contains(t, w, "plain http")
	require.NotContains(t, strings.Join(exposureWarnings(any, false, false, true), "\n"), "ANYONE")
	// Any bearer token beyond loopback is as open as --anonymous.
	w = strings.Join(exposureWarnings(any, false, true, true), "\n")
	require.Contains(t, w, "--insecure-accept-any-bearer-token on 0.0.0.0:10002: ANYONE WHO CAN REACH THIS ADDRESS")
	require.Equal(t, "127.0.0.1:10002", dialable(any))
}

func TestServeBearerUsage(t *testing.T) {
	files := tablestoretest.NewTLSFiles(t, t.TempDir())
	jwks := filepath.Join(t.TempDir(), "jwks.json")
	require.NoError(t, os.WriteFile(jwks, []byte(`{"keys":[]}`), 0o600))
	for _, args := range [][]string{
		{"serve", "--in-memory", "--bearer-jwks", jwks, "--bearer-issuer", "x"}, // no TLS
		{"serve", "--in-memory", "--insecure-accept-any-bearer-token"},          // no TLS
		{"serve", "--in-memory", "--cert", files.CertFile, "--key", files.KeyFile, "--bearer-jwks", jwks},
		{"serve", "--in-memory", "--bearer-issuer", "x"},
		{"serve", "--in-memory", "--cert", files.CertFile, "--key", files.KeyFile, "--bearer-jwks", jwks, "--bearer-issuer", "x"}, // empty JWKS
	} {
		r := cli(t, args...)
		require.Equal(t, exitUsage, r.code, "%v: %s", args, r.stderr)
	}
}

// TestServeInsecureTokens: the insecure mode warns at start and takes
// any token over https.
func TestServeInsecureTokens(t *testing.T) {
	files := tablestoretest.NewTLSFiles(t, t.TempDir())
	p := startServe(t, nil, "--in-memory", "--addr", "127.0.0.1:0", "--cert", files.CertFile, "--key", files.KeyFile,
		"--insecure-accept-any-bearer-token")
	require.Contains(t, p.output(), "WARNING: --insecure-accept-any-bearer-token")
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: files.Pool}}}
	req, _ := http.NewRequest("GET", "https://"+p.addr+"/devstoreaccount1/Tables", nil)
	req.Header.Set("Authorization", "Bearer anything")
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
}

// TestServeEnv: flags from TABLESTORE_... variables, the command line
// winning, and a bad value named by its variable.
func TestServeEnv(t *testing.T) {
	require.Equal(t, "TABLESTORE_ADMIN_ADDR", envName("admin-addr"))
	require.Equal(t, "TABLESTORE_INSECURE_ACCEPT_ANY_BEARER_TOKEN", envName("insecure-accept-any-bearer-token"))
	p := startServe(t, []string{"TABLESTORE_IN_MEMORY=true", "TABLESTORE_ADDR=127.0.0.1:0", "TABLESTORE_ANONYMOUS=1",
		"TABLESTORE_ADMIN_ADDR=127.0.0.1:0", "TABLESTORE_LOG_FORMAT=json", "TABLESTORE_ACCOUNT=fromenv"}, "--account", "fromflag")
	p.waitOutput(t, `AccountName=fromflag;`)
	admin := p.adminAddr(t)
	resp, err := http.Get("http://" + admin + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	resp, err = http.Get("http://" + p.addr + "/fromflag/Tables")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	p.waitOutput(t, `"msg":"request".*"account":"fromflag"`)

	t.Setenv("TABLESTORE_SHUTDOWN_TIMEOUT", "soon")
	r := cli(t, "serve", "--in-memory")
	require.Equal(t, exitUsage, r.code)
	require.Contains(t, r.stderr, "$TABLESTORE_SHUTDOWN_TIMEOUT")
}

// TestServeFlagTable: docs/server-flags.md's table names every flag of serve
// and its variable.
func TestServeFlagTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "server-flags.md"))
	require.NoError(t, err)
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	serveCommand().flags(fs, &stdio{})
	fs.VisitAll(func(f *flag.Flag) {
		require.Contains(t, string(doc), "`--"+f.Name+"`", "docs/server-flags.md lacks --%s", f.Name)
		if !envSkip[f.Name] {
			require.Contains(t, string(doc), "`"+envName(f.Name)+"`", "docs/server-flags.md lacks %s", envName(f.Name))
		}
	})
}

// TestServeAdminHost: the admin listener answers a foreign Host 421 and
// a cross-site POST 403; --admin-host names a host it answers to.
func TestServeAdminHost(t *testing.T) {
	p := startServe(t, nil, "--in-memory", "--addr", "127.0.0.1:0", "--anonymous", "--admin-addr", "127.0.0.1:0",
		"--admin-host", "admin.internal", "--log-level", "none")
	admin := p.adminAddr(t)
	do := func(method, host, origin string) int {
		req, err := http.NewRequest(method, "http://"+admin+"/healthz", nil)
		require.NoError(t, err)
		if method == "POST" {
			req.URL.Path = "/backup"
		}
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusMisdirectedRequest, do("GET", "rebound.example", ""))
	require.Equal(t, http.StatusOK, do("GET", "admin.internal", ""))
	require.Equal(t, http.StatusOK, do("GET", admin, ""))
	require.Equal(t, http.StatusForbidden, do("POST", admin, "http://evil.example"))
	require.Equal(t, http.StatusNotImplemented, do("POST", admin, "")) // reaches /backup: no --backup-dir
}
