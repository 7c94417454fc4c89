package compat

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
	"github.com/tablestore/tablestore/tablestoretest"
)

// The extension endpoints (/{account}/$tablestore/...) against credentials
// made as clients make them: SAS URLs from the Go SDK, bearer tokens, and
// another account's signatures. Every endpoint is sent with every
// credential; each must be answered as the data it touches is
// authorized, with no bypass.

type extCall struct {
	name, method, path, body, needs string // needs: caps, read, admin, delete
}

var extCalls = []extCall{
	{"capabilities", "GET", "/$tablestore", "", "caps"},
	{"read feed", "GET", "/$tablestore/tables/feed/changes", "", "read"},
	{"long-poll feed", "GET", "/$tablestore/tables/feed/changes?from=now&wait=0.01", "", "read"},
	{"feed settings", "GET", "/$tablestore/tables/feed/changefeed", "", "read"},
	{"list indexes", "GET", "/$tablestore/tables/feed/indexes", "", "read"},
	{"get TTL", "GET", "/$tablestore/tables/feed/ttl", "", "read"},
	{"stats", "GET", "/$tablestore/tables/feed/stats", "", "read"},
	{"index-order query", "GET", "/$tablestore/tables/feed/query?index=ByN", "", "read"},
	{"enable feed", "PUT", "/$tablestore/tables/feed/changefeed", `{"images":"new"}`, "admin"},
	{"create index", "PUT", "/$tablestore/tables/feed/indexes/ByM", `{"properties":["M"]}`, "admin"},
	{"set TTL", "PUT", "/$tablestore/tables/feed/ttl", `{"defaultSeconds":0}`, "admin"},
	{"drop index", "DELETE", "/$tablestore/tables/feed/indexes/ByM", "", "admin"},
	{"delete range", "DELETE", "/$tablestore/tables/feed/partition?pk=none", "", "delete"},
	{"disable feed", "DELETE", "/$tablestore/tables/feed/changefeed", "", "admin"},
}

// sendExt sends one call to base (the account's service root) with
// query (a SAS, or "") and headers; it returns the status and error code.
func sendExt(t *testing.T, client *http.Client, base string, c extCall, query string, hdr map[string]string) (int, string) {
	t.Helper()
	u := base + c.path
	if query != "" {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		u += sep + query
	}
	var body io.Reader
	if c.body != "" {
		body = strings.NewReader(c.body)
	}
	r, err := http.NewRequestWithContext(ctx(t), c.method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("x-ms-version", "2019-02-02")
	if c.body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	resp, err := client.Do(r)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("x-ms-error-code")
}

func TestExtensionEndpointsAuthorization(t *testing.T) {
	mint := newTokenMint(t)
	srv := tablestoretest.NewTLSServerWithOptions(t, &server.Options{Bearer: &server.Bearer{JWKS: mint.jwks, Issuers: []string{tokenIssuer}}})
	if _, err := srv.DB().CreateTable(context.Background(), "feed"); err != nil {
		t.Fatal(err)
	}
	if err := srv.DB().Table("feed").EnableChangeFeed(context.Background(), ts.ChangeFeedOptions{}); err != nil {
		t.Fatal(err)
	}
	base := srv.URL() + "/" + srv.Account()
	cred, err := aztables.NewSharedKeyCredential(srv.Account(), srv.Key())
	if err != nil {
		t.Fatal(err)
	}
	svc, err := aztables.NewServiceClientWithSharedKey(base, cred, tlsClientOptions(srv))
	if err != nil {
		t.Fatal(err)
	}
	start, end := time.Now().UTC().Add(-time.Minute), time.Now().UTC().Add(time.Hour)
	tableSAS := func(p aztables.SASPermissions) string {
		u, err := svc.NewClient("feed").GetTableSASURL(p, start, end)
		if err != nil {
			t.Fatal(err)
		}
		pu, _ := url.Parse(u)
		return pu.RawQuery
	}
	accountSAS := func(rt aztables.AccountSASResourceTypes, p aztables.AccountSASPermissions) string {
		u, err := svc.GetAccountSASURL(rt, p, start, end)
		if err != nil {
			t.Fatal(err)
		}
		pu, _ := url.Parse(u)
		return pu.RawQuery
	}
	all := aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true}
	bearer := func(kind string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + mint.token(t, kind)}
	}
	creds := []struct {
		name    string
		query   string
		hdr     map[string]string
		allowed string
	}{
		{"no credential", "", nil, "caps"},
		{"SDK table SAS add (no read)", tableSAS(aztables.SASPermissions{Add: true}), nil, "caps"},
		{"SDK table SAS read", tableSAS(aztables.SASPermissions{Read: true}), nil, "caps read"},
		{"SDK table SAS read, delete", tableSAS(aztables.SASPermissions{Read: true, Delete: true}), nil, "caps read delete"},
		{"SDK account SAS read", accountSAS(all, aztables.AccountSASPermissions{Read: true}), nil, "caps read"},
		{"SDK account SAS write, objects only", accountSAS(aztables.AccountSASResourceTypes{Object: true}, aztables.AccountSASPermissions{Write: true}), nil, "caps"},
		{"SDK account SAS read, write, delete", accountSAS(all, aztables.AccountSASPermissions{Read: true, Write: true, Delete: true}), nil, "caps read admin delete"},
		{"bearer reader", "", bearer("reader"), "caps read"},
		{"bearer contributor", "", bearer("valid"), "caps read admin delete"},
		{"bearer expired", "", bearer("expired"), "caps"},
	}
	for _, c := range creds {
		// The calls before may have turned the feed off and dropped the
		// index.
		if err := srv.DB().Table("feed").EnableChangeFeed(context.Background(), ts.ChangeFeedOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := srv.DB().Table("feed").CreateIndex(context.Background(), ts.IndexSpec{Name: "ByN", Properties: []string{"N"}}); err != nil && ts.ErrorCode(err) != "InvalidInput" {
			t.Fatal(err)
		}
		for _, call := range extCalls {
			status, code := sendExt(t, srv.HTTPClient(), base, call, c.query, c.hdr)
			if strings.Contains(" "+c.allowed+" ", " "+call.needs+" ") {
				if status >= 300 {
					t.Errorf("%s, %s: answered %d %s, want allowed", c.name, call.name, status, code)
				}
			} else if status != http.StatusForbidden && status != http.StatusUnauthorized {
				t.Errorf("%s, %s: answered %d %s, want refused", c.name, call.name, status, code)
			}
		}
	}
}

