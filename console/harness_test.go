package console

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

// harness runs a console on a loopback test server and speaks to it as a
// browser would: a cookie jar, the CSRF token of the last page, the
// Origin and Sec-Fetch-Site headers of same-origin requests.
type harness struct {
	t      *testing.T
	db     *tablestore.DB
	c      *Console
	srv    *httptest.Server
	client *http.Client
	csrf   string
}

const testToken = "test-token-0123456789abcdef"

func newHarness(t *testing.T, opts *Options) *harness {
	t.Helper()
	db, err := tablestore.OpenInMemory(nil)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return newHarnessDB(t, db, opts)
}

func newHarnessDB(t *testing.T, db *tablestore.DB, opts *Options) *harness {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	if opts.Token == "" {
		opts.Token = testToken
	}
	c, err := New(db, opts)
	require.NoError(t, err)
	srv := httptest.NewServer(c) // 127.0.0.1
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	return &harness{t: t, db: db, c: c, srv: srv, client: client}
}

// fork returns a harness on the same console with a browser of its own.
func (h *harness) fork() *harness {
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, CheckRedirect: h.client.CheckRedirect}
	return &harness{t: h.t, db: h.db, c: h.c, srv: h.srv, client: client}
}

// login starts a session with the token and reads the CSRF token.
func (h *harness) login() {
	h.t.Helper()
	status, _, loc := h.do("GET", "/?token="+testToken, nil, nil)
	require.Equal(h.t, http.StatusSeeOther, status)
	require.NotContains(h.t, loc, "token")
	status, body, _ := h.get(h.c.o.Prefix + "/tables")
	require.Equal(h.t, http.StatusOK, status, body)
}

var csrfAttr = regexp.MustCompile(`data-csrf="([^"]*)"`)

// do sends a request; same-origin headers are added to unsafe methods.
func (h *harness) do(method, path string, body io.Reader, header http.Header) (int, string, string) {
	h.t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, h.srv.URL+path, body)
	require.NoError(h.t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := h.client.Do(req)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	if m := csrfAttr.FindSubmatch(b); m != nil && len(m[1]) > 0 {
		h.csrf = string(m[1])
	}
	return resp.StatusCode, string(b), resp.Header.Get("Location")
}

func (h *harness) get(path string) (int, string, string) {
	h.t.Helper()
	return h.do("GET", path, nil, nil)
}

// post sends a same-origin form with the session's CSRF token.
func (h *harness) post(path string, form url.Values) (int, string, string) {
	h.t.Helper()
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	f.Set("csrf", h.csrf)
	return h.do("POST", path, strings.NewReader(f.Encode()), h.sameOrigin("application/x-www-form-urlencoded"))
}

func (h *harness) sameOrigin(contentType string) http.Header {
	return http.Header{"Content-Type": {contentType}, "Origin": {h.srv.URL}, "Sec-Fetch-Site": {"same-origin"}}
}

// postRaw sends a body with the CSRF token in the header, as the script does.
func (h *harness) postRaw(path, contentType string, body string) (int, string) {
	h.t.Helper()
	hd := h.sameOrigin(contentType)
	hd.Set("X-CSRF-Token", h.csrf)
	hd.Set("Accept", "application/json")
	status, b, _ := h.do("POST", path, strings.NewReader(body), hd)
	return status, b
}

func (h *harness) table(name string) *tablestore.Table {
	h.t.Helper()
	t, err := h.db.CreateTable(context.Background(), name)
	require.NoError(h.t, err)
	return t
}
