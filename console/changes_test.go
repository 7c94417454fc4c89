package console

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/server"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	id, event, data string
	hasID           bool
}

// sseStream is an open change stream read as a browser's EventSource
// would.
type sseStream struct {
	t      *testing.T
	status int
	ctype  string
	events chan sseEvent
	cancel context.CancelFunc
}

// stream opens path as an event stream; lastID, when not "", is sent as
// Last-Event-ID, as a reconnecting browser does.
func (h *harness) stream(path, lastID string) *sseStream {
	h.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", h.srv.URL+path, nil)
	require.NoError(h.t, err)
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := h.client.Do(req)
	require.NoError(h.t, err)
	s := &sseStream{t: h.t, status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"),
		events: make(chan sseEvent, 4096), cancel: cancel}
	h.t.Cleanup(cancel)
	go func() {
		defer resp.Body.Close()
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" || ev.data != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "id: "):
				ev.id, ev.hasID = strings.TrimPrefix(line, "id: "), true
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return s
}

// next returns the next event, failing after 10 s; ok is false when the
// stream ended.
func (s *sseStream) next() (sseEvent, bool) {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		return ev, ok
	case <-time.After(10 * time.Second):
		s.t.Fatal("no event within 10 s")
		return sseEvent{}, false
	}
}

// expect returns the next event, which must be of the kind given.
func (s *sseStream) expect(kind string) sseEvent {
	s.t.Helper()
	ev, ok := s.next()
	require.True(s.t, ok, "the stream ended before a %s event", kind)
	require.Equal(s.t, kind, ev.event, ev.data)
	return ev
}

// change decodes the next event, a change.
func (s *sseStream) change() changeEvent {
	s.t.Helper()
	ev := s.expect("change")
	var c changeEvent
	require.NoError(s.t, json.Unmarshal([]byte(ev.data), &c))
	require.Equal(s.t, c.Cursor, ev.id, "a change's event id is its cursor")
	return c
}

// ended waits for the end of the stream.
func (s *sseStream) ended() {
	s.t.Helper()
	ev, ok := s.next()
	require.False(s.t, ok, "the stream goes on: %+v", ev)
}

func note(t *testing.T, ev sseEvent) streamNote {
	t.Helper()
	var n streamNote
	require.NoError(t, json.Unmarshal([]byte(ev.data), &n))
	return n
}

