package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
)

// FuzzResourcePath: any path routes or fails with a 4xx, and key
// literals that parse print back to the same keys.
func FuzzResourcePath(f *testing.F) {
	for _, s := range []string{
		"Tables", "Tables('t')", "t()", "t(PartitionKey='a',RowKey='b')", "t(PartitionKey=%27a%27%27b%27,%20RowKey='')",
		"$batch", "t(RowKey='x',PartitionKey='y')", "t(PartitionKey='a'", "%zz", "a/b", "t(PartitionKey='a',RowKey='b''')",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		res, err := parseResource(resource{query: url.Values{}}, rest)
		if err != nil {
			if ae := toAPIError(err); ae.status < 400 || ae.status >= 500 {
				t.Fatalf("%q: status %d", rest, ae.status)
			}
			return
		}
		if res.kind != kindEntity {
			return
		}
		args := "PartitionKey=" + keyLiteral(res.pk) + ",RowKey=" + keyLiteral(res.rk)
		pk, rk, err := parseKeyArgs(args)
		if err != nil || pk != res.pk || rk != res.rk {
			t.Fatalf("%q: keys %q %q do not round-trip: %q %q %v", rest, res.pk, res.rk, pk, rk, err)
		}
	})
}

// fuzzHandler is an anonymous handler over a store with one entity.
func fuzzHandler(t testing.TB) (http.Handler, *tablestore.DB) { return oneEntityHandler(t, nil) }

// oneEntityHandler is an anonymous handler over a store whose table fzz
// holds one entity; clock, when not nil, is the store's and the
// handler's clock.
func oneEntityHandler(t testing.TB, clock func() time.Time) (http.Handler, *tablestore.DB) {
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(db, &Options{Anonymous: true, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := db.CreateTable(ctx, "fzz"); err != nil {
		t.Fatal(err)
	}
	if err := db.Table("fzz").Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "keep", Properties: map[string]any{"V": int32(1)}}); err != nil {
		t.Fatal(err)
	}
	return h, db
}

// checkKept fails if the seeded entity changed.
func checkKept(t *testing.T, db *tablestore.DB, etag tablestore.ETag) {
	e, err := db.Table("fzz").Get(context.Background(), "p", "keep", nil)
	if err != nil || e.ETag != etag {
		t.Fatalf("the stored entity changed: %v %v", e, err)
	}
}

// FuzzBatchBody: any multipart body is answered without a 5xx, and a
// refused batch changes nothing.
func FuzzBatchBody(f *testing.F) {
	seed := "--b\r\nContent-Type: multipart/mixed; boundary=c\r\n\r\n--c\r\nContent-Type: application/http\r\n\r\n" +
		"POST http://h/devstoreaccount1/fzz HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{\"PartitionKey\":\"p\",\"RowKey\":\"n\"}\r\n" +
		"--c\r\nContent-Type: application/http\r\n\r\nDELETE http://h/devstoreaccount1/fzz(PartitionKey='p',RowKey='keep') HTTP/1.1\r\nIf-Match: *\r\n\r\n" +
		"--c--\r\n--b--\r\n"
	f.Add(seed)
	f.Add(strings.ReplaceAll(seed, "\r\n", "\n"))
	f.Add(strings.Replace(seed, "Content-Type: application/http\r\n", "Content-Type: application/http\r\nContent-ID: 1\r\n", 1))
	f.Add("--b\n\n--b--")
	f.Add("--b\r\nContent-Type: application/http\r\n\r\nGET http://h/devstoreaccount1/fzz(PartitionKey='p',RowKey='keep') HTTP/1.1\r\nAccept: application/json;odata=nometadata\r\n\r\n--b--\r\n")
	f.Add("--b\nContent-Type: application/http\n\nGET /devstoreaccount1/fzz(PartitionKey='p',RowKey='none')?$select=V HTTP/1.1\n\n--b--\n")
	f.Add("preamble\n--b\nContent-Type: multipart/mixed; boundary=c\n\n--c\n\nMERGE /fz(PartitionKey='p',RowKey='x') HTTP/1.1\n\n{}\n--c--\n--b--\n")
	h, db := fuzzHandler(f)
	defer db.Close()
	e, _ := db.Table("fzz").Get(context.Background(), "p", "keep", nil)
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/devstoreaccount1/$batch", strings.NewReader(body))
		r.Header.Set("Content-Type", "multipart/mixed; boundary=b")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		out := w.Body.String()
		if w.Code == http.StatusAccepted && !strings.HasPrefix(out, "--batchresponse_") {
			t.Fatalf("202 without the batch envelope: %q", out)
		}
		if w.Code == http.StatusAccepted && strings.Contains(out, "\"odata.error\"") {
			// A failed batch: the seeded entity must be as it was.
			checkKept(t, db, e.ETag)
		}
		if w.Code != http.StatusAccepted || strings.Contains(out, "odata.error") {
			return
		}
		// A successful batch may have deleted or rewritten the entity:
		// put it back for the next input.
		e2 := &tablestore.Entity{PartitionKey: "p", RowKey: "keep", Properties: map[string]any{"V": int32(1)}}
		_ = db.Table("fzz").Upsert(context.Background(), e2, tablestore.Replace)
		e = e2
	})
}

