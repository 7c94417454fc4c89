package tablestoretest

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestNewServer(t *testing.T) {
	srv := NewServer(t)
	cs := srv.ConnectionString()
	for _, part := range []string{"AccountName=devstoreaccount1", "AccountKey=", "TableEndpoint=" + srv.URL() + "/devstoreaccount1"} {
		if !strings.Contains(cs, part) {
			t.Fatalf("connection string %q lacks %q", cs, part)
		}
	}
	if !strings.HasPrefix(srv.URL(), "http://127.0.0.1:") {
		t.Fatalf("not on loopback: %s", srv.URL())
	}
	if _, err := srv.DB().CreateTable(context.Background(), "seeded"); err != nil {
		t.Fatal(err)
	}
	// An unsigned request is refused: the server authenticates by default.
	resp, err := http.Get(srv.URL() + "/devstoreaccount1/Tables")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" {
		t.Fatalf("unsigned request: %d %s", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
}
