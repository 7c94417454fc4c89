package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
)

var (
	alphaKey = base64.StdEncoding.EncodeToString([]byte("alpha's own key, 32 bytes long.."))
	betaKey  = base64.StdEncoding.EncodeToString([]byte("beta's own key, also 32 bytes..."))
)

func hmacB64(key, s string) string {
	k, _ := base64.StdEncoding.DecodeString(key)
	m := hmac.New(sha256.New, k)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// signLite signs r with SharedKeyLite as account (the name in the header
// and in the canonical resource) with key.
func signAs(r *http.Request, account, key string) {
	date := time.Now().UTC().Format(http.TimeFormat)
	r.Header.Set("x-ms-date", date)
	res := "/" + account + r.URL.EscapedPath()
	if c := r.URL.Query().Get("comp"); c != "" {
		res += "?comp=" + c
	}
	r.Header.Set("Authorization", "SharedKeyLite "+account+":"+hmacB64(key, date+"\n"+res))
}

// serviceSAS returns a service SAS query for table signed as account
// with key, with optional key range bounds (spk, epk).
func serviceSAS(account, key, table, perms, spk, epk string) string {
	se := time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04:05Z")
	toSign := strings.Join([]string{perms, "", se, "/table/" + account + "/" + strings.ToLower(table), "", "", "", "2019-02-02", spk, "", epk, ""}, "\n")
	v := url.Values{"sv": {"2019-02-02"}, "tn": {table}, "sp": {perms}, "se": {se}, "sig": {hmacB64(key, toSign)}}
	if spk != "" {
		v.Set("spk", spk)
	}
	if epk != "" {
		v.Set("epk", epk)
	}
	return v.Encode()
}

// accountSAS returns an account SAS query signed as account with key.
func accountSAS(account, key string) string {
	se := time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04:05Z")
	toSign := strings.Join([]string{account, "rwdlacu", "t", "sco", "", se, "", "", "2019-02-02"}, "\n") + "\n"
	return url.Values{"sv": {"2019-02-02"}, "ss": {"t"}, "srt": {"sco"}, "sp": {"rwdlacu"}, "se": {se}, "sig": {hmacB64(key, toSign)}}.Encode()
}

// seedAccount gives a store the same shape in both accounts: a table
// "shared" holding a marked entity, an access policy and CORS rules.
func seedAccount(t *testing.T, db *tablestore.DB, marker string) {
	ctx := context.Background()
	tb, err := db.CreateTable(ctx, "shared")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateTable(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	if err := tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "r1", Properties: map[string]any{"Secret": marker}}); err != nil {
		t.Fatal(err)
	}
	if err := root.SetAccessPolicies(tb, ctx, []driver.AccessPolicy{{ID: "pol", Permission: "r", Expiry: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	if err := root.SetServiceProperties(db, ctx, []byte(`<StorageServiceProperties><Cors/></StorageServiceProperties>`)); err != nil {
		t.Fatal(err)
	}
}

// snapshot is everything a store holds that a request could change.
func snapshot(t *testing.T, db *tablestore.DB) string {
	ctx := context.Background()
	var b strings.Builder
	page, err := db.ListTables(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := page.Names
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "table %s\n", n)
		for e, err := range db.Table(n).Query(ctx, tablestore.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "  %s/%s %v %s\n", e.PartitionKey, e.RowKey, e.Properties, e.ETag)
		}
		pols, _ := root.AccessPolicies(db.Table(n), ctx)
		fmt.Fprintf(&b, "  acl %v\n", pols)
	}
	props, _ := root.ServiceProperties(db, ctx)
	fmt.Fprintf(&b, "props %s\n", props)
	return b.String()
}

// TestAccountIsolation signs every kind of request for the wrong
// account, table or key range, on every route and addressing style, and
// requires each to be refused with no byte of the other account's data
// in any answer and no change to its store.
func TestAccountIsolation(t *testing.T) {
	open := func() *tablestore.DB {
		db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	alphaDB, betaDB := open(), open()
	seedAccount(t, alphaDB, "ALPHA-SECRET")
	seedAccount(t, betaDB, "BETA-SECRET")
	h, err := NewAccounts([]Account{{Name: "alpha", Keys: []string{alphaKey}, DB: alphaDB}, {Name: "beta", Keys: []string{betaKey}, DB: betaDB}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := snapshot(t, betaDB)

	batch := func(prefix string) string {
		return "--batch_1\ncontent-type: multipart/mixed; boundary=changeset_1\n\n" +
			"--changeset_1\ncontent-type: application/http\ncontent-transfer-encoding: binary\n\n" +
			"POST http://127.0.0.1:10002" + prefix + "shared HTTP/1.1\ncontent-type: application/json\n\n" +
			`{"PartitionKey":"p","RowKey":"batched"}` + "\n" +
			"--changeset_1\ncontent-type: application/http\ncontent-transfer-encoding: binary\n\n" +
			"DELETE http://127.0.0.1:10002" + prefix + "shared(PartitionKey='p',RowKey='r1') HTTP/1.1\nif-match: *\n\n\n" +
			"--changeset_1--\n--batch_1--\n"
	}
	type op struct {
		method, path, body string
		header             map[string]string
	}
	ops := func(prefix string) []op {
		return []op{
			{"GET", prefix + "Tables", "", nil},
			{"POST", prefix + "Tables", `{"TableName":"intruder"}`, nil},
			{"DELETE", prefix + "Tables('shared')", "", nil},
			{"GET", prefix + "shared(PartitionKey='p',RowKey='r1')", "", nil},
			{"GET", prefix + "shared()", "", nil},
			{"GET", prefix + "shared()?$filter=PartitionKey%20eq%20'p'", "", nil},
			{"POST", prefix + "shared", `{"PartitionKey":"p","RowKey":"intruder"}`, nil},
			{"PUT", prefix + "shared(PartitionKey='p',RowKey='r1')", `{"Secret":"overwritten"}`, nil},
			{"MERGE", prefix + "shared(PartitionKey='p',RowKey='r1')", `{"Secret":"merged"}`, map[string]string{"If-Match": "*"}},
			{"PATCH", prefix + "shared(PartitionKey='p',RowKey='new')", `{"X":1}`, nil},
			{"DELETE", prefix + "shared(PartitionKey='p',RowKey='r1')", "", map[string]string{"If-Match": "*"}},
			{"POST", prefix + "shared(PartitionKey='p',RowKey='r1')", "", map[string]string{"X-HTTP-Method": "DELETE", "If-Match": "*"}},
			{"GET", prefix + "shared?comp=acl", "", nil},
			{"PUT", prefix + "shared?comp=acl", `<SignedIdentifiers/>`, nil},
			{"GET", prefix + "?restype=service&comp=properties", "", nil},
			{"PUT", prefix + "?restype=service&comp=properties", `<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>0</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`, nil},
			{"POST", prefix + "$batch", batch(prefix), map[string]string{"Content-Type": "multipart/mixed; boundary=batch_1"}},
		}
	}
	type attack struct {
		name   string
		host   string // "" for path-style on 127.0.0.1
		prefix string // the path before the resource
		auth   func(r *http.Request)
		query  string
	}
	attacks := []attack{
		{name: "alpha's name and key on beta's path", prefix: "/beta/", auth: func(r *http.Request) { signAs(r, "alpha", alphaKey) }},
		{name: "beta's name, alpha's key", prefix: "/beta/", auth: func(r *http.Request) { signAs(r, "beta", alphaKey) }},
		{name: "beta's secondary, alpha's key", prefix: "/beta-secondary/", auth: func(r *http.Request) { signAs(r, "beta", alphaKey) }},
		{name: "host-style beta, alpha's key", host: "beta.table.local", prefix: "/", auth: func(r *http.Request) { signAs(r, "beta", alphaKey) }},
		{name: "host-style beta, alpha's name", host: "beta.table.local", prefix: "/", auth: func(r *http.Request) { signAs(r, "alpha", alphaKey) }},
		{name: "alpha's path on beta's host", host: "beta.table.local", prefix: "/alpha/", auth: func(r *http.Request) { signAs(r, "beta", betaKey) }},
		{name: "unknown account, beta's key", prefix: "/gamma/", auth: func(r *http.Request) { signAs(r, "gamma", betaKey) }},
		{name: "alpha's service SAS on beta", prefix: "/beta/", query: serviceSAS("alpha", alphaKey, "shared", "raud", "", "")},
		{name: "beta-named SAS signed by alpha", prefix: "/beta/", query: serviceSAS("beta", alphaKey, "shared", "raud", "", "")},
		{name: "alpha's account SAS on beta", prefix: "/beta/", query: accountSAS("alpha", alphaKey)},
		{name: "beta-named account SAS signed by alpha", prefix: "/beta/", query: accountSAS("beta", alphaKey)},
		{name: "beta's SAS for another table", prefix: "/beta/", query: serviceSAS("beta", betaKey, "other", "raud", "", "")},
		{name: "beta's SAS for another key range", prefix: "/beta/", query: serviceSAS("beta", betaKey, "shared", "raud", "q", "z")},
		{name: "no credentials", prefix: "/beta/"},
	}
	client := &http.Client{}
	ts := httptest.NewServer(h)
	defer ts.Close()
	n := 0
	for _, a := range attacks {
		for _, o := range ops(a.prefix) {
			u := ts.URL + o.path
			if a.query != "" {
				if strings.Contains(u, "?") {
					u += "&" + a.query
				} else {
					u += "?" + a.query
				}
			}
			req, err := http.NewRequest(o.method, u, strings.NewReader(o.body))
			if err != nil {
				t.Fatal(err)
			}
			if a.host != "" {
				req.Host = a.host
			}
			req.Header.Set("Content-Type", "application/json")
			for k, v := range o.header {
				req.Header.Set(k, v)
			}
			if a.auth != nil {
				a.auth(req)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			n++
			if strings.Contains(string(body), "BETA-SECRET") || strings.Contains(string(body), "ALPHA-SECRET") {
				t.Errorf("%s: %s %s read data: %s", a.name, o.method, o.path, body)
			}
			ok := resp.StatusCode == 403 || resp.StatusCode == 400 || resp.StatusCode == 404
			// A query under a foreign key range may answer 200 with no
			// entity (the range is and-ed into the filter).
			if resp.StatusCode == 200 && a.name == "beta's SAS for another key range" && strings.Contains(o.path, "shared()") {
				ok = !strings.Contains(string(body), `"RowKey"`)
			}
			// A batch refuses a sub-request inside its 202 answer.
			if resp.StatusCode == 202 && strings.HasSuffix(o.path, "$batch") {
				ok = strings.Contains(string(body), "HTTP/1.1 403")
			}
			if !ok {
				t.Errorf("%s: %s %s answered %d: %s", a.name, o.method, o.path, resp.StatusCode, body)
			}
		}
	}
	if after := snapshot(t, betaDB); after != before {
		t.Fatalf("beta's store changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if s := snapshot(t, alphaDB); strings.Contains(s, "intruder") || strings.Contains(s, "batched") || !strings.Contains(s, "ALPHA-SECRET") {
		t.Fatalf("alpha's store changed:\n%s", s)
	}
	t.Logf("%d refused requests", n)

	// The rightful owner is served, on both addressing styles and the
	// secondary endpoint, which is read-only.
	get := func(host, path, account, key string) (int, string) {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		if host != "" {
			req.Host = host
		}
		signAs(req, account, key)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("", "/beta/shared(PartitionKey='p',RowKey='r1')", "beta", betaKey); code != 200 || !strings.Contains(body, "BETA-SECRET") {
		t.Fatalf("beta path-style: %d %s", code, body)
	}
	if code, body := get("beta.table.local", "/shared(PartitionKey='p',RowKey='r1')", "beta", betaKey); code != 200 || !strings.Contains(body, "BETA-SECRET") {
		t.Fatalf("beta host-style: %d %s", code, body)
	}
	if code, body := get("", "/alpha/shared(PartitionKey='p',RowKey='r1')", "alpha", alphaKey); code != 200 || !strings.Contains(body, "ALPHA-SECRET") {
		t.Fatalf("alpha: %d %s", code, body)
	}
	if code, body := get("", "/beta-secondary/?restype=service&comp=stats", "beta", betaKey); code != 200 || !strings.Contains(body, "<Status>live</Status>") {
		t.Fatalf("secondary stats: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", ts.URL+"/beta-secondary/Tables", strings.NewReader(`{"TableName":"fromsecondary"}`))
	req.Header.Set("Content-Type", "application/json")
	signAs(req, "beta", betaKey)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("x-ms-error-code") != "AuthorizationFailure" {
		t.Fatalf("write on the secondary: %d", resp.StatusCode)
	}
}

func TestNewAccountsErrors(t *testing.T) {
	db, _ := tablestore.OpenInMemory(nil)
	defer db.Close()
	for _, accts := range [][]Account{
		nil,
		{{Name: "", DB: db}},
		{{Name: "same", DB: db}, {Name: "same", DB: db}},
		{{Name: "Bad_Name", DB: db}},
		{{Name: "nodb"}},
	} {
		if _, err := NewAccounts(accts, nil); err == nil {
			t.Errorf("%+v accepted", accts)
		}
	}
}
