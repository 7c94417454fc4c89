package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore/driver"
)

// signedRequest builds a request for target (after the host) with body,
// signed with SharedKeyLite for the development account.
func signedRequest(method, target, body string) *http.Request {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	signLite(r, DevAccount, DevKey, time.Now())
	return r
}

// TestStrictACL: a Set Table ACL body with anything its schema does not
// allow is InvalidXmlDocument, answered in XML, and the table's policies
// stay as they were.
func TestStrictACL(t *testing.T) {
	hd, db := newTestHandler(t, nil)
	ctx := context.Background()
	keep := []driver.AccessPolicy{{ID: "keep", Permission: "r", Expiry: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}}
	if err := root.SetAccessPolicies(db.Table("things"), ctx, keep); err != nil {
		t.Fatal(err)
	}
	const policy = `<AccessPolicy><Start>2024-01-01T00:00:00Z</Start><Expiry>2030-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy>`
	si := func(inner string) string {
		return `<?xml version="1.0" encoding="utf-8"?><SignedIdentifiers>` + inner + `</SignedIdentifiers>`
	}
	for _, tc := range []struct{ name, body string }{
		{"unknown elements only", si(`<Foo/><Bar>1</Bar>`)},
		{"unknown element beside a policy", si(`<SignedIdentifier><Id>a</Id>` + policy + `</SignedIdentifier><Extra/>`)},
		{"unknown child of SignedIdentifier", si(`<SignedIdentifier><Id>a</Id><Bogus>1</Bogus></SignedIdentifier>`)},
		{"unknown child of AccessPolicy", si(`<SignedIdentifier><Id>a</Id><AccessPolicy><Permission>r</Permission><Scope>x</Scope></AccessPolicy></SignedIdentifier>`)},
		{"Permission misplaced", si(`<SignedIdentifier><Id>a</Id><Permission>r</Permission></SignedIdentifier>`)},
		{"Id misplaced", si(`<Id>a</Id>`)},
		{"Id repeated", si(`<SignedIdentifier><Id>a</Id><Id>b</Id></SignedIdentifier>`)},
		{"Id missing", si(`<SignedIdentifier>` + policy + `</SignedIdentifier>`)},
		{"AccessPolicy repeated", si(`<SignedIdentifier><Id>a</Id>` + policy + policy + `</SignedIdentifier>`)},
		{"Start repeated", si(`<SignedIdentifier><Id>a</Id><AccessPolicy><Start>2024-01-01</Start><Start>2024-01-02</Start></AccessPolicy></SignedIdentifier>`)},
		{"nested too deep", si(`<SignedIdentifier><Id><Id>a</Id></Id></SignedIdentifier>`)},
		{"wrong root", `<Identifiers><SignedIdentifier><Id>a</Id></SignedIdentifier></Identifiers>`},
		{"text among elements", si(`hello<SignedIdentifier><Id>a</Id></SignedIdentifier>`)},
		{"text alone in the root", si(`hello`)},
		{"text alone in SignedIdentifier", si(`<SignedIdentifier>hello</SignedIdentifier>`)},
		{"attribute", `<SignedIdentifiers kind="x"><SignedIdentifier><Id>a</Id></SignedIdentifier></SignedIdentifiers>`},
		{"namespace", `<SignedIdentifiers xmlns="urn:other"><SignedIdentifier><Id>a</Id></SignedIdentifier></SignedIdentifiers>`},
		{"doctype", `<!DOCTYPE SignedIdentifiers [<!ENTITY x "a">]><SignedIdentifiers><SignedIdentifier><Id>&x;</Id></SignedIdentifier></SignedIdentifiers>`},
		{"bad time", si(`<SignedIdentifier><Id>a</Id><AccessPolicy><Start>yesterday</Start></AccessPolicy></SignedIdentifier>`)},
		{"second root", si(`<SignedIdentifier><Id>a</Id></SignedIdentifier>`) + `<SignedIdentifiers/>`},
		{"text after the root", si(``) + `trailing`},
		{"not closed", `<SignedIdentifiers><SignedIdentifier><Id>a</Id>`},
		{"processing instruction", si(`<?php x?><SignedIdentifier><Id>a</Id></SignedIdentifier>`)},
		{"six policies", si(strings.Repeat(`<SignedIdentifier><Id>a</Id>`+policy+`</SignedIdentifier>`, 6))},
		{"not UTF-8", si("<SignedIdentifier><Id>\xff</Id></SignedIdentifier>")},
	} {
		w := serve(hd, signedRequest("PUT", "/devstoreaccount1/things?comp=acl", tc.body))
		if w.Code != http.StatusBadRequest || w.Header().Get("x-ms-error-code") != "InvalidXmlDocument" ||
			!strings.Contains(w.Body.String(), "<m:code>InvalidXmlDocument</m:code>") {
			t.Errorf("%s: %d %s", tc.name, w.Code, w.Body)
		}
		got, err := root.AccessPolicies(db.Table("things"), ctx)
		if err != nil || len(got) != 1 || got[0].ID != "keep" || got[0].Permission != "r" {
			t.Fatalf("%s: the policies changed: %+v %v", tc.name, got, err)
		}
	}
	// The forms the SDKs send are accepted: AccessPolicy before Id (Go),
	// white space, an empty document, no body at all.
	for _, tc := range []struct {
		body string
		ids  []string
	}{
		{si("\n  <SignedIdentifier>\n    " + policy + "\n    <Id>go</Id>\n  </SignedIdentifier>\n"), []string{"go"}},
		{si(`<SignedIdentifier><Id>a</Id></SignedIdentifier><SignedIdentifier><Id>b</Id><AccessPolicy><Permission>raud</Permission></AccessPolicy></SignedIdentifier>`), []string{"a", "b"}},
		{si(""), nil},
		{"", nil},
	} {
		w := serve(hd, signedRequest("PUT", "/devstoreaccount1/things?comp=acl", tc.body))
		if w.Code != http.StatusNoContent {
			t.Fatalf("%q: %d %s", tc.body, w.Code, w.Body)
		}
		got, err := root.AccessPolicies(db.Table("things"), ctx)
		if err != nil || len(got) != len(tc.ids) {
			t.Fatalf("%q: %+v %v", tc.body, got, err)
		}
		for i, id := range tc.ids {
			if got[i].ID != id {
				t.Errorf("%q: policy %d is %q", tc.body, i, got[i].ID)
			}
		}
	}
}