func TestChangesStream(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("Feed")
	h.login()

	// The feed is off: the page offers to turn it on, the stream fails.
	s := h.stream("/tables/Feed/changes/stream?from=now", "")
	require.Equal(t, http.StatusOK, s.status)
	require.Equal(t, "text/event-stream", s.ctype)
	n := note(t, s.expect("failure"))
	require.Contains(t, n.Message, "off")
	require.Equal(t, edm.CodeResourceNotFound, n.Code)
	s.ended()

	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "before-feed"}))
	require.NoError(t, tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{Images: tablestore.ImagesNew}))
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "old", Properties: map[string]any{"N": int32(1)}}))

	status, body, _ := h.get("/tables/Feed/changes")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `data-stream-url="/tables/Feed/changes/stream?from=now"`)
	require.Contains(t, body, `<th>Entity</th>`, "the feed records images")

	// From now: a write made after the stream opened appears, with its
	// keys, ETag, Timestamp and cursor; older ones do not.
	s = h.stream("/tables/Feed/changes/stream?from=now", "")
	ready := s.expect("ready")
	require.True(t, ready.hasID, "the start position is the event id, for a reconnect before any change")
	require.NotEmpty(t, note(t, ready).Cursor)
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "new", Properties: map[string]any{"Name": "Ada"}}))
	c := s.change()
	require.Equal(t, "insert", c.Op)
	require.Equal(t, "p", c.PartitionKey)
	require.Equal(t, "new", c.RowKey)
	e, err := tb.Get(ctx, "p", "new", nil)
	require.NoError(t, err)
	require.Equal(t, string(e.ETag), c.ETag)
	require.Equal(t, e.Timestamp.UTC().Format("2006-01-02T15:04:05.0000000Z"), c.Timestamp)
	require.Equal(t, "Name=Ada", c.Entity)
	require.Equal(t, "/tables/Feed/entity?pk=p&rk=new", c.Link)
	require.NoError(t, tb.Delete(ctx, "p", "new", tablestore.ETagAny))
	d := s.change()
	require.Equal(t, "delete", d.Op)
	require.Empty(t, d.ETag)
	require.Empty(t, d.Link)
	require.Greater(t, d.Seq, c.Seq)
	s.cancel()

	// From the beginning: every change kept, in order.
	s = h.stream("/tables/Feed/changes/stream?from=beginning", "")
	require.False(t, s.expect("ready").hasID, "the beginning moves with retention: no fixed id")
	var ops []string
	for range 3 {
		c := s.change()
		ops = append(ops, c.Op+" "+c.RowKey)
	}
	require.Equal(t, []string{"insert old", "insert new", "delete new"}, ops)
	s.cancel()

	// After a cursor, given as ?from= or as the Last-Event-ID of a
	// reconnect (which wins): the changes after it, none repeated.
	s = h.stream("/tables/Feed/changes/stream?from="+url.QueryEscape(c.Cursor), "")
	s.expect("ready")
	require.Equal(t, "delete", s.change().Op)
	s.cancel()
	s = h.stream("/tables/Feed/changes/stream?from=beginning", c.Cursor)
	require.Equal(t, c.Cursor, s.expect("ready").id)
	require.Equal(t, "delete", s.change().Op)
	s.cancel()

	// One partition only.
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "q", RowKey: "1"}))
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "2"}))
	s = h.stream("/tables/Feed/changes/stream?pk=q&from="+url.QueryEscape(d.Cursor), "")
	s.expect("ready")
	require.Equal(t, "q", s.change().PartitionKey)
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "q", RowKey: "3"}))
	require.Equal(t, "3", s.change().RowKey, "p/2 is not in partition q")
	s.cancel()

	// Bad cursors fail with the library's codes.
	s = h.stream("/tables/Feed/changes/stream?from=nonsense", "")
	require.Equal(t, edm.CodeInvalidInput, note(t, s.expect("failure")).Code)
	s.ended()
	s = h.stream("/tables/Feed/changes/stream?from=999999.1", "")
	s.expect("ready")
	require.Equal(t, edm.CodeInvalidInput, note(t, s.expect("failure")).Code, "a cursor of another table is stale")
	s.ended()

	// A stream carries streamMax changes at most, then pauses with the
	// cursor to continue from.
	short := newHarnessDB(t, h.db, nil)
	short.c.streamMax = 2
	short.login()
	s = short.stream("/tables/Feed/changes/stream?from=beginning", "")
	s.expect("ready")
	s.change()
	second := s.change()
	p := note(t, s.expect("pause"))
	require.Equal(t, second.Cursor, p.Cursor)
	s.ended()

	// A stream ends by itself after its lifetime; the browser's
	// reconnect resumes after the last change it saw.
	short = newHarnessDB(t, h.db, nil)
	short.c.streamLife = 300 * time.Millisecond
	short.login()
	s = short.stream("/tables/Feed/changes/stream?from=now", "")
	start := s.expect("ready").id
	s.ended()
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "between"}))
	s = short.stream("/tables/Feed/changes/stream?from=now", start)
	s.expect("ready")
	require.Equal(t, "between", s.change().RowKey, "a change between two streams is not lost")
	s.ended()

	// Deleting the table ends the feed.
	s = h.stream("/tables/Feed/changes/stream?from=now", "")
	s.expect("ready")
	require.NoError(t, h.db.DeleteTable(ctx, "Feed"))
	require.Equal(t, "dropTable", s.change().Op)
	require.Contains(t, note(t, s.expect("end")).Message, "deleted")
	s.ended()
}

