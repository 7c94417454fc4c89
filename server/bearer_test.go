package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/tablestore/tablestore"
)

const testIssuer = "https://sts.windows.net/00000000-0000-0000-0000-000000000001/"

// testJWKS returns a JWKS holding the RSA key and the EC key.
func testJWKS(rk *rsa.PrivateKey, ek *ecdsa.PrivateKey) []byte {
	b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	pt, err := ek.PublicKey.Bytes() // 0x04 | X | Y
	if err != nil {
		panic(err)
	}
	keys := []map[string]string{
		{"kty": "RSA", "kid": "rsa1", "use": "sig", "n": b64(rk.N.Bytes()), "e": b64(big.NewInt(int64(rk.E)).Bytes())},
		{"kty": "EC", "kid": "ec1", "crv": "P-256", "x": b64(pt[1:33]), "y": b64(pt[33:])},
	}
	out, _ := json.Marshal(map[string]any{"keys": keys})
	return out
}

func TestBearer(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	var logs logRecorder
	b := &Bearer{JWKS: testJWKS(rk, ek), Issuers: []string{testIssuer},
		Principals: map[string]string{"mapped-reader": RoleTableDataReader}}
	h, _ := newTestHandler(t, &Options{Bearer: b, Logger: slog.New(slog.NewJSONHandler(&logs, nil)),
		PublicEndpoints: []string{"https://tables.example:10002", "https://devstoreaccount1.table.example:443/"}})
	now := time.Now()
	claims := func(mod func(jwt.MapClaims)) jwt.MapClaims {
		c := jwt.MapClaims{"iss": testIssuer, "aud": StorageAudience, "exp": now.Add(time.Hour).Unix(),
			"nbf": now.Add(-time.Minute).Unix(), "oid": "user-1", "roles": []string{RoleTableDataContributor}}
		if mod != nil {
			mod(c)
		}
		return c
	}
	rsaTok := func(c jwt.MapClaims, key *rsa.PrivateKey, kid string) string {
		tk := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
		if kid != "" {
			tk.Header["kid"] = kid
		}
		s, err := tk.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	do := func(method, path, body, token string, secure bool) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		if secure {
			r.TLS = &tls.ConnectionState{}
		}
		r.Header.Set("Authorization", "Bearer "+token)
		return serve(h, r)
	}
	valid := rsaTok(claims(nil), rk, "rsa1")
	if w := do("POST", "/devstoreaccount1/Tables", `{"TableName":"bytoken"}`, valid, true); w.Code != 201 {
		t.Fatalf("contributor: %d %s", w.Code, w.Body)
	}
	ecNoKid, err := jwt.NewWithClaims(jwt.SigningMethodES256, claims(nil)).SignedString(ek)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{rsaTok(claims(nil), rk, ""), ecNoKid} {
		if w := do("GET", "/devstoreaccount1/Tables", "", tok, true); w.Code != 401 {
			t.Fatalf("token without kid, several keys: %d %s", w.Code, w.Body)
		}
	}
	ecTok := func() string {
		tk := jwt.NewWithClaims(jwt.SigningMethodES256, claims(nil))
		tk.Header["kid"] = "ec1"
		s, err := tk.SignedString(ek)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}()
	if w := do("GET", "/devstoreaccount1/Tables", "", ecTok, true); w.Code != 200 {
		t.Fatalf("EC token: %d %s", w.Code, w.Body)
	}
	// The account's endpoint under a public endpoint as audience, in
	// either addressing style, whatever Host the request names.
	for _, aud := range []string{"https://tables.example:10002/devstoreaccount1", "https://TABLES.example:10002/devstoreaccount1/",
		"https://devstoreaccount1.table.example", "https://devstoreaccount1.table.example:443"} {
		if w := do("GET", "/devstoreaccount1/Tables", "", rsaTok(claims(func(c jwt.MapClaims) { c["aud"] = aud }), rk, "rsa1"), true); w.Code != 200 {
			t.Fatalf("endpoint audience %s: %d %s", aud, w.Code, w.Body)
		}
	}
	// Azure Storage's resource URI, with or without the slash, and its
	// application ID are accepted by default, as on Azure; other IDs
	// are not.
	for aud, code := range map[string]int{StorageAudience + "/": 200, StorageAppID: 200,
		strings.ToUpper(StorageAppID): 200, "e406a681-f3d4-42a8-90b6-c2b029497af2": 401, "https://storage.azure.com/x": 401} {
		if w := do("GET", "/devstoreaccount1/Tables", "", rsaTok(claims(func(c jwt.MapClaims) { c["aud"] = aud }), rk, "rsa1"), true); w.Code != code {
			t.Errorf("audience %s: %d, want %d: %s", aud, w.Code, code, w.Body)
		}
	}
	// An endpoint of another deployment is refused, even when the
	// request's Host names it (httptest's requests name example.com).
	for _, aud := range []string{"https://example.com/devstoreaccount1", "https://tables.example:10002/otheraccount",
		"https://tables.example/devstoreaccount1", "http://tables.example:10002/devstoreaccount1", "https://other.table.example"} {
		if w := do("GET", "/devstoreaccount1/Tables", "", rsaTok(claims(func(c jwt.MapClaims) { c["aud"] = aud }), rk, "rsa1"), true); w.Code != 401 {
			t.Errorf("foreign endpoint audience %s: %d %s", aud, w.Code, w.Body)
		}
	}
	// Expired within the skew is still accepted.
	if w := do("GET", "/devstoreaccount1/Tables", "", rsaTok(claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-time.Minute).Unix() }), rk, "rsa1"), true); w.Code != 200 {
		t.Fatalf("expired within skew: %d", w.Code)
	}
	reader := rsaTok(claims(func(c jwt.MapClaims) { c["roles"] = []string{roleReaderID} }), rk, "rsa1")
	if w := do("GET", "/devstoreaccount1/things()", "", reader, true); w.Code != 200 {
		t.Fatalf("reader reading: %d %s", w.Code, w.Body)
	}
	for _, tc := range []struct{ method, path, body string }{
		{"POST", "/devstoreaccount1/things", `{"PartitionKey":"p","RowKey":"r"}`},
		{"POST", "/devstoreaccount1/Tables", `{"TableName":"byreader"}`},
		{"DELETE", "/devstoreaccount1/Tables('things')", ""},
		{"PUT", "/devstoreaccount1/things?comp=acl", `<SignedIdentifiers/>`},
	} {
		if w := do(tc.method, tc.path, tc.body, reader, true); w.Code != 403 || w.Header().Get("x-ms-error-code") != "AuthorizationPermissionMismatch" {
			t.Errorf("reader %s %s: %d %s", tc.method, tc.path, w.Code, w.Body)
		}
	}
	// Get and Set Table ACL are the account owner's: no token may call
	// them, whatever its role.
	contributor := rsaTok(claims(func(c jwt.MapClaims) { c["roles"] = []string{roleContributorID} }), rk, "rsa1")
	for _, tok := range []string{reader, contributor} {
		for _, m := range []string{"GET", "PUT"} {
			if w := do(m, "/devstoreaccount1/things?comp=acl", "", tok, true); w.Code != 403 || w.Header().Get("x-ms-error-code") != "AuthorizationPermissionMismatch" {
				t.Errorf("%s ACL with a token: %d %s", m, w.Code, w.Body)
			}
		}
	}
	mapped := rsaTok(claims(func(c jwt.MapClaims) { delete(c, "roles"); c["oid"] = "mapped-reader" }), rk, "rsa1")
	if w := do("GET", "/devstoreaccount1/Tables", "", mapped, true); w.Code != 200 {
		t.Fatalf("mapped reader: %d", w.Code)
	}
	if w := do("POST", "/devstoreaccount1/Tables", `{"TableName":"bymapped"}`, mapped, true); w.Code != 403 {
		t.Fatalf("mapped reader writing: %d", w.Code)
	}
	norole := rsaTok(claims(func(c jwt.MapClaims) { delete(c, "roles") }), rk, "rsa1")
	if w := do("GET", "/devstoreaccount1/Tables", "", norole, true); w.Code != 403 || w.Header().Get("x-ms-error-code") != "AuthorizationPermissionMismatch" {
		t.Fatalf("no role: %d", w.Code)
	}

	noneTok, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)
	hsTok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims(nil)).SignedString([]byte("secret"))
	for name, tok := range map[string]string{
		"expired":         rsaTok(claims(func(c jwt.MapClaims) { c["exp"] = now.Add(-10 * time.Minute).Unix() }), rk, "rsa1"),
		"not yet valid":   rsaTok(claims(func(c jwt.MapClaims) { c["nbf"] = now.Add(10 * time.Minute).Unix() }), rk, "rsa1"),
		"no expiry":       rsaTok(claims(func(c jwt.MapClaims) { delete(c, "exp") }), rk, "rsa1"),
		"exp a string":    rsaTok(claims(func(c jwt.MapClaims) { c["exp"] = strconv.FormatInt(now.Add(time.Hour).Unix(), 10) }), rk, "rsa1"),
		"nbf a string":    rsaTok(claims(func(c jwt.MapClaims) { c["nbf"] = strconv.FormatInt(now.Add(-time.Minute).Unix(), 10) }), rk, "rsa1"),
		"iat a string":    rsaTok(claims(func(c jwt.MapClaims) { c["iat"] = strconv.FormatInt(now.Unix(), 10) }), rk, "rsa1"),
		"no kid":          rsaTok(claims(nil), rk, ""),
		"wrong audience":  rsaTok(claims(func(c jwt.MapClaims) { c["aud"] = "https://vault.azure.net" }), rk, "rsa1"),
		"wrong issuer":    rsaTok(claims(func(c jwt.MapClaims) { c["iss"] = "https://sts.windows.net/other/" }), rk, "rsa1"),
		"wrong signature": rsaTok(claims(nil), other, "rsa1"),
		"unknown kid":     rsaTok(claims(nil), rk, "nosuchkey"),
		"alg none":        noneTok,
		"HS256":           hsTok,
		"garbage":         "not.a.token",
		"empty":           "",
	} {
		w := do("GET", "/devstoreaccount1/Tables", "", tok, true)
		if w.Code != 401 || w.Header().Get("x-ms-error-code") != "InvalidAuthenticationInfo" ||
			!strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Bearer authorization_uri=https://login.microsoftonline.com/") ||
			!strings.Contains(w.Header().Get("WWW-Authenticate"), "resource_id=https://storage.azure.com") {
			t.Errorf("%s: %d %v %s", name, w.Code, w.Header(), w.Body)
		}
		if strings.Contains(w.Body.String(), "expired") || strings.Contains(w.Body.String(), "audience") {
			t.Errorf("%s: the reason reached the client: %s", name, w.Body)
		}
	}
	// Over plain http a token is refused whatever it is.
	if w := do("GET", "/devstoreaccount1/Tables", "", valid, false); w.Code != 403 || w.Header().Get("x-ms-error-code") != "AuthorizationProtocolMismatch" {
		t.Fatalf("plain http: %d %v", w.Code, w.Header())
	}
	// The log says why.
	all := ""
	for _, l := range logs.lines(t) {
		if s, ok := l["auth_error"].(string); ok {
			all += s + "\n"
		}
	}
	for _, want := range []string{"token is expired", "audience", "issuer", "signature", "plain http", "no table data role"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the logged reasons:\n%s", want, all)
		}
	}
}