// TestStrictServiceProperties: Set Service Properties checks the whole
// document against the Table service's schema before it changes
// anything; the elements a valid body holds replace only themselves.
func TestStrictServiceProperties(t *testing.T) {
	hd, _ := newTestHandler(t, nil)
	const target = "/devstoreaccount1/?restype=service&comp=properties"
	get := func() string {
		w := serve(hd, signedRequest("GET", target, ""))
		if w.Code != http.StatusOK {
			t.Fatalf("get: %d %s", w.Code, w.Body)
		}
		return w.Body.String()
	}
	const logging = `<Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read><Write>true</Write><RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></Logging>`
	doc := func(inner string) string {
		return `<?xml version="1.0" encoding="utf-8"?><StorageServiceProperties>` + inner + `</StorageServiceProperties>`
	}
	if w := serve(hd, signedRequest("PUT", target, doc(logging))); w.Code != http.StatusAccepted {
		t.Fatalf("set: %d %s", w.Code, w.Body)
	}
	before := get()
	if !strings.Contains(before, logging) || !strings.Contains(before, "<HourMetrics><Version>1.0</Version><Enabled>false</Enabled>") {
		t.Fatalf("after set: %s", before)
	}
	const metrics = `<Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>`
	const rule = `<AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><MaxAgeInSeconds>60</MaxAgeInSeconds><ExposedHeaders>x-ms-*</ExposedHeaders><AllowedHeaders></AllowedHeaders>`
	for _, tc := range []struct{ name, body string }{
		// Elements unknown, misplaced, repeated or missing are
		// InvalidXmlDocument; a value in the wrong form (marked
		// "value:") InvalidXmlNodeValue.
		{"any body under the right root", doc(`<Anything>x</Anything>`)},
		{"unknown element beside valid ones", doc(logging + `<Extra/>`)},
		{"unknown child of Logging", doc(strings.Replace(logging, "<Read>", "<Mood>ok</Mood><Read>", 1))},
		{"Logging without Version", doc(strings.Replace(logging, "<Version>1.0</Version>", "", 1))},
		{"Logging repeated", doc(logging + logging)},
		{"retention enabled without Days", doc(strings.Replace(logging, "<Days>7</Days>", "", 1))},
		// Azure's recorded answer to 366 days (the Go SDK's
		// TestRetentionTooLong) is InvalidXmlDocument.
		{"Days out of range", doc(strings.Replace(logging, "<Days>7</Days>", "<Days>366</Days>", 1))},
		{"Days zero", doc(strings.Replace(logging, "<Days>7</Days>", "<Days>0</Days>", 1))},
		{"Days not a number", doc(strings.Replace(logging, "<Days>7</Days>", "<Days>x</Days>", 1))},
		{"value: not a boolean", doc(strings.Replace(logging, "<Delete>true</Delete>", "<Delete>yes</Delete>", 1))},
		{"value: bad version", doc(strings.Replace(logging, "1.0", "2.0", 1))},
		{"metrics enabled without IncludeAPIs", doc(`<HourMetrics>` + strings.Replace(metrics, "<IncludeAPIs>false</IncludeAPIs>", "", 1) + `</HourMetrics>`)},
		{"misplaced element", doc(`<HourMetrics>` + metrics + `<Days>1</Days></HourMetrics>`)},
		{"value: bad CORS method", doc(`<Cors><CorsRule>` + strings.Replace(rule, "GET,PUT", "GET,FETCH", 1) + `</CorsRule></Cors>`)},
		{"six CORS rules", doc(`<Cors>` + strings.Repeat(`<CorsRule>`+rule+`</CorsRule>`, 6) + `</Cors>`)},
		{"wrong root", `<ServiceProperties>` + logging + `</ServiceProperties>`},
		{"empty body", ``},
		{"attribute", `<StorageServiceProperties version="1">` + logging + `</StorageServiceProperties>`},
	} {
		w := serve(hd, signedRequest("PUT", target, tc.body))
		code := "InvalidXmlDocument"
		if strings.HasPrefix(tc.name, "value: ") {
			code = "InvalidXmlNodeValue"
		}
		if w.Code != http.StatusBadRequest || w.Header().Get("x-ms-error-code") != code {
			t.Errorf("%s: %d %s", tc.name, w.Code, w.Body)
		}
		if got := get(); got != before {
			t.Fatalf("%s: the properties changed:\n%s\nwant\n%s", tc.name, got, before)
		}
	}
	// A valid body replaces the elements it holds, and only them.
	if w := serve(hd, signedRequest("PUT", target, doc(`<MinuteMetrics>`+metrics+`</MinuteMetrics><Cors><CorsRule>`+rule+`</CorsRule></Cors>`))); w.Code != http.StatusAccepted {
		t.Fatalf("set: %d %s", w.Code, w.Body)
	}
	after := get()
	for _, want := range []string{logging, `<MinuteMetrics>` + metrics + `</MinuteMetrics>`, `<Cors><CorsRule>` + rule + `</CorsRule></Cors>`} {
		if !strings.Contains(after, want) {
			t.Errorf("after a partial set, missing %s in\n%s", want, after)
		}
	}
	// Text where only elements belong is refused too, even when the
	// element holds nothing else: it would otherwise clear the rules.
	for _, body := range []string{
		`<StorageServiceProperties>xyz</StorageServiceProperties>`,
		doc(`<Cors>xyz</Cors>`),
		doc(`<Cors><CorsRule>xyz</CorsRule></Cors>`),
		doc(`<Logging>xyz</Logging>`),
	} {
		w := serve(hd, signedRequest("PUT", target, body))
		if w.Code != http.StatusBadRequest || w.Header().Get("x-ms-error-code") != "InvalidXmlDocument" {
			t.Errorf("%s: %d %s", body, w.Code, w.Body)
		}
		if got := get(); got != after {
			t.Fatalf("%s: the properties changed:\n%s\nwant\n%s", body, got, after)
		}
	}
}

