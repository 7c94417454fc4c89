package server

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tablestore/tablestore"
)

// opsFuzzHandler is one handler over an in-memory store for every input
// of a fuzz target (opening a store per input is too slow to fuzz).
func opsFuzzHandler(f *testing.F, o *Options) http.Handler {
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { db.Close() })
	h, err := New(db, o)
	if err != nil {
		f.Fatal(err)
	}
	return h
}

// FuzzServicePropertiesCORS: any service properties document parses or
// is refused with a 4xx, and whatever rules it holds, a preflight and a
// cross-origin request with any origin, method and headers are answered
// without a 5xx or a panic. The rules are installed directly (the store
// write is tested elsewhere), and the cross-origin request fails routing,
// so an input exercises parsing and matching only.
func FuzzServicePropertiesCORS(f *testing.F) {
	f.Add(corsDoc, "http://app.example", "PATCH", "x-ms-date,content-type")
	f.Add(`<StorageServiceProperties><Cors><CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods><AllowedHeaders>x-*</AllowedHeaders><ExposedHeaders>*</ExposedHeaders><MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>`, "null", "GET", "")
	f.Add(`<StorageServiceProperties><Cors/>`, "", "", "")
	hd := opsFuzzHandler(f, &Options{Anonymous: true})
	h := hd.(*handler)
	f.Fuzz(func(t *testing.T, doc, origin, method, headers string) {
		rules, err := parseServiceProperties([]byte(doc))
		if err != nil {
			if ae := toAPIError(err); ae.status != 400 {
				t.Fatalf("%q: status %d", doc, ae.status)
			}
			return
		}
		if len(rules) > 5 {
			t.Fatalf("%d rules accepted", len(rules))
		}
		h.cors.Store(&rules)
		r := httptest.NewRequest("OPTIONS", "/devstoreaccount1/Tables", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", method)
		r.Header.Set("Access-Control-Request-Headers", headers)
		if w := serve(h, r); w.Code != 200 && w.Code != 400 && w.Code != 403 {
			t.Fatalf("preflight: %d", w.Code)
		}
		r = httptest.NewRequest("GET", "/devstoreaccount1/a/b", nil)
		r.Header.Set("Origin", origin)
		if w := serve(h, r); w.Code != 400 {
			t.Fatalf("cross-origin GET: %d", w.Code)
		}
	})
}

// FuzzBearerToken: any bearer token is refused with 401 or 403, never
// served and never a 5xx.
func FuzzBearerToken(f *testing.F) {
	f.Add("eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.c2ln")
	f.Add("eyJhbGciOiJub25lIn0.eyJyb2xlcyI6WyJTdG9yYWdlIFRhYmxlIERhdGEgQ29udHJpYnV0b3IiXX0.")
	f.Add("..")
	f.Add(strings.Repeat("a", 5000))
	jwks := `{"keys":[{"kty":"EC","kid":"k","crv":"P-256","x":"MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4","y":"4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM"}]}`
	h := opsFuzzHandler(f, &Options{Bearer: &Bearer{JWKS: []byte(jwks), Issuers: []string{testIssuer}}})
	f.Fuzz(func(t *testing.T, token string) {
		r := httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil)
		r.TLS = &tls.ConnectionState{}
		r.Header["Authorization"] = []string{"Bearer " + token}
		if w := serve(h, r); w.Code != 401 && w.Code != 403 {
			t.Fatalf("token %q: %d %s", token, w.Code, w.Body)
		}
	})
}
