package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// sign is the base64 HMAC-SHA256 of s under the base64 key.
func sign(t *testing.T, key, s string) string {
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, k)
	m.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// TestVerify: verify accepts a signature under either account key and
// nothing else, follows a key rotation at once though its HMAC states are
// reused, and allocates nothing for a signature of the usual length.
func TestVerify(t *testing.T) {
	hd, _ := newTestHandler(t, nil)
	h := hd.(*handler)
	const other = "b3RoZXIta2V5LW9mLTMyLWJ5dGVzLWZvci10aGUtdGVzdA=="
	const text = "Mon, 01 Jan 2024 00:00:00 GMT\n/devstoreaccount1/t()"
	dev, oth := sign(t, DevKey, text), sign(t, other, text)
	check := func(sig string, want bool) {
		t.Helper()
		if got := h.verify(text, sig); got != want {
			t.Fatalf("verify(%.12s...) = %v, want %v", sig, got, want)
		}
	}
	check(dev, true)
	check(oth, false)
	check(sign(t, DevKey, text+"x"), false)
	check("not base64!", false)
	check(dev+dev, false)
	check("", false)
	if err := h.setKeys([]string{other, DevKey}); err != nil {
		t.Fatal(err)
	}
	check(oth, true)
	check(dev, true)
	if err := h.setKeys([]string{other}); err != nil {
		t.Fatal(err)
	}
	check(dev, false)
	check(oth, true)
	if raceEnabled {
		return // the pool drops items under the race detector
	}
	if n := testing.AllocsPerRun(100, func() { h.verify(text, oth) }); n != 0 {
		t.Fatalf("verify allocates %v times, want 0", n)
	}
}

// BenchmarkSignedPointRead is a point read as the SDKs send it, signed
// with SharedKeyLite, through the handler with metrics, its response
// dropped: the server's own allocations per get without net/http's.
//
// Reproduce: go test ./server -run XXX -bench SignedPointRead -benchmem
func BenchmarkSignedPointRead(b *testing.B) {
	h, err := New(benchStore(b), &Options{Metrics: NewMetrics()})
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/devstoreaccount1/t03(PartitionKey='p4',RowKey='042')", nil)
	r.Header.Set("Accept", "application/json;odata=nometadata")
	signLite(r, DevAccount, DevKey, time.Now())
	w := newDiscardWriter()
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		w.code = 0
		h.ServeHTTP(w, r)
		if w.code != http.StatusOK {
			b.Fatal(w.code)
		}
	}
}