// TestExtensionEndpointsAccountIsolation: account alpha's credentials
// reach none of account beta's extension endpoints (its feed first),
// path-style or host-style.
func TestExtensionEndpointsAccountIsolation(t *testing.T) {
	open := func() *ts.DB {
		db, err := ts.OpenInMemory(&ts.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		tb, err := db.CreateTable(context.Background(), "feed")
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.EnableChangeFeed(context.Background(), ts.ChangeFeedOptions{}); err != nil {
			t.Fatal(err)
		}
		return db
	}
	keyB := "QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQg=="
	h, err := server.NewAccounts([]server.Account{{Name: "alpha", Keys: []string{server.DevKey}, DB: open()},
		{Name: "beta", Keys: []string{keyB}, DB: open()}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	defer hs.Close()
	cred, err := aztables.NewSharedKeyCredential("alpha", server.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	alpha, err := aztables.NewServiceClientWithSharedKey(hs.URL+"/alpha", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	start, end := time.Now().UTC().Add(-time.Minute), time.Now().UTC().Add(time.Hour)
	su, err := alpha.GetAccountSASURL(aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
		aztables.AccountSASPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true}, start, end)
	if err != nil {
		t.Fatal(err)
	}
	tu, err := alpha.NewClient("feed").GetTableSASURL(aztables.SASPermissions{Read: true, Add: true, Update: true, Delete: true}, start, end)
	if err != nil {
		t.Fatal(err)
	}
	for _, sas := range []string{su, tu} {
		pu, _ := url.Parse(sas)
		// Alpha's own feed opens with it.
		if status, code := sendExt(t, http.DefaultClient, hs.URL+"/alpha", extCalls[1], pu.RawQuery, nil); status != 200 {
			t.Fatalf("alpha's SAS on alpha's feed: %d %s", status, code)
		}
		for _, call := range extCalls {
			if call.needs == "caps" {
				continue
			}
			if status, code := sendExt(t, http.DefaultClient, hs.URL+"/beta", call, pu.RawQuery, nil); status != http.StatusForbidden {
				t.Errorf("alpha's SAS, beta's %s: %d %s", call.name, status, code)
			}
		}
	}
}
