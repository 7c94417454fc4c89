package server

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tablestore/tablestore"
)

const corsDoc = `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>
<Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging>
<Cors>
<CorsRule><AllowedOrigins>http://app.example</AllowedOrigins><AllowedMethods>GET,POST,PUT,MERGE,DELETE,PATCH</AllowedMethods>
<AllowedHeaders>x-ms-*,content-type,accept,dataserviceversion,maxdataserviceversion,prefer</AllowedHeaders>
<ExposedHeaders>x-ms-*,etag,location,x-missing</ExposedHeaders><MaxAgeInSeconds>600</MaxAgeInSeconds></CorsRule>
<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>5</MaxAgeInSeconds></CorsRule>
</Cors></StorageServiceProperties>`

func setProps(t *testing.T, h http.Handler, doc string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest("PUT", "/devstoreaccount1/?restype=service&comp=properties", strings.NewReader(doc))
	return serve(h, r)
}

func preflight(h http.Handler, origin, method, headers string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("OPTIONS", "/devstoreaccount1/things()", nil)
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	if method != "" {
		r.Header.Set("Access-Control-Request-Method", method)
	}
	if headers != "" {
		r.Header.Set("Access-Control-Request-Headers", headers)
	}
	return serve(h, r)
}

func TestCORS(t *testing.T) {
	h, _ := newTestHandler(t, &Options{Anonymous: true})
	// No rules: no CORS headers, and preflights fail.
	r := httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil)
	r.Header.Set("Origin", "http://app.example")
	w := serve(h, r)
	for k := range w.Header() {
		if strings.HasPrefix(strings.ToLower(k), "access-control") || k == "Vary" {
			t.Fatalf("no rules, yet %s", k)
		}
	}
	if w := preflight(h, "http://app.example", "GET", ""); w.Code != 403 || w.Header().Get("x-ms-error-code") != "CorsPreflightFailure" {
		t.Fatalf("no rules: %d %v", w.Code, w.Header())
	}

	if w := setProps(t, h, corsDoc); w.Code != http.StatusAccepted {
		t.Fatalf("set: %d %s", w.Code, w.Body)
	}
	// The document is echoed, logging settings included.
	w = serve(h, httptest.NewRequest("GET", "/devstoreaccount1/?restype=service&comp=properties", nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), "<Days>7</Days>") || !strings.Contains(w.Body.String(), "http://app.example") {
		t.Fatalf("get: %d %s", w.Code, w.Body)
	}

	w = preflight(h, "http://app.example", "PATCH", "content-type,x-ms-version,x-ms-date")
	hd := w.Header()
	if w.Code != 200 || hd.Get("Access-Control-Allow-Origin") != "http://app.example" || hd.Get("Access-Control-Allow-Methods") != "PATCH" ||
		hd.Get("Access-Control-Allow-Headers") != "content-type,x-ms-version,x-ms-date" || hd.Get("Access-Control-Max-Age") != "600" ||
		hd.Get("Access-Control-Allow-Credentials") != "true" || w.Body.Len() != 0 {
		t.Fatalf("preflight: %d %v", w.Code, hd)
	}
	for _, tc := range []struct{ origin, method, headers string }{
		{"http://other.example", "PATCH", ""},            // origin not allowed by the first rule; the second allows GET only
		{"http://app.example", "OPTIONS", ""},            // method not allowed
		{"http://app.example", "GET", "x-custom-header"}, // header not allowed
		{"http://other.example", "GET", "x-ms-version"},  // the wildcard rule allows no headers
	} {
		if w := preflight(h, tc.origin, tc.method, tc.headers); w.Code != 403 || w.Header().Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%+v: %d %v", tc, w.Code, w.Header())
		}
	}
	if w := preflight(h, "http://other.example", "GET", ""); w.Code != 200 || w.Header().Get("Access-Control-Max-Age") != "5" {
		t.Errorf("wildcard origin: %d %v", w.Code, w.Header())
	}
	for _, tc := range [][2]string{{"", "GET"}, {"http://app.example", ""}} {
		if w := preflight(h, tc[0], tc[1], ""); w.Code != 400 || w.Header().Get("x-ms-error-code") != "InvalidHeaderValue" {
			t.Errorf("%v: %d", tc, w.Code)
		}
	}

	// An actual cross-origin request.
	r = httptest.NewRequest("POST", "/devstoreaccount1/things", strings.NewReader(`{"PartitionKey":"p","RowKey":"r"}`))
	r.Header.Set("Origin", "http://app.example")
	w = serve(h, r)
	hd = w.Header()
	if w.Code != 201 || hd.Get("Access-Control-Allow-Origin") != "http://app.example" || hd.Get("Vary") != "Origin" ||
		hd.Get("Access-Control-Allow-Credentials") != "true" {
		t.Fatalf("actual: %d %v", w.Code, hd)
	}
	exp := "," + strings.ToLower(hd.Get("Access-Control-Expose-Headers")) + ","
	for _, want := range []string{",etag,", ",x-ms-request-id,", ",x-ms-version,", ",location,", ",x-missing,"} {
		if !strings.Contains(exp, want) {
			t.Errorf("expose %q lacks %s", exp, want)
		}
	}
	if strings.Contains(exp, "content-type") {
		t.Errorf("expose %q names a header the rule does not", exp)
	}
	// The wildcard rule: *, no credentials, no Vary.
	r = httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil)
	r.Header.Set("Origin", "http://other.example")
	w = serve(h, r)
	if w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Header().Get("Vary") != "" || w.Header().Get("Access-Control-Allow-Credentials") != "" {
		t.Fatalf("wildcard actual: %v", w.Header())
	}
	// Rules, but none matches: Vary only, on GET and HEAD.
	r = httptest.NewRequest("HEAD", "/devstoreaccount1/Tables", nil)
	r.Header.Set("Origin", "http://other.example")
	w = serve(h, r)
	if w.Header().Get("Access-Control-Allow-Origin") != "" || w.Header().Get("Vary") != "Origin" {
		t.Fatalf("no match: %v", w.Header())
	}
	r = httptest.NewRequest("DELETE", "/devstoreaccount1/Tables('x')", nil)
	r.Header.Set("Origin", "http://other.example")
	w = serve(h, r)
	if w.Header().Get("Access-Control-Allow-Origin") != "" || w.Header().Get("Vary") != "" {
		t.Fatalf("no match on DELETE: %v", w.Header())
	}
	// No Origin: no Access-Control header, as on Azure, even with a
	// rule allowing every origin; nor Vary, which that rule makes moot.
	w = serve(h, httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil))
	if w.Header().Get("Access-Control-Allow-Origin") != "" || w.Header().Get("Access-Control-Expose-Headers") != "" || w.Header().Get("Vary") != "" {
		t.Fatalf("GET without Origin: %v", w.Header())
	}
	w = serve(h, httptest.NewRequest("POST", "/devstoreaccount1/Tables", strings.NewReader(`{"TableName":"noorigin"}`)))
	if w.Code != 201 || w.Header().Get("Access-Control-Allow-Origin") != "" || w.Header().Get("Vary") != "" {
		t.Fatalf("POST without Origin: %d %v", w.Code, w.Header())
	}

	// Bad rules are refused and change nothing.
	for _, bad := range []string{
		strings.Replace(corsDoc, "GET,POST", "GET,FETCH", 1),
		strings.Replace(corsDoc, "<MaxAgeInSeconds>600", "<MaxAgeInSeconds>-1", 1),
		strings.Replace(corsDoc, "<AllowedOrigins>*</AllowedOrigins>", "<AllowedOrigins></AllowedOrigins>", 1),
		`<StorageServiceProperties><Cors>` + strings.Repeat(`<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods></CorsRule>`, 6) + `</Cors></StorageServiceProperties>`,
		`<StorageServiceProperties><Cors>`,
	} {
		if w := setProps(t, h, bad); w.Code != 400 {
			t.Errorf("bad document accepted: %d %s", w.Code, w.Body)
		}
	}
	if w := preflight(h, "http://app.example", "PATCH", ""); w.Code != 200 {
		t.Fatalf("rules changed by a refused document: %d", w.Code)
	}
	// Removing the rules removes the headers.
	// (Azure requires all five elements of a CorsRule.)
	if w := setProps(t, h, `<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>http://app.example</AllowedOrigins><AllowedMethods>PUT</AllowedMethods><AllowedHeaders></AllowedHeaders><ExposedHeaders></ExposedHeaders><MaxAgeInSeconds>0</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`); w.Code != 202 {
		t.Fatal(w.Code)
	}
	// No rule allows every origin: a GET without Origin gets Vary only.
	w = serve(h, httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil))
	if w.Header().Get("Access-Control-Allow-Origin") != "" || w.Header().Get("Vary") != "Origin" {
		t.Fatalf("GET without Origin, no wildcard rule: %v", w.Header())
	}
	if w := setProps(t, h, `<StorageServiceProperties><Cors/></StorageServiceProperties>`); w.Code != 202 {
		t.Fatal(w.Code)
	}
	w = serve(h, httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil))
	if w.Header().Get("Vary") != "" {
		t.Fatalf("no rules, yet Vary: %v", w.Header())
	}
	if w := preflight(h, "http://app.example", "PATCH", ""); w.Code != 403 {
		t.Fatalf("after removal: %d", w.Code)
	}
}

// TestServicePropertiesSurviveRestart: the document and its CORS rules
// are in the store.
func TestServicePropertiesSurviveRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "s")
	db, err := tablestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(db, &Options{Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := setProps(t, h, corsDoc); w.Code != 202 {
		t.Fatal(w.Code)
	}
	db.Close()
	db, err = tablestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err = New(db, &Options{Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := preflight(h, "http://app.example", "GET", ""); w.Code != 200 {
		t.Fatalf("preflight after restart: %d", w.Code)
	}
	w := serve(h, httptest.NewRequest("GET", "/devstoreaccount1/?restype=service&comp=properties", nil))
	if !strings.Contains(w.Body.String(), "<Days>7</Days>") {
		t.Fatalf("%s", w.Body)
	}
}
