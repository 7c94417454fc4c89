package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// The change feed over HTTP: GET /{account}/$tablestore/tables/{t}/changes
// reads one page after a cursor; with wait it long-polls (the page is
// answered as soon as it holds a change, or empty when the wait ends);
// with Accept: text/event-stream it follows the feed as server-sent
// events, each change's id its cursor, resumed from Last-Event-ID.

const (
	// defaultChangesLimit is a page's size when limit is absent.
	defaultChangesLimit = 100
	// maxChangesWait bounds a long-poll's wait.
	maxChangesWait = 60 * time.Second
	// defaultHeartbeat is the pause between an event stream's
	// heartbeats while no change comes.
	defaultHeartbeat = 15 * time.Second
)

// ChangeJSON is one change as the feed endpoints send it.
type ChangeJSON struct {
	// Cursor is the position right after the change: a read from it
	// goes on with the next change.
	Cursor       string `json:"cursor"`
	Seq          uint64 `json:"seq"`
	Op           string `json:"op"`
	PartitionKey string `json:"partitionKey"`
	RowKey       string `json:"rowKey"`
	ToRowKey     string `json:"toRowKey,omitempty"`
	// Timestamp is the commit's, RFC 3339 with 100 ns precision.
	Timestamp string `json:"timestamp"`
	ETag      string `json:"etag,omitempty"`
	Expiry    string `json:"expiry,omitempty"`
	Commit    uint64 `json:"commit"`
	Index     int    `json:"index"`
	Count     int    `json:"count"`
	Kind      string `json:"kind"`
	// Entity is the entity the write left, in the wire format of a
	// query's entities (minimal metadata), with a feed of new images.
	Entity json.RawMessage `json:"entity,omitempty"`
}

// ChangesPageJSON is one page of the feed.
type ChangesPageJSON struct {
	Changes []ChangeJSON `json:"changes"`
	// Cursor is where the next read starts: after the last change, or
	// at the feed's end the read reached when it found none.
	Cursor  string `json:"cursor"`
	More    bool   `json:"more"`
	Dropped bool   `json:"dropped"`
	// End says why a long-poll was answered before its wait: EndShutdown
	// (read again later) or a reason to authorize again
	// (EndCredentialExpired, EndPolicyChanged, EndKeysRotated).
	End string `json:"end,omitempty"`
}

// NewChangeJSON is c in the feed's wire form (the tablestore command's
// changes lines are the same). Its error is the entity image's encoding
// error.
func NewChangeJSON(c tablestore.Change) (ChangeJSON, error) {
	out := ChangeJSON{
		Cursor: c.Cursor.String(), Seq: c.Seq, Op: c.Op.String(),
		PartitionKey: c.PartitionKey, RowKey: c.RowKey, ToRowKey: c.ToRowKey,
		Timestamp: edm.FormatDateTimeJSON(c.Timestamp), ETag: string(c.ETag),
		Commit: c.Commit, Index: c.Index, Count: c.Count, Kind: c.Kind.String(),
	}
	if !c.Expiry.IsZero() {
		out.Expiry = edm.FormatDateTimeJSON(c.Expiry)
	}
	if c.Entity != nil {
		b, err := tablestore.AppendEntityJSON(nil, c.Entity, nil)
		if err != nil {
			return out, err
		}
		out.Entity = b
	}
	return out, nil
}

func pageJSON(p *tablestore.ChangesPage) (ChangesPageJSON, error) {
	out := ChangesPageJSON{Changes: make([]ChangeJSON, 0, len(p.Changes)), Cursor: p.Cursor.String(), More: p.More, Dropped: p.Dropped}
	for _, c := range p.Changes {
		j, err := NewChangeJSON(c)
		if err != nil {
			return out, err
		}
		out.Changes = append(out.Changes, j)
	}
	return out, nil
}

// wantsEventStream reports whether the client asks for server-sent
// events.
func (q *request) wantsEventStream() bool {
	for _, a := range q.r.Header.Values("Accept") {
		if strings.Contains(a, "text/event-stream") {
			return true
		}
	}
	return false
}

// changesParams reads the feed read's parameters: from (or
// Last-Event-ID), partitionKey, limit, wait, heartbeat.
type changesParams struct {
	query     tablestore.ChangesQuery
	wait      time.Duration
	heartbeat time.Duration
}

func (q *request) changesParams() (changesParams, error) {
	v := q.res.query
	p := changesParams{heartbeat: defaultHeartbeat}
	from := v.Get("from")
	if id := strings.TrimSpace(q.r.Header.Get("Last-Event-ID")); id != "" {
		from = id // a resumed event stream
	}
	c, err := tablestore.ParseCursor(from)
	if err != nil {
		return p, extError(err)
	}
	p.query = tablestore.ChangesQuery{From: c, PartitionKey: v.Get("partitionKey"), Top: defaultChangesLimit}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > tablestore.MaxChangesPage {
			return p, badParam("limit must be a whole number from 1 to " + itoa(tablestore.MaxChangesPage) + ".")
		}
		p.query.Top = n
	}
	seconds := func(name string, lo, hi time.Duration) (time.Duration, error) {
		s := v.Get(name)
		f, err := strconv.ParseFloat(s, 64)
		d := time.Duration(f * float64(time.Second))
		if err != nil || f != f || d < lo || d > hi {
			return 0, badParam(name + " must be a number of seconds from " + lo.String() + " to " + hi.String() + ".")
		}
		return d, nil
	}
	if v.Has("wait") {
		if p.wait, err = seconds("wait", 0, maxChangesWait); err != nil {
			return p, err
		}
	}
	if v.Has("heartbeat") {
		if p.heartbeat, err = seconds("heartbeat", 100*time.Millisecond, maxChangesWait); err != nil {
			return p, err
		}
	}
	return p, nil
}

