package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// Change streams: the Changes page tails a table's change feed through
// server-sent events (a GET, so nothing changes and no CSRF token is
// needed). A stream lives streamLife at most and carries streamMax changes
// at most; every change's event id is its cursor, so the browser's
// EventSource reconnects after a stream ends with Last-Event-ID set and
// the next stream resumes right after the last change shown. The
// lifetime stays under the read timeout of the servers the console runs
// in (server.NewHTTPServer's 60 s), after which net/http cancels a
// request's context.
const (
	streamLife      = 30 * time.Second
	streamMax       = 1000
	streamKeepAlive = 10 * time.Second
)

// changesBody is the data of the Changes page.
type changesBody struct {
	Name string
	// Available is false when the store's driver keeps no change feed.
	Available bool
	Feed      *feedView
	Error     string
	Code      tablestore.Code
	Notice    string
	// From is where the tail starts: "now", "beginning" or a cursor;
	// PartitionKey limits it to one partition.
	From         string
	FromCursor   string // the cursor typed, when From is one
	PartitionKey string
	StreamURL    string
	MaxRows      int
	// FeedError and NewFeed report a failed change to the feed's
	// settings.
	FeedError string
	FeedCode  tablestore.Code
	NewFeed   *feedForm
}

// changesPage shows a table's change feed: its state, the form that
// turns it on, and the live tail (drawn by the script from the stream).
func (c *Console) changesPage(w http.ResponseWriter, r *http.Request) {
	c.renderChanges(w, r, http.StatusOK, nil)
}

func (c *Console) renderChanges(w http.ResponseWriter, r *http.Request, status int, edit func(*changesBody)) {
	name := r.PathValue("table")
	d := &pageData{Title: "Changes of " + name, Table: name, Tab: "changes"}
	t := c.store(r).Table(name)
	b := changesBody{Name: name, MaxRows: streamMax, Notice: settingsNotices[r.URL.Query().Get("notice")],
		PartitionKey: r.URL.Query().Get("pk")}
	switch from := r.URL.Query().Get("from"); from {
	case "", "now":
		b.From = "now"
	case "beginning":
		b.From = "beginning"
	case "cursor": // the form's choice, with the cursor typed
		b.From, b.FromCursor = "cursor", strings.TrimSpace(r.URL.Query().Get("cursor"))
		if b.FromCursor == "" {
			b.From = "now"
		}
	default:
		b.From, b.FromCursor = "cursor", from
	}
	st, err := t.ChangeFeed(r.Context())
	switch {
	case errors.Is(err, tablestore.ErrNotImplemented):
	case err != nil:
		c.fail(w, r, d, err, link{"Tables", c.o.Prefix + "/tables"})
		return
	default:
		b.Available = true
		b.Feed = newFeedView(st)
		v := url.Values{"from": {b.From}}
		if b.From == "cursor" {
			v.Set("from", b.FromCursor)
		}
		if b.PartitionKey != "" {
			v.Set("pk", b.PartitionKey)
		}
		b.StreamURL = c.o.Prefix + "/tables/" + url.PathEscape(name) + "/changes/stream?" + v.Encode()
	}
	if edit != nil {
		edit(&b)
	}
	d.Body = b
	c.render(w, r, status, "changes", d)
}

// changeEvent is one change as a stream sends it.
type changeEvent struct {
	Seq          uint64 `json:"seq"`
	Cursor       string `json:"cursor"`
	Op           string `json:"op"`
	PartitionKey string `json:"pk"`
	RowKey       string `json:"rk"`
	ToRowKey     string `json:"toRk,omitempty"`
	ETag         string `json:"etag,omitempty"`
	Timestamp    string `json:"timestamp"`
	Commit       uint64 `json:"commit"`
	Index        int    `json:"index"`
	Count        int    `json:"count"`
	// Entity summarizes the entity written, when the feed records it.
	Entity string `json:"entity,omitempty"`
	// Link opens the entity; "" for deletions, expiries and the drop.
	Link string `json:"link,omitempty"`
}

// streamNote is the data of a stream's ready, pause, end and failure
// events.
type streamNote struct {
	Cursor  string          `json:"cursor,omitempty"`
	Message string          `json:"message,omitempty"`
	Code    tablestore.Code `json:"code,omitempty"`
}

