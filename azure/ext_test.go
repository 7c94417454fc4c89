package azure_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/server"
	"github.com/tablestore/tablestore/tablestoretest"
)

func openRemote(t *testing.T, cs string) *ts.DB {
	t.Helper()
	db, err := azure.Open(cs, nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// serveWrapped serves tablestore's handler over an in-memory store
// behind wrap, for the test's life, and returns its connection string.
func serveWrapped(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	store, err := ts.OpenInMemory(&ts.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	h, err := server.New(store, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(wrap(h))
	t.Cleanup(hs.Close)
	return "DefaultEndpointsProtocol=http;AccountName=" + server.DevAccount + ";AccountKey=" + server.DevKey +
		";TableEndpoint=" + hs.URL + "/" + server.DevAccount
}

// TestExtensionsAgainstServer runs, through the remote driver against
// tablestore's server, what Azure has no counterpart for: indexes (used
// by queries), TTL, range deletions, stats, and a change feed that a
// second client follows as a first one writes.
func TestExtensionsAgainstServer(t *testing.T) {
	ctx := context.Background()
	s := tablestoretest.NewServer(t)
	db := openRemote(t, s.ConnectionString())
	tb, err := db.CreateTable(ctx, "Ext")
	if err != nil {
		t.Fatal(err)
	}
	for i, color := range []string{"red", "blue", "red", "green"} {
		e := &ts.Entity{PartitionKey: "p", RowKey: string(rune('a' + i)), Properties: map[string]any{"Color": color}}
		if err := tb.Insert(ctx, e); err != nil {
			t.Fatal(err)
		}
	}

	// Indexes.
	if err := tb.CreateIndex(ctx, ts.IndexSpec{Name: "ByColor", Properties: []string{"Color"}}); err != nil {
		t.Fatalf("create index: %v", err)
	}
	ixs, err := tb.Indexes(ctx)
	if err != nil || len(ixs) != 1 || ixs[0].Name != "ByColor" || ixs[0].State != ts.IndexReady || ixs[0].Total != 4 {
		t.Fatalf("indexes: %+v %v", ixs, err)
	}
	if err := tb.CreateIndex(ctx, ts.IndexSpec{Name: "bycolor", Properties: []string{"Color"}}); ts.ErrorCode(err) != "InvalidInput" {
		t.Fatalf("second index of the name: %v", err)
	}
	plan, err := tb.Plan(ctx, ts.Query{Filter: "PartitionKey eq 'p' and Color eq 'red'"})
	if err != nil || plan.Index != "ByColor" {
		t.Fatalf("plan: %+v %v", plan, err)
	}
	var reds []string
	for e, err := range tb.Query(ctx, ts.Query{Filter: "PartitionKey eq 'p' and Color eq 'red'"}) {
		if err != nil {
			t.Fatal(err)
		}
		reds = append(reds, e.RowKey)
	}
	if strings.Join(reds, ",") != "a,c" {
		t.Fatalf("query through the index: %v", reds)
	}
	// In the index's own order, a page at a time through the server.
	var colors []string
	for e, err := range tb.Query(ctx, ts.Query{Index: "ByColor", Top: 1}) {
		if err != nil {
			t.Fatalf("index-order read: %v", err)
		}
		colors = append(colors, e.Properties["Color"].(string)+"/"+e.RowKey)
	}
	if strings.Join(colors, ",") != "blue/b,green/d,red/a,red/c" {
		t.Fatalf("index-order read: %v", colors)
	}
	if _, err := tb.QueryPage(ctx, ts.Query{Index: "NoSuch"}); !errors.Is(err, ts.ErrResourceNotFound) {
		t.Fatalf("an unknown index: %v", err)
	}
	if err := tb.DropIndex(ctx, "NoSuch"); !errors.Is(err, ts.ErrResourceNotFound) {
		t.Fatalf("drop an unknown index: %v", err)
	}
	if err := tb.DropIndex(ctx, "bycolor"); err != nil {
		t.Fatalf("drop: %v", err)
	}

	// TTL.
	if err := tb.SetTTL(ctx, ts.TTL{Default: 90 * time.Minute, Property: "ExpiresAt"}); err != nil {
		t.Fatalf("set TTL: %v", err)
	}
	if got, err := tb.TTL(ctx); err != nil || got != (ts.TTL{Default: 90 * time.Minute, Property: "ExpiresAt"}) {
		t.Fatalf("TTL: %+v %v", got, err)
	}
	if err := tb.SetTTL(ctx, ts.TTL{Property: "Bad Name"}); ts.ErrorCode(err) != "PropertyNameInvalid" {
		t.Fatalf("bad TTL property: %v", err)
	}
	if n, err := tb.ExpiredCount(ctx); err != nil || n != 0 {
		t.Fatalf("expired: %d %v", n, err)
	}

	// The change feed, followed by another client.
	if err := tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{Images: ts.ImagesNew}); err != nil {
		t.Fatalf("enable feed: %v", err)
	}
	st, err := tb.ChangeFeed(ctx)
	if err != nil || !st.Enabled || st.Options.Images != ts.ImagesNew || st.Options.Retention != ts.DefaultChangeRetention {
		t.Fatalf("feed: %+v %v", st, err)
	}
	follower := openRemote(t, s.ConnectionString())
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	got := make(chan ts.Change, 16)
	errc := make(chan error, 1)
	go func() {
		for c, err := range follower.Table("Ext").Changes(fctx, ts.ChangesQuery{From: st.Latest, Follow: true}) {
			if err != nil {
				errc <- err
				return
			}
			got <- c
		}
		errc <- nil
	}()
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "q", RowKey: "1", Properties: map[string]any{"N": int64(5)}}); err != nil {
		t.Fatal(err)
	}
	if err := tb.Partition("p").DeleteRange(ctx, "b", "d"); err != nil {
		t.Fatalf("delete range: %v", err)
	}
	if err := tb.Partition("q").DeleteAll(ctx); err != nil {
		t.Fatalf("delete all: %v", err)
	}
	want := []string{"insert q/1", "deleteRange p/b-d", "deleteRange q/-"}
	for i, w := range want {
		var c ts.Change
		select {
		case c = <-got:
		case err := <-errc:
			t.Fatalf("the follow ended before change %d: %v", i, err)
		}
		desc := c.Op.String() + " " + c.PartitionKey + "/" + c.RowKey
		if c.Op == ts.ChangeDeleteRange {
			desc += "-" + c.ToRowKey
		}
		if desc != w {
			t.Fatalf("change %d: %s, want %s", i, desc, w)
		}
		if i == 0 && (c.Entity == nil || c.Entity.Properties["N"] != int64(5) || c.ETag == "") {
			t.Fatalf("insert's image: %+v", c)
		}
	}
	var left []string
	for e, err := range tb.Query(ctx, ts.Query{}) {
		if err != nil {
			t.Fatal(err)
		}
		left = append(left, e.PartitionKey+"/"+e.RowKey)
	}
	if strings.Join(left, ",") != "p/a,p/d" {
		t.Fatalf("after the range deletions: %v", left)
	}
	if stats, err := tb.Stats(ctx); err != nil || stats.Entities != 2 {
		t.Fatalf("stats: %+v %v", stats, err)
	}
	// A follower past retention gets a clear error.
	for _, err := range follower.Table("Ext").Changes(ctx, ts.ChangesQuery{From: ts.CursorAt(time.Now().Add(-48 * time.Hour))}) {
		if !errors.Is(err, ts.ErrCursorExpired) || ts.ErrorCode(err) != "OutOfRangeInput" {
			t.Fatalf("expired cursor: %v", err)
		}
	}
	// A malformed cursor is refused before it is sent.
	if _, err := ts.ParseCursor("1.x"); ts.ErrorCode(err) != "InvalidInput" {
		t.Fatalf("bad cursor: %v", err)
	}
	// Closing the follower's DB ends its follow, without waiting for the
	// long-poll.
	start := time.Now()
	if err := follower.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil && !errors.Is(err, ts.ErrClosed) {
		t.Fatalf("follow after close: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("close took %v", d)
	}
	if err := tb.DisableChangeFeed(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestExtensionsNotImplementedElsewhere points the driver at a service
// that answers the capability document as Azure does (400 InvalidUri):
// every extension operation answers NotImplemented and changes nothing,
// and plain queries still work.
func TestExtensionsNotImplementedElsewhere(t *testing.T) {
	ctx := context.Background()
	probes := 0
	cs := serveWrapped(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "$tablestore") {
				probes++
				w.Header().Set("x-ms-error-code", "InvalidUri")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"odata.error":{"code":"InvalidUri","message":{"lang":"en-US","value":"The requested URI does not represent any resource on the server."}}}`))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	db := openRemote(t, cs)
	tb, err := db.CreateTable(ctx, "Plain")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Color": "red"}}); err != nil {
		t.Fatal(err)
	}
	p := tb.Partition("p")
	for name, err := range map[string]error{
		"CreateIndex":      tb.CreateIndex(ctx, ts.IndexSpec{Name: "ByColor", Properties: []string{"Color"}}),
		"SetTTL":           tb.SetTTL(ctx, ts.TTL{Default: time.Hour}),
		"EnableChangeFeed": tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{}),
		"DeleteAll":        p.DeleteAll(ctx),
		"DeleteRange":      p.DeleteRange(ctx, "a", "z"),
		"Indexes":          func() error { _, err := tb.Indexes(ctx); return err }(),
		"Stats":            func() error { _, err := tb.Stats(ctx); return err }(),
		"Changes": func() error {
			for _, err := range tb.Changes(ctx, ts.ChangesQuery{}) {
				return err
			}
			return nil
		}(),
	} {
		if !errors.Is(err, ts.ErrNotImplemented) {
			t.Errorf("%s: got %v, want NotImplemented", name, err)
		}
	}
	if probes != 1 {
		t.Errorf("the capability document was asked for %d times, want once", probes)
	}
	n := 0
	for _, err := range tb.Query(ctx, ts.Query{Filter: "PartitionKey eq 'p' and Color eq 'red'"}) {
		if err != nil {
			t.Fatalf("a filtered query: %v", err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("the entity is gone after refused deletes (%d found)", n)
	}
}

// TestExtensionsExpireChange reads an expiry through the remote driver:
// its ETag is the removed entity's, its Expiry the instant it expired.
func TestExtensionsExpireChange(t *testing.T) {
	ctx := context.Background()
	s := tablestoretest.NewServer(t)
	db := openRemote(t, s.ConnectionString())
	tb, err := db.CreateTable(ctx, "Expiring")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{Images: ts.ImagesNew}); err != nil {
		t.Fatal(err)
	}
	settings := ts.TTL{Property: "Exp"}
	if err := tb.SetTTL(ctx, settings); err != nil {
		t.Fatal(err)
	}
	past := time.Date(2001, 2, 3, 4, 5, 6, 700, time.UTC)
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"Exp": past}}); err != nil {
		t.Fatal(err)
	}
	// The insert's change, by its op: the sweeper may have removed the
	// entity already, its expiry then the feed's last change.
	var inserted ts.Change
	found := false
	for c, err := range tb.Changes(ctx, ts.ChangesQuery{}) {
		if err != nil {
			t.Fatal(err)
		}
		if c.Op == ts.ChangeInsert {
			inserted, found = c, true
		}
	}
	if !found {
		t.Fatal("the feed holds no insert")
	}
	// Changing the settings removes what expired under the ones before,
	// in its own commit, recorded as an expiry (unless the sweeper's
	// commit did so first: either is a CommitSweep, and the feed holds
	// one expiry).
	if err := tb.SetTTL(ctx, ts.TTL{Property: "Exp", Default: time.Hour}); err != nil {
		t.Fatal(err)
	}
	var got []ts.Change
	for c, err := range tb.Changes(ctx, ts.ChangesQuery{From: inserted.Cursor}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if len(got) != 1 || got[0].Op != ts.ChangeExpire || got[0].Kind != ts.CommitSweep || got[0].ETag != inserted.ETag ||
		!got[0].Expiry.Equal(past.Truncate(100*time.Nanosecond)) || got[0].Entity != nil {
		t.Fatalf("expiry through the remote driver: %+v (insert's ETag %s)", got, inserted.ETag)
	}
}

// TestCapabilityProbeFailureNotRemembered answers the capability
// document with a status that says nothing of the server, past the
// retries: the extension call fails with that status's code, not
// NotImplemented, and the next one reads the document again and works.
func TestCapabilityProbeFailureNotRemembered(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		status int
		code   string
	}{{500, "InternalError"}, {503, "ServerBusy"}, {429, "TooManyRequests"}, {403, "AuthenticationFailed"}} {
		t.Run(c.code, func(t *testing.T) {
			var mu sync.Mutex
			refuse, probes := true, 0
			cs := serveWrapped(t, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.HasSuffix(r.URL.Path, "/$tablestore") {
						mu.Lock()
						probes++
						no := refuse
						mu.Unlock()
						if no {
							w.Header().Set("x-ms-error-code", c.code)
							w.WriteHeader(c.status)
							_, _ = w.Write([]byte(`{"odata.error":{"code":"` + c.code + `","message":{"lang":"en-US","value":"refused by the test."}}}`))
							return
						}
					}
					h.ServeHTTP(w, r)
				})
			})
			db := openRetrying(t, cs, policy.RetryOptions{MaxRetries: -1})
			tb, err := db.CreateTable(ctx, "Probed")
			if err != nil {
				t.Fatal(err)
			}
			_, err = tb.Stats(ctx)
			if err == nil || errors.Is(err, ts.ErrNotImplemented) {
				t.Fatalf("stats while the document fails: %v, want a failure that is not NotImplemented", err)
			}
			mu.Lock()
			refuse = false
			mu.Unlock()
			if _, err := tb.Stats(ctx); err != nil {
				t.Fatalf("stats once the document answers: %v", err)
			}
			if _, err := tb.Stats(ctx); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if probes != 2 {
				t.Fatalf("the capability document was read %d times, want 2", probes)
			}
		})
	}
}