func TestBearerConfig(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for name, b := range map[string]*Bearer{
		"no issuer":    {JWKS: testJWKS(rk, ek)},
		"bad JWKS":     {JWKS: []byte("{"), Issuers: []string{testIssuer}},
		"empty JWKS":   {JWKS: []byte(`{"keys":[]}`), Issuers: []string{testIssuer}},
		"bad role":     {JWKS: testJWKS(rk, ek), Issuers: []string{testIssuer}, Principals: map[string]string{"x": "Owner"}},
		"short RSA":    {JWKS: []byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`), Issuers: []string{testIssuer}},
		"bad EC point": {JWKS: []byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"AQAB","y":"AQAB"}]}`), Issuers: []string{testIssuer}},
	} {
		if _, err := newHandlerErr(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	db, err := openMem()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, ep := range []string{"tables.example", "ftp://tables.example", "https://tables.example/devstoreaccount1", "https://", "https://x.example/?a=b"} {
		if _, err := New(db, &Options{PublicEndpoints: []string{ep}}); err == nil {
			t.Errorf("public endpoint %q accepted", ep)
		}
	}
	// The insecure mode accepts anything over TLS and warns.
	var logs logRecorder
	h, _ := newTestHandler(t, &Options{Bearer: &Bearer{InsecureAcceptAnyToken: true}, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	r := httptest.NewRequest("POST", "/devstoreaccount1/Tables", strings.NewReader(`{"TableName":"anytoken"}`))
	r.TLS = &tls.ConnectionState{}
	r.Header.Set("Authorization", "Bearer whatever")
	if w := serve(h, r); w.Code != 201 {
		t.Fatalf("insecure mode: %d", w.Code)
	}
	if l := logs.lines(t); len(l) == 0 || l[0]["level"] != "WARN" || !strings.Contains(l[0]["msg"].(string), "INSECURE") {
		t.Fatalf("no warning: %v", l)
	}
}

func newHandlerErr(b *Bearer) (http.Handler, error) {
	db, err := openMem()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return New(db, &Options{Bearer: b})
}

// TestBearerAccountIsolation: with several accounts a token is good for
// the accounts it was meant for only. A roles claim for the generic
// storage audience names no account and grants nothing; an account's
// endpoint as audience, or a principal mapped on the account, does. The
// secondary endpoint and host-style addressing are no way around it.
func TestBearerAccountIsolation(t *testing.T) {
	keyA, _ := rsa.GenerateKey(rand.Reader, 2048)
	keyB, _ := rsa.GenerateKey(rand.Reader, 2048)
	jwks := func(k *rsa.PrivateKey, kid string) []byte {
		b64 := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
		out, _ := json.Marshal(map[string]any{"keys": []map[string]string{
			{"kty": "RSA", "kid": kid, "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}}})
		return out
	}
	now := time.Now()
	token := func(key *rsa.PrivateKey, kid, aud, oid string, roles ...string) string {
		c := jwt.MapClaims{"iss": testIssuer, "aud": aud, "exp": now.Add(time.Hour).Unix(), "oid": oid}
		if len(roles) > 0 {
			c["roles"] = roles
		}
		tk := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
		tk.Header["kid"] = kid
		s, err := tk.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	open := func() *tablestore.DB {
		db, err := tablestore.OpenInMemory(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	do := func(h http.Handler, method, target, body, tok string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, strings.NewReader(body))
		r.TLS = &tls.ConnectionState{}
		r.Header.Set("Authorization", "Bearer "+tok)
		return serve(h, r)
	}
	mismatch := func(w *httptest.ResponseRecorder) bool {
		return w.Code == 403 && w.Header().Get("x-ms-error-code") == "AuthorizationPermissionMismatch" &&
			strings.Contains(w.Body.String(), `"code":"AuthorizationPermissionMismatch"`)
	}
	const ep = "https://tables.example:10002"
	// Every way to reach beta, read or write.
	betaRoutes := []struct{ method, target, body string }{
		{"GET", ep + "/beta/Tables", ""},
		{"POST", ep + "/beta/Tables", `{"TableName":"intruder"}`},
		{"GET", ep + "/beta-secondary/Tables", ""},
		{"GET", "https://beta.table.example/Tables", ""},
		{"POST", "https://beta.table.example/Tables", `{"TableName":"intruder"}`},
		{"GET", "https://beta-secondary.table.example/Tables", ""},
	}

	// One configuration for both accounts, as --bearer-* flags give it.
	alphaDB, betaDB := open(), open()
	shared := &Bearer{JWKS: jwks(keyA, "a1"), Issuers: []string{testIssuer}}
	h, err := NewAccounts([]Account{{Name: "alpha", DB: alphaDB}, {Name: "beta", DB: betaDB}},
		&Options{Bearer: shared, PublicEndpoints: []string{ep}})
	if err != nil {
		t.Fatal(err)
	}
	generic := token(keyA, "a1", StorageAudience, "user-a", RoleTableDataContributor)
	forAlpha := token(keyA, "a1", ep+"/alpha", "user-a", RoleTableDataContributor)
	if w := do(h, "POST", ep+"/alpha/Tables", `{"TableName":"mine"}`, forAlpha); w.Code != 201 {
		t.Fatalf("alpha's token on alpha: %d %s", w.Code, w.Body)
	}
	if w := do(h, "GET", ep+"/alpha/Tables", "", generic); !mismatch(w) {
		t.Errorf("generic audience, roles claim, on alpha: %d %s", w.Code, w.Body)
	}
	for _, rt := range betaRoutes {
		if w := do(h, rt.method, rt.target, rt.body, generic); !mismatch(w) {
			t.Errorf("generic token %s %s: %d %s", rt.method, rt.target, w.Code, w.Body)
		}
		if w := do(h, rt.method, rt.target, rt.body, forAlpha); w.Code != 401 {
			t.Errorf("alpha's token %s %s: %d %s", rt.method, rt.target, w.Code, w.Body)
		}
	}
	if names, _ := betaDB.ListTables(context.Background(), nil); len(names.Names) != 0 {
		t.Fatalf("beta changed: %+v", names)
	}

	// Each account its own configuration: the same tenant, a principal
	// mapped on alpha only; beta trusting another key as well.
	alphaDB, betaDB = open(), open()
	alpha := &Bearer{JWKS: jwks(keyA, "a1"), Issuers: []string{testIssuer}, Audiences: []string{"api://alpha"},
		Principals: map[string]string{"user-a": RoleTableDataContributor}}
	beta := &Bearer{JWKS: jwks(keyA, "a1"), Issuers: []string{testIssuer},
		Principals: map[string]string{"user-b": RoleTableDataReader}}
	h, err = NewAccounts([]Account{{Name: "alpha", DB: alphaDB, Bearer: alpha}, {Name: "beta", DB: betaDB, Bearer: beta}},
		&Options{PublicEndpoints: []string{ep}})
	if err != nil {
		t.Fatal(err)
	}
	userA := token(keyA, "a1", StorageAudience, "user-a")
	if w := do(h, "POST", ep+"/alpha/Tables", `{"TableName":"mine"}`, userA); w.Code != 201 {
		t.Fatalf("user-a on alpha: %d %s", w.Code, w.Body)
	}
	if w := do(h, "POST", ep+"/alpha/Tables", `{"TableName":"app"}`, token(keyA, "a1", "api://alpha", "app", RoleTableDataContributor)); w.Code != 201 {
		t.Fatalf("alpha's own audience with a roles claim: %d %s", w.Code, w.Body)
	}
	for _, tok := range []string{userA, generic} {
		for _, rt := range betaRoutes {
			if w := do(h, rt.method, rt.target, rt.body, tok); !mismatch(w) {
				t.Errorf("%s %s: %d %s", rt.method, rt.target, w.Code, w.Body)
			}
		}
	}
	userB := token(keyA, "a1", StorageAudience, "user-b")
	if w := do(h, "GET", ep+"/beta/Tables", "", userB); w.Code != 200 {
		t.Fatalf("user-b reading beta: %d %s", w.Code, w.Body)
	}
	if w := do(h, "POST", ep+"/beta/Tables", `{"TableName":"x"}`, userB); !mismatch(w) {
		t.Fatalf("user-b writing beta: %d %s", w.Code, w.Body)
	}
	if w := do(h, "GET", ep+"/alpha/Tables", "", userB); !mismatch(w) {
		t.Fatalf("user-b on alpha: %d %s", w.Code, w.Body)
	}
	if names, _ := betaDB.ListTables(context.Background(), nil); len(names.Names) != 0 {
		t.Fatalf("beta changed: %+v", names)
	}
	// Keys are per account too.
	h, err = NewAccounts([]Account{{Name: "alpha", DB: alphaDB, Bearer: alpha},
		{Name: "beta", DB: betaDB, Bearer: &Bearer{JWKS: jwks(keyB, "b1"), Issuers: []string{testIssuer}, Principals: map[string]string{"user-a": RoleTableDataContributor}}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if w := do(h, "GET", ep+"/beta/Tables", "", userA); w.Code != 401 {
		t.Fatalf("a token signed by alpha's key on beta: %d %s", w.Code, w.Body)
	}
	if w := do(h, "GET", ep+"/beta/Tables", "", token(keyB, "b1", StorageAudience, "user-a")); w.Code != 200 {
		t.Fatalf("beta's own key: %d %s", w.Code, w.Body)
	}

	// A principal map cannot be shared by several accounts; one account
	// keeps the single-account rules (a roles claim for any audience).
	if _, err := NewAccounts([]Account{{Name: "alpha", DB: alphaDB}, {Name: "beta", DB: betaDB}}, &Options{Bearer: alpha}); err == nil {
		t.Fatal("Principals shared by two accounts accepted")
	}
	h, err = NewAccounts([]Account{{Name: "alpha", DB: alphaDB}}, &Options{Bearer: shared})
	if err != nil {
		t.Fatal(err)
	}
	if w := do(h, "GET", ep+"/alpha/Tables", "", generic); w.Code != 200 {
		t.Fatalf("one account, roles claim: %d %s", w.Code, w.Body)
	}
}