// TestSASVersion: a correctly signed SAS must name a storage service
// version this server accepts.
func TestSASVersion(t *testing.T) {
	hd, _ := newTestHandler(t, nil)
	future := time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04:05Z")
	type versionCase struct {
		sv     string
		status int
	}
	cases := []versionCase{
		{"2019-02-02", 200}, {"2015-04-05", 200}, {"2021-06-08", 200}, {"2025-11-05", 200},
		{"2026-02-06", 200}, {"2026-04-06", 200}, {"2026-06-06", 200},
		{"garbage", 403}, {"2012-02-12", 403}, {"2019-02-03", 403}, {"", 403}, {"2019-02-02 ", 403},
		{"2026-06-07", 403},
	}
	for _, v := range serviceVersions {
		cases = append(cases, versionCase{v, 200})
	}
	for _, tc := range cases {
		q := signServiceSAS(map[string]string{"sv": tc.sv, "tn": "things", "sp": "r", "se": future})
		w := serve(hd, httptest.NewRequest("GET", "/devstoreaccount1/things()?"+q, nil))
		if w.Code != tc.status || tc.status == 403 && w.Header().Get("x-ms-error-code") != "AuthenticationFailed" {
			t.Errorf("service SAS sv=%q: %d %s", tc.sv, w.Code, w.Body)
		}
		if tc.sv == "" {
			continue
		}
		w = serve(hd, httptest.NewRequest("GET", "/devstoreaccount1/Tables?"+signAccountSAS("rl", "sco", tc.sv), nil))
		if w.Code != tc.status {
			t.Errorf("account SAS sv=%q: %d %s", tc.sv, w.Code, w.Body)
		}
	}
}

