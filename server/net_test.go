package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
)

// netServer is the handler served over a loopback TCP listener with
// NewHTTPServer's settings and NewListener, as tablestore serve runs it.
type netServer struct {
	url string // http://127.0.0.1:port/devstoreaccount1
	db  *tablestore.DB
	h   *handler
}

// newNetServer starts a server over db (a new in-memory store when nil)
// with table "things"; it is closed when the test ends.
func newNetServer(t testing.TB, db *tablestore.DB, opts *Options) *netServer {
	t.Helper()
	return newNetServerWith(t, db, opts, nil)
}

// newNetServerWith is newNetServer with the listener wrapped by wrap
// (when not nil) under NewListener.
func newNetServerWith(t testing.TB, db *tablestore.DB, opts *Options, wrap func(net.Listener) net.Listener) *netServer {
	t.Helper()
	if db == nil {
		var err error
		if db, err = tablestore.OpenInMemory(&tablestore.Options{NoSync: true}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
	}
	if _, err := db.CreateTableIfNotExists(context.Background(), "things"); err != nil {
		t.Fatal(err)
	}
	hd, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(hd)
	hs := NewHTTPServer("", hd)
	ts.Config.ReadHeaderTimeout = hs.ReadHeaderTimeout
	ts.Config.ReadTimeout = hs.ReadTimeout
	ts.Config.WriteTimeout = hs.WriteTimeout
	ts.Config.IdleTimeout = hs.IdleTimeout
	ts.Config.MaxHeaderBytes = hs.MaxHeaderBytes
	if wrap != nil {
		ts.Listener = wrap(ts.Listener)
	}
	ts.Listener = NewListener(ts.Listener)
	ts.Start()
	t.Cleanup(ts.Close)
	return &netServer{url: ts.URL + "/" + DevAccount, db: db, h: hd.(*handler)}
}

// credential is a way to authorize a request: it signs r (whose
// URL.RawQuery it may extend) for the server's account.
type credential struct {
	name string
	sign func(r *http.Request)
}

// sharedKeyCred signs with SharedKey or SharedKeyLite (lite) and DevKey.
func sharedKeyCred(lite bool) credential {
	name := "SharedKey"
	if lite {
		name = "SharedKeyLite"
	}
	return credential{name: name, sign: func(r *http.Request) {
		date := time.Now().UTC().Format(http.TimeFormat)
		r.Header.Set("x-ms-date", date)
		res := "/" + DevAccount + r.URL.EscapedPath()
		if c := r.URL.Query().Get("comp"); c != "" {
			res += "?comp=" + c
		}
		toSign := date + "\n" + res
		if !lite {
			toSign = r.Method + "\n" + r.Header.Get("Content-MD5") + "\n" + r.Header.Get("Content-Type") + "\n" + toSign
		}
		r.Header.Set("Authorization", name+" "+DevAccount+":"+hmacDevKey(toSign))
	}}
}

// serviceSASCred is a service SAS for table things with permissions sp.
func serviceSASCred(sp string) credential {
	fields := map[string]string{"sv": "2019-02-02", "tn": "things", "sp": sp,
		"se": time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04:05Z")}
	return credential{name: "service SAS sp=" + sp, sign: func(r *http.Request) { addQuery(r, signServiceSAS(fields)) }}
}

// accountSASCred is an account SAS for the table service, every resource
// type, with permissions sp.
func accountSASCred(sp string) credential {
	return credential{name: "account SAS sp=" + sp, sign: func(r *http.Request) { addQuery(r, signAccountSAS(sp, "sco", "2019-02-02")) }}
}

// signAccountSAS builds an account SAS query signed with DevKey.
func signAccountSAS(sp, srt, sv string) string {
	se := time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04:05Z")
	toSign := strings.Join([]string{DevAccount, sp, "t", srt, "", se, "", "", sv}, "\n") + "\n"
	if sv >= "2020-12-06" {
		toSign = strings.Join([]string{DevAccount, sp, "t", srt, "", se, "", "", sv, ""}, "\n") + "\n"
	}
	v := url.Values{"sv": {sv}, "ss": {"t"}, "srt": {srt}, "sp": {sp}, "se": {se}, "sig": {hmacDevKey(toSign)}}
	return v.Encode()
}

func addQuery(r *http.Request, q string) {
	if r.URL.RawQuery != "" {
		r.URL.RawQuery += "&"
	}
	r.URL.RawQuery += q
}

func hmacDevKey(s string) string {
	k, _ := base64.StdEncoding.DecodeString(DevKey)
	m := hmac.New(sha256.New, k)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// do sends one request to the server: method, a path after the account
// (with its query), a body, signed by cred unless cred.sign is nil. It
// returns the status, the error code and the body.
func (s *netServer) do(t testing.TB, c *http.Client, cred credential, method, path string, body io.Reader, hdr map[string]string) (int, string, string) {
	t.Helper()
	r, err := http.NewRequest(method, s.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	if r.Header.Get("Content-Type") == "" && body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	r.Header.Set("x-ms-version", "2019-02-02")
	if cred.sign != nil {
		cred.sign(r)
	}
	resp, err := c.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("x-ms-error-code"), string(b)
}

// entityJSONBody is a small entity's JSON.
func entityJSONBody(pk, rk string) string {
	return fmt.Sprintf(`{"PartitionKey":%q,"RowKey":%q,"N":1}`, pk, rk)
}
