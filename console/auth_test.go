package console

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

func TestNewOptions(t *testing.T) {
	db, err := tablestore.OpenInMemory(nil)
	require.NoError(t, err)
	defer db.Close()
	for _, o := range []*Options{
		{Token: "short"},
		{Token: "has spaces in it, which is not allowed"},
		{Prefix: "console"},
		{Prefix: "/console/"},
		{Prefix: "/con'sole"},
		{Accounts: []server.Account{{Name: "", Keys: []string{"k"}}}},
		{Accounts: []server.Account{{Name: "a"}}},
		{Accounts: []server.Account{{Name: "a", Keys: []string{""}}}},
		{Accounts: []server.Account{{Name: "a", Keys: []string{"k"}}, {Name: "a", Keys: []string{"j"}}}},
	} {
		_, err := New(db, o)
		require.ErrorIs(t, err, ErrBadOptions, "%+v", o)
	}
	_, err = New(nil, nil)
	require.ErrorIs(t, err, ErrBadOptions)
	_, err = New(nil, &Options{Accounts: []server.Account{{Name: "a", Keys: []string{"k"}}}})
	require.ErrorIs(t, err, ErrBadOptions, "an account without a store, and none given to New")

	c, err := New(db, nil)
	require.NoError(t, err)
	require.Regexp(t, `^[A-Za-z0-9_-]{43}$`, c.Token())
	c2, err := New(db, nil)
	require.NoError(t, err)
	require.NotEqual(t, c.Token(), c2.Token())
	require.Equal(t, "http://127.0.0.1:8080/?token="+c.Token(), c.StartURL("0.0.0.0:8080"))
	require.Equal(t, "http://[::1]:8080/?token="+c.Token(), c.StartURL("[::1]:8080"))
	c3, err := New(db, &Options{Prefix: "/console", Token: testToken})
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:1/console/?token="+testToken, c3.StartURL("127.0.0.1:1"))
}

func TestTokenStartsSession(t *testing.T) {
	h := newHarness(t, nil)

	// Without a session every page is 401, with instructions.
	status, body, _ := h.get("/tables")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, body, "?token=")
	status, body, _ = h.do("GET", "/health/metrics", nil, http.Header{"Accept": {"application/json"}})
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, body, `"error"`)

	// A wrong token is refused and starts nothing.
	status, _, _ = h.get("/tables?token=wrong-token-0123456789")
	require.Equal(t, http.StatusUnauthorized, status)
	status, _, _ = h.get("/tables")
	require.Equal(t, http.StatusUnauthorized, status)

	// The static files need no session (the 401 page uses them).
	status, body, _ = h.get("/static/console.css")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "--accent")

	// The token sets an HttpOnly, SameSite=Strict cookie and redirects to
	// the same page without it.
	req, _ := http.NewRequest("GET", h.srv.URL+"/tables?page=1&token="+testToken, nil)
	resp, err := h.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/tables?page=1", resp.Header.Get("Location"))
	cookies := resp.Cookies()
	require.Len(t, cookies, 1)
	require.Equal(t, cookieName, cookies[0].Name)
	require.True(t, cookies[0].HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, cookies[0].SameSite)
	require.Equal(t, "/", cookies[0].Path)

	status, body, _ = h.get("/tables")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "No tables yet")
	require.NotEmpty(t, h.csrf)

	// Signing out ends the session.
	status, _, _ = h.post("/signout", nil)
	require.Equal(t, http.StatusOK, status)
	status, _, _ = h.get("/tables")
	require.Equal(t, http.StatusUnauthorized, status)
}

