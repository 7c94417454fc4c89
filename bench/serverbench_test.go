package main

import (
	"math"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// serveTablestore serves tablestore's REST handler over an in-memory
// store for the test's life, as a target.
func serveTablestore(t *testing.T) *srvTarget {
	t.Helper()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	h, err := server.New(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	u, _ := url.Parse(ts.URL)
	return &srvTarget{name: serverTablestore, host: u.Host, endpoint: ts.URL + "/" + server.DevAccount}
}

// TestRestConnAgainstServer drives tablestore's REST handler with the
// load generator's connection: SharedKeyLite signing, table creation, a
// $batch of 100 inserts, a get and a page with its continuation.
func TestRestConnAgainstServer(t *testing.T) {
	tgt := serveTablestore(t)
	if err := srvSetup(tgt); err != nil {
		t.Fatal(err)
	}
	c, err := newRestConn(tgt.host, server.DevAccount, server.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	ents := make([][]byte, 2*batchSize)
	var rec record
	for i := range ents {
		genRecord(&rec, i)
		if ents[i], err = recordEntity(&rec).MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	}
	for b := range 2 {
		body, ct := batchBody(tgt.endpoint, srvTable, ents[b*batchSize:(b+1)*batchSize], b)
		r, err := c.do("POST", "/$batch", "", acceptMinMeta, nil, ct, body)
		if err != nil {
			t.Fatal(err)
		}
		if ok, failed := batchStatuses(r.body); r.status != 202 || ok != batchSize || failed != 0 {
			t.Fatalf("batch: status %d, %d ok, %d failed: %s", r.status, ok, failed, r.body)
		}
	}
	r, err := c.do("GET", entityPath(srvTable, partitionKey(0), rowKey(7)), "", acceptNoMeta, nil, "", nil)
	if err != nil || r.status != 200 || !strings.Contains(string(r.body), `"RowKey":"r0000007"`) {
		t.Fatalf("get: %v, status %d: %s", err, r.status, r.body)
	}
	// A wrong signature is refused.
	bad, err := newRestConn(tgt.host, server.DevAccount, "AAAA")
	if err != nil {
		t.Fatal(err)
	}
	defer bad.close()
	if r, err := bad.do("GET", entityPath(srvTable, partitionKey(0), rowKey(7)), "", acceptNoMeta, nil, "", nil); err != nil || r.status != 403 {
		t.Fatalf("get with a wrong key: %v, status %d", err, r.status)
	}
	cfg := serverConfig{entities: 2 * batchSize, conns: 2, duration: 100 * time.Millisecond, rounds: 1}
	for _, accept := range []string{acceptNoMeta, acceptFullMeta} {
		if v, ph, err := srvPaging(t.Context(), tgt, cfg, accept); err != nil || v <= 0 || ph.Entities != pagingPasses*2*batchSize {
			t.Fatalf("paging (%s): %v, %v, %+v", accept, err, v, ph)
		}
	}
	res := &srvResult{}
	if v, ph, err := srvGets(t.Context(), tgt, cfg, 2, 0, res); err != nil || v <= 0 || ph.Requests == 0 || res.pending["getN-p50"] <= 0 {
		t.Fatalf("gets: %v, %v, %+v, %v", err, v, ph, res.pending)
	}
	if v, _, err := srvInserts(t.Context(), tgt, cfg, 0); err != nil || v <= 0 {
		t.Fatalf("inserts: %v, %v", err, v)
	}
}

func TestBatchStatuses(t *testing.T) {
	body := "--b\r\nHTTP/1.1 204 No Content\r\n\r\n--b\r\nHTTP/1.1 204 No Content\r\n--b\r\nHTTP/1.1 409 Conflict\r\n"
	if ok, failed := batchStatuses([]byte(body)); ok != 2 || failed != 1 {
		t.Fatalf("ok %d, failed %d", ok, failed)
	}
}

func TestParseServerFlags(t *testing.T) {
	c, err := parseServerFlags(nil)
	if err != nil || c.entities != 100_000 || c.conns != 16 || !slices.Equal(c.servers, []string{"tablestore", "azurite"}) {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"-entities=1500"}, {"-conns=0"}, {"-servers=cosmos"}, {"-rounds=0"}} {
		if _, err := parseServerFlags(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	if got := srvLabel(srvFigures[6], 16); got != "point gets, 16 connections" {
		t.Errorf("label %q", got)
	}
}

func TestLeadingInt(t *testing.T) {
	if v, rest := leadingInt([]byte("12345 678")); v != 12345 || string(rest) != " 678" {
		t.Fatalf("%d %q", v, rest)
	}
	if v := fieldAfter([]byte("rchar: 10\nsyscr: 42\n"), "syscr: "); v != 42 {
		t.Fatalf("syscr %d", v)
	}
	if v := fieldAfter([]byte("x"), "syscr: "); v != 0 {
		t.Fatalf("missing field %d", v)
	}
}

func TestOverFloorLine(t *testing.T) {
	if got, want := overFloorLine("$batch entity", 9.5, 7.52, 2), "  server CPU over the library floor per $batch entity    1.98 µs (server 9.50, floor 7.52)   goal <= 2 µs  ok"; got != want {
		t.Errorf("under the goal:\n got %q\nwant %q", got, want)
	}
	if got := overFloorLine("paged entity ", 1.3, 0.74, 0.5); !strings.HasSuffix(got, "goal <= 0.5 µs  MISS") || !strings.Contains(got, "0.56 µs") {
		t.Errorf("over the goal: %q", got)
	}
	if got := overFloorLine("$batch entity", math.NaN(), 7.52, 2); !strings.Contains(got, "n/a") {
		t.Errorf("no server figure: %q", got)
	}
	if got := floorGoal(7.519999, 2); got != 9.52 {
		t.Errorf("floorGoal = %v, want 9.52", got)
	}
	for _, id := range []string{"batch", "page-none"} {
		if g := srvGoal(id); g != 15 {
			t.Errorf("goal of %s = %gx, want 15x", id, g)
		}
	}
}

// TestTransportFloor captures tablestore's answers, serves them from the
// transport floor's child process and drives it with the load
// generator: every phase it runs gets the answers it checks, and a get's
// RowKey is the one its path names.
func TestTransportFloor(t *testing.T) {
	tgt := serveTablestore(t)
	cfg := serverConfig{entities: 2 * batchSize, conns: 2, duration: 100 * time.Millisecond, rounds: 1}
	ents := make([][]byte, cfg.entities)
	var rec record
	var err error
	for i := range ents {
		genRecord(&rec, i)
		if ents[i], err = recordEntity(&rec).MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	}
	if err := srvBatchPhase(t.Context(), tgt, cfg, newSrvResult(tgt.name, ""), ents); err != nil {
		t.Fatal(err)
	}
	a, err := captureBareAnswers(tgt, cfg.entities)
	if err != nil {
		t.Fatal(err)
	}
	if a.Batch.Status != 202 || a.Get.Status != 200 || a.Insert.Status != 204 || a.Batch.Header.Get("Content-Type") == "" {
		t.Fatalf("captured %d, %d, %d, %v", a.Batch.Status, a.Get.Status, a.Insert.Status, a.Batch.Header)
	}
	// In process: a get names its own RowKey, and keeps the rest.
	bare := httptest.NewServer(a)
	defer bare.Close()
	bu, _ := url.Parse(bare.URL)
	c, err := newRestConn(bu.Host, server.DevAccount, server.DevKey)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	r, err := c.do("GET", entityPath(srvTable, partitionKey(1), rowKey(42)), "", acceptNoMeta, nil, "", nil)
	if err != nil || r.status != 200 {
		t.Fatalf("bare get: %v, %d", err, r.status)
	}
	if want := strings.Replace(string(a.Get.Body), `"RowKey":"`+rowKey(0)+`"`, `"RowKey":"`+rowKey(42)+`"`, 1); string(r.body) != want {
		t.Fatalf("bare get answered\n%s\nwant\n%s", r.body, want)
	}
	// As a child process, driven by every phase but paging.
	res, err := runBare(t.Context(), cfg, a, t.TempDir(), ents, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Pages) != 1 {
		t.Fatalf("captured %d pages of %d entities", len(a.Pages), cfg.entities)
	}
	for _, id := range []string{"batch", "get1", "getN", "insertN", "page-none"} {
		p, ok := res.Phases[id]
		if !ok || p.Requests == 0 || res.Values[id] <= 0 || p.Switches < 0 {
			t.Fatalf("%s: %+v, %v", id, p, res.Values[id])
		}
	}
	if _, ok := res.Phases["page-full"]; ok {
		t.Fatal("the transport floor was paged through at full metadata")
	}
}

// TestContextSwitches counts this process's switches: sleeping threads
// switch out, so the count grows.
func TestContextSwitches(t *testing.T) {
	before := contextSwitches(os.Getpid())
	if before < 0 {
		t.Fatal("no count")
	}
	for range 20 {
		time.Sleep(time.Millisecond)
	}
	if after := contextSwitches(os.Getpid()); after <= before {
		t.Fatalf("switches %d then %d", before, after)
	}
	if contextSwitches(-1) != -1 {
		t.Fatal("a process that does not exist has a count")
	}
	if p := (srvPhase{Requests: 4, Switches: 10}); p.switchesPerRequest() != 2.5 {
		t.Fatal(p.switchesPerRequest())
	}
	if p := (srvPhase{Requests: 4, Switches: -1}); !math.IsNaN(p.switchesPerRequest()) {
		t.Fatal(p.switchesPerRequest())
	}
}
