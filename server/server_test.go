package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
)

func newTestHandler(t *testing.T, opts *Options) (http.Handler, *tablestore.DB) {
	t.Helper()
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateTable(context.Background(), "things"); err != nil {
		t.Fatal(err)
	}
	return h, db
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestNewOptions(t *testing.T) {
	db, _ := tablestore.OpenInMemory(nil)
	defer db.Close()
	for _, o := range []*Options{
		{Account: "Bad_Name"},
		{Keys: []string{"not base64!"}},
		{Keys: []string{DevKey, DevKey, DevKey}},
	} {
		if _, err := New(db, o); err == nil {
			t.Errorf("New(%+v) succeeded", o)
		}
	}
	if _, err := New(nil, nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}

// TestSharedKeySecondKey signs with the full SharedKey scheme and the
// second account key, host-style.
func TestSharedKeySecondKey(t *testing.T) {
	key2 := base64.StdEncoding.EncodeToString([]byte("second key for the account"))
	h, _ := newTestHandler(t, &Options{Account: "acct", Keys: []string{DevKey, key2}})
	r := httptest.NewRequest("GET", "/Tables", nil)
	r.Host = "acct.table.example.net"
	date := time.Now().UTC().Format(http.TimeFormat)
	r.Header.Set("x-ms-date", date)
	r.Header.Set("Content-Type", "application/json")
	k, _ := base64.StdEncoding.DecodeString(key2)
	m := hmac.New(sha256.New, k)
	m.Write([]byte("GET\n\napplication/json\n" + date + "\n/acct/Tables"))
	r.Header.Set("Authorization", "SharedKey acct:"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	w := serve(h, r)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"TableName":"things"`) ||
		!strings.Contains(w.Body.String(), `"http://acct.table.example.net/$metadata#Tables"`) {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	// The same signature over another verb fails.
	r.Method = "DELETE"
	if w := serve(h, r); w.Code != http.StatusForbidden {
		t.Fatalf("re-used signature: %d", w.Code)
	}
}

func TestAnonymousAndEcho(t *testing.T) {
	h, _ := newTestHandler(t, &Options{Anonymous: true})
	r := httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil)
	r.Header.Set("x-ms-client-request-id", "client-1")
	r.Header.Set("x-ms-version", "2021-12-02")
	w := serve(h, r)
	if w.Code != 200 || w.Header().Get("x-ms-client-request-id") != "client-1" || w.Header().Get("x-ms-version") != "2021-12-02" ||
		w.Header().Get("x-ms-request-id") == "" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
}

func TestBodyLimit(t *testing.T) {
	h, db := newTestHandler(t, &Options{Anonymous: true, MaxBodyBytes: 1024})
	body := `{"PartitionKey":"p","RowKey":"r","S":"` + strings.Repeat("x", 2000) + `"}`
	r := httptest.NewRequest("POST", "/devstoreaccount1/things", strings.NewReader(body))
	w := serve(h, r)
	if w.Code != http.StatusRequestEntityTooLarge || w.Header().Get("x-ms-error-code") != "RequestBodyTooLarge" {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	// Without a Content-Length the limit still holds while reading.
	r = httptest.NewRequest("POST", "/devstoreaccount1/things", hideLength(body))
	r.ContentLength = -1
	if w := serve(h, r); w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("chunked: %d %s", w.Code, w.Body)
	}
	if _, err := db.Table("things").Get(context.Background(), "p", "r", nil); err == nil {
		t.Fatal("an oversized body was stored")
	}
	// A 4 MiB+ batch is refused by default.
	h2, _ := newTestHandler(t, &Options{Anonymous: true})
	r = httptest.NewRequest("POST", "/devstoreaccount1/$batch", bytes.NewReader(make([]byte, DefaultMaxBodyBytes+1)))
	r.Header.Set("Content-Type", "multipart/mixed; boundary=b")
	if w := serve(h2, r); w.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("big batch: %d", w.Code)
	}
}

// hideLength hides the length of a body.
func hideLength(s string) *onlyReader { return &onlyReader{r: strings.NewReader(s)} }

type onlyReader struct{ r *strings.Reader }

func (o *onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// blockingDB holds requests inside the handler until released.
func TestServerBusy(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	hd, _ := newTestHandler(t, &Options{Anonymous: true, MaxConcurrentRequests: 1, QueueWait: 10 * time.Millisecond, Logger: logger})
	h := hd.(*handler)
	// Take the only slot, as a request in flight would.
	if !h.work.acquire(context.Background(), 0) {
		t.Fatal("no slot")
	}
	w := serve(h, httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || w.Header().Get("x-ms-error-code") != "ServerBusy" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	h.work.release()
	if w := serve(h, httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil)); w.Code != 200 {
		t.Fatalf("after release: %d", w.Code)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := strings.Count(logs.String(), "msg=request"); n != 2 || !strings.Contains(logs.String(), "status=503") || !strings.Contains(logs.String(), "request_id=") {
		t.Fatalf("log:\n%s", logs.String())
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestParseKeyArgs(t *testing.T) {
	for _, tc := range []struct {
		in, pk, rk string
		ok         bool
	}{
		{"PartitionKey='a',RowKey='b'", "a", "b", true},
		{"RowKey='b', PartitionKey='a'", "a", "b", true},
		{" PartitionKey = 'a''b' , RowKey = '' ", "a'b", "", true},
		{"PartitionKey='a',RowKey='b',RowKey='c'", "", "", false},
		{"PartitionKey='a',PartitionKey='b'", "", "", false},
		{"PartitionKey='a'", "", "", false},
		{"PartitionKey='a,RowKey='b'", "", "", false},
		{"PartitionKey=a,RowKey='b'", "", "", false},
		{"PartitionKey='a'RowKey='b'", "", "", false},
	} {
		pk, rk, err := parseKeyArgs(tc.in)
		if (err == nil) != tc.ok || pk != tc.pk || rk != tc.rk {
			t.Errorf("%q: %q %q %v", tc.in, pk, rk, err)
		}
	}
}

func TestNextKeyEncoding(t *testing.T) {
	for _, k := range []string{"", "a", "O'Neil", "你好", "1!4!YWJj", strings.Repeat("z", 300)} {
		enc := encodeNextKey(k)
		if enc == "" || decodeNextKey(enc) != k {
			t.Errorf("%q -> %q -> %q", k, enc, decodeNextKey(enc))
		}
		for _, c := range []byte(enc) {
			if c < 0x21 || c > 0x7e {
				t.Errorf("%q encodes to non-ASCII %q", k, enc)
			}
		}
	}
	if decodeNextKey("plain") != "plain" {
		t.Error("a raw key is not kept")
	}
}

func TestSASRange(t *testing.T) {
	g := &sasGrant{spk: "b", hasSPK: true, srk: "5", hasSRK: true, epk: "d", hasEPK: true}
	for _, tc := range []struct {
		pk, rk string
		in     bool
	}{
		{"a", "9", false}, {"b", "4", false}, {"b", "5", true}, {"c", "", true}, {"d", "zz", true}, {"e", "", false},
	} {
		if g.inRange(tc.pk, tc.rk) != tc.in {
			t.Errorf("(%s,%s) in range = %v", tc.pk, tc.rk, !tc.in)
		}
	}
	if got := (&request{sas: g}).mustRestrict(t, "X eq 1) or (true"); got != "" {
		t.Fatalf("an unbalanced filter was accepted: %q", got)
	}
	got := (&request{sas: g}).mustRestrict(t, "X eq 1 or Y eq 2")
	want := "(X eq 1 or Y eq 2) and ((PartitionKey gt 'b' or PartitionKey eq 'b' and RowKey ge '5') and PartitionKey le 'd')"
	if got != want {
		t.Fatalf("restricted filter\n got %s\nwant %s", got, want)
	}
}

// TestSASRangeEmptyKeys: a SAS key range may name empty keys, which are
// bounds like any other: spk= srk= admits every entity, epk= erk= only
// the entity whose keys are both empty.
func TestSASRangeEmptyKeys(t *testing.T) {
	from := &sasGrant{hasSPK: true, hasSRK: true}
	upto := &sasGrant{hasEPK: true, hasERK: true}
	part := &sasGrant{hasSPK: true, hasEPK: true, srk: "m", hasSRK: true}
	for _, tc := range []struct {
		pk, rk           string
		from, upto, part bool
	}{
		{"", "", true, true, false}, {"", "a", true, false, false}, {"", "m", true, false, true},
		{"", "z", true, false, true}, {"a", "", true, false, false},
	} {
		if from.inRange(tc.pk, tc.rk) != tc.from || upto.inRange(tc.pk, tc.rk) != tc.upto || part.inRange(tc.pk, tc.rk) != tc.part {
			t.Errorf("(%q,%q): from %v upto %v part %v", tc.pk, tc.rk, from.inRange(tc.pk, tc.rk), upto.inRange(tc.pk, tc.rk), part.inRange(tc.pk, tc.rk))
		}
	}
	got := (&request{sas: upto}).mustRestrict(t, "X eq 1")
	if want := "X eq 1 and (PartitionKey lt '' or PartitionKey eq '' and RowKey le '')"; got != want {
		t.Fatalf("restricted filter\n got %s\nwant %s", got, want)
	}

	hd, db := newTestHandler(t, nil)
	tb := db.Table("things")
	for _, k := range [][2]string{{"", ""}, {"", "r"}, {"p", ""}} {
		if err := tb.Insert(context.Background(), &tablestore.Entity{PartitionKey: k[0], RowKey: k[1]}); err != nil {
			t.Fatal(err)
		}
	}
	future := time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04:05Z")
	q := signServiceSAS(map[string]string{"sv": "2026-06-06", "tn": "things", "sp": "r", "se": future, "epk": "", "erk": ""})
	w := serve(hd, httptest.NewRequest("GET", "/devstoreaccount1/things()?$format=application/json;odata=nometadata&"+q, nil))
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"PartitionKey":"","RowKey":""`) || strings.Count(w.Body.String(), "PartitionKey") != 1 {
		t.Fatalf("query under epk= erk=: %d %s", w.Code, w.Body)
	}
	w = serve(hd, httptest.NewRequest("GET", "/devstoreaccount1/things(PartitionKey='',RowKey='')?"+q, nil))
	if w.Code != 200 {
		t.Fatalf("get ('', '') under epk= erk=: %d %s", w.Code, w.Body)
	}
	w = serve(hd, httptest.NewRequest("GET", "/devstoreaccount1/things(PartitionKey='',RowKey='r')?"+q, nil))
	if w.Code != 403 {
		t.Fatalf("get ('', 'r') under epk= erk=: %d %s", w.Code, w.Body)
	}
}

func (q *request) mustRestrict(t *testing.T, f string) string {
	s, err := q.restrictFilter(f)
	if err != nil {
		return ""
	}
	return s
}

// signServiceSAS builds a service SAS query for table, signed with DevKey.
func signServiceSAS(fields map[string]string) string {
	get := func(k string) string { return fields[k] }
	toSign := strings.Join([]string{get("sp"), get("st"), get("se"), "/table/" + DevAccount + "/" + strings.ToLower(get("tn")),
		get("si"), get("sip"), get("spr"), get("sv"), get("spk"), get("srk"), get("epk"), get("erk")}, "\n")
	k, _ := base64.StdEncoding.DecodeString(DevKey)
	m := hmac.New(sha256.New, k)
	m.Write([]byte(toSign))
	v := make([]string, 0, len(fields)+1)
	for k, val := range fields {
		v = append(v, k+"="+urlQueryEscape(val))
	}
	v = append(v, "sig="+urlQueryEscape(base64.StdEncoding.EncodeToString(m.Sum(nil))))
	return strings.Join(v, "&")
}

func urlQueryEscape(s string) string {
	return strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D", " ", "%20").Replace(s)
}

func TestServiceSASRules(t *testing.T) {
	hd, _ := newTestHandler(t, nil)
	h := hd.(*handler)
	future := time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04:05Z")
	past := time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04Z")
	if err := root.SetAccessPolicies(h.db.Table("things"), context.Background(), []driver.AccessPolicy{{ID: "pol", Permission: "r", Expiry: time.Now().Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		fields map[string]string
		status int
		code   string
	}{
		{"ok", map[string]string{"sv": "2019-02-02", "tn": "things", "sp": "r", "se": future}, 200, ""},
		{"date only expiry", map[string]string{"sv": "2019-02-02", "tn": "THINGS", "sp": "r", "se": "2999-01-01"}, 200, ""},
		{"expired", map[string]string{"sv": "2019-02-02", "tn": "things", "sp": "r", "se": past}, 403, "AuthenticationFailed"},
		{"not yet", map[string]string{"sv": "2019-02-02", "tn": "things", "sp": "r", "st": future, "se": "2999-01-01"}, 403, "AuthenticationFailed"},
		{"order", map[string]string{"sv": "2019-02-02", "tn": "things", "sp": "dr", "se": future}, 403, "AuthenticationFailed"},
		{"no read", map[string]string{"sv": "2019-02-02", "tn": "things", "sp": "a", "se": future}, 403, "AuthorizationPermissionMismatch"},
		{"other table", map[string]string{"sv": "2019-02-02", "tn": "others", "sp": "r", "se": future}, 403, "AuthorizationPermissionMismatch"},
		{"policy", map[string]string{"sv": "2019-02-02", "tn": "things", "si": "pol"}, 200, ""},
		{"policy and sp", map[string]string{"sv": "2019-02-02", "tn": "things", "si": "pol", "sp": "r"}, 400, "InvalidQueryParameterValue"},
		{"policy and se", map[string]string{"sv": "2019-02-02", "tn": "things", "si": "pol", "se": future}, 400, "InvalidQueryParameterValue"},
		{"no policy", map[string]string{"sv": "2019-02-02", "tn": "things", "si": "nope"}, 403, "AuthenticationFailed"},
		{"ip", map[string]string{"sv": "2019-02-02", "tn": "things", "sp": "r", "se": future, "sip": "10.0.0.1-10.0.0.9"}, 403, "AuthorizationSourceIPMismatch"},
		{"ip ok", map[string]string{"sv": "2019-02-02", "tn": "things", "sp": "r", "se": future, "sip": "192.0.2.1"}, 200, ""},
	} {
		target := "/devstoreaccount1/things()?" + signServiceSAS(tc.fields)
		r := httptest.NewRequest("GET", target, nil)
		w := serve(h, r)
		if w.Code != tc.status || w.Header().Get("x-ms-error-code") != tc.code {
			t.Errorf("%s: %d %s: %s", tc.name, w.Code, w.Header().Get("x-ms-error-code"), w.Body)
		}
	}
}
