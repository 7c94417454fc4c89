package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
)

// logRecorder collects JSON log lines.
type logRecorder struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logRecorder) lines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// TestRequestLogJSON: one JSON line per request with the ids, account,
// operation, table, status, bytes and duration.
func TestRequestLogJSON(t *testing.T) {
	var logs logRecorder
	h, _ := newTestHandler(t, &Options{Anonymous: true, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	body := `{"PartitionKey":"p","RowKey":"r","N":1}`
	r := httptest.NewRequest("POST", "/devstoreaccount1/things", strings.NewReader(body))
	r.Header.Set("x-ms-client-request-id", "client-42")
	w := serve(h, r)
	if w.Code != http.StatusCreated {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	id := w.Header().Get("x-ms-request-id")
	if len(id) != 36 || w.Header().Get("x-ms-client-request-id") != "client-42" {
		t.Fatalf("ids: %v", w.Header())
	}
	serve(h, httptest.NewRequest("GET", "/devstoreaccount1/things(PartitionKey='p',RowKey='r')", nil))
	serve(h, httptest.NewRequest("GET", "/devstoreaccount1/nosuch()", nil))
	lines := logs.lines(t)
	if len(lines) != 3 {
		t.Fatalf("%d lines: %v", len(lines), lines)
	}
	l := lines[0]
	want := map[string]any{"msg": "request", "level": "INFO", "method": "POST", "status": float64(201), "operation": "InsertEntity",
		"account": "devstoreaccount1", "table": "things", "request_id": id, "client_request_id": "client-42",
		"bytes_in": float64(len(body)), "bytes_out": float64(w.Body.Len())}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("%s = %v, want %v (%v)", k, l[k], v, l)
		}
	}
	if _, ok := l["duration"]; !ok {
		t.Errorf("no duration: %v", l)
	}
	if lines[1]["operation"] != "QueryEntity" || lines[2]["operation"] != "QueryEntities" ||
		lines[2]["status"] != float64(404) || lines[2]["error_code"] != "TableNotFound" {
		t.Errorf("%v\n%v", lines[1], lines[2])
	}
}

// TestAuthFailureReasonInLogOnly: the client gets Azure's generic text;
// the log line says why.
func TestAuthFailureReasonInLogOnly(t *testing.T) {
	var logs logRecorder
	h, _ := newTestHandler(t, &Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	r := httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil)
	r.Header.Set("x-ms-date", "Mon, 02 Jan 2006 15:04:05 GMT")
	r.Header.Set("Authorization", "SharedKeyLite devstoreaccount1:c2lnbmF0dXJl")
	w := serve(h, r)
	if w.Code != http.StatusForbidden || strings.Contains(w.Body.String(), "15 minutes") ||
		!strings.Contains(w.Body.String(), "Make sure the value of Authorization header is formed correctly") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	r = httptest.NewRequest("GET", "/devstoreaccount1/things()?sv=2019-02-02&tn=things&sp=r&se=2000-01-01&sig=c2ln", nil)
	w = serve(h, r)
	if w.Code != http.StatusForbidden || strings.Contains(w.Body.String(), "does not match") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	lines := logs.lines(t)
	if len(lines) != 2 || !strings.Contains(lines[0]["auth_error"].(string), "15 minutes") ||
		!strings.Contains(lines[1]["auth_error"].(string), "does not match") || lines[0]["error_code"] != "AuthenticationFailed" {
		t.Fatalf("%v", lines)
	}
}

// scrape returns the admin handler's /metrics text.
func scrape(t *testing.T, admin http.Handler) string {
	t.Helper()
	w := httptest.NewRecorder()
	admin.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/metrics", nil))
	if w.Code != 200 {
		t.Fatalf("/metrics: %d %s", w.Code, w.Body)
	}
	return w.Body.String()
}

func TestMetricsAndAdmin(t *testing.T) {
	m := NewMetrics()
	h, db := newTestHandler(t, &Options{Anonymous: true, Metrics: m, MaxConcurrentRequests: 1, QueueWait: 1})
	body := `{"PartitionKey":"p","RowKey":"r"}`
	serve(h, httptest.NewRequest("POST", "/devstoreaccount1/things", strings.NewReader(body)))
	serve(h, httptest.NewRequest("GET", "/devstoreaccount1/things()", nil))
	// An admission refusal.
	hh := h.(*handler)
	hh.work.acquire(context.Background(), 0)
	if w := serve(h, httptest.NewRequest("GET", "/devstoreaccount1/Tables", nil)); w.Code != 503 {
		t.Fatalf("%d", w.Code)
	}
	hh.work.release()
	backups := t.TempDir()
	admin, err := NewAdminHandler(AdminOptions{Metrics: m, Stores: map[string]*tablestore.DB{DevAccount: db}})
	if err != nil {
		t.Fatal(err)
	}
	text := scrape(t, admin)
	for _, want := range []string{
		`tablestore_requests_total{account="devstoreaccount1",operation="InsertEntity",status="201"} 1`,
		`tablestore_requests_total{account="devstoreaccount1",operation="QueryEntities",status="200"} 1`,
		`tablestore_requests_total{account="devstoreaccount1",operation="QueryTables",status="503"} 1`,
		`tablestore_admission_refusals_total{account="devstoreaccount1"} 1`,
		`tablestore_request_bytes_total{account="devstoreaccount1"} 33`, // len(body)
		`tablestore_request_duration_seconds_bucket{account="devstoreaccount1",operation="InsertEntity",le="+Inf"} 1`,
		`tablestore_requests_in_flight 1`, // the scrape is not a data request: 0 would be right; see below
		`tablestore_engine_up{account="devstoreaccount1"} 1`,
		`tablestore_engine_fault{account="devstoreaccount1"} 0`,
		`tablestore_tables{account="devstoreaccount1"} 1`,
		`tablestore_engine_wal_sync_duration_seconds_count{account="devstoreaccount1"}`,
		`tablestore_engine_l0_sublevels{account="devstoreaccount1"}`,
		`tablestore_engine_compaction_debt_bytes{account="devstoreaccount1"}`,
		`tablestore_engine_block_cache_hit_ratio{account="devstoreaccount1"}`,
		`tablestore_engine_disk_usage_bytes{account="devstoreaccount1"}`,
		`tablestore_entities_estimated{account="devstoreaccount1"}`,
		`go_goroutines`,
	} {
		if want == `tablestore_requests_in_flight 1` {
			want = `tablestore_requests_in_flight 0`
		}
		if !strings.Contains(text, want) {
			t.Errorf("no %s", want)
		}
	}
	if t.Failed() {
		t.Log(text)
	}

	get := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		admin.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1"+path, nil))
		return w
	}
	if w := get("/healthz"); w.Code != 200 {
		t.Fatalf("healthz %d", w.Code)
	}
	if w := get("/readyz"); w.Code != 200 || !strings.Contains(w.Body.String(), `"ready":true`) {
		t.Fatalf("readyz %d %s", w.Code, w.Body)
	}
	if w := get("/debug/pprof/"); w.Code != 404 {
		t.Fatalf("pprof without the flag: %d", w.Code)
	}

	// Backups of a store on disk.
	disk, err := tablestore.Open(filepath.Join(t.TempDir(), "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	if _, err := disk.CreateTable(context.Background(), "kept"); err != nil {
		t.Fatal(err)
	}
	diskAdmin, err := NewAdminHandler(AdminOptions{Stores: map[string]*tablestore.DB{DevAccount: disk}, BackupDir: backups})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		diskAdmin.ServeHTTP(w, httptest.NewRequest("POST", "http://127.0.0.1"+path, nil))
		return w
	}
	for _, bad := range []string{"", "../x", ".hidden", "a/b", strings.Repeat("x", 101)} {
		if w := post("/backup?name=" + bad); w.Code != 400 {
			t.Errorf("name %q: %d", bad, w.Code)
		}
	}
	w := post("/backup?name=nightly")
	if w.Code != 201 {
		t.Fatalf("backup %d %s", w.Code, w.Body)
	}
	if w := post("/backup?name=nightly"); w.Code != 409 {
		t.Fatalf("second backup of the same name: %d", w.Code)
	}
	if w := get("/backup?name=x"); w.Code != 405 {
		t.Fatalf("GET /backup: %d", w.Code)
	}
	var res struct{ Dir string }
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil || res.Dir != filepath.Join(backups, "nightly") {
		t.Fatalf("%s %v", w.Body, err)
	}
	cp, err := tablestore.Open(res.Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := cp.TableExists(context.Background(), "kept"); !ok || err != nil {
		t.Fatalf("the backup lacks the table: %v", err)
	}
	cp.Close()

	// A closed store is not ready, and its engine is not up.
	db.Close()
	if w := get("/readyz"); w.Code != 503 || !strings.Contains(w.Body.String(), `"ready":false`) {
		t.Fatalf("readyz after close: %d %s", w.Code, w.Body)
	}
	if text := scrape(t, admin); !strings.Contains(text, `tablestore_engine_up{account="devstoreaccount1"} 0`) {
		t.Fatal("engine_up after close")
	}
}

func TestAdminPprofAndNoBackupDir(t *testing.T) {
	_, db := newTestHandler(t, nil)
	admin, err := NewAdminHandler(AdminOptions{Stores: map[string]*tablestore.DB{DevAccount: db}, Pprof: true})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	admin.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/debug/pprof/", nil))
	if w.Code != 200 {
		t.Fatalf("pprof %d", w.Code)
	}
	w = httptest.NewRecorder()
	admin.ServeHTTP(w, httptest.NewRequest("POST", "http://127.0.0.1/backup?name=x", nil))
	if w.Code != http.StatusNotImplemented {
		t.Fatalf("backup without a dir: %d", w.Code)
	}
	w = httptest.NewRecorder()
	admin.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/metrics", nil))
	if w.Code != 404 {
		t.Fatalf("metrics without Metrics: %d", w.Code)
	}
	if _, err := NewAdminHandler(AdminOptions{}); err == nil {
		t.Fatal("no stores accepted")
	}
}

func openMem() (*tablestore.DB, error) { return tablestore.OpenInMemory(nil) }

// faultyConn is a driver whose store has met corruption: Health reports
// it, and nothing else is called by the admin endpoints.
type faultyConn struct{ driver.Conn }

func (faultyConn) Health() error {
	return &driver.CorruptError{Op: "compaction", File: "000042.sst", Err: errors.New("block checksum mismatch")}
}

// TestReadyzCorruption: a store with a corruption fault is not ready,
// and the fault shows in the metrics.
func TestReadyzCorruption(t *testing.T) {
	db, err := tablestore.OpenDriver(faultyConn{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := NewMetrics()
	m.addStore(DevAccount, db)
	admin, err := NewAdminHandler(AdminOptions{Metrics: m, Stores: map[string]*tablestore.DB{DevAccount: db}})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	admin.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/readyz", nil))
	if w.Code != 503 || !strings.Contains(w.Body.String(), "block checksum mismatch") {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	w = httptest.NewRecorder()
	admin.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/healthz", nil))
	if w.Code != 200 {
		t.Fatalf("healthz: %d", w.Code)
	}
	text := scrape(t, admin)
	for _, want := range []string{`tablestore_engine_fault{account="devstoreaccount1"} 1`, `tablestore_engine_up{account="devstoreaccount1"} 0`} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s", want)
		}
	}
}

// TestAdminGuard: the admin listener answers only to its own host names
// (421 otherwise, against DNS rebinding), and refuses a POST a browser
// sends from another site: no backup starts.
func TestAdminGuard(t *testing.T) {
	db, err := tablestore.Open(filepath.Join(t.TempDir(), "store"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	backups := t.TempDir()
	admin, err := NewAdminHandler(AdminOptions{Stores: map[string]*tablestore.DB{DevAccount: db},
		BackupDir: backups, Hosts: []string{"admin.internal"}})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, target string, hdr map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, target, nil)
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		admin.ServeHTTP(w, r)
		return w
	}
	for _, target := range []string{"http://rebound.example:9090/metrics", "http://rebound.example/healthz",
		"http://rebound.example/readyz", "http://rebound.example/backup?name=a"} {
		method := "GET"
		if strings.Contains(target, "backup") {
			method = "POST"
		}
		if w := do(method, target, nil); w.Code != http.StatusMisdirectedRequest {
			t.Errorf("%s %s: %d", method, target, w.Code)
		}
	}
	for _, hdr := range []map[string]string{
		{"Origin": "http://evil.example"},
		{"Sec-Fetch-Site": "cross-site"},
		{"Sec-Fetch-Site": "same-site"},
		{"Origin": "null"},
	} {
		if w := do("POST", "http://127.0.0.1:9090/backup?name=b", hdr); w.Code != http.StatusForbidden {
			t.Errorf("POST from %v: %d %s", hdr, w.Code, w.Body)
		}
	}
	if ents, _ := os.ReadDir(backups); len(ents) != 0 {
		t.Fatalf("a refused request made a backup: %v", ents)
	}
	// Its own names, and clients that are not browsers, are served.
	if w := do("GET", "http://admin.internal:9090/healthz", nil); w.Code != 200 {
		t.Errorf("configured host: %d", w.Code)
	}
	if w := do("GET", "http://localhost:9090/readyz", map[string]string{"Sec-Fetch-Site": "cross-site"}); w.Code != 200 {
		t.Errorf("a cross-site GET: %d", w.Code)
	}
	if w := do("POST", "http://127.0.0.1:9090/backup?name=c", map[string]string{"Origin": "http://127.0.0.1:9090", "Sec-Fetch-Site": "same-origin"}); w.Code != 201 {
		t.Errorf("same-origin POST: %d %s", w.Code, w.Body)
	}
}
