package tablestoretest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// anonServer is a server that needs no signatures, so tests can speak
// raw HTTP to it.
func anonServer(t *testing.T) *Server {
	return NewServerWithOptions(t, &server.Options{Anonymous: true})
}

// send makes one request and returns the response with its body read.
func send(t *testing.T, c *http.Client, method, url, body string, hdr ...string) (*http.Response, []byte, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;odata=nometadata")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b, nil
}

// must is send that fails the test on a transport error or a status
// other than want.
func must(t *testing.T, c *http.Client, want int, method, url, body string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	resp, b, err := send(t, c, method, url, body, hdr...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, b, want)
	}
	return resp, b
}

func (s *Server) endpoint() string { return s.URL() + "/" + s.Account() }

func TestInProcessMatchesTCP(t *testing.T) {
	srv := anonServer(t)
	tcp, inproc := srv.HTTPClient(), srv.InProcessClient()
	must(t, inproc, http.StatusCreated, "POST", srv.endpoint()+"/Tables", `{"TableName":"people"}`)
	must(t, tcp, http.StatusCreated, "POST", srv.endpoint()+"/people", `{"PartitionKey":"p","RowKey":"r","Age":42,"Big":"9","Big@odata.type":"Edm.Int64"}`)
	for _, path := range []string{"/people(PartitionKey='p',RowKey='r')", "/people()", "/people(PartitionKey='p',RowKey='missing')", "/nosuchtable()", "/Tables"} {
		a, ab := must(t, tcp, statusOf(t, tcp, srv.endpoint()+path), "GET", srv.endpoint()+path, "")
		b, bb := must(t, inproc, a.StatusCode, "GET", srv.endpoint()+path, "")
		if !bytes.Equal(maskIDs(ab), maskIDs(bb)) {
			t.Errorf("GET %s: bodies differ:\nTCP:        %s\nin-process: %s", path, ab, bb)
		}
		for _, h := range []string{"Content-Type", "Content-Length", "ETag", "x-ms-error-code", "x-ms-version", "x-ms-continuation-NextPartitionKey"} {
			if a.Header.Get(h) != b.Header.Get(h) {
				t.Errorf("GET %s: header %s: TCP %q, in-process %q", path, h, a.Header.Get(h), b.Header.Get(h))
			}
		}
		if a.ContentLength != b.ContentLength {
			t.Errorf("GET %s: ContentLength: TCP %d, in-process %d", path, a.ContentLength, b.ContentLength)
		}
	}
}

