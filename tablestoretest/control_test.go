package tablestoretest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// controlKit is a kit (anonymous REST) with its REST API and its controls
// on two loopback servers.
func controlKit(t *testing.T) (k *Kit, rest, ctl string) {
	t.Helper()
	k, err := NewKit(&server.Options{Anonymous: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = k.Close() })
	rs := httptest.NewServer(k.Handler())
	t.Cleanup(rs.Close)
	cs := httptest.NewServer(ControlHandler(k))
	t.Cleanup(cs.Close)
	return k, rs.URL + "/" + k.Account(), cs.URL + ControlPrefix
}

// call sends a control request and decodes a JSON answer into out (when
// not nil), returning the status and the raw body.
func call(t *testing.T, method, url, body string, out any) (int, string) {
	t.Helper()
	resp, b, err := send(t, http.DefaultClient, method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, url, err, b)
		}
	}
	return resp.StatusCode, string(b)
}

// wantError checks an Azure JSON error body naming want.
func wantError(t *testing.T, status int, body string, wantStatus int, want string) {
	t.Helper()
	var e struct {
		Err struct {
			Code    string
			Message struct{ Value string }
		} `json:"odata.error"`
	}
	if status != wantStatus || json.Unmarshal([]byte(body), &e) != nil || e.Err.Code == "" || !strings.Contains(e.Err.Message.Value, want) {
		t.Fatalf("got %d %s, want %d with an error naming %q", status, body, wantStatus, want)
	}
}

func TestControlSnapshotsAndReset(t *testing.T) {
	k, _, ctl := controlKit(t)
	ctx := context.Background()
	tbl, err := k.DB().CreateTable(ctx, "things")
	if err != nil {
		t.Fatal(err)
	}
	if err := tbl.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: "1"}); err != nil {
		t.Fatal(err)
	}
	if st, body := call(t, "PUT", ctl+"/snapshots/one", "", nil); st != http.StatusCreated {
		t.Fatalf("save: %d %s", st, body)
	}
	var list struct{ Snapshots []string }
	call(t, "GET", ctl+"/snapshots", "", &list)
	if len(list.Snapshots) != 1 || list.Snapshots[0] != "one" {
		t.Fatalf("snapshots %v", list.Snapshots)
	}
	if st, body := call(t, "POST", ctl+"/reset", "", nil); st != http.StatusOK {
		t.Fatalf("reset: %d %s", st, body)
	}
	if _, err := k.DB().Table("things").Get(ctx, "p", "1", nil); err == nil {
		t.Fatal("the entity outlived a reset")
	}
	if st, body := call(t, "POST", ctl+"/snapshots/one/restore", "", nil); st != http.StatusOK {
		t.Fatalf("restore: %d %s", st, body)
	}
	if _, err := k.DB().Table("things").Get(ctx, "p", "1", nil); err != nil {
		t.Fatalf("after restore: %v", err)
	}
	st, body := call(t, "POST", ctl+"/snapshots/nosuch/restore", "", nil)
	wantError(t, st, body, http.StatusNotFound, `"nosuch"`)
	st, body = call(t, "PUT", ctl+"/snapshots/bad%20name", "", nil)
	wantError(t, st, body, http.StatusBadRequest, "name")
	st, body = call(t, "POST", ctl+"/nothing", "", nil)
	wantError(t, st, body, http.StatusNotFound, "/testkit/nothing")
}

