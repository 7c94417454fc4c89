package server

import (
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/tablestore/tablestore"
)

// TestExtExchanges replays the extension endpoints' exchanges in
// testdata/extensions, as TestExchanges does Azure's. Rewrite with
// -rewrite.
func TestExtExchanges(t *testing.T) {
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h, err := New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	datadriven.RunTest(t, "testdata/extensions", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "request" {
			t.Fatalf("unknown command %s", d.Cmd)
		}
		r := parseTestRequest(t, d.Input, false)
		if !d.HasArg("unsigned") {
			signLite(r, DevAccount, DevKey, time.Now())
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		// Sizes on disk vary with the timestamps the data files hold.
		return diskBytes.ReplaceAllString(formatResponse(w.Result()), `"bytes":<n>`)
	})
}

var diskBytes = regexp.MustCompile(`"bytes":[0-9]+`)
