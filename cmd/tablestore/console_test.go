package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/console"
	"github.com/tablestore/tablestore/server"
)

// consoleClient is a browser-like client of a console: cookies, the CSRF
// token of the last page, no automatic redirects.
type consoleClient struct {
	t      *testing.T
	base   string
	client *http.Client
	csrf   string
}

func newConsoleClient(t *testing.T, base string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	return &consoleClient{t: t, base: base, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var csrfAttr = regexp.MustCompile(`data-csrf="([^"]+)"`)

func (c *consoleClient) do(method, path, contentType string, body io.Reader) (int, string, string) {
	c.t.Helper()
	u := path
	if !strings.HasPrefix(path, "http") {
		u = c.base + path
	}
	req, err := http.NewRequest(method, u, body)
	require.NoError(c.t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
		req.Header.Set("X-CSRF-Token", c.csrf)
	}
	resp, err := c.client.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	if m := csrfAttr.FindSubmatch(b); m != nil {
		c.csrf = string(m[1])
	}
	return resp.StatusCode, string(b), resp.Header.Get("Location")
}

// stream opens a change stream of the console and returns its events
// ("event data" per event) as they arrive; the stream is closed at the
// end of the test.
func (c *consoleClient) stream(path string) <-chan string {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+path, nil)
	require.NoError(c.t, err)
	client := *c.client
	client.Timeout = 0
	resp, err := client.Do(req)
	require.NoError(c.t, err)
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	events := make(chan string, 100)
	go func() {
		defer resp.Body.Close()
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		var event string
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
			} else if d, ok := strings.CutPrefix(line, "data: "); ok {
				events <- event + " " + d
			}
		}
	}()
	return events
}

// nextEvent returns the next event of a stream, or "" when it ended.
func nextEvent(t *testing.T, events <-chan string) string {
	t.Helper()
	select {
	case ev := <-events:
		return ev
	case <-time.After(20 * time.Second):
		t.Fatal("no event within 20 s")
		return ""
	}
}

// waitLine reads lines until one matches re and returns its first group.
func waitLine(t *testing.T, lines <-chan string, re string) string {
	t.Helper()
	rx := regexp.MustCompile(re)
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the process ended before printing %s", re)
			if m := rx.FindStringSubmatch(l); m != nil {
				return m[1]
			}
		case <-timeout:
			t.Fatalf("no line matching %s", re)
		}
	}
}

func startProcess(t *testing.T, env []string, args ...string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return cmd, lines
}

// TestConsoleCommand runs `tablestore console` as a process: it prints a
// loopback URL with a token that starts a session, serves the store, and
// stops cleanly on SIGTERM.
func TestConsoleCommand(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	r := cli(t, "tables", "create", "--store", store, "People")
	require.Equal(t, exitOK, r.code, r.stderr)
	token := "fixed-token-for-the-test-0123"
	cmd, lines := startProcess(t, []string{consoleTokenEnv + "=" + token}, "console", "--store", store, "--addr", "127.0.0.1:0")
	start := waitLine(t, lines, `^console: open (http://127\.0\.0\.1:\d+/\?token=\S+)$`)
	require.True(t, strings.HasSuffix(start, "?token="+token), start)
	base := strings.TrimSuffix(start, "/?token="+token)

	c := newConsoleClient(t, base)
	status, _, _ := c.do("GET", "/tables", "", nil)
	require.Equal(t, http.StatusUnauthorized, status)
	status, _, loc := c.do("GET", start, "", nil)
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/", loc)
	status, body, _ := c.do("GET", "/tables", "", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "People")
	require.Contains(t, body, `<span class="store" title="the store">`+store+`</span>`)
	status, _, _ = c.do("POST", "/tables", "application/x-www-form-urlencoded", strings.NewReader("name=Orders"))
	require.Equal(t, http.StatusSeeOther, status)

	// A live change stream does not hold up stopping.
	status, _, _ = c.do("POST", "/tables/Orders/changefeed", "application/x-www-form-urlencoded",
		strings.NewReader("retention=1h&confirm=1"))
	require.Equal(t, http.StatusSeeOther, status)
	events := c.stream("/tables/Orders/changes/stream?from=now")
	require.True(t, strings.HasPrefix(nextEvent(t, events), "ready "))

	stopAt := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	waitLine(t, lines, `^(console: stopping)$`)
	require.NoError(t, cmd.Wait())
	require.Less(t, time.Since(stopAt), 4*time.Second, "the stream ended at once, not at its lifetime's end")
	require.Equal(t, "", nextEvent(t, events), "the stream ended")
	db, err := tablestore.Open(store, nil)
	require.NoError(t, err, "the store was closed cleanly")
	defer db.Close()
	ok, err := db.TableExists(context.Background(), "Orders")
	require.NoError(t, err)
	require.True(t, ok)
}

