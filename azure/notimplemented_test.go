package azure_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/server"
	"github.com/tablestore/tablestore/tablestoretest"
)

// TestReverseAndSegmentsOverTheWire reads a table in reverse, page by
// page, and by segments in both directions through the server's
// extension endpoints, and checks a server whose capability document
// does not offer them gets NotImplemented, its data untouched.
func TestReverseAndSegmentsOverTheWire(t *testing.T) {
	ctx := context.Background()
	s := tablestoretest.NewServer(t)
	db := openRemote(t, s.ConnectionString())
	tb, err := db.CreateTable(ctx, "Keyspace")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	var want []string
	for _, pk := range []string{"a", "b", "c'd"} {
		for _, rk := range []string{"", "1", "2"} {
			if err := tb.Insert(ctx, &ts.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"N": int32(len(want))}}); err != nil {
				t.Fatalf("insert: %v", err)
			}
			want = append(want, pk+"/"+rk)
		}
	}
	keys := func(q ts.Query) []string {
		t.Helper()
		var out []string
		for e, err := range tb.Query(ctx, q) {
			if err != nil {
				t.Fatalf("query %+v: %v", q, err)
			}
			out = append(out, e.PartitionKey+"/"+e.RowKey)
		}
		return out
	}
	rev := slices.Clone(want)
	slices.Reverse(rev)
	if got := keys(ts.Query{Reverse: true, Top: 2}); !slices.Equal(got, rev) {
		t.Fatalf("reverse: %v, want %v", got, rev)
	}
	if got, w := keys(ts.Query{Reverse: true, Filter: "N ge 2 and PartitionKey lt 'c'"}), []string{"b/2", "b/1", "b/", "a/2"}; !slices.Equal(got, w) {
		t.Fatalf("reverse with a filter: %v, want %v", got, w)
	}
	segs, err := tb.Segments(ctx, 3)
	if err != nil || len(segs) != 3 {
		t.Fatalf("segments: %v, %v", segs, err)
	}
	var forward, backward []string
	for i, seg := range segs {
		forward = append(forward, keys(ts.Query{Segment: seg, Top: 1})...)
		part := keys(ts.Query{Segment: segs[len(segs)-1-i], Reverse: true})
		backward = append(backward, part...)
	}
	if !slices.Equal(forward, want) || !slices.Equal(backward, rev) {
		t.Fatalf("segments read %v and in reverse %v, want %v", forward, backward, want)
	}

	// A server that offers neither (an older one).
	older := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/$tablestore") {
			var caps server.Capabilities
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, r)
			if err := json.Unmarshal(rec.Body.Bytes(), &caps); err != nil {
				t.Errorf("capability document: %v", err)
			}
			caps.Features = slices.DeleteFunc(caps.Features, func(f string) bool { return f == "reverseQuery" || f == "segments" })
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(caps)
			return
		}
		s.Handler().ServeHTTP(w, r)
	}))
	defer older.Close()
	odb, err := azure.Open(strings.Replace(s.ConnectionString(), s.URL(), older.URL, 1), nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer odb.Close()
	otb := odb.Table("Keyspace")
	for name, err := range map[string]error{
		"Reverse": func() error {
			_, err := otb.QueryPage(ctx, ts.Query{Reverse: true})
			return err
		}(),
		"Segments": func() error {
			_, err := otb.Segments(ctx, 2)
			return err
		}(),
	} {
		if !errors.Is(err, ts.ErrNotImplemented) {
			t.Errorf("%s on an older server: got %v, want NotImplemented", name, err)
		}
	}
	if got := keys(ts.Query{}); !slices.Equal(got, want) {
		t.Fatalf("the table after refused operations: %v", got)
	}
}
