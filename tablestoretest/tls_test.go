package tablestoretest

import (
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tablestore/tablestore/server"
)

// TestTLSServerRefusals: over TLS, HTTP/1.1 requests whose headers pass
// the handler's limit or even the wire limit get Azure's 431 body, and
// requests reach the handler knowing they came over TLS, on HTTP/1.1 and
// on HTTP/2.
func TestTLSServerRefusals(t *testing.T) {
	srv := NewTLSServerWithOptions(t, &server.Options{Anonymous: true})
	h2 := srv.HTTPClient()
	h2.Transport.(*http.Transport).ForceAttemptHTTP2 = true
	h1 := srv.HTTPClient()
	h1.Transport.(*http.Transport).TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}

	get := func(c *http.Client, pad int) (*http.Response, string) {
		t.Helper()
		r, err := http.NewRequest("GET", srv.URL()+"/devstoreaccount1/Tables", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Header.Set("x-ms-version", "2019-02-02")
		r.Header.Set("Accept", "application/json;odata=minimalmetadata")
		if pad > 0 {
			r.Header.Set("x-ms-pad", strings.Repeat("h", pad))
		}
		resp, err := c.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(b)
	}

	for _, tc := range []struct {
		name   string
		client *http.Client
		proto  string
	}{{"http/1.1", h1, "HTTP/1.1"}, {"h2", h2, "HTTP/2.0"}} {
		resp, body := get(tc.client, 0)
		if resp.StatusCode != http.StatusOK || resp.Proto != tc.proto {
			t.Fatalf("%s: %s %d %.200s", tc.name, resp.Proto, resp.StatusCode, body)
		}
		if !strings.Contains(body, `"https://`) {
			t.Errorf("%s: the handler did not see TLS: %.300s", tc.name, body)
		}
	}
	for _, pad := range []int{80 << 10, 200 << 10} {
		resp, body := get(h1, pad)
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || resp.Header.Get("x-ms-error-code") != "RequestHeaderFieldsTooLarge" ||
			!strings.Contains(body, `"odata.error"`) {
			t.Errorf("%d bytes of headers over http/1.1: %d %q %.200s", pad, resp.StatusCode, resp.Header.Get("x-ms-error-code"), body)
		}
	}
}