func statusOf(t *testing.T, c *http.Client, url string) int {
	resp, _, err := send(t, c, "GET", url, "")
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

func TestInProcessAuthenticates(t *testing.T) {
	srv := NewServer(t)
	resp, b := must(t, srv.InProcessClient(), http.StatusForbidden, "GET", srv.endpoint()+"/Tables", "")
	if resp.Header.Get("x-ms-error-code") != "AuthenticationFailed" || !bytes.Contains(b, []byte("AuthenticationFailed")) {
		t.Fatalf("unsigned in-process request: %s %s", resp.Header.Get("x-ms-error-code"), b)
	}
}

func TestInProcessContext(t *testing.T) {
	srv := anonServer(t)
	srv.InjectFault(Fault{Operation: "QueryTables", Latency: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.endpoint()+"/Tables", nil)
	_, err := srv.InProcessClient().Do(req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
}

func TestSnapshotRestoreReset(t *testing.T) {
	srv := anonServer(t)
	c := srv.InProcessClient()
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/Tables", `{"TableName":"tbl"}`)
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/tbl", `{"PartitionKey":"p","RowKey":"1"}`)
	ctx := context.Background()
	if err := srv.DB().Table("tbl").SetTTL(ctx, tablestore.TTL{Default: time.Hour}); err != nil {
		t.Fatal(err)
	}
	snap := srv.Snapshot()
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/tbl", `{"PartitionKey":"p","RowKey":"2"}`)
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/Tables", `{"TableName":"other"}`)

	srv.Restore(snap)
	must(t, c, http.StatusOK, "GET", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='1')", "")
	must(t, c, http.StatusNotFound, "GET", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='2')", "")
	must(t, c, http.StatusNotFound, "GET", srv.endpoint()+"/other()", "")
	if ttl, err := srv.DB().Table("tbl").TTL(ctx); err != nil || ttl.Default != time.Hour {
		t.Fatalf("TTL after restore: %+v, %v", ttl, err)
	}
	// The snapshot is unchanged by writes after a Restore.
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/tbl", `{"PartitionKey":"p","RowKey":"3"}`)
	srv.Restore(snap)
	must(t, c, http.StatusNotFound, "GET", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='3')", "")

	for range 3 { // the first Reset opens a store; later ones take the spare
		srv.Reset()
		_, b := must(t, c, http.StatusOK, "GET", srv.endpoint()+"/Tables", "")
		if !bytes.Equal(b, []byte(`{"value":[]}`)) {
			t.Fatalf("tables after Reset: %s", b)
		}
		must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/Tables", `{"TableName":"tbl"}`)
	}
	srv.Restore(snap)
	must(t, c, http.StatusOK, "GET", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='1')", "")
}

func TestDBStateControls(t *testing.T) {
	d := NewDB(t)
	ctx := context.Background()
	tbl, err := d.DB().CreateTable(ctx, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	snap := d.Snapshot()
	d.Reset()
	if ok, _ := d.DB().TableExists(ctx, "tbl"); ok {
		t.Fatal("table survives Reset")
	}
	d.Restore(snap)
	if _, err := d.DB().Table("tbl").Get(ctx, "p", "1", nil); err != nil {
		t.Fatalf("after Restore: %v", err)
	}
}

func TestFaultServerBusy(t *testing.T) {
	srv := anonServer(t)
	c := srv.InProcessClient()
	srv.InjectFault(Fault{Operation: "QueryTables", Code: "ServerBusy", Times: 2})
	for i := range 2 {
		resp, b := must(t, c, http.StatusServiceUnavailable, "GET", srv.endpoint()+"/Tables", "")
		var body struct {
			Err struct {
				Code    string
				Message struct{ Value string }
			} `json:"odata.error"`
		}
		if err := json.Unmarshal(b, &body); err != nil || body.Err.Code != "ServerBusy" || !strings.HasPrefix(body.Err.Message.Value, "The server is busy.\nRequestId:") {
			t.Fatalf("request %d: body %s (%v)", i, b, err)
		}
		if _, ok := resp.Header["Retry-After"]; ok || resp.Header.Get("x-ms-error-code") != "ServerBusy" {
			t.Fatalf("request %d: headers %v", i, resp.Header)
		}
	}
	must(t, c, http.StatusOK, "GET", srv.endpoint()+"/Tables", "")
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/Tables", `{"TableName":"tbl"}`)
	got := srv.Requests()
	want := []struct {
		op     string
		status int
		code   string
	}{{"QueryTables", 503, "ServerBusy"}, {"QueryTables", 503, "ServerBusy"}, {"QueryTables", 200, ""}, {"CreateTable", 201, ""}}
	if len(got) != len(want) {
		t.Fatalf("Requests() = %+v", got)
	}
	for i, w := range want {
		if got[i].Operation != w.op || got[i].Status != w.status || got[i].Code != w.code {
			t.Errorf("request %d: %+v, want %+v", i, got[i], w)
		}
	}
	if got[3].RequestBytes != int64(len(`{"TableName":"tbl"}`)) || got[3].ResponseBytes == 0 {
		t.Errorf("sizes: %+v", got[3])
	}
}

// TestFaultRetryAfter: Azure Storage's errors ask for no wait unless the
// rule gives one; Cosmos DB's 429 always carries x-ms-retry-after-ms.
func TestFaultRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		code      string
		wait      *time.Duration
		after, ms string // "-": absent
	}{
		{"ServerBusy", nil, "-", "-"},
		{"OperationTimedOut", nil, "-", "-"},
		{"ServerBusy", new(time.Duration(0)), "0", "-"},
		{"ServerBusy", new(2 * time.Second), "2", "-"},
		{"OperationTimedOut", new(20 * time.Millisecond), "-", "20"},
		{"ServerBusy", new(1500 * time.Millisecond), "-", "1500"},
		{"TooManyRequests", nil, "1", "1000"},
		{"TooManyRequests", new(20 * time.Millisecond), "-", "20"},
		{"TooManyRequests", new(time.Duration(0)), "0", "0"},
	} {
		srv := anonServer(t)
		srv.InjectFault(Fault{Operation: "QueryTables", Code: tc.code, RetryAfter: tc.wait})
		resp, _, err := send(t, srv.InProcessClient(), "GET", srv.endpoint()+"/Tables", "")
		if err != nil {
			t.Fatal(err)
		}
		header := func(name string) string {
			if v, ok := resp.Header[http.CanonicalHeaderKey(name)]; ok {
				return v[0]
			}
			return "-"
		}
		if a, ms := header("Retry-After"), header("x-ms-retry-after-ms"); a != tc.after || ms != tc.ms {
			t.Errorf("%s %v: Retry-After %s, x-ms-retry-after-ms %s; want %s, %s", tc.code, tc.wait, a, ms, tc.after, tc.ms)
		}
	}
}

func TestFaultSelection(t *testing.T) {
	srv := anonServer(t)
	c := srv.InProcessClient()
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/Tables", `{"TableName":"tbl"}`)
	pattern := func() string {
		var b strings.Builder
		for range 12 {
			resp, _, err := send(t, c, "GET", srv.endpoint()+"/tbl()", "")
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode == http.StatusOK {
				b.WriteByte('.')
			} else {
				b.WriteByte('x')
			}
		}
		return b.String()
	}
	remove := srv.InjectFault(Fault{Operation: "QueryEntities", Table: "TBL", Status: 500, Every: 3, Times: 2})
	if p := pattern(); p != "..x..x......" {
		t.Errorf("Every 3, Times 2: %s", p)
	}
	remove()
	if p := pattern(); p != "............" {
		t.Errorf("removed: %s", p)
	}
	remove = srv.InjectFault(Fault{Table: "other", Code: "InternalError"})
	if p := pattern(); p != "............" {
		t.Errorf("another table: %s", p)
	}
	remove()
	srv.InjectFault(Fault{Code: "TooManyRequests", Probability: 0.5, Seed: 7})
	p1 := pattern()
	if !strings.Contains(p1, "x") || !strings.Contains(p1, ".") {
		t.Errorf("probability 0.5 over 12: %s", p1)
	}
}

func TestFaultValidation(t *testing.T) {
	for _, c := range []struct {
		f     Fault
		field string
	}{
		{Fault{Operation: "GetEntity", Code: "ServerBusy"}, "Fault.Operation"},
		{Fault{Status: 418}, "Fault.Status"},
		{Fault{Code: "Busy"}, "Fault.Code"},
		{Fault{Status: 500, Code: "ServerBusy"}, "Fault.Status"},
		{Fault{Drop: "during"}, "Fault.Drop"},
		{Fault{Page: "half"}, "Fault.Page"},
		{Fault{Operation: "QueryTables", Page: PageEmpty}, "Fault.Page"},
		{Fault{Operation: "InsertEntity", Code: "UpdateConditionNotSatisfied"}, "Fault.Operation"},
		{Fault{Code: "ServerBusy", Times: -1}, "Fault.Times"},
		{Fault{Code: "ServerBusy", Probability: 2}, "Fault.Probability"},
		{Fault{Code: "ServerBusy", Drop: DropBefore}, "Fault.Drop"},
		{Fault{}, "Fault.Status"},
	} {
		err := c.f.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.field+":") {
			t.Errorf("%+v: %v, want an error naming %s", c.f, err, c.field)
		}
	}
	if err := (Fault{Operation: "MergeEntity", Status: 412}).Validate(); err != nil {
		t.Errorf("valid 412 race: %v", err)
	}
}

func TestFaultDrop(t *testing.T) {
	srv := anonServer(t)
	c := srv.InProcessClient()
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/Tables", `{"TableName":"tbl"}`)
	remove := srv.InjectFault(Fault{Operation: "InsertEntity", Drop: DropBefore, Times: 1})
	if _, _, err := send(t, c, "POST", srv.endpoint()+"/tbl", `{"PartitionKey":"p","RowKey":"before"}`); !errors.Is(err, ErrDropped) {
		t.Fatalf("drop before: %v", err)
	}
	must(t, c, http.StatusNotFound, "GET", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='before')", "")
	remove()
	srv.InjectFault(Fault{Operation: "InsertEntity", Drop: DropAfter, Times: 2})
	if _, _, err := send(t, c, "POST", srv.endpoint()+"/tbl", `{"PartitionKey":"p","RowKey":"after"}`); !errors.Is(err, ErrDropped) {
		t.Fatalf("drop after: %v", err)
	}
	must(t, c, http.StatusOK, "GET", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='after')", "")
	// Over TCP the connection closes without a response.
	if _, _, err := send(t, srv.HTTPClient(), "POST", srv.endpoint()+"/tbl", `{"PartitionKey":"p","RowKey":"tcp"}`); err == nil {
		t.Fatal("drop after over TCP: a response came")
	}
	must(t, c, http.StatusOK, "GET", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='tcp')", "")
	if r := srv.Requests(); !r[1].Dropped || r[1].Status != 0 {
		t.Errorf("request log of a drop: %+v", r[1])
	}
}

func TestFaultPreconditionRace(t *testing.T) {
	srv := anonServer(t)
	c := srv.InProcessClient()
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/Tables", `{"TableName":"tbl"}`)
	resp, _ := must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/tbl", `{"PartitionKey":"p","RowKey":"r","v":1}`)
	etag := resp.Header.Get("ETag")
	srv.InjectFault(Fault{Operation: "UpdateEntity", Partition: "p", Status: 412, Times: 1})
	resp, b := must(t, c, http.StatusPreconditionFailed, "PUT", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='r')", `{"v":2}`, "If-Match", etag)
	if resp.Header.Get("x-ms-error-code") != "UpdateConditionNotSatisfied" {
		t.Fatalf("race: %s", b)
	}
	resp, _ = must(t, c, http.StatusOK, "GET", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='r')", "")
	if now := resp.Header.Get("ETag"); now == etag {
		t.Fatal("the competing write did not change the ETag")
	}
	must(t, c, http.StatusNoContent, "PUT", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='r')", `{"v":2}`, "If-Match", resp.Header.Get("ETag"))
}

// queryAll follows continuations and returns each page's RowKeys.
func queryAll(t *testing.T, srv *Server, c *http.Client) [][]string {
	t.Helper()
	var pages [][]string
	url := srv.endpoint() + "/tbl()"
	for range 50 {
		resp, b := must(t, c, http.StatusOK, "GET", url, "")
		var page struct{ Value []struct{ RowKey string } }
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, v := range page.Value {
			keys = append(keys, v.RowKey)
		}
		pages = append(pages, keys)
		npk, nrk := resp.Header.Get("x-ms-continuation-NextPartitionKey"), resp.Header.Get("x-ms-continuation-NextRowKey")
		if npk == "" {
			return pages
		}
		url = srv.endpoint() + "/tbl()?NextPartitionKey=" + npk + "&NextRowKey=" + nrk
	}
	t.Fatal("no end of pages")
	return nil
}

func TestFaultPaging(t *testing.T) {
	srv := anonServer(t)
	srv.Load("tbl", strings.NewReader(`{"PartitionKey":"a","RowKey":"1"}
{"PartitionKey":"a","RowKey":"2"}
{"PartitionKey":"b","RowKey":"3"}
{"PartitionKey":"c","RowKey":"4"}
`))
	c := srv.InProcessClient()
	for _, tc := range []struct {
		f    Fault
		want string
	}{
		{Fault{Page: PageEmpty, Times: 1}, "[[] [1 2 3 4]]"},
		{Fault{Page: PageEmpty, Every: 2, Times: 1}, "[[1 2 3 4]]"},
		{Fault{Operation: "QueryEntities", Page: PageShort}, "[[1] [2] [3] [4]]"},
		{Fault{Page: PagePartition}, "[[1 2] [3] [4]]"},
	} {
		remove := srv.InjectFault(tc.f)
		if got := sprint(queryAll(t, srv, c)); got != tc.want {
			t.Errorf("%+v: pages %s, want %s", tc.f, got, tc.want)
		}
		remove()
	}
}

func sprint(pages [][]string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, p := range pages {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("[" + strings.Join(p, " ") + "]")
	}
	b.WriteByte(']')
	return b.String()
}

func TestClockDrivesTTLAndDate(t *testing.T) {
	srv := anonServer(t)
	c := srv.InProcessClient()
	start := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	srv.Clock().Set(start)
	resp, _ := must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/Tables", `{"TableName":"tbl"}`)
	if d, err := http.ParseTime(resp.Header.Get("Date")); err != nil || d.Sub(start).Abs() > time.Minute {
		t.Fatalf("Date %q, want about %v", resp.Header.Get("Date"), start)
	}
	ctx := context.Background()
	if err := srv.DB().Table("tbl").SetTTL(ctx, tablestore.TTL{Default: time.Hour}); err != nil {
		t.Fatal(err)
	}
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/tbl", `{"PartitionKey":"p","RowKey":"r"}`)
	e, err := srv.DB().Table("tbl").Get(ctx, "p", "r", nil)
	if err != nil || e.Timestamp.Sub(start).Abs() > time.Minute {
		t.Fatalf("Timestamp %v (%v), want about %v", e, err, start)
	}
	srv.Clock().Advance(59 * time.Minute)
	must(t, c, http.StatusOK, "GET", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='r')", "")
	srv.Clock().Advance(2 * time.Minute)
	must(t, c, http.StatusNotFound, "GET", srv.endpoint()+"/tbl(PartitionKey='p',RowKey='r')", "")
	_, b := must(t, c, http.StatusOK, "GET", srv.endpoint()+"/tbl()", "")
	if string(b) != `{"value":[]}` {
		t.Fatalf("query after expiry: %s", b)
	}
}

func TestClockConcurrent(t *testing.T) {
	var c Clock
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				c.Advance(time.Second)
				_ = c.Now()
			}
		})
	}
	wg.Wait()
	if d := time.Until(c.Now()); d < 3999*time.Second || d > 4001*time.Second {
		t.Fatalf("offset %v, want 4000s", d)
	}
}

