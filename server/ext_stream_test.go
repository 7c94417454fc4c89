package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
)

// sseEvent is one server-sent event (or heartbeat) as a client parses
// it.
type sseEvent struct {
	id, event, data string
	comment         bool
}

// sseReader reads events off a response body.
type sseReader struct{ sc *bufio.Scanner }

func (r *sseReader) next(t *testing.T) (sseEvent, bool) {
	t.Helper()
	var ev sseEvent
	seen := false
	for r.sc.Scan() {
		l := r.sc.Text()
		if l == "" {
			if seen {
				return ev, true
			}
			continue
		}
		seen = true
		k, v, _ := strings.Cut(l, ":")
		v = strings.TrimPrefix(v, " ")
		switch k {
		case "":
			ev.comment = true
		case "id":
			ev.id = v
		case "event":
			ev.event = v
		case "data":
			ev.data += v
		}
	}
	return ev, false
}

// openStream opens an event stream of table things' feed.
func openStream(t *testing.T, s *netServer, query, lastID string) (*http.Response, *sseReader) {
	t.Helper()
	r, err := http.NewRequest("GET", s.url+"/$tablestore/tables/things/changes?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		r.Header.Set("Last-Event-ID", lastID)
	}
	sharedKeyCred(true).sign(r)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, &sseReader{sc: bufio.NewScanner(resp.Body)}
}

// TestExtEventStream follows a feed as server-sent events: heartbeats
// carry the position reached, each change is an event whose id is its
// cursor, a stream resumed with Last-Event-ID goes on with the next
// change (none twice, none missed), and the table's drop ends it.
func TestExtEventStream(t *testing.T) {
	ctx := context.Background()
	s := newNetServer(t, nil, nil)
	tb := s.db.Table("things")
	if err := tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{Images: tablestore.ImagesNew}); err != nil {
		t.Fatal(err)
	}
	resp, sr := openStream(t, s, "from=now&heartbeat=0.2", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	hb, ok := sr.next(t)
	if !ok || !hb.comment || hb.id == "" || hb.event != "" {
		t.Fatalf("first event %+v, want a heartbeat with the position", hb)
	}
	for _, rk := range []string{"1", "2", "3"} {
		if err := tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: rk, Properties: map[string]any{"N": int64(7)}}); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for len(ids) < 3 {
		ev, ok := sr.next(t)
		if !ok {
			t.Fatal("stream ended")
		}
		if ev.comment {
			continue // a heartbeat may come between
		}
		var c ChangeJSON
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil || ev.event != "change" {
			t.Fatalf("event %+v: %v", ev, err)
		}
		if c.Cursor != ev.id || c.RowKey != []string{"1", "2", "3"}[len(ids)] || c.Op != "insert" || !strings.Contains(string(c.Entity), `"N":"7"`) {
			t.Fatalf("change %d: id %s, %+v", len(ids), ev.id, c)
		}
		ids = append(ids, ev.id)
	}
	resp.Body.Close()

	// Resumed after the second change: the third comes first.
	_, sr = openStream(t, s, "from=beginning&heartbeat=5", ids[1])
	ev, ok := sr.next(t)
	if !ok || ev.id != ids[2] {
		t.Fatalf("resumed stream's first event %+v, want id %s", ev, ids[2])
	}
	// The heartbeat's position resumes without replaying anything.
	_, sr = openStream(t, s, "heartbeat=5", hb.id)
	if ev, ok := sr.next(t); !ok || ev.id != ids[0] {
		t.Fatalf("stream resumed at the heartbeat: first event %+v, want id %s", ev, ids[0])
	}
	// The drop ends the stream after its change.
	_, sr = openStream(t, s, "heartbeat=5", ids[2])
	if err := s.db.DeleteTable(ctx, "things"); err != nil {
		t.Fatal(err)
	}
	var last sseEvent
	for {
		ev, ok := sr.next(t)
		if !ok {
			break
		}
		if !ev.comment {
			last = ev
		}
	}
	if !strings.Contains(last.data, `"op":"dropTable"`) {
		t.Fatalf("last event %+v, want the drop", last)
	}
}

