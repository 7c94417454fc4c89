package server

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tablestore/tablestore"
)

// TestInvalidUTF8BodyRefused sends entity bodies holding invalid UTF-8,
// raw and as lone surrogate escapes, in keys, names and values, to the
// insert endpoint: each is a 400 InvalidInput and nothing is stored,
// where the bytes used to become U+FFFD.
func TestInvalidUTF8BodyRefused(t *testing.T) {
	h, db := newTestHandler(t, &Options{Anonymous: true})
	for _, body := range []string{
		"{\"PartitionKey\":\"a\xffb\",\"RowKey\":\"r\"}",
		`{"PartitionKey":"a\udcffb","RowKey":"r"}`,
		"{\"PartitionKey\":\"p\",\"RowKey\":\"r\",\"V\":\"\xed\xa0\x80\"}",
		`{"PartitionKey":"p","RowKey":"r","V\ud800":1}`,
	} {
		r := httptest.NewRequest("POST", "/devstoreaccount1/things", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := serve(h, r)
		if w.Code != 400 || !strings.Contains(w.Body.String(), `"code":"InvalidInput"`) {
			t.Errorf("%q: %d %s", body, w.Code, w.Body)
		}
	}
	page, err := db.Table("things").QueryPage(context.Background(), tablestore.Query{})
	if err != nil || len(page.Entities) != 0 {
		t.Fatalf("stored %d entities (%v); want none", len(page.Entities), err)
	}
}