const fixture = `{"PartitionKey":"p","RowKey":"1","Big@odata.type":"Edm.Int64","Big":"12345678901234","Id@odata.type":"Edm.Guid","Id":"c9da6455-213d-42c9-9a79-3e9149a57833","N":3,"Raw@odata.type":"Edm.Binary","Raw":"AQID","S":"x","When@odata.type":"Edm.DateTime","When":"2024-05-06T07:08:09.1234567Z"}
{"PartitionKey":"p","RowKey":"2","F":1.5}
`

func TestLoadKeepsTypes(t *testing.T) {
	d := NewDB(t)
	d.Load("tbl", strings.NewReader(fixture))
	e, err := d.DB().Table("tbl").Get(context.Background(), "p", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"Big": "int64", "When": "time.Time", "Id": "edm.GUID", "Raw": "[]uint8", "N": "int32"} {
		if got := typeName(e.Properties[name]); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	got, err := dump(context.Background(), d.DB(), "tbl")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != fixture {
		t.Errorf("round trip:\n%s\nwant\n%s", got, fixture)
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

func TestGolden(t *testing.T) {
	d := NewDB(t)
	d.Load("tbl", strings.NewReader(fixture))
	path := filepath.Join(t.TempDir(), "t.golden.jsonl")
	*update = true
	d.Golden(t, "tbl", path)
	*update = false
	d.Golden(t, "tbl", path) // equal: passes
	if b, _ := os.ReadFile(path); string(b) != fixture {
		t.Fatalf("golden file:\n%s", b)
	}
	if err := d.DB().Table("tbl").Delete(context.Background(), "p", "2", tablestore.ETagAny); err != nil {
		t.Fatal(err)
	}
	rec := &recordingTB{TB: t}
	d.Golden(rec, "tbl", path)
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], `- {"PartitionKey":"p","RowKey":"2","F":1.5}`) {
		t.Fatalf("mismatch report: %q", rec.errs)
	}
}

// recordingTB keeps Errorf's messages instead of failing.
type recordingTB struct {
	testing.TB
	errs []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func TestRequestLogBounded(t *testing.T) {
	var l requestLog
	for i := range MaxRequests + 5 {
		l.add(RequestRecord{Status: i})
	}
	got := l.snapshot()
	if len(got) != MaxRequests || got[0].Status != 5 || got[len(got)-1].Status != MaxRequests+4 || l.dropped != 5 {
		t.Fatalf("ring: len %d first %d last %d dropped %d", len(got), got[0].Status, got[len(got)-1].Status, l.dropped)
	}
	if !slices.IsSortedFunc(got, func(a, b RequestRecord) int { return a.Status - b.Status }) {
		t.Fatal("ring out of order")
	}
}

var requestIDs = regexp.MustCompile(`RequestId:[0-9a-f-]+\\nTime:[0-9T:.Z-]+`)

// maskIDs blanks the request id and time of an error message.
func maskIDs(b []byte) []byte { return requestIDs.ReplaceAll(b, []byte("RequestId:-")) }

func TestDBFaults(t *testing.T) {
	d := NewDB(t)
	ctx := context.Background()
	tbl, err := d.DB().CreateTable(ctx, "tbl")
	if err != nil {
		t.Fatal(err)
	}
	d.InjectFault(Fault{Operation: "InsertEntity", Code: "ServerBusy", Times: 1})
	err = tbl.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "r"})
	var te *tablestore.Error
	if !errors.As(err, &te) || te.Code != "ServerBusy" {
		t.Fatalf("insert under ServerBusy: %v", err)
	}
	if err := tbl.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
		t.Fatalf("second insert: %v", err)
	}
	d.InjectFault(Fault{Operation: "QueryEntity", Drop: DropBefore, Times: 1})
	if _, err := tbl.Get(ctx, "p", "r", nil); !errors.Is(err, ErrDropped) {
		t.Fatalf("get dropped: %v", err)
	}
	d.InjectFault(Fault{Operation: "InsertOrReplaceEntity", Drop: DropAfter, Times: 1})
	if err := tbl.Upsert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "u"}, tablestore.Replace); !errors.Is(err, ErrDropped) {
		t.Fatalf("upsert dropped after: %v", err)
	}
	if _, err := tbl.Get(ctx, "p", "u", nil); err != nil {
		t.Fatalf("the upsert dropped after commit is not there: %v", err)
	}
	e, err := tbl.Get(ctx, "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	d.InjectFault(Fault{Operation: "UpdateEntity", Status: 412, Times: 1})
	if err := tbl.Update(ctx, e, tablestore.Replace, e.ETag); !errors.Is(err, tablestore.ErrUpdateConditionNotSatisfied) {
		t.Fatalf("update racing a competing write: %v", err)
	}
	// The table keeps its optional features through the wrapper.
	if err := tbl.SetTTL(ctx, tablestore.TTL{Default: time.Hour}); err != nil {
		t.Fatalf("SetTTL through the fault wrapper: %v", err)
	}
	d.Clock().Advance(2 * time.Hour)
	if _, err := tbl.Get(ctx, "p", "r", nil); !errors.Is(err, tablestore.ErrResourceNotFound) {
		t.Fatalf("after the TTL: %v", err)
	}
	snap := d.Snapshot() // Checkpoint through the wrapper
	d.Restore(snap)
}