// changesStream streams a table's changes as server-sent events, starting
// after ?from= (now, beginning, a cursor or an RFC 3339 time), or after
// the Last-Event-ID a reconnecting browser sends, limited to ?pk= when
// given. It reads through the session's store, as every page does, so a
// signed-in session tails its own account's tables only. Events:
//
//	ready    {cursor}: the stream is open; cursor is where it starts when known
//	change   a changeEvent; its id is the cursor after it
//	pause    {cursor}: streamMax changes were sent; resume from cursor
//	end      {message}: the table was deleted, nothing follows
//	failure  {message, code}: the read failed (the feed is off, the cursor expired...)
//
// A stream ends by itself after streamLife (the browser reconnects), when
// the session ends or changes account, and on Shutdown. A session has at
// most streamsPerSession streams open and the console maxStreams, each
// holding streamMemory of the session's budget: a stream beyond them is
// refused with 429 (the session's bound) or 503 (the others), which ends
// the browser's EventSource.
func (c *Console) changesStream(w http.ResponseWriter, r *http.Request) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		c.plainError(w, http.StatusInternalServerError, "this server cannot stream")
		return
	}
	s := sessionFrom(r.Context())
	acct := s.account()
	name := r.PathValue("table")
	t := c.store(r).Table(name)
	closeStream, refused := c.openStream(r.Context(), s, c.memory(s))
	if refused != nil {
		refused.write(c, w, r)
		return
	}
	defer closeStream()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	send := func(event, id string, v any) {
		data, _ := json.Marshal(v)
		if id != "" {
			fmt.Fprintf(w, "id: %s\n", id)
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
	}
	fail := func(err error) {
		send("failure", "", streamNote{Message: errorText(err), Code: tablestore.ErrorCode(err)})
		flusher.Flush()
	}
	fmt.Fprintf(w, "retry: 1000\n\n")

	from := r.URL.Query().Get("from")
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		from = id
	}
	var q tablestore.ChangesQuery
	q.PartitionKey = r.URL.Query().Get("pk")
	st, err := t.ChangeFeed(r.Context())
	if err == nil && !st.Enabled {
		err = &tablestore.Error{Code: edm.CodeResourceNotFound, Message: "the change feed of " + name + " is off"}
	}
	if err != nil {
		fail(err)
		return
	}
	var start string // the position the stream starts at, as a cursor
	switch from {
	case "", "now":
		// The feed's end, resolved here so the browser can resume from it
		// if the stream ends before any change.
		q.From, start = st.Latest, st.Latest.String()
	default:
		cur, err := tablestore.ParseCursor(from)
		if err != nil {
			fail(err)
			return
		}
		q.From = cur
		if _, err := time.Parse(time.RFC3339Nano, from); err != nil && from != "beginning" {
			start = cur.String() // a position: resuming from it repeats nothing
		}
	}
	send("ready", start, streamNote{Cursor: start})
	flusher.Flush()

	// The feed is read a page at a time with Table.ReadChanges, as the
	// REST server's feed endpoint reads it: each read waits for commits
	// until a change comes or the next tick is due (the session check and
	// the keep-alive), and answers the position it reached.
	q.Follow = true
	deadline := time.Now().Add(c.streamLife)
	base := c.o.Prefix + "/tables/" + url.PathEscape(name)
	sent := 0
	lastTick := time.Now()
	for {
		wait := min(time.Until(lastTick.Add(c.streamTick)), time.Until(deadline))
		if time.Until(deadline) <= 0 {
			return // the browser reconnects with the last change's cursor
		}
		rctx, cancel := context.WithTimeout(r.Context(), max(wait, 0))
		go func() {
			select {
			case <-c.stopped:
				cancel()
			case <-rctx.Done():
			}
		}()
		q.Top = min(streamPage, c.streamMax-sent)
		page, err := t.ReadChanges(rctx, q)
		timedOut := err != nil && rctx.Err() != nil && r.Context().Err() == nil
		if timedOut && page == nil { // the wait ended before the read began
			page = &tablestore.ChangesPage{Cursor: q.From}
		}
		cancel()
		select {
		case <-c.stopped:
			return
		default:
		}
		if r.Context().Err() != nil {
			return
		}
		if err != nil && !timedOut {
			fail(err)
			return
		}
		for _, ch := range page.Changes {
			send("change", ch.Cursor.String(), newChangeEvent(ch, base))
			sent++
			if ch.Op == tablestore.ChangeDropTable {
				send("end", "", streamNote{Message: "the table was deleted: its feed ends here"})
				flusher.Flush()
				return
			}
		}
		if sent >= c.streamMax {
			send("pause", "", streamNote{Cursor: page.Cursor.String(), Message: fmt.Sprintf("paused after %d changes", sent)})
			flusher.Flush()
			return
		}
		q.From = page.Cursor
		if time.Since(lastTick) >= c.streamTick {
			lastTick = time.Now()
			if !c.sessions.alive(s) || s.account() != acct {
				send("failure", "", streamNote{Message: "the session has ended: reload the page"})
				flusher.Flush()
				return
			}
			if len(page.Changes) == 0 {
				fmt.Fprintf(w, ": keep-alive\n\n")
			}
		}
		flusher.Flush()
	}
}

// newChangeEvent converts a change for a stream; base is the table's path.
func newChangeEvent(ch tablestore.Change, base string) changeEvent {
	ev := changeEvent{Seq: ch.Seq, Cursor: ch.Cursor.String(), Op: ch.Op.String(),
		PartitionKey: ch.PartitionKey, RowKey: ch.RowKey, ToRowKey: ch.ToRowKey, ETag: string(ch.ETag),
		Timestamp: edm.FormatDateTimeJSON(ch.Timestamp), Commit: ch.Commit, Index: ch.Index, Count: ch.Count}
	switch ch.Op {
	case tablestore.ChangeDelete, tablestore.ChangeDeleteRange, tablestore.ChangeDropTable, tablestore.ChangeExpire:
	default:
		ev.Link = base + "/entity?" + url.Values{"pk": {ch.PartitionKey}, "rk": {ch.RowKey}}.Encode()
	}
	if ch.Entity != nil {
		ev.Entity = entitySummary(ch.Entity)
	}
	return ev
}

// entitySummary writes an entity's properties as "Name=value, ..." by
// name, cut to cellChars*2 characters.
func entitySummary(e *tablestore.Entity) string {
	names := make([]string, 0, len(e.Properties))
	for n := range e.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(shorten(valueText(e.Properties[n]), cellChars))
		if b.Len() > 4*cellChars {
			break
		}
	}
	return shorten(b.String(), 2*cellChars)
}