func TestSecurityHeaders(t *testing.T) {
	h := newHarness(t, nil)
	h.login()
	resp, err := h.client.Get(h.srv.URL + "/tables")
	require.NoError(t, err)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "script-src 'self'")
	require.Contains(t, csp, "frame-ancestors 'none'")
	require.NotContains(t, csp, "unsafe-inline")
	require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
	require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	require.Equal(t, "same-origin", resp.Header.Get("Referrer-Policy"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
}

func TestHostHeader(t *testing.T) {
	h := newHarness(t, &Options{Hosts: []string{"console.internal"}})
	h.login()
	for host, want := range map[string]int{
		"evil.example":          http.StatusMisdirectedRequest, // DNS rebinding
		"evil.example:80":       http.StatusMisdirectedRequest,
		"localhost:1234":        http.StatusOK,
		"127.0.0.1":             http.StatusOK,
		"[::1]:80":              http.StatusOK,
		"console.internal:8080": http.StatusOK,
		"CONSOLE.internal":      http.StatusOK,
	} {
		req, _ := http.NewRequest("GET", h.srv.URL+"/tables", nil)
		req.Host = host
		u, _ := url.Parse(h.srv.URL)
		for _, ck := range h.client.Jar.Cookies(u) {
			req.AddCookie(ck)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, host)
	}
}

func TestCSRF(t *testing.T) {
	h := newHarness(t, nil)
	h.login()
	create := func(name string, form url.Values, header http.Header) int {
		form.Set("name", name)
		status, _, _ := h.do("POST", "/tables", strings.NewReader(form.Encode()), header)
		return status
	}
	form := func(csrf string) url.Values { return url.Values{"csrf": {csrf}} }
	hdr := func(kv ...string) http.Header {
		hd := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
		for i := 0; i < len(kv); i += 2 {
			hd.Set(kv[i], kv[i+1])
		}
		return hd
	}
	origin := h.srv.URL
	// Refused: no token, a wrong one, another origin, another site, a
	// token only in a multipart body.
	require.Equal(t, http.StatusForbidden, create("NoToken", url.Values{}, hdr("Origin", origin)))
	require.Equal(t, http.StatusForbidden, create("WrongToken", form("nope"), hdr("Origin", origin)))
	require.Equal(t, http.StatusForbidden, create("OtherOrigin", form(h.csrf), hdr("Origin", "http://evil.example")))
	require.Equal(t, http.StatusForbidden, create("NullOrigin", form(h.csrf), hdr("Origin", "null")))
	require.Equal(t, http.StatusForbidden, create("CrossSite", form(h.csrf), hdr("Sec-Fetch-Site", "cross-site")))
	require.Equal(t, http.StatusForbidden, create("SameSite", form(h.csrf), hdr("Sec-Fetch-Site", "same-site")))
	status, _, _ := h.do("POST", "/tables", strings.NewReader("--x\r\n"), http.Header{"Content-Type": {"multipart/form-data; boundary=x"}})
	require.Equal(t, http.StatusForbidden, status)
	// A session's token does not serve another session.
	other := h.fork()
	other.login()
	require.NotEqual(t, h.csrf, other.csrf)
	require.Equal(t, http.StatusForbidden, create("OtherSession", form(other.csrf), hdr("Origin", origin)))
	names, err := h.db.ListTables(context.Background(), nil)
	require.NoError(t, err)
	require.Empty(t, names.Names, "no refused request created a table")

	// Accepted: the form token with same-origin headers, or without
	// them (older browsers send neither), or the header token.
	require.Equal(t, http.StatusSeeOther, create("SameOrigin", form(h.csrf), hdr("Origin", origin, "Sec-Fetch-Site", "same-origin")))
	require.Equal(t, http.StatusSeeOther, create("NoHeaders", form(h.csrf), hdr()))
	require.Equal(t, http.StatusSeeOther, create("HeaderToken", url.Values{}, hdr("X-CSRF-Token", h.csrf)))
	names, err = h.db.ListTables(context.Background(), nil)
	require.NoError(t, err)
	require.Equal(t, []string{"HeaderToken", "NoHeaders", "SameOrigin"}, names.Names)

	// GET never changes anything, whatever it carries.
	status, _, _ = h.get("/tables/SameOrigin/delete?confirm=SameOrigin")
	require.Equal(t, http.StatusOK, status)
	ok, err := h.db.TableExists(context.Background(), "SameOrigin")
	require.NoError(t, err)
	require.True(t, ok)
}

func TestSessionsExpireAndAreBounded(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	clock := func() time.Time { return now }
	h := newHarness(t, &Options{Clock: clock, SessionTTL: time.Hour, MaxSessions: 2})
	h.login()
	now = now.Add(59 * time.Minute)
	status, _, _ := h.get("/tables")
	require.Equal(t, http.StatusOK, status, "used within the TTL")
	now = now.Add(61 * time.Minute)
	status, _, _ = h.get("/tables")
	require.Equal(t, http.StatusUnauthorized, status, "idle past the TTL")

	h.login()
	b := h.fork()
	now = now.Add(time.Second)
	b.login()
	now = now.Add(time.Second)
	status, _, _ = b.get("/tables") // b is now the more recently used
	require.Equal(t, http.StatusOK, status)
	c := h.fork() // a third session ends h's, idle longest
	now = now.Add(time.Second)
	c.login()
	status, _, _ = h.get("/tables")
	require.Equal(t, http.StatusUnauthorized, status)
	status, _, _ = b.get("/tables")
	require.Equal(t, http.StatusOK, status)
}

func TestSignIn(t *testing.T) {
	ctx := context.Background()
	other, err := tablestore.OpenInMemory(nil)
	require.NoError(t, err)
	defer other.Close()
	_, err = other.CreateTable(ctx, "OtherAccounts")
	require.NoError(t, err)
	h := newHarness(t, &Options{StoreName: "/srv/secret-store-path", Accounts: []server.Account{
		{Name: "alpha", Keys: []string{"key-a1", "key-a2"}},
		{Name: "beta", Keys: []string{"key-b"}, DB: other},
	}})
	h.table("AlphaTable")

	// The token alone leads to the sign-in page.
	status, _, loc := h.get("/?token=" + testToken)
	require.Equal(t, http.StatusSeeOther, status)
	status, _, loc = h.get(loc)
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/signin?then=%2F", loc)
	status, body, _ := h.get(loc)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="signin-form"`)
	// Neither the store nor the accounts are shown before a key is given.
	require.NotContains(t, body, "secret-store-path")
	require.NotContains(t, body, "alpha")
	require.NotContains(t, body, "beta")
	status, _, _ = h.get("/health/metrics")
	require.Equal(t, http.StatusSeeOther, status)
	status, _, _ = h.post("/tables", url.Values{"name": {"Sneaky"}})
	require.Equal(t, http.StatusForbidden, status, "nothing changes before signing in")

	// A wrong key, or a key of another account, is refused.
	status, body, _ = h.post("/signin", url.Values{"account": {"alpha"}, "key": {"key-b"}})
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, body, "wrong account name or key")
	require.NotContains(t, body, "beta", "a failed sign-in shows only the name typed")
	require.NotContains(t, body, "secret-store-path")
	status, _, _ = h.post("/signin", url.Values{"account": {"gamma"}, "key": {"key-b"}})
	require.Equal(t, http.StatusUnauthorized, status)

	// beta's key opens beta's store only.
	status, _, loc = h.post("/signin", url.Values{"account": {"beta"}, "key": {"key-b"}, "then": {"/tables"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables", loc)
	status, body, _ = h.get("/tables")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "OtherAccounts")
	require.NotContains(t, body, "AlphaTable")
	require.Contains(t, body, `class="account"`)
	require.Contains(t, body, "secret-store-path", "signed in, the store is named")
	status, _, _ = h.get("/tables/AlphaTable/query")
	require.Equal(t, http.StatusNotFound, status)
	status, _, _ = h.post("/tables", url.Values{"name": {"BetaMade"}})
	require.Equal(t, http.StatusSeeOther, status)
	ok, err := other.TableExists(ctx, "BetaMade")
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = h.db.TableExists(ctx, "BetaMade")
	require.NoError(t, err)
	require.False(t, ok)

	// An open redirect is not possible.
	h2 := h.fork()
	h2.get("/?token=" + testToken)
	h2.get("/signin")
	status, _, loc = h2.post("/signin", url.Values{"account": {"alpha"}, "key": {"key-a2"}, "then": {"//evil.example/x"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/", loc)

	// Too many wrong keys end the session.
	h3 := h.fork()
	h3.get("/?token=" + testToken)
	h3.get("/signin")
	for i := range maxSignInFailures {
		status, _, _ = h3.post("/signin", url.Values{"account": {"alpha"}, "key": {"guess"}})
		require.Equal(t, http.StatusUnauthorized, status, i)
	}
	status, _, _ = h3.post("/signin", url.Values{"account": {"alpha"}, "key": {"key-a1"}})
	require.Equal(t, http.StatusUnauthorized, status)
}

// TestStaticFiles checks that the console's script and style are served
// without a session, and that no directory is listed.
func TestStaticFiles(t *testing.T) {
	h := newHarness(t, nil)
	status, body, _ := h.get("/static/console.js")
	require.Equal(t, http.StatusOK, status)
	require.NotEmpty(t, body)
	status, _, _ = h.get("/static/console.css")
	require.Equal(t, http.StatusOK, status)
	for _, p := range []string{"/static/", "/static", "/static/nothing.js", "/static/../static/"} {
		status, body, _ = h.get(p)
		require.NotEqual(t, http.StatusOK, status, p)
		require.NotContains(t, body, `<a href="console.js">`, "%s lists the directory", p)
	}
	status, _, _ = h.get("/static/")
	require.Equal(t, http.StatusNotFound, status)
}
