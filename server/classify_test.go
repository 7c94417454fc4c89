package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// TestClassify names each operation as the request log does, for
// path-style and host-style addressing.
func TestClassify(t *testing.T) {
	for _, c := range []struct {
		method, target, host string
		hdr                  []string
		want                 RequestInfo
	}{
		{"GET", "/devstoreaccount1/Tables", "127.0.0.1", nil, RequestInfo{Operation: "QueryTables"}},
		{"POST", "/devstoreaccount1/Tables", "127.0.0.1", nil, RequestInfo{Operation: "CreateTable"}},
		{"DELETE", "/devstoreaccount1/Tables('t1')", "127.0.0.1", nil, RequestInfo{Operation: "DeleteTable", Table: "t1"}},
		{"POST", "/devstoreaccount1/t1", "127.0.0.1", nil, RequestInfo{Operation: "InsertEntity", Table: "t1"}},
		{"GET", "/devstoreaccount1/t1()?$filter=x", "127.0.0.1", nil, RequestInfo{Operation: "QueryEntities", Table: "t1"}},
		{"GET", "/devstoreaccount1/t1(PartitionKey='a%27%27b',RowKey='r')", "127.0.0.1", nil, RequestInfo{Operation: "QueryEntity", Table: "t1", PartitionKey: "a'b", RowKey: "r"}},
		{"PUT", "/devstoreaccount1/t1(PartitionKey='p',RowKey='r')", "127.0.0.1", []string{"If-Match", "*"}, RequestInfo{Operation: "UpdateEntity", Table: "t1", PartitionKey: "p", RowKey: "r"}},
		{"PUT", "/devstoreaccount1/t1(PartitionKey='p',RowKey='r')", "127.0.0.1", nil, RequestInfo{Operation: "InsertOrReplaceEntity", Table: "t1", PartitionKey: "p", RowKey: "r"}},
		{"POST", "/devstoreaccount1/t1(PartitionKey='p',RowKey='r')", "127.0.0.1", []string{"X-HTTP-Method", "MERGE"}, RequestInfo{Operation: "InsertOrMergeEntity", Table: "t1", PartitionKey: "p", RowKey: "r"}},
		{"DELETE", "/t1(PartitionKey='p',RowKey='r')", "devstoreaccount1.table.example", nil, RequestInfo{Operation: "DeleteEntity", Table: "t1", PartitionKey: "p", RowKey: "r"}},
		{"POST", "/devstoreaccount1/$batch", "127.0.0.1", nil, RequestInfo{Operation: "EntityGroupTransaction"}},
		{"GET", "/devstoreaccount1/?restype=service&comp=properties", "127.0.0.1", nil, RequestInfo{Operation: "GetTableServiceProperties"}},
		{"PUT", "/devstoreaccount1/t1?comp=acl", "127.0.0.1", nil, RequestInfo{Operation: "SetTableACL", Table: "t1"}},
		{"OPTIONS", "/devstoreaccount1/t1", "127.0.0.1", nil, RequestInfo{Operation: "Preflight"}},
		{"GET", "/devstoreaccount1/a/b", "127.0.0.1", nil, RequestInfo{Operation: "Unknown"}},
	} {
		r := httptest.NewRequest(c.method, "http://"+c.host+c.target, nil)
		r.Host = c.host
		for i := 0; i+1 < len(c.hdr); i += 2 {
			r.Header.Set(c.hdr[i], c.hdr[i+1])
		}
		if got := Classify(r, DevAccount); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.method, c.target, got, c.want)
		}
		if op := Classify(r, DevAccount).Operation; op != "Unknown" && !slices.Contains(Operations, op) {
			t.Errorf("%s is not in Operations", op)
		}
	}
}