func TestConsoleUsage(t *testing.T) {
	store := filepath.Join(t.TempDir(), "store")
	r := cli(t, "tables", "create", "--store", store, "People")
	require.Equal(t, exitOK, r.code, r.stderr)
	r = cli(t, "console", "--store", store, "extra")
	require.Equal(t, exitUsage, r.code, r.stderr)
	t.Setenv(consoleTokenEnv, "short")
	r = cli(t, "console", "--store", store, "--addr", "127.0.0.1:0")
	require.Equal(t, exitUsage, r.code, r.stderr)
	require.Contains(t, r.stderr, consoleTokenEnv)
	t.Setenv(consoleTokenEnv, "")
	r = cli(t, "console", "--store", store, "--addr", "nonsense")
	require.Equal(t, exitFail, r.code, r.stderr)
	r = cli(t, "console", "--store", filepath.Join(t.TempDir(), "missing"), "--addr", "127.0.0.1:0")
	require.Equal(t, exitFail, r.code, r.stderr)
	require.Contains(t, r.stderr, "no store", "the console serves an existing store only")
}

// TestServeConsole runs `tablestore serve --console`: the console is on
// the admin listener under /console/, beside /metrics; sessions sign in as
// a served account with its key and see that account's store only, and the
// Health page's metrics are the server's; with --anonymous and one account
// the token alone lets a session in.
func TestServeConsole(t *testing.T) {
	dir := t.TempDir()
	accounts := filepath.Join(dir, "accounts")
	keyA, keyB := server.DevKey, "a2V5LWJldGEta2V5LWJldGEta2V5LWJldGE="
	require.NoError(t, os.WriteFile(accounts, []byte("alpha:"+keyA+"\nbeta:"+keyB+"\n"), 0o600))
	_, lines := startProcess(t, nil, "serve", "--dir", filepath.Join(dir, "stores"), "--create", "--accounts", accounts,
		"--addr", "127.0.0.1:0", "--console", "--admin-addr", "127.0.0.1:0", "--log-level", "none")
	start := waitLine(t, lines, `^serve: console: open (http://127\.0\.0\.1:\d+/console/\?token=\S+)$`)
	waitLine(t, lines, `^serve: console: (sign in) as a served account with one of its keys$`)
	admin := waitLine(t, lines, `^serve: admin listening on (\S+) `)
	require.True(t, strings.HasPrefix(start, "http://"+admin+"/console/"), start)
	addr := waitLine(t, lines, `^serve: listening on (\S+)$`)
	base := "http://" + admin + "/console"

	// The admin endpoints are still there.
	resp, err := http.Get("http://" + admin + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// The token leads to the sign-in page; only an account's key signs in.
	c := newConsoleClient(t, base)
	status, _, loc := c.do("GET", start, "", nil)
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/console/", loc)
	status, _, loc = c.do("GET", "/tables", "", nil)
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/console/signin?then=%2Ftables", loc)
	c.do("GET", "/signin", "", nil)
	form := url.Values{"account": {"beta"}, "key": {keyA}, "csrf": {c.csrf}}
	status, _, _ = c.do("POST", "/signin", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	require.Equal(t, http.StatusUnauthorized, status, "alpha's key does not open beta")
	form.Set("key", keyB)
	status, _, _ = c.do("POST", "/signin", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	require.Equal(t, http.StatusSeeOther, status)
	status, _, _ = c.do("POST", "/tables", "application/x-www-form-urlencoded", strings.NewReader("name=BetaOnly"))
	require.Equal(t, http.StatusSeeOther, status)

	// A REST request to beta shows in beta's metrics on the Health page.
	resp, err = http.Get("http://" + addr + "/beta/Tables")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "unsigned")
	status, body, _ := c.do("GET", "/health/metrics", "", nil)
	require.Equal(t, http.StatusOK, status)
	var m struct {
		Available bool
		Requests  float64
	}
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	require.True(t, m.Available)
	require.GreaterOrEqual(t, m.Requests, 1.0)

	// beta tails its table's change feed: a write made through the
	// console arrives.
	status, _, _ = c.do("POST", "/tables/BetaOnly/changefeed", "application/x-www-form-urlencoded",
		strings.NewReader("retention=1h&images=new&confirm=1"))
	require.Equal(t, http.StatusSeeOther, status)
	events := c.stream("/tables/BetaOnly/changes/stream?from=now")
	require.True(t, strings.HasPrefix(nextEvent(t, events), "ready "))
	status, _, _ = c.do("POST", "/tables/BetaOnly/entity", "application/x-www-form-urlencoded",
		strings.NewReader(url.Values{"op": {"insert"}, "pk": {"p"}, "rk": {"from-beta"}}.Encode()))
	require.Equal(t, http.StatusSeeOther, status)
	ev := nextEvent(t, events)
	require.True(t, strings.HasPrefix(ev, "change "), ev)
	require.Contains(t, ev, `"rk":"from-beta"`)

	// alpha's store does not hold beta's table, nor its feed.
	a := newConsoleClient(t, base)
	a.do("GET", start, "", nil)
	a.do("GET", "/signin", "", nil)
	form = url.Values{"account": {"alpha"}, "key": {keyA}, "csrf": {a.csrf}}
	status, _, _ = a.do("POST", "/signin", "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	require.Equal(t, http.StatusSeeOther, status)
	status, body, _ = a.do("GET", "/tables", "", nil)
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, body, "BetaOnly")
	ev = nextEvent(t, a.stream("/tables/BetaOnly/changes/stream?from=beginning"))
	require.True(t, strings.HasPrefix(ev, "failure "), ev)
	require.Contains(t, ev, `"code":"TableNotFound"`)
	status, body, _ = c.do("GET", "/tables", "", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "BetaOnly")

	// Anonymous with one account: no sign-in, and the REST API shows the
	// console's table.
	_, lines = startProcess(t, nil, "serve", "--in-memory", "--addr", "127.0.0.1:0", "--anonymous", "--console",
		"--admin-addr", "127.0.0.1:0", "--log-level", "none")
	start = waitLine(t, lines, `^serve: console: open (http://127\.0\.0\.1:\d+/console/\?token=\S+)$`)
	addr = waitLine(t, lines, `^serve: listening on (\S+)$`)
	c = newConsoleClient(t, start[:strings.Index(start, "/?token=")])
	c.do("GET", start, "", nil)
	status, _, _ = c.do("GET", "/tables", "", nil)
	require.Equal(t, http.StatusOK, status)
	status, _, _ = c.do("POST", "/tables", "application/x-www-form-urlencoded", strings.NewReader("name=Shared"))
	require.Equal(t, http.StatusSeeOther, status)
	req, _ := http.NewRequest("GET", "http://"+addr+"/devstoreaccount1/Tables", nil)
	req.Header.Set("Accept", "application/json;odata=nometadata")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(b), `"TableName":"Shared"`)

	r := cli(t, "serve", "--in-memory", "--console", "--admin-addr", "127.0.0.1:0", "--addr", "nonsense")
	require.Equal(t, exitFail, r.code, r.stderr)
}

// TestConsoleCSVMatchesTheCommand holds the console's CSV to the
// command's: both use package entitycsv, and this checks how each wires it
// (columns found, records split from chunks or a stream, keys, errors):
// what one exports, the other imports, value for value.
func TestConsoleCSVMatchesTheCommand(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	db, err := tablestore.Open(src, nil)
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Typed")
	require.NoError(t, err)
	g, _ := edm.ParseGUID("0f8fad5b-d9cb-469f-a165-70867728950e")
	want := map[string]any{"S": "a, \"b\"\nc", "E": "", "I": int32(-5), "L": int64(math.MaxInt64), "D": math.Inf(-1),
		"B": true, "T": time.Date(2026, 1, 2, 3, 4, 5, 100, time.UTC), "G": g, "X": []byte{0, 255}}
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p,1", RowKey: " r ", Properties: want}))
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p,1", RowKey: "other", Properties: map[string]any{"I": int64(7)}}))
	c, err := console.New(db, nil)
	require.NoError(t, err)
	srv := httptest.NewServer(c)
	defer srv.Close()
	cc := newConsoleClient(t, srv.URL)
	cc.do("GET", c.StartURL(strings.TrimPrefix(srv.URL, "http://")), "", nil)
	status, exported, _ := cc.do("GET", "/tables/Typed/export?format=csv", "", nil)
	require.Equal(t, http.StatusOK, status)

	// The command imports the console's CSV.
	file := filepath.Join(dir, "console.csv")
	require.NoError(t, os.WriteFile(file, []byte(exported), 0o644))
	require.NoError(t, db.Close())
	r := cli(t, "import", "--store", filepath.Join(dir, "viaCLI"), "Typed", file)
	require.Equal(t, exitOK, r.code, r.stderr)
	got := readEntities(t, filepath.Join(dir, "viaCLI"), "Typed")
	require.Len(t, got, 2)
	require.Equal(t, want, got[0].Properties)
	require.Equal(t, map[string]any{"I": int64(7)}, got[1].Properties)

	// The command's export is what the console wrote, and the console
	// imports it.
	r = cli(t, "export", "--store", src, "Typed", "--format", "csv")
	require.Equal(t, exitOK, r.code, r.stderr)
	require.Equal(t, exported, r.stdout)
	db, err = tablestore.Open(src, nil)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.CreateTable(ctx, "Copy")
	require.NoError(t, err)
	c, err = console.New(db, nil)
	require.NoError(t, err)
	srv2 := httptest.NewServer(c)
	defer srv2.Close()
	cc = newConsoleClient(t, srv2.URL)
	cc.do("GET", c.StartURL(strings.TrimPrefix(srv2.URL, "http://")), "", nil)
	cc.do("GET", "/tables", "", nil)
	status, body, _ := cc.do("POST", "/tables/Copy/import", "application/x-www-form-urlencoded",
		strings.NewReader("format=csv&mode=insert&onerror=stop"))
	require.Equal(t, http.StatusCreated, status, body)
	var started struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	status, body, _ = cc.do("POST", fmt.Sprintf("/tables/Copy/import/%s?offset=0&last=1", started.ID),
		"application/octet-stream", strings.NewReader(r.stdout))
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"imported":2`)
	e, err := db.Table("Copy").Get(ctx, "p,1", " r ", nil)
	require.NoError(t, err)
	require.Equal(t, want, e.Properties)
}

// TestConsoleWeakToken checks that a guessable token given by
// $TABLESTORE_CONSOLE_TOKEN is accepted with a warning, by `console` and by
// serve's console, and that a random one is not warned about.
func TestConsoleWeakToken(t *testing.T) {
	for _, weak := range []string{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "abcdefghijklmnopqrstuvwxyz012345", "password12345678",
		"fixed-token-for-the-test-0123", "0000000000000000000000000000000000000000000000000000000000"} {
		require.Less(t, tokenBits(weak), minTokenBits, weak)
	}
	for _, strong := range []string{"fhU_Lq9aKmVImopdqmRJ2fu2IkDTUcZJ34BShXLr81w", "0uV3kQ9-xTz7Lw2bN8cRy5Hs1gPmJd4AeFo6WqYiUvK"} {
		require.GreaterOrEqual(t, tokenBits(strong), minTokenBits, strong)
	}

	db, err := tablestore.OpenInMemory(nil)
	require.NoError(t, err)
	defer db.Close()
	served := []server.Account{{Name: "alpha", Keys: []string{server.DevKey}, DB: db}}
	for _, c := range []struct {
		token string
		warn  bool
	}{{"password12345678", true}, {"fhU_Lq9aKmVImopdqmRJ2fu2IkDTUcZJ34BShXLr81w", false}, {"", false}} {
		t.Setenv(consoleTokenEnv, c.token)
		var stderr strings.Builder
		_, wc, err := mountConsole(&stderr, http.NotFoundHandler(), nil, served, nil, false, "store", nil, nil)
		require.NoError(t, err)
		wc.Shutdown()
		if c.warn {
			require.Contains(t, stderr.String(), "serve: console: warning: the access token from $"+consoleTokenEnv+" is weak")
			require.Contains(t, stderr.String(), "want 128 or more")
		} else {
			require.Empty(t, stderr.String(), c.token)
		}

		stderr.Reset()
		stop, err := startConsole(&stderr, "console", db, consoleSetup{addr: "127.0.0.1:0", store: "store"})
		require.NoError(t, err)
		require.NoError(t, stop())
		if c.warn {
			require.Contains(t, stderr.String(), "console: warning: the access token from $"+consoleTokenEnv+" is weak")
		} else {
			require.NotContains(t, stderr.String(), "warning", c.token)
		}
	}
}

// TestServeConsoleMemory checks that serve's console holds its change
// streams in the account's memory budget: while they fill it, the
// account's REST requests find no memory, and a further stream is refused.
func TestServeConsoleMemory(t *testing.T) {
	ctx := context.Background()
	token := "fhU_Lq9aKmVImopdqmRJ2fu2IkDTUcZJ34BShXLr81w"
	t.Setenv(consoleTokenEnv, token)
	db, err := tablestore.OpenInMemory(nil)
	require.NoError(t, err)
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Feed")
	require.NoError(t, err)
	require.NoError(t, tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{}))
	served := []server.Account{{Name: "alpha", Keys: []string{server.DevKey}, DB: db}}
	// 1 MiB: reservations may take 800 KiB of it, six streams' 768 KiB.
	rest, err := server.NewAccounts(served, &server.Options{Anonymous: true, MemoryBudget: 1 << 20,
		QueueWait: 20 * time.Millisecond})
	require.NoError(t, err)
	h, wc, err := mountConsole(io.Discard, http.NotFoundHandler(), rest, served, nil, true, "store", nil, nil)
	require.NoError(t, err)
	defer wc.Shutdown()
	consoleSrv := httptest.NewServer(h)
	defer consoleSrv.Close()
	restSrv := httptest.NewServer(rest)
	defer restSrv.Close()
	listTables := func() int {
		req, err := http.NewRequest("GET", restSrv.URL+"/alpha/Tables", nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "application/json;odata=nometadata")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, listTables())

	const path = "/console/tables/Feed/changes/stream?from=now"
	var sessions []*consoleClient
	for range 2 {
		c := newConsoleClient(t, consoleSrv.URL)
		status, _, _ := c.do("GET", "/console/?token="+token, "", nil)
		require.Equal(t, http.StatusSeeOther, status)
		sessions = append(sessions, c)
	}
	for i := range 6 { // four in one session (its most), two in the other
		events := sessions[i/4].stream(path)
		require.True(t, strings.HasPrefix(nextEvent(t, events), "ready "))
	}
	status, body, _ := sessions[1].do("GET", path, "", nil)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "memory budget is full")
	require.Equal(t, http.StatusServiceUnavailable, listTables(), "the streams hold the account's memory")
	require.Equal(t, int64(6*128<<10), server.AccountMemory(rest, "alpha").InUse())
	wc.Shutdown() // the streams end before the servers close
}