func TestChangesStreamEnds(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("Feed")
	require.NoError(t, tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{}))
	h.c.streamTick = 50 * time.Millisecond
	h.login()

	// Without a session, no stream.
	status, _, _ := h.fork().get("/tables/Feed/changes/stream")
	require.Equal(t, http.StatusUnauthorized, status)

	// Signing out ends a stream at its next keep-alive check.
	s := h.stream("/tables/Feed/changes/stream", "")
	s.expect("ready")
	status, _, _ = h.post("/signout", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, note(t, s.expect("failure")).Message, "session has ended")
	s.ended()

	// Shutdown ends the streams, and any opened later at once.
	h.login()
	s = h.stream("/tables/Feed/changes/stream", "")
	s.expect("ready")
	h.c.Shutdown()
	s.ended()
	h.c.Shutdown()
	s = h.stream("/tables/Feed/changes/stream", "")
	s.expect("ready")
	s.ended()
}

// TestChangesAccounts checks that a signed-in session tails its own
// account's tables only, as every page reads them.
func TestChangesAccounts(t *testing.T) {
	ctx := context.Background()
	other, err := tablestore.OpenInMemory(nil)
	require.NoError(t, err)
	defer other.Close()
	h := newHarness(t, &Options{Accounts: []server.Account{
		{Name: "alpha", Keys: []string{"key-a"}},
		{Name: "beta", Keys: []string{"key-b"}, DB: other},
	}})
	secret := h.table("Secret")
	require.NoError(t, secret.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{}))
	require.NoError(t, secret.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "r"}))

	h.get("/?token=" + testToken)
	status, _, _ := h.get("/tables/Secret/changes/stream?from=beginning")
	require.Equal(t, http.StatusSeeOther, status, "not signed in yet")
	h.get("/signin")
	status, _, _ = h.post("/signin", url.Values{"account": {"beta"}, "key": {"key-b"}})
	require.Equal(t, http.StatusSeeOther, status)

	// beta's store has no table Secret: the stream and the page say so,
	// and nothing of alpha's feed is sent.
	s := h.stream("/tables/Secret/changes/stream?from=beginning", "")
	n := note(t, s.expect("failure"))
	require.Equal(t, edm.CodeTableNotFound, n.Code)
	s.ended()
	status, _, _ = h.get("/tables/Secret/changes")
	require.Equal(t, http.StatusNotFound, status)
	status, _, _ = h.post("/tables/Secret/changefeed/disable", url.Values{"confirm": {"Secret"}})
	require.Equal(t, http.StatusNotFound, status)
	st, err := secret.ChangeFeed(ctx)
	require.NoError(t, err)
	require.True(t, st.Enabled, "beta cannot turn off alpha's feed")

	// alpha's key shows alpha's feed.
	a := h.fork()
	a.get("/?token=" + testToken)
	a.get("/signin")
	status, _, _ = a.post("/signin", url.Values{"account": {"alpha"}, "key": {"key-a"}})
	require.Equal(t, http.StatusSeeOther, status)
	s = a.stream("/tables/Secret/changes/stream?from=beginning", "")
	s.expect("ready")
	require.Equal(t, "r", s.change().RowKey)
	s.cancel()
}

// TestChangeEventExpire: an expiry is shown with the removed entity's
// ETag and no link, the entity being gone.
func TestChangeEventExpire(t *testing.T) {
	c := tablestore.Change{Seq: 7, Op: tablestore.ChangeExpire, PartitionKey: "p", RowKey: "r", ETag: `W/"datetime'2026-01-01T00%3A00%3A00Z'"`,
		Timestamp: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC), Expiry: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), Commit: 7, Count: 1, Kind: tablestore.CommitSweep}
	ev := newChangeEvent(c, "/tables/T")
	require.Equal(t, "expire", ev.Op)
	require.Equal(t, string(c.ETag), ev.ETag)
	require.Empty(t, ev.Link)
	require.Empty(t, ev.Entity)
}