// extReadChanges answers a feed read: one page, a long-poll, or an
// event stream.
func (q *request) extReadChanges() error {
	if err := q.refuseKeyRange(); err != nil {
		return err
	}
	p, err := q.changesParams()
	if err != nil {
		return err
	}
	t := q.h.db.Table(q.res.table)
	if q.wantsEventStream() {
		return q.streamChanges(t, p)
	}
	ctx, live := q.r.Context(), q.r.Context()
	if p.wait > 0 {
		var stop, cancel context.CancelFunc
		live, stop = q.liveContext()
		defer stop()
		ctx, cancel = context.WithTimeout(live, p.wait)
		defer cancel()
		p.query.Follow = true
	}
	page, err := t.ReadChanges(ctx, p.query)
	if err != nil && !(page != nil && ctx.Err() != nil && q.r.Context().Err() == nil) {
		return extError(err)
	}
	if p.wait > 0 { // outside a work slot: no deferred send sets the deadline
		_ = http.NewResponseController(q.w).SetWriteDeadline(time.Now().Add(q.h.grace + maxChangesWait))
	}
	out, err := pageJSON(page)
	if err != nil {
		return err
	}
	out.End = endReason(live)
	return q.writeExtJSON(http.StatusOK, out)
}

// streamChanges follows the feed as server-sent events. The first read
// runs before anything is written, so a bad cursor, a feed that is off
// or a cursor past retention is answered with a 4xx error body; a
// failure later ends the stream with an "error" event holding the same
// body. Each change is one "change" event whose id is its cursor; while
// none comes, a heartbeat comment goes out every heartbeat, with the
// position reached as its id, so a client resuming with Last-Event-ID
// never reads a change twice or misses one. The stream ends after the
// table's drop change, when the client goes away, or, with a final
// "end" event naming the reason, when the server shuts down or the
// credential stops being valid (ext_live.go).
func (q *request) streamChanges(t *tablestore.Table, p changesParams) error {
	ctx, stop := q.liveContext()
	defer stop()
	page, err := t.ReadChanges(ctx, p.query)
	if err != nil {
		return extError(err)
	}
	rc := http.NewResponseController(q.w)
	hd := q.w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("X-Accel-Buffering", "no")
	q.w.WriteHeader(http.StatusOK)
	var buf []byte
	for {
		buf = buf[:0]
		for _, c := range page.Changes {
			j, err := NewChangeJSON(c)
			if err != nil {
				return q.streamError(rc, err)
			}
			b, _ := json.Marshal(j)
			buf = append(buf, "id: "+j.Cursor+"\nevent: change\ndata: "...)
			buf = append(append(buf, b...), "\n\n"...)
		}
		if len(page.Changes) == 0 {
			// A heartbeat: the position reached, as the last event id.
			buf = append(buf, ": heartbeat\nid: "+page.Cursor.String()+"\n\n"...)
		}
		if !q.streamWrite(rc, buf, p.heartbeat) {
			return nil
		}
		if page.Dropped {
			return nil
		}
		p.query.From = page.Cursor
		if page.More {
			p.query.Follow = false
			page, err = t.ReadChanges(ctx, p.query)
		} else {
			p.query.Follow = true
			wctx, cancel := context.WithTimeout(ctx, p.heartbeat)
			page, err = t.ReadChanges(wctx, p.query)
			if err != nil && page != nil && wctx.Err() != nil && ctx.Err() == nil {
				err = nil // the heartbeat is due
			}
			cancel()
		}
		if ctx.Err() != nil {
			if why := endReason(ctx); why != "" {
				q.streamEnd(rc, p.query.From.String(), why)
			}
			return nil
		}
		if err != nil {
			return q.streamError(rc, err)
		}
	}
}

// streamEnd ends an event stream with an "end" event whose id is the
// position reached and whose data names the reason, {"reason":"..."}.
func (q *request) streamEnd(rc *http.ResponseController, cursor, why string) {
	b := []byte("id: " + cursor + "\nevent: end\ndata: {\"reason\":\"" + why + "\"}\n\n")
	q.streamWrite(rc, b, defaultHeartbeat)
}

// streamWrite writes one chunk of the event stream and flushes it; the
// write must finish within the heartbeat and a grace period, or the
// client is too slow and loses its connection. False when the write
// failed.
func (q *request) streamWrite(rc *http.ResponseController, b []byte, heartbeat time.Duration) bool {
	_ = rc.SetWriteDeadline(time.Now().Add(heartbeat + q.h.grace))
	if _, err := q.w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// streamError ends an event stream with an "error" event holding the
// error's JSON body.
func (q *request) streamError(rc *http.ResponseController, err error) error {
	ae := toAPIError(extError(err))
	q.code = string(ae.code)
	body := errorJSON(ae.code, ae.msg)
	b := append([]byte("event: error\ndata: "), body...)
	b = append(b, "\n\n"...)
	q.streamWrite(rc, b, defaultHeartbeat)
	return nil
}

// serveStream runs a long-poll or an event stream: outside the work
// slots, which it would hold for its whole length, in one of the
// account's stream slots (as many as MaxConcurrentRequests) with a
// read's memory reserved from the budget. None free within QueueWait:
// 503 ServerBusy.
func (q *request) serveStream(o opRoute) error {
	ctx := q.r.Context()
	if !q.h.streams.acquire(ctx, q.h.wait) {
		return q.busy()
	}
	defer q.h.streams.release()
	got, ok := q.h.mem.acquire(ctx, readReserve, false, q.h.wait)
	if !ok {
		return q.busy()
	}
	q.workMem += got
	return o.run(q)
}