// TestSnapshotReusable restores one snapshot many times: it must never
// change (with -race, Pebble's invariants scramble buffers written to
// its in-memory filesystem).
func TestSnapshotReusable(t *testing.T) {
	d := NewDB(t)
	d.Load("tbl", strings.NewReader(fixture))
	snap := d.Snapshot()
	for range 3 {
		d.Restore(snap)
		if _, err := d.DB().Table("tbl").Get(context.Background(), "p", "2", nil); err != nil {
			t.Fatal(err)
		}
		if err := d.DB().Table("tbl").Delete(context.Background(), "p", "2", tablestore.ETagAny); err != nil {
			t.Fatal(err)
		}
	}
}

// TestKitWithoutTest serves a Kit from a listener of its own, as a
// program does, with errors returned rather than failing a test.
func TestKitWithoutTest(t *testing.T) {
	k, err := NewKit(&server.Options{Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(k.Handler())
	defer hs.Close()
	if _, err := k.InjectFault(Fault{Operation: "NoSuchOperation", Code: "ServerBusy"}); err == nil || !strings.HasPrefix(err.Error(), "Fault.Operation:") {
		t.Fatalf("InjectFault of an unknown operation: %v", err)
	}
	var f Fault
	if err := json.Unmarshal([]byte(`{"operation":"QueryTables","code":"ServerBusy","times":1}`), &f); err != nil {
		t.Fatal(err)
	}
	if _, err := k.InjectFault(f); err != nil {
		t.Fatal(err)
	}
	url := hs.URL + "/" + k.Account() + "/Tables"
	must(t, hs.Client(), http.StatusServiceUnavailable, "GET", url, "")
	must(t, hs.Client(), http.StatusOK, "GET", url, "")
	if err := k.Load("tbl", strings.NewReader(fixture)); err != nil {
		t.Fatal(err)
	}
	snap, err := k.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Reset(); err != nil {
		t.Fatal(err)
	}
	must(t, hs.Client(), http.StatusNotFound, "GET", hs.URL+"/"+k.Account()+"/tbl()", "")
	if err := k.Restore(snap); err != nil {
		t.Fatal(err)
	}
	must(t, hs.Client(), http.StatusOK, "GET", hs.URL+"/"+k.Account()+"/tbl()", "")
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := send(t, hs.Client(), "GET", url, ""); err == nil {
		t.Fatal("a closed kit answered")
	}
}

// TestRestoreOpensAhead checks that a snapshot restored a second time
// gets its next copy opened ahead, that the next Restore of it takes that
// copy with the snapshot's contents, that restoring another snapshot
// drops it, and that Cleanup leaves no store open.
func TestRestoreOpensAhead(t *testing.T) {
	ctx := context.Background()
	var ahead *state
	t.Run("restores", func(t *testing.T) {
		d := NewDB(t)
		w := d.w
		d.Load("tbl", strings.NewReader(fixture))
		one := d.Snapshot()
		if err := d.DB().Table("tbl").Delete(ctx, "p", "2", tablestore.ETagAny); err != nil {
			t.Fatal(err)
		}
		two := d.Snapshot()
		d.Restore(one)
		if w.ahead != nil {
			t.Fatal("a copy opened ahead after the first Restore of a snapshot")
		}
		for range 3 {
			d.Restore(one)
			p := w.ahead
			if p == nil || p.snap != one {
				t.Fatalf("no copy of the snapshot opened ahead: %+v", p)
			}
			r := <-p.done
			p.done <- r
			if err := d.DB().Table("tbl").Delete(ctx, "p", "2", tablestore.ETagAny); err != nil {
				t.Fatalf("the restored store lacks the snapshot's entity: %v", err)
			}
			d.Restore(one)
			if w.cur.Load() != r.st {
				t.Fatal("Restore did not take the copy opened ahead")
			}
			if _, err := d.DB().Table("tbl").Get(ctx, "p", "2", nil); err != nil {
				t.Fatalf("the copy opened ahead lacks the snapshot's entity: %v", err)
			}
		}
		d.Restore(two)
		if w.ahead != nil {
			t.Fatal("a copy of the other snapshot kept")
		}
		if _, err := d.DB().Table("tbl").Get(ctx, "p", "2", nil); !errors.Is(err, tablestore.ErrResourceNotFound) {
			t.Fatalf("restored the wrong snapshot: %v", err)
		}
		d.Restore(two)
		p := w.ahead
		if p == nil {
			t.Fatal("no copy opened ahead")
		}
		r := <-p.done
		p.done <- r
		if r.err != nil {
			t.Fatal(r.err)
		}
		ahead = r.st
	})
	if _, err := ahead.db.ListTables(ctx, nil); !errors.Is(err, tablestore.ErrClosed) {
		t.Fatalf("the copy opened ahead is open after Cleanup: %v", err)
	}
}

// TestResetKeepsUntouchedStore: a Reset of a store untouched since the
// last one keeps it (no open); any write makes the next Reset swap in a
// fresh copy of the baseline.
func TestResetKeepsUntouchedStore(t *testing.T) {
	ctx := context.Background()
	d := NewDB(t)
	d.Load("tbl", strings.NewReader(fixture))
	d.SetBaseline(d.Snapshot())
	d.Reset()
	first := d.w.cur.Load()
	d.Reset()
	if d.w.cur.Load() != first {
		t.Fatal("a Reset replaced an untouched store")
	}
	if _, err := d.DB().Table("tbl").Get(ctx, "p", "1", nil); err != nil {
		t.Fatalf("baseline entity: %v", err)
	}
	if err := d.DB().Table("tbl").Delete(ctx, "p", "1", tablestore.ETagAny); err != nil {
		t.Fatal(err)
	}
	d.Reset()
	if d.w.cur.Load() == first {
		t.Fatal("a Reset kept a store written to")
	}
	if _, err := d.DB().Table("tbl").Get(ctx, "p", "1", nil); err != nil {
		t.Fatalf("after Reset: %v", err)
	}
	d.SetBaseline(nil)
	d.Reset()
	if ok, _ := d.DB().TableExists(ctx, "tbl"); ok {
		t.Fatal("Reset to an empty baseline kept the table")
	}
}

// batchBody is a $batch body inserting rows into table tbl of partition
// pk, as the SDKs send it.
func batchBody(pk string, rows ...string) string {
	var b strings.Builder
	b.WriteString("--batch_b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n")
	for _, rk := range rows {
		b.WriteString("--cs\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n")
		b.WriteString("POST http://127.0.0.1/devstoreaccount1/tbl HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json;odata=minimalmetadata\r\n\r\n")
		fmt.Fprintf(&b, `{"PartitionKey":%q,"RowKey":%q}`+"\r\n", pk, rk)
	}
	b.WriteString("--cs--\r\n--batch_b--\r\n")
	return b.String()
}

// TestFaultBatchPartition: a fault can target one partition's $batch,
// and the request log lists a batch's sub-operations.
func TestFaultBatchPartition(t *testing.T) {
	srv := anonServer(t)
	c := srv.InProcessClient()
	must(t, c, http.StatusCreated, "POST", srv.endpoint()+"/Tables", `{"TableName":"tbl"}`)
	srv.ClearRequests()
	srv.InjectFault(Fault{Operation: "EntityGroupTransaction", Partition: "hot", Code: "ServerBusy"})
	ct := []string{"Content-Type", "multipart/mixed; boundary=batch_b"}
	must(t, c, http.StatusAccepted, "POST", srv.endpoint()+"/$batch", batchBody("cold", "1", "2"), ct...)
	must(t, c, http.StatusServiceUnavailable, "POST", srv.endpoint()+"/$batch", batchBody("hot", "1"), ct...)
	recs := srv.Requests()
	if len(recs) != 2 {
		t.Fatalf("%d requests logged", len(recs))
	}
	want := []server.RequestInfo{
		{Operation: "InsertEntity", Table: "tbl", PartitionKey: "cold", RowKey: "1"},
		{Operation: "InsertEntity", Table: "tbl", PartitionKey: "cold", RowKey: "2"},
	}
	if r := recs[0]; r.Operation != "EntityGroupTransaction" || r.PartitionKey != "cold" || r.Status != http.StatusAccepted || !slices.Equal(r.Batch, want) {
		t.Fatalf("batch record: %+v", r)
	}
	if r := recs[1]; r.PartitionKey != "hot" || r.Code != "ServerBusy" || len(r.Batch) != 1 {
		t.Fatalf("faulted batch record: %+v", r)
	}
	if _, err := srv.DB().Table("tbl").Get(context.Background(), "hot", "1", nil); !errors.Is(err, tablestore.ErrResourceNotFound) {
		t.Fatalf("the faulted batch wrote: %v", err)
	}
}

// TestNewServerListensOnDemand: a server used only through
// InProcessClient opens no listener; URL opens it.
func TestNewServerListensOnDemand(t *testing.T) {
	srv := NewServerWithOptions(t, &server.Options{Anonymous: true})
	must(t, srv.InProcessClient(), http.StatusCreated, "POST", "http://in-process/"+srv.Account()+"/Tables", `{"TableName":"tbl"}`)
	if srv.srv != nil {
		t.Fatal("InProcessClient opened a listener")
	}
	must(t, srv.HTTPClient(), http.StatusOK, "GET", srv.URL()+"/"+srv.Account()+"/Tables", "")
	if srv.srv == nil {
		t.Fatal("no listener after URL")
	}
}

// TestLoadFormats: Load takes Azure's JSON as a query answers it (full
// metadata included), an array of entities, and CSV, typed or as
// Storage Explorer exports it; a bad entity is named by its line.
func TestLoadFormats(t *testing.T) {
	want := `{"PartitionKey":"p","RowKey":"1","Age@odata.type":"Edm.Int64","Age":"42","Name":"Ada"}
{"PartitionKey":"p","RowKey":"2","Age@odata.type":"Edm.Int64","Age":"7"}
`
	for name, in := range map[string]string{
		"query answer": `{"odata.metadata":"http://127.0.0.1/devstoreaccount1/$metadata#people","value":[
{"odata.type":"devstoreaccount1.people","odata.id":"http://127.0.0.1/devstoreaccount1/people(PartitionKey='p',RowKey='1')","odata.etag":"W/\"datetime'2024-05-01T10%3A00%3A00.123Z'\"","odata.editLink":"people(PartitionKey='p',RowKey='1')","PartitionKey":"p","RowKey":"1","Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-05-01T10:00:00.123Z","Age@odata.type":"Edm.Int64","Age":"42","Name":"Ada"},
{"PartitionKey":"p","RowKey":"2","Age@odata.type":"Edm.Int64","Age":"7"}]}`,
		"array": `[{"PartitionKey":"p","RowKey":"1","Age@odata.type":"Edm.Int64","Age":"42","Name":"Ada"},
 {"PartitionKey":"p","RowKey":"2","Age@odata.type":"Edm.Int64","Age":"7"}]`,
		"typed csv": "PartitionKey,RowKey,Age:Edm.Int64,Name\np,1,42,Ada\np,2,7,\n",
		"explorer csv": "PartitionKey,RowKey,Timestamp,Age,Age@type,Name,Name@type\r\n" +
			"p,1,2024-05-01T10:00:00.123Z,42,Edm.Int64,Ada,Edm.String\r\np,2,2024-05-01T10:00:00.123Z,7,Edm.Int64,,\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			d := NewDB(t)
			d.Load("people", strings.NewReader(in))
			got, err := dump(context.Background(), d.DB(), "people")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Fatalf("loaded\n%s\nwant\n%s", got, want)
			}
		})
	}
	d := NewDB(t)
	for in, where := range map[string]string{
		"{\"PartitionKey\":\"p\",\"RowKey\":\"1\"}\n\n{\"PartitionKey\":\"p\"}\n":      "line 3:",
		"{\"value\":[{\"PartitionKey\":\"p\",\"RowKey\":\"1\"},\n{\"RowKey\":\"2\"}]}": "line 1, entity 2:",
		"PartitionKey,RowKey,N:Edm.Int32\np,1,x\n":                                     "InvalidInput: line 2:",
	} {
		if err := load(context.Background(), d.DB(), "bad", strings.NewReader(in)); err == nil || !strings.Contains(err.Error(), where) {
			t.Errorf("%q: %v, want an error naming %q", in, err, where)
		}
	}
}