// TestOptionsNow: the handler's Date header and SAS windows follow
// Options.Now.
func TestOptionsNow(t *testing.T) {
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	h, err := New(db, &Options{Anonymous: true, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/devstoreaccount1/Tables", nil))
	if got := w.Header().Get("Date"); got != at.Format(http.TimeFormat) {
		t.Fatalf("Date %q, want %q", got, at.Format(http.TimeFormat))
	}
	if err := checkTimes(at, "", "2031-05-06T07:00:00Z"); err == nil {
		t.Fatal("a signature expired by Options.Now was accepted")
	}
	if err := checkTimes(at, "", "2031-05-06T08:00:00Z"); err != nil {
		t.Fatalf("a signature valid by Options.Now: %v", err)
	}
}

// TestOptionsNowBearer: a bearer token's exp is judged by Options.Now
// when Bearer.Now is unset.
func TestOptionsNowBearer(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	real := time.Now()
	var clock atomic.Int64 // offset from the wall clock
	b := &Bearer{JWKS: testJWKS(rk, ek), Issuers: []string{testIssuer}}
	h, _ := newTestHandler(t, &Options{Bearer: b, Now: func() time.Time { return time.Now().Add(time.Duration(clock.Load())) }})
	tk := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": testIssuer, "aud": StorageAudience,
		"exp": real.Add(time.Hour).Unix(), "nbf": real.Add(-time.Minute).Unix(), "oid": "user-1",
		"roles": []string{RoleTableDataContributor}})
	tk.Header["kid"] = "rsa1"
	token, err := tk.SignedString(rk)
	if err != nil {
		t.Fatal(err)
	}
	get := func() int {
		r := httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil)
		r.TLS = &tls.ConnectionState{}
		r.Header.Set("Authorization", "Bearer "+token)
		return serve(h, r).Code
	}
	if c := get(); c != http.StatusOK {
		t.Fatalf("a valid token: %d", c)
	}
	clock.Store(int64(2 * time.Hour))
	if c := get(); c != http.StatusUnauthorized {
		t.Fatalf("a token expired by Options.Now: %d, want 401", c)
	}
}

// TestClassifyBatch: a $batch's sub-operations are named as requests of
// their own, with the keys of their entities (an insert's from its
// body); a body that is no batch is refused.
func TestClassifyBatch(t *testing.T) {
	body := "--" + batchBoundary + "\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n" +
		"--cs\r\nContent-Type: application/http\r\n\r\nPOST http://127.0.0.1/devstoreaccount1/things HTTP/1.1\r\nContent-Type: application/json\r\n\r\n" +
		`{"PartitionKey":"p","RowKey":"1"}` + "\r\n" +
		"--cs\r\nContent-Type: application/http\r\n\r\nMERGE http://127.0.0.1/devstoreaccount1/things(PartitionKey='p',RowKey='2') HTTP/1.1\r\nIf-Match: *\r\nContent-Type: application/json\r\n\r\n{}\r\n" +
		"--cs\r\nContent-Type: application/http\r\n\r\nDELETE http://127.0.0.1/devstoreaccount1/things(PartitionKey='p',RowKey='3') HTTP/1.1\r\nIf-Match: *\r\n\r\n\r\n" +
		"--cs\r\nContent-Type: application/http\r\n\r\nPUT http://127.0.0.1/devstoreaccount1/things(PartitionKey='p',RowKey='4') HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{}\r\n" +
		"--cs--\r\n--" + batchBoundary + "--\r\n"
	got, err := ClassifyBatch("multipart/mixed; boundary="+batchBoundary, []byte(body), DevAccount)
	if err != nil {
		t.Fatal(err)
	}
	want := []RequestInfo{
		{Operation: "InsertEntity", Table: "things", PartitionKey: "p", RowKey: "1"},
		{Operation: "MergeEntity", Table: "things", PartitionKey: "p", RowKey: "2"},
		{Operation: "DeleteEntity", Table: "things", PartitionKey: "p", RowKey: "3"},
		{Operation: "InsertOrReplaceEntity", Table: "things", PartitionKey: "p", RowKey: "4"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ClassifyBatch = %+v, want %+v", got, want)
	}
	if _, err := ClassifyBatch("application/json", []byte(body), DevAccount); tablestore.ErrorCode(err) != edm.CodeInvalidInput {
		t.Fatalf("a body without a boundary: %v", err)
	}
}