// FuzzEntityBody: any JSON body posted, merged or put is answered without
// a 5xx; a refused write changes nothing.
func FuzzEntityBody(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"p","RowKey":"r","A":1}`,
		`{"PartitionKey":"p","RowKey":"keep","X@odata.type":"Edm.Int64","X":"1"}`,
		`{"A":1.5e400}`, `[]`, `null`, `{"PartitionKey":"p","RowKey":"r","T@odata.type":"Edm.DateTime","T":"0000-01-01T00:00:00Z"}`,
		`{"odata.etag":"x","Timestamp":"bad","PartitionKey":"p","RowKey":"keep"}`,
	} {
		f.Add(s, uint8(0))
	}
	h, db := fuzzHandler(f)
	defer db.Close()
	f.Fuzz(func(t *testing.T, body string, verb uint8) {
		e, err := db.Table("fzz").Get(context.Background(), "p", "keep", nil)
		if err != nil {
			t.Fatal(err)
		}
		method, target := "POST", "/devstoreaccount1/fzz"
		switch verb % 3 {
		case 1:
			method, target = "MERGE", "/devstoreaccount1/fzz(PartitionKey='p',RowKey='keep')"
		case 2:
			method, target = "PUT", "/devstoreaccount1/fzz(PartitionKey='p',RowKey='keep')"
		}
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("If-Match", string(e.ETag))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code >= 500 {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if w.Code >= 400 {
			checkKept(t, db, e.ETag)
		}
	})
}

// FuzzSASQuery: any query string on a signed-looking request is refused
// with a 4xx (the fuzzer cannot forge the HMAC), never a panic or 5xx.
func FuzzSASQuery(f *testing.F) {
	for _, s := range []string{
		"sv=2019-02-02&tn=fzz&sp=r&se=2099-01-01&sig=AAAA",
		"sv=2019-02-02&ss=t&srt=sco&sp=rwdlacup&se=2099-01-01T00:00Z&sig=%2B%2F",
		"sv=2019-02-02&tn=fzz&si=pol&spk=a&srk=b&epk=c&erk=d&sig=x",
		"sv=x&sip=1.2.3.4-1.2.3.5&spr=https&sig=x", "sig=&sv=", "sv=1&tn=fzz&sp=dr&se=2099-01-01&sig=x",
	} {
		f.Add(s)
	}
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		f.Fatal(err)
	}
	defer db.Close()
	hd, err := New(db, nil)
	if err != nil {
		f.Fatal(err)
	}
	h := hd.(*handler)
	if _, err := db.CreateTable(context.Background(), "fzz"); err != nil {
		f.Fatal(err)
	}
	if err := root.SetAccessPolicies(db.Table("fzz"), context.Background(), []driver.AccessPolicy{{ID: "pol", Expiry: time.Now().Add(time.Hour), Permission: "r"}}); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, query string) {
		r := httptest.NewRequest("GET", "/devstoreaccount1/fzz()", nil)
		r.URL.RawQuery = query
		r.RequestURI = "/devstoreaccount1/fzz()?" + query
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code < 400 || w.Code >= 500 {
			t.Fatalf("query %q: status %d: %s", query, w.Code, w.Body)
		}
	})
}

// FuzzXMLBody: any Set Table ACL or Set Service Properties body is
// answered without a 5xx, and a refused one changes nothing.
func FuzzXMLBody(f *testing.F) {
	for _, s := range []string{
		`<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>2024-01-01T00:00:00Z</Start><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>`,
		`<SignedIdentifiers><Foo/></SignedIdentifiers>`,
		`<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging></StorageServiceProperties>`,
		`<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><MaxAgeInSeconds>1</MaxAgeInSeconds><ExposedHeaders/><AllowedHeaders/></CorsRule></Cors></StorageServiceProperties>`,
		`<!DOCTYPE x><x/>`, `<a><b>`, ``,
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	h, db := fuzzHandler(f)
	defer db.Close()
	ctx := context.Background()
	keep := []driver.AccessPolicy{{ID: "keep", Permission: "r"}}
	f.Fuzz(func(t *testing.T, body string, service bool) {
		if err := root.SetAccessPolicies(db.Table("fzz"), ctx, keep); err != nil {
			t.Fatal(err)
		}
		target := "/devstoreaccount1/fzz?comp=acl"
		if service {
			target = "/devstoreaccount1/?restype=service&comp=properties"
		}
		get := func() string {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
			return w.Body.String()
		}
		before := get()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("PUT", target, strings.NewReader(body)))
		if w.Code >= 500 {
			t.Fatalf("status %d: %s", w.Code, w.Body)
		}
		if w.Code >= 400 {
			if after := get(); after != before && !service {
				t.Fatalf("refused, but the ACL changed:\n%s\n%s", before, after)
			} else if service && after != before {
				t.Fatalf("refused, but the properties changed")
			}
		}
	})
}

// FuzzSimpleURL: where splitSimpleURL reads a sub-request URL, url.Parse
// reads it too, to the same host, escaped path and query.
func FuzzSimpleURL(f *testing.F) {
	for _, s := range []string{
		"http://127.0.0.1:10002/devstoreaccount1/things",
		"https://acct.table.core.windows.net/things(PartitionKey='p',RowKey='r')",
		"/devstoreaccount1/things(PartitionKey='a%20b',RowKey='r')",
		"/things()?$filter=x", "//host/things", "http://u@h/x", "http://h:/x", "http://h:80",
		"http://[::1]:80/x", "/a b", "/a#b", "HTTP://h/x", "http://h/x:y@z!$&*+;=~",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		host, path, ok := splitSimpleURL(s)
		query := "" // the short path reads no query
		if !ok {
			return
		}
		u, err := url.Parse(s)
		if err != nil {
			t.Fatalf("%q: splitSimpleURL read it, url.Parse refused it: %v", s, err)
		}
		if host != u.Host || path != u.EscapedPath() || query != u.RawQuery {
			t.Fatalf("%q: splitSimpleURL %q %q %q, url.Parse %q %q %q", s, host, path, query, u.Host, u.EscapedPath(), u.RawQuery)
		}
	})
}

// TestSplitSimpleURL: the URLs the SDKs send take the short path; the
// rest go to url.Parse.
func TestSplitSimpleURL(t *testing.T) {
	for _, tc := range []struct {
		url, host, path string
		ok              bool
	}{
		{"http://127.0.0.1:10002/devstoreaccount1/things", "127.0.0.1:10002", "/devstoreaccount1/things", true},
		{"https://acct.table.core.windows.net/things(PartitionKey='p',RowKey='r')", "acct.table.core.windows.net", "/things(PartitionKey='p',RowKey='r')", true},
		{"/devstoreaccount1/things", "", "/devstoreaccount1/things", true},
		{"/things(PartitionKey='a%20b',RowKey='r')", "", "", false},
		{"/things?$filter=x", "", "", false},
		{"//host/things", "", "", false},
		{"http://u@h/x", "", "", false},
		{"http://h:/x", "", "", false},
		{"HTTP://h/x", "", "", false},
	} {
		host, path, ok := splitSimpleURL(tc.url)
		if ok != tc.ok || host != tc.host || path != tc.path {
			t.Errorf("%q: got %q %q %v, want %q %q %v", tc.url, host, path, ok, tc.host, tc.path, tc.ok)
		}
	}
}
