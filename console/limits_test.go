package console

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// testMemory is a Memory of a fixed size that never waits; released
// receives a value at every Release.
type testMemory struct {
	t        *testing.T
	mu       sync.Mutex
	size     int64
	used     int64
	released chan struct{}
}

func newTestMemory(t *testing.T, size int64) *testMemory {
	return &testMemory{t: t, size: size, released: make(chan struct{}, 1024)}
}

func (m *testMemory) Reserve(_ context.Context, n int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n <= 0 || m.used+n > m.size {
		return n <= 0
	}
	m.used += n
	return true
}

func (m *testMemory) Release(n int64) {
	m.mu.Lock()
	m.used -= n
	if m.used < 0 {
		m.t.Errorf("released %d bytes more than reserved", -m.used)
	}
	m.mu.Unlock()
	m.released <- struct{}{}
}

func (m *testMemory) inUse() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.used
}

// waitRelease waits for the next Release.
func (m *testMemory) waitRelease() {
	m.t.Helper()
	select {
	case <-m.released:
	case <-time.After(10 * time.Second):
		m.t.Fatal("nothing released within 10 s")
	}
}

// TestStreamLimits checks that live change streams are bounded per
// session and in all, and that each holds memory of the budget while it
// is open.
func TestStreamLimits(t *testing.T) {
	ctx := context.Background()
	mem := newTestMemory(t, 1<<30)
	h := newHarness(t, &Options{Memory: mem})
	tb := h.table("Feed")
	require.NoError(t, tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{}))
	h.c.streamsPerSession, h.c.maxStreams = 2, 3
	h.login()
	const path = "/tables/Feed/changes/stream?from=now"

	var open []*sseStream
	for range 2 {
		s := h.stream(path, "")
		s.expect("ready")
		open = append(open, s)
	}
	require.Equal(t, int64(2*streamMemory), mem.inUse())
	status, body, _ := h.get(path)
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Contains(t, body, "this session has 2 live change streams open already")

	// Another session has its own bound, but all share the console's.
	b := h.fork()
	b.login()
	s := b.stream(path, "")
	s.expect("ready")
	req, err := http.NewRequest("GET", h.srv.URL+path, nil)
	require.NoError(t, err)
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	require.Equal(t, int64(3*streamMemory), mem.inUse())

	// A stream that ends gives back its place and its memory.
	open[0].cancel()
	mem.waitRelease()
	require.Equal(t, int64(2*streamMemory), mem.inUse())
	s2 := h.stream(path, "")
	s2.expect("ready")
	s2.cancel()
	mem.waitRelease()
	s.cancel()
	mem.waitRelease()
	open[1].cancel()
	mem.waitRelease()
	require.Equal(t, int64(0), mem.inUse())

	// With the budget full, a stream is refused, and holds nothing.
	mem.mu.Lock()
	mem.size = streamMemory + streamMemory/2
	mem.mu.Unlock()
	s = h.stream(path, "")
	s.expect("ready")
	status, body, _ = b.get(path)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "memory budget is full")
	s.cancel()
	mem.waitRelease()
	require.Equal(t, int64(0), mem.inUse())
	h.c.liveMu.Lock()
	require.Equal(t, 0, h.c.streams)
	h.c.liveMu.Unlock()
}

// TestStreamMemoryOfAccount checks that a signed-in session's streams
// reserve from its account's budget, not another's.
func TestStreamMemoryOfAccount(t *testing.T) {
	ctx := context.Background()
	memA, memB := newTestMemory(t, 1<<30), newTestMemory(t, 1<<30)
	h := newHarness(t, &Options{Memory: memA, Accounts: []server.Account{
		{Name: "alpha", Keys: []string{"key-a"}},
		{Name: "beta", Keys: []string{"key-b"}},
	}, AccountMemory: func(account string) Memory {
		if account == "beta" {
			return memB
		}
		return nil
	}})
	tb := h.table("Feed")
	require.NoError(t, tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{}))
	for _, c := range []struct {
		account, key string
		mem, other   *testMemory
	}{{"alpha", "key-a", memA, memB}, {"beta", "key-b", memB, memA}} {
		x := h.fork()
		x.get("/?token=" + testToken)
		x.get("/signin")
		status, _, _ := x.post("/signin", url.Values{"account": {c.account}, "key": {c.key}})
		require.Equal(t, http.StatusSeeOther, status)
		s := x.stream("/tables/Feed/changes/stream", "")
		s.expect("ready") // both accounts have the one store
		require.Equal(t, int64(streamMemory), c.mem.inUse(), c.account)
		require.Equal(t, int64(0), c.other.inUse(), c.account)
		s.cancel()
		c.mem.waitRelease()
	}
}