// TestExtEventStreamErrors checks that a stream that cannot start is
// answered with a 4xx error body, not a stream: a malformed cursor,
// a cursor older than the retention.
func TestExtEventStreamErrors(t *testing.T) {
	s := newNetServer(t, nil, nil)
	if err := s.db.Table("things").EnableChangeFeed(context.Background(), tablestore.ChangeFeedOptions{}); err != nil {
		t.Fatal(err)
	}
	for q, code := range map[string]string{"from=bogus": "InvalidInput", "from=2001-01-01T00:00:00Z": "OutOfRangeInput"} {
		resp, _ := openStream(t, s, q, "")
		if resp.StatusCode != 400 || resp.Header.Get("x-ms-error-code") != code {
			t.Errorf("%s: %d %s", q, resp.StatusCode, resp.Header.Get("x-ms-error-code"))
		}
	}
	resp, _ := openStream(t, s, "", "bogus")
	if resp.StatusCode != 400 {
		t.Errorf("bad Last-Event-ID: %d", resp.StatusCode)
	}
}

// TestExtLongPoll checks that a long-poll is answered by the commit it
// waits for, not by its timeout.
func TestExtLongPoll(t *testing.T) {
	ctx := context.Background()
	s := newNetServer(t, nil, nil)
	tb := s.db.Table("things")
	if err := tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{}); err != nil {
		t.Fatal(err)
	}
	status, _, body := s.do(t, http.DefaultClient, sharedKeyCred(true), "GET", "/$tablestore/tables/things/changes?from=now", nil, nil)
	var page ChangesPageJSON
	if err := json.Unmarshal([]byte(body), &page); status != 200 || err != nil {
		t.Fatalf("%d %s", status, body)
	}
	type answer struct {
		page ChangesPageJSON
		took time.Duration
	}
	done := make(chan answer, 1)
	go func() {
		start := time.Now()
		_, _, body := s.do(t, http.DefaultClient, sharedKeyCred(true), "GET", "/$tablestore/tables/things/changes?wait=60&from="+page.Cursor, nil, nil)
		var p ChangesPageJSON
		_ = json.Unmarshal([]byte(body), &p)
		done <- answer{p, time.Since(start)}
	}()
	if err := tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "woken"}); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if len(a.page.Changes) != 1 || a.page.Changes[0].RowKey != "woken" || a.page.Cursor != a.page.Changes[0].Cursor {
		t.Fatalf("long-poll page %+v", a.page)
	}
	if a.took >= 30*time.Second {
		t.Fatalf("the long-poll took %v: answered by its timeout, not the commit", a.took)
	}
}

// TestExtStreamSlots checks that an account's streams are bounded:
// beyond MaxConcurrentRequests open ones, another is answered 503
// ServerBusy; closing one frees its slot.
func TestExtStreamSlots(t *testing.T) {
	s := newNetServer(t, nil, &Options{MaxConcurrentRequests: 1, QueueWait: 50 * time.Millisecond})
	if err := s.db.Table("things").EnableChangeFeed(context.Background(), tablestore.ChangeFeedOptions{}); err != nil {
		t.Fatal(err)
	}
	first, sr := openStream(t, s, "from=now&heartbeat=5", "")
	if _, ok := sr.next(t); !ok || first.StatusCode != 200 {
		t.Fatalf("first stream: %d", first.StatusCode)
	}
	second, _ := openStream(t, s, "from=now&heartbeat=5", "")
	if second.StatusCode != 503 || second.Header.Get("x-ms-error-code") != "ServerBusy" {
		t.Fatalf("second stream: %d %s", second.StatusCode, second.Header.Get("x-ms-error-code"))
	}
	// Plain requests do not use stream slots.
	if status, _, body := s.do(t, http.DefaultClient, sharedKeyCred(true), "GET", "/$tablestore/tables/things/changes", nil, nil); status != 200 {
		t.Fatalf("a page read beside the stream: %d %s", status, body)
	}
	first.Body.Close()
	// The slot comes free once the server sees the stream closed: at its
	// next heartbeat write at the latest. Bounded retries.
	for i := 0; ; i++ {
		third, _ := openStream(t, s, "from=now&heartbeat=5", "")
		if third.StatusCode == 200 {
			break
		}
		third.Body.Close()
		if i == 200 {
			t.Fatalf("the closed stream's slot never came free: %d", third.StatusCode)
		}
	}
}