// TestSASRepeatedParameter: a SAS whose parameters include one twice
// (sig first of all) is refused, whichever copy is the valid one.
func TestSASRepeatedParameter(t *testing.T) {
	hd, _ := newTestHandler(t, nil)
	future := time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04:05Z")
	q := signServiceSAS(map[string]string{"sv": "2019-02-02", "tn": "things", "sp": "r", "se": future})
	if w := serve(hd, httptest.NewRequest("GET", "/devstoreaccount1/things()?"+q, nil)); w.Code != 200 {
		t.Fatalf("valid SAS: %d %s", w.Code, w.Body)
	}
	for _, extra := range []string{"sig=AAAA", "sp=r", "sv=2019-02-02", "se=" + future, "tn=things"} {
		for _, target := range []string{q + "&" + extra, extra + "&" + q} {
			w := serve(hd, httptest.NewRequest("GET", "/devstoreaccount1/things()?"+target, nil))
			if w.Code != 403 || w.Header().Get("x-ms-error-code") != "AuthenticationFailed" {
				t.Errorf("SAS with %s twice: %d %s", extra, w.Code, w.Body)
			}
		}
	}
}

// TestHostAccount: a host-style Host names the account; it must be the
// server's, whatever the path or the signature say.
func TestHostAccount(t *testing.T) {
	hd, _ := newTestHandler(t, nil)
	anon, _ := newTestHandler(t, &Options{Anonymous: true})
	for _, tc := range []struct {
		host, target string
		status       int
	}{
		{"devstoreaccount1.table.core.windows.net", "/Tables", 200},
		{"DevStoreAccount1.table.core.windows.net:443", "/Tables", 200},
		{"devstoreaccount1.table.core.windows.net", "/devstoreaccount1/Tables", 200},
		{"127.0.0.1:10002", "/devstoreaccount1/Tables", 200},
		{"localhost:10002", "/devstoreaccount1/Tables", 200},
		{"tables.example.net", "/devstoreaccount1/Tables", 200},
		{"other.table.core.windows.net", "/Tables", 403},
		{"other.table.core.windows.net", "/devstoreaccount1/Tables", 403},
		{"other.table.localhost:10002", "/devstoreaccount1/Tables", 403},
	} {
		for _, h := range []http.Handler{hd, anon} {
			r := httptest.NewRequest("GET", tc.target, nil)
			r.Host = tc.host
			signLite(r, DevAccount, DevKey, time.Now())
			w := serve(h, r)
			if w.Code != tc.status || tc.status == 403 && w.Header().Get("x-ms-error-code") != "AuthenticationFailed" {
				t.Errorf("Host %s %s: %d %s", tc.host, tc.target, w.Code, w.Body)
			}
		}
	}
	// A batch's sub-requests may not name another account either.
	body := strings.Replace(string(buildBatch(t, "p", 1, 1000)), "http://127.0.0.1/devstoreaccount1/things", "https://other.table.core.windows.net/things", 1)
	r := signedRequest("POST", "/devstoreaccount1/$batch", body)
	r.Header.Set("Content-Type", "multipart/mixed; boundary="+batchBoundary)
	if w := serve(hd, r); w.Code != http.StatusForbidden {
		t.Errorf("batch naming another account: %d %s", w.Code, w.Body)
	}
}

// TestServiceVersions: the versions lists are Azure's date format, in
// order, without repeats, every version in them is accepted in
// x-ms-version and echoed, and any other value is refused.
func TestServiceVersions(t *testing.T) {
	hd, _ := newTestHandler(t, &Options{Anonymous: true})
	all := append(slices.Clone(olderVersions), serviceVersions...)
	for i, v := range all {
		if _, err := time.Parse("2006-01-02", v); err != nil {
			t.Errorf("version %q is not a date: %v", v, err)
		}
		if i > 0 && all[i-1] >= v {
			t.Errorf("version %q does not follow %q", v, all[i-1])
		}
		r := httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil)
		r.Header.Set("x-ms-version", v)
		w := serve(hd, r)
		if w.Code != 200 || w.Header().Get("x-ms-version") != v {
			t.Errorf("x-ms-version %s: %d, echoed %q: %s", v, w.Code, w.Header().Get("x-ms-version"), w.Body)
		}
	}
	// Anything else is Azure's 400 InvalidHeaderValue, answered at the
	// default version; no header is the default version.
	for _, v := range []string{"invalid", "2019-02-03", "2099-01-01", "2019-02-02 x", "2019-2-2"} {
		r := httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil)
		r.Header.Set("x-ms-version", v)
		w := serve(hd, r)
		if w.Code != 400 || w.Header().Get("x-ms-error-code") != "InvalidHeaderValue" || w.Header().Get("x-ms-version") != "2019-02-02" {
			t.Errorf("x-ms-version %q: %d %s, echoed %q", v, w.Code, w.Header().Get("x-ms-error-code"), w.Header().Get("x-ms-version"))
		}
	}
	w := serve(hd, httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil))
	if w.Code != 200 || w.Header().Get("x-ms-version") != "2019-02-02" {
		t.Errorf("no x-ms-version: %d, echoed %q", w.Code, w.Header().Get("x-ms-version"))
	}
}