// TestImportLimits checks that imports are bounded in all, that each
// holds its chunk's memory while it is taken and its unfinished record
// between chunks, that an idle import ends and gives back what it holds,
// and that a chunk the budget has no room for is refused.
func TestImportLimits(t *testing.T) {
	var clockMu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	advance := func(d time.Duration) { clockMu.Lock(); now = now.Add(d); clockMu.Unlock() }
	mem := newTestMemory(t, 1<<30)
	h := newHarness(t, &Options{Memory: mem, Clock: clock})
	h.table("People")
	h.c.maxImports = 2
	h.login()
	start := func(x *harness) (int, string) {
		return x.postRaw("/tables/People/import", "application/x-www-form-urlencoded",
			url.Values{"format": {"jsonl"}, "mode": {"insert"}, "onerror": {"stop"}}.Encode())
	}
	id := func(body string) string {
		var started struct{ ID string }
		require.NoError(t, json.Unmarshal([]byte(body), &started))
		return started.ID
	}
	chunk := func(x *harness, id string, offset int, last, data string) (int, string) {
		return x.postRaw(fmt.Sprintf("/tables/People/import/%s?offset=%d&last=%s", id, offset, last), "application/octet-stream", data)
	}

	status, body := start(h)
	require.Equal(t, http.StatusCreated, status)
	first := id(body)
	status, body = start(h)
	require.Equal(t, http.StatusCreated, status)
	second := id(body)

	// An unfinished record is held, and counted, between chunks.
	part := `{"PartitionKey":"a","RowKey":"2","Name":"` + strings.Repeat("x", 3000)
	status, body = chunk(h, first, 0, "0", `{"PartitionKey":"a","RowKey":"1"}`+"\n"+part)
	require.Equal(t, http.StatusOK, status, body)
	held := mem.inUse()
	require.GreaterOrEqual(t, held, int64(len(part)))
	require.Less(t, held, int64(2*len(part)), "between chunks, only the unfinished record")

	// The console runs maxImports at most, across sessions.
	b := h.fork()
	b.login()
	hd := b.sameOrigin("application/x-www-form-urlencoded")
	hd.Set("X-CSRF-Token", b.csrf)
	hd.Set("Accept", "application/json")
	req, err := http.NewRequest("POST", b.srv.URL+"/tables/People/import",
		strings.NewReader(url.Values{"format": {"jsonl"}, "mode": {"insert"}, "onerror": {"stop"}}.Encode()))
	require.NoError(t, err)
	req.Header = hd
	resp, err := b.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))

	// A chunk the budget has no room for is refused; nothing is taken.
	mem.mu.Lock()
	mem.size = held + 1024
	mem.mu.Unlock()
	status, body = chunk(h, first, len(`{"PartitionKey":"a","RowKey":"1"}`)+1+len(part), "1", `"}`)
	require.Equal(t, http.StatusServiceUnavailable, status, body)
	require.Contains(t, body, "memory budget is full")
	require.Equal(t, held, mem.inUse())
	mem.mu.Lock()
	mem.size = 1 << 30
	mem.mu.Unlock()

	// An import with no chunk for 2 minutes (the documented bound) ends,
	// giving back its record and its place.
	advance(2 * time.Minute)
	status, body = start(b)
	require.Equal(t, http.StatusCreated, status, body)
	require.Equal(t, int64(0), mem.inUse(), "the idle import's record is released")
	status, _ = chunk(h, first, 0, "0", "")
	require.Equal(t, http.StatusNotFound, status, "the idle import is gone")
	status, _ = chunk(h, second, 0, "1", "")
	require.Equal(t, http.StatusNotFound, status)

	// An import that finishes holds nothing.
	third := id(body)
	rec := `{"PartitionKey":"b","RowKey":"1","N":"` + strings.Repeat("y", 2000)
	status, body = chunk(b, third, 0, "0", rec)
	require.Equal(t, http.StatusOK, status, body)
	require.Positive(t, mem.inUse())
	status, body = chunk(b, third, len(rec), "1", `"}`)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"done":true`)
	require.Equal(t, int64(0), mem.inUse())
	e, err := h.db.Table("People").Get(context.Background(), "b", "1", nil)
	require.NoError(t, err)
	require.Len(t, e.Properties["N"], 2000)
}

// TestAccountLimits checks that with several accounts each account's
// sessions take only their share of the console's bounds on streams and
// imports, so one account's key holders cannot take every place.
func TestAccountLimits(t *testing.T) {
	ctx := context.Background()
	other, err := tablestore.OpenInMemory(nil)
	require.NoError(t, err)
	defer other.Close()
	h := newHarness(t, &Options{Accounts: []server.Account{
		{Name: "alpha", Keys: []string{"key-a"}},
		{Name: "beta", Keys: []string{"key-b"}, DB: other},
	}})
	h.c.maxStreams, h.c.maxImports = 2, 2 // a share of one each
	for _, db := range []*tablestore.DB{h.db, other} {
		tb, err := db.CreateTable(ctx, "Feed")
		require.NoError(t, err)
		require.NoError(t, tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{}))
	}
	signIn := func(account, key string) *harness {
		x := h.fork()
		x.get("/?token=" + testToken)
		x.get("/signin")
		status, _, _ := x.post("/signin", url.Values{"account": {account}, "key": {key}})
		require.Equal(t, http.StatusSeeOther, status)
		_, body, _ := x.get("/tables")
		m := csrfAttr.FindStringSubmatch(body)
		require.NotNil(t, m, body)
		x.csrf = m[1]
		return x
	}
	a1, a2, b := signIn("alpha", "key-a"), signIn("alpha", "key-a"), signIn("beta", "key-b")
	const path = "/tables/Feed/changes/stream?from=now"

	s := a1.stream(path, "")
	s.expect("ready")
	defer s.cancel()
	status, body, _ := a2.get(path)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, body, "this account's sessions have 1 live change streams open already")
	sb := b.stream(path, "")
	sb.expect("ready") // beta's place was kept
	defer sb.cancel()

	start := func(x *harness) (int, string) {
		return x.postRaw("/tables/Feed/import", "application/x-www-form-urlencoded",
			url.Values{"format": {"jsonl"}, "mode": {"insert"}, "onerror": {"stop"}}.Encode())
	}
	status, body = start(a1)
	require.Equal(t, http.StatusCreated, status, body)
	status, body = start(a2)
	require.Equal(t, http.StatusServiceUnavailable, status, body)
	require.Contains(t, body, "this account's sessions run 1 imports already")
	status, body = start(b)
	require.Equal(t, http.StatusCreated, status, body)
}
