package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/tablestore/tablestore"
)

// extRoute is one extension endpoint as the security matrix calls it:
// read (opRead), admin (account-level write), keyspace (delete on the
// table) or caps (any valid credential).
type extRoute struct {
	name, method, path, body, class string
}

var extRoutes = []extRoute{
	{"capabilities", "GET", "/$tablestore", "", "caps"},
	{"read changes", "GET", "/$tablestore/tables/things/changes?from=beginning", "", "read"},
	{"long-poll changes", "GET", "/$tablestore/tables/things/changes?from=now&wait=0.01", "", "read"},
	{"follow changes (SSE)", "GET", "/$tablestore/tables/things/changes?from=beginning&sse", "", "read"},
	{"get feed settings", "GET", "/$tablestore/tables/things/changefeed", "", "read"},
	{"list indexes", "GET", "/$tablestore/tables/things/indexes", "", "read"},
	{"get index", "GET", "/$tablestore/tables/things/indexes/ByN", "", "read"},
	{"get TTL", "GET", "/$tablestore/tables/things/ttl", "", "read"},
	{"stats", "GET", "/$tablestore/tables/things/stats", "", "read"},
	{"index-order query", "GET", "/$tablestore/tables/things/query?index=ByN", "", "read"},
	{"reverse query", "GET", "/$tablestore/tables/things/query?reverse=true", "", "read"},
	{"segments", "GET", "/$tablestore/tables/things/segments?n=2", "", "read"},
	{"enable feed", "PUT", "/$tablestore/tables/things/changefeed", `{"retentionSeconds":60}`, "admin"},
	{"disable feed", "DELETE", "/$tablestore/tables/things/changefeed", "", "admin"},
	{"create index", "PUT", "/$tablestore/tables/things/indexes/ByM", `{"properties":["M"]}`, "admin"},
	{"drop index", "DELETE", "/$tablestore/tables/things/indexes/ByN", "", "admin"},
	{"set TTL", "PUT", "/$tablestore/tables/things/ttl", `{"defaultSeconds":1}`, "admin"},
	{"delete range", "DELETE", "/$tablestore/tables/things/partition?pk=p", "", "keyspace"},
}

// keyRangeRoutes are the routes a SAS limited to a key range may use;
// the capability document lists them (TestExtCapabilitiesKeyRange).
var keyRangeRoutes = map[string]bool{"get TTL": true, "index-order query": true, "reverse query": true}

// extFixture is a store with table things: a feed (new images), an
// index ByN, one entity; fingerprint summarizes what the admin and
// keyspace routes change.
func extFixture(t *testing.T) *tablestore.DB {
	t.Helper()
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tb, err := db.CreateTable(ctx, "things")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{Images: tablestore.ImagesNew}); err != nil {
		t.Fatal(err)
	}
	if err := tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "1", Properties: map[string]any{"N": int32(1)}}); err != nil {
		t.Fatal(err)
	}
	// Outside the key range (a to q) of the matrix's ranged SAS.
	if err := tb.Insert(ctx, &tablestore.Entity{PartitionKey: "z", RowKey: "9", Properties: map[string]any{"N": int32(9)}}); err != nil {
		t.Fatal(err)
	}
	if err := tb.CreateIndex(ctx, tablestore.IndexSpec{Name: "ByN", Properties: []string{"N"}}); err != nil {
		t.Fatal(err)
	}
	return db
}

func fingerprint(t *testing.T, db *tablestore.DB) string {
	t.Helper()
	ctx := context.Background()
	tb := db.Table("things")
	st, err := tb.ChangeFeed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ixs, _ := tb.Indexes(ctx)
	var names []string
	for _, ix := range ixs {
		names = append(names, ix.Name)
	}
	ttl, _ := tb.TTL(ctx)
	_, getErr := tb.Get(ctx, "p", "1", nil)
	return fmt.Sprintf("feed=%v/%v indexes=%v ttl=%v entity=%v", st.Enabled, st.Options.Retention, names, ttl, getErr == nil)
}

