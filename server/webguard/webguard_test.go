package webguard

import (
	"crypto/tls"
	"net/http/httptest"
	"testing"
)

func TestHostAllowed(t *testing.T) {
	names := []string{"admin.internal"}
	for host, want := range map[string]bool{
		"127.0.0.1:9090": true, "[::1]:9090": true, "10.0.0.5": true, "localhost:9090": true, "LOCALHOST": true,
		"admin.internal:9090": true, "Admin.Internal": true,
		"evil.example:9090": false, "evil.example": false, "": false, ":9090": false, "localhost.evil.example": false,
	} {
		if got := HostAllowed(host, names); got != want {
			t.Errorf("%q: %v, want %v", host, got, want)
		}
	}
}

func TestCrossSite(t *testing.T) {
	for _, tc := range []struct {
		site, origin string
		tls, cross   bool
	}{
		{"", "", false, false},
		{"same-origin", "", false, false},
		{"", "http://127.0.0.1:9090", false, false},
		{"", "https://127.0.0.1:9090", true, false},
		{"cross-site", "", false, true},
		{"same-site", "", false, true},
		{"none", "", false, true},
		{"", "http://evil.example", false, true},
		{"", "http://127.0.0.1:9090", true, true}, // the scheme differs
		{"", "null", false, true},
	} {
		r := httptest.NewRequest("POST", "http://127.0.0.1:9090/backup", nil)
		if tc.tls {
			r.TLS = &tls.ConnectionState{}
		}
		if tc.site != "" {
			r.Header.Set("Sec-Fetch-Site", tc.site)
		}
		if tc.origin != "" {
			r.Header.Set("Origin", tc.origin)
		}
		if got := CrossSite(r); (got != "") != tc.cross {
			t.Errorf("%+v: %q", tc, got)
		}
	}
}