func TestControlFaults(t *testing.T) {
	_, rest, ctl := controlKit(t)
	var added struct{ ID int }
	st, body := call(t, "POST", ctl+"/faults", `{"operation":"QueryTables","status":503,"retry_after":"10ms","times":1}`, &added)
	if st != http.StatusCreated || added.ID == 0 {
		t.Fatalf("add: %d %s", st, body)
	}
	resp, _, err := send(t, http.DefaultClient, "GET", rest+"/Tables", "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("x-ms-error-code") != "ServerBusy" || resp.Header.Get("x-ms-retry-after-ms") != "10" {
		t.Fatalf("faulted request: %d %v", resp.StatusCode, resp.Header)
	}
	if resp, _, _ = send(t, http.DefaultClient, "GET", rest+"/Tables", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("after Times: %d", resp.StatusCode)
	}
	// An endless fault, removed by id.
	call(t, "POST", ctl+"/faults", `{"operation":"QueryTables","code":"OperationTimedOut"}`, &added)
	var list struct{ Faults []struct{ ID int } }
	call(t, "GET", ctl+"/faults", "", &list)
	if len(list.Faults) != 2 {
		t.Fatalf("faults %+v", list.Faults)
	}
	if resp, _, _ = send(t, http.DefaultClient, "GET", rest+"/Tables", ""); resp.StatusCode != http.StatusInternalServerError {
		t.Fatalf("with the fault: %d", resp.StatusCode)
	}
	if st, _ := call(t, "DELETE", ctl+"/faults/"+itoa(added.ID), "", nil); st != http.StatusNoContent {
		t.Fatalf("delete: %d", st)
	}
	if resp, _, _ = send(t, http.DefaultClient, "GET", rest+"/Tables", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("after delete: %d", resp.StatusCode)
	}
	st, body = call(t, "DELETE", ctl+"/faults/"+itoa(added.ID), "", nil)
	wantError(t, st, body, http.StatusNotFound, "id")
	call(t, "POST", ctl+"/faults", `{"code":"ServerBusy"}`, nil)
	if st, _ := call(t, "DELETE", ctl+"/faults", "", nil); st != http.StatusNoContent {
		t.Fatalf("clear: %d", st)
	}
	if resp, _, _ = send(t, http.DefaultClient, "GET", rest+"/Tables", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("after clear: %d", resp.StatusCode)
	}
	for body, field := range map[string]string{
		`{"operation":"Nope","status":503}`: "Fault.Operation",
		`{"status":418}`:                    "Fault.Status",
		`{"code":"Teapot"}`:                 "Fault.Code",
		`{"latency":"soon"}`:                "body",
		`{"colour":"red"}`:                  "colour",
	} {
		st, b := call(t, "POST", ctl+"/faults", body, nil)
		wantError(t, st, b, http.StatusBadRequest, field)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestControlClockAndRequests(t *testing.T) {
	k, rest, ctl := controlKit(t)
	var now struct{ Now time.Time }
	call(t, "GET", ctl+"/clock", "", &now)
	before := now.Now
	if st, body := call(t, "POST", ctl+"/clock", `{"advance":"1h"}`, &now); st != http.StatusOK || now.Now.Sub(before) < time.Hour {
		t.Fatalf("advance: %d %s", st, body)
	}
	set := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	call(t, "POST", ctl+"/clock", `{"set":"2031-05-06T07:08:09Z"}`, &now)
	if d := now.Now.Sub(set); d < 0 || d > time.Minute || k.Clock().Now().Before(set) {
		t.Fatalf("set: %v", now.Now)
	}
	for body, field := range map[string]string{
		`{"advance":"an hour"}`: "advance",
		`{"set":"tomorrow"}`:    "set",
		`{}`:                    "advance",
		`{"advance":"1h","set":"2031-05-06T07:08:09Z"}`: "advance",
	} {
		st, b := call(t, "POST", ctl+"/clock", body, nil)
		wantError(t, st, b, http.StatusBadRequest, field)
	}
	if resp, _, _ := send(t, http.DefaultClient, "GET", rest+"/Tables", ""); resp.StatusCode != http.StatusOK {
		t.Fatalf("query tables: %d", resp.StatusCode)
	}
	var log struct {
		Requests []struct {
			Operation string
			Status    int
		}
	}
	call(t, "GET", ctl+"/requests", "", &log)
	if len(log.Requests) != 1 || log.Requests[0].Operation != "QueryTables" || log.Requests[0].Status != 200 {
		t.Fatalf("log %+v", log.Requests)
	}
	call(t, "DELETE", ctl+"/requests", "", nil)
	log.Requests = nil
	call(t, "GET", ctl+"/requests", "", &log)
	if len(log.Requests) != 0 {
		t.Fatalf("log after clear %+v", log.Requests)
	}
}

// TestControlResetCleanSlate: one POST /testkit/reset puts the store back
// to its baseline (not empty), removes the faults, sets the clock back
// to real time and empties the request log; ?only= resets only the
// parts named.
func TestControlResetCleanSlate(t *testing.T) {
	k, rest, ctl := controlKit(t)
	if err := k.Load("seed", strings.NewReader(fixture)); err != nil {
		t.Fatal(err)
	}
	base, err := k.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	k.SetBaseline(base)
	dirty := func() {
		t.Helper()
		must(t, http.DefaultClient, http.StatusCreated, "POST", rest+"/Tables", `{"TableName":"extra"}`)
		must(t, http.DefaultClient, http.StatusNoContent, "DELETE", rest+"/seed(PartitionKey='p',RowKey='1')", "", "If-Match", "*")
		call(t, "POST", ctl+"/faults", `{"operation":"QueryEntity","code":"ServerBusy"}`, nil)
		call(t, "POST", ctl+"/clock", `{"advance":"240h"}`, nil)
	}
	clean := func(want map[string]bool) {
		t.Helper()
		ctx := context.Background()
		_, err := k.DB().Table("seed").Get(ctx, "p", "1", nil)
		extra, _ := k.DB().TableExists(ctx, "extra")
		var faults struct{ Faults []json.RawMessage }
		call(t, "GET", ctl+"/faults", "", &faults)
		skew := time.Until(k.Clock().Now()).Abs()
		got := map[string]bool{
			"state":    err == nil && !extra,
			"faults":   len(faults.Faults) == 0,
			"clock":    skew < time.Hour,
			"requests": len(k.Requests()) == 0,
		}
		for part, w := range want {
			if got[part] != w {
				t.Errorf("%s reset: %v, want %v (get p/1: %v, extra table: %v, faults %d, clock off by %v, %d requests)",
					part, got[part], w, err, extra, len(faults.Faults), skew, len(k.Requests()))
			}
		}
	}
	dirty()
	if st, body := call(t, "POST", ctl+"/reset", "", nil); st != http.StatusOK {
		t.Fatalf("reset: %d %s", st, body)
	}
	clean(map[string]bool{"state": true, "faults": true, "clock": true, "requests": true})
	dirty()
	if st, body := call(t, "POST", ctl+"/reset?only=state,clock", "", nil); st != http.StatusOK {
		t.Fatalf("reset: %d %s", st, body)
	}
	clean(map[string]bool{"state": true, "faults": false, "clock": true, "requests": false})
	st, body := call(t, "POST", ctl+"/reset?only=stat", "", nil)
	wantError(t, st, body, http.StatusBadRequest, `"stat"`)
}

// TestControlFaultDidYouMean: a misspelled operation is refused naming
// the operation meant.
func TestControlFaultDidYouMean(t *testing.T) {
	_, _, ctl := controlKit(t)
	st, body := call(t, "POST", ctl+"/faults", `{"operation":"InsertEntiy","code":"ServerBusy"}`, nil)
	wantError(t, st, body, http.StatusBadRequest, `unknown operation "InsertEntiy" (did you mean "InsertEntity"?)`)
}