// TestExtAuthorizationMatrix sends every extension endpoint with every
// kind of credential and checks each is answered as the data it
// touches is authorized: the capability document, which holds no data,
// needs no credential; reads (the feed included) need read on the
// table, changes to indexes, TTL and the feed's settings need
// account-level write, range deletions need delete on the whole table;
// a refused request changes nothing.
func TestExtAuthorizationMatrix(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	bearerTok := func(role string) string {
		now := time.Now()
		c := jwt.MapClaims{"iss": testIssuer, "aud": StorageAudience, "exp": now.Add(time.Hour).Unix(),
			"nbf": now.Add(-time.Minute).Unix(), "oid": "user-1", "roles": []string{role}}
		tk := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
		tk.Header["kid"] = "rsa1"
		s, err := tk.SignedString(rk)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	bearerCred := func(role string) credential {
		tok := bearerTok(role)
		return credential{name: "bearer " + role, sign: func(r *http.Request) {
			r.TLS = &tls.ConnectionState{}
			r.Header.Set("Authorization", "Bearer "+tok)
		}}
	}
	rangedSAS := credential{name: "service SAS sp=raud with a key range", sign: func(r *http.Request) {
		addQuery(r, serviceSAS(DevAccount, DevKey, "things", "raud", "a", "q"))
	}}
	otherKey := "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="
	wrongKey := credential{name: "wrong key", sign: func(r *http.Request) { signAs(r, DevAccount, otherKey) }}
	otherTableSAS := credential{name: "service SAS sp=raud for another table", sign: func(r *http.Request) {
		addQuery(r, serviceSAS(DevAccount, DevKey, "other", "raud", "", ""))
	}}
	accountSASObjects := credential{name: "account SAS sp=rwdlacu srt=o", sign: func(r *http.Request) {
		addQuery(r, signAccountSAS("rwdlacu", "o", "2019-02-02"))
	}}
	// allowed lists the route classes each credential may use.
	cases := []struct {
		cred    credential
		allowed string
	}{
		{sharedKeyCred(false), "caps read admin keyspace"},
		{sharedKeyCred(true), "caps read admin keyspace"},
		{credential{name: "none"}, "caps"},
		{wrongKey, "caps"},
		{serviceSASCred("r"), "caps read"},
		{serviceSASCred("raud"), "caps read keyspace"},
		{serviceSASCred("aud"), "caps keyspace"},
		{serviceSASCred("a"), "caps"},
		{otherTableSAS, "caps"},
		{rangedSAS, "caps ranged"},
		{accountSASCred("r"), "caps read"},
		{accountSASCred("rl"), "caps read"},
		{accountSASCred("w"), "caps admin"},
		{accountSASCred("d"), "caps keyspace"},
		{accountSASCred("rwdlacu"), "caps read admin keyspace"},
		{accountSASObjects, "caps read keyspace"},
		{bearerCred(RoleTableDataReader), "caps read"},
		{bearerCred(RoleTableDataContributor), "caps read admin keyspace"},
	}
	for _, c := range cases {
		for _, rt := range extRoutes {
			t.Run(c.cred.name+"/"+rt.name, func(t *testing.T) {
				db := extFixture(t)
				h, err := New(db, &Options{Bearer: &Bearer{JWKS: testJWKS(rk, ek), Issuers: []string{testIssuer}}})
				if err != nil {
					t.Fatal(err)
				}
				before := fingerprint(t, db)
				path, sse := strings.CutSuffix(rt.path, "&sse")
				r := httptest.NewRequest(rt.method, "http://127.0.0.1:10002/"+DevAccount+path, strings.NewReader(rt.body))
				r.RequestURI = ""
				if rt.body != "" {
					r.Header.Set("Content-Type", "application/json")
				}
				if sse {
					r.Header.Set("Accept", "text/event-stream")
					ctx, cancel := context.WithCancel(r.Context())
					defer cancel()
					r = r.WithContext(ctx)
					// The stream would follow forever: the first write
					// ends it.
					w := &cancelOnWrite{ResponseRecorder: httptest.NewRecorder(), cancel: cancel}
					if c.cred.sign != nil {
						c.cred.sign(r)
					}
					h.ServeHTTP(w, r)
					checkExtAnswer(t, c.allowed, rt, w.ResponseRecorder, db, before)
					return
				}
				r.Header.Set("x-ms-version", "2019-02-02")
				if c.cred.sign != nil {
					c.cred.sign(r)
				}
				w := serve(h, r)
				checkExtAnswer(t, c.allowed, rt, w, db, before)
			})
		}
	}
	t.Run("streams end with their credential", testLiveCredentials)
}

// cancelOnWrite cancels the request once the handler writes.
type cancelOnWrite struct {
	*httptest.ResponseRecorder
	cancel func()
}

func (c *cancelOnWrite) Write(b []byte) (int, error) {
	defer c.cancel()
	return c.ResponseRecorder.Write(b)
}

func checkExtAnswer(t *testing.T, allowed string, rt extRoute, w *httptest.ResponseRecorder, db *tablestore.DB, before string) {
	t.Helper()
	classes := strings.Fields(allowed)
	ok := false
	for _, c := range classes {
		// ranged: a SAS limited to a key range reads what answers for
		// its range alone, or holds no data; never what reaches the
		// whole table (the feed, sizes, split keys, index counts).
		ok = ok || c == rt.class || c == "ranged" && keyRangeRoutes[rt.name]
	}
	if ok {
		if w.Code >= 300 {
			t.Fatalf("allowed, answered %d %s", w.Code, w.Body)
		}
		if slices.Contains(classes, "ranged") && strings.Contains(w.Body.String(), `"z"`) {
			t.Fatalf("a key-range SAS read a key outside its range: %s", w.Body)
		}
		return
	}
	if slices.Contains(classes, "ranged") && rt.class == "read" && !strings.Contains(w.Body.String(), "AuthorizationPermissionMismatch") {
		t.Fatalf("a key-range SAS refused without AuthorizationPermissionMismatch: %s", w.Body)
	}
	if w.Code != http.StatusForbidden {
		t.Fatalf("refused expected, answered %d %s", w.Code, w.Body)
	}
	if !strings.Contains(w.Body.String(), `"odata.error"`) {
		t.Fatalf("refusal without Azure's error body: %s", w.Body)
	}
	if after := fingerprint(t, db); after != before {
		t.Fatalf("a refused request changed the store: %s, then %s", before, after)
	}
}

// TestExtAccountIsolation checks that account A's credentials (key,
// account SAS, service SAS) reach none of account B's extension
// endpoints, its feed first.
func TestExtAccountIsolation(t *testing.T) {
	keyA := DevKey
	keyB := "QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQg=="
	dbA, dbB := extFixture(t), extFixture(t)
	h, err := NewAccounts([]Account{{Name: "alpha", Keys: []string{keyA}, DB: dbA}, {Name: "beta", Keys: []string{keyB}, DB: dbB}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	creds := map[string]func(r *http.Request){
		"A's key":         func(r *http.Request) { signAs(r, "alpha", keyA) },
		"A's key as beta": func(r *http.Request) { signAs(r, "beta", keyA) },
		"A's account SAS": func(r *http.Request) { addQuery(r, accountSAS("alpha", keyA)) },
		"A's service SAS": func(r *http.Request) { addQuery(r, serviceSAS("alpha", keyA, "things", "raud", "", "")) },
	}
	before := fingerprint(t, dbB)
	for name, sign := range creds {
		for _, rt := range extRoutes {
			if rt.class == "caps" {
				continue // needs no credential
			}
			path, _ := strings.CutSuffix(rt.path, "&sse")
			for _, target := range []string{"http://127.0.0.1:10002/beta" + path, "http://beta.table.example" + path} {
				r := httptest.NewRequest(rt.method, target, strings.NewReader(rt.body))
				r.RequestURI = ""
				r.Header.Set("x-ms-version", "2019-02-02")
				sign(r)
				w := serve(h, r)
				if w.Code != http.StatusForbidden {
					t.Fatalf("%s, %s %s: %d %s", name, rt.method, target, w.Code, w.Body)
				}
			}
		}
	}
	if after := fingerprint(t, dbB); after != before {
		t.Fatalf("account B changed: %s, then %s", before, after)
	}
	// A's key does reach A's feed.
	r := httptest.NewRequest("GET", "http://127.0.0.1:10002/alpha/$tablestore/tables/things/changes", nil)
	r.RequestURI = ""
	signAs(r, "alpha", keyA)
	if w := serve(h, r); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"op":"insert"`) {
		t.Fatalf("A's own feed: %d %s", w.Code, w.Body)
	}
}

// TestExtCapabilitiesKeyRange checks the capability document lists
// the endpoints a key-range SAS may use, as the matrix allows them.
func TestExtCapabilitiesKeyRange(t *testing.T) {
	h, err := New(extFixture(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "http://127.0.0.1:10002/"+DevAccount+"/$tablestore", nil)
	w := serve(h, r)
	var c Capabilities
	if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil || w.Code != 200 {
		t.Fatalf("%d %s: %v", w.Code, w.Body, err)
	}
	byFeature := map[string]string{"indexQuery": "index-order query", "reverseQuery": "reverse query", "ttl": "get TTL"}
	var listed []string
	for _, f := range c.KeyRangeSAS {
		if !slices.Contains(c.Features, f) {
			t.Fatalf("keyRangeSAS names %q, not a feature", f)
		}
		listed = append(listed, byFeature[f])
	}
	for name := range keyRangeRoutes {
		if !slices.Contains(listed, name) {
			t.Fatalf("%s is allowed to a key-range SAS but not listed: %v", name, c.KeyRangeSAS)
		}
	}
	if len(listed) != len(keyRangeRoutes) {
		t.Fatalf("keyRangeSAS %v, the matrix allows %v", c.KeyRangeSAS, keyRangeRoutes)
	}
}
