package tablestoretest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore/server"
)

// TestCosmosServerControls: the Cosmos flavor under the kit: the request
// log carries each request's charge and the error codes Cosmos's answers
// give only in their bodies, and throttling follows the kit's Clock.
func TestCosmosServerControls(t *testing.T) {
	s := NewServerWithOptions(t, &server.Options{Anonymous: true, Account: server.CosmosDevAccount,
		Cosmos: &server.Cosmos{RequestUnitsPerSecond: 20}})
	c := http.DefaultClient
	if resp, body, err := send(t, c, "POST", s.URL()+"/Tables", `{"TableName":"Tee"}`, "Content-Type", "application/json"); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create table: %v %s", err, body)
	}
	if resp, _, _ := send(t, c, "GET", s.URL()+"/tee()", ""); resp.StatusCode != http.StatusNotFound || resp.Header.Get("x-ms-error-code") != "" {
		t.Fatalf("a table named in another case: %d, x-ms-error-code %q", resp.StatusCode, resp.Header.Get("x-ms-error-code"))
	}
	throttled := false
	for i := 0; i < 20 && !throttled; i++ {
		resp, body, err := send(t, c, "POST", s.URL()+"/Tee", `{"PartitionKey":"p","RowKey":"`+strconv.Itoa(i)+`"}`, "Content-Type", "application/json")
		if err != nil {
			t.Fatal(err)
		}
		switch resp.StatusCode {
		case http.StatusCreated:
		case http.StatusTooManyRequests:
			throttled = true
			ms, err := strconv.Atoi(resp.Header.Get("x-ms-retry-after-ms"))
			if err != nil || ms <= 0 {
				t.Fatalf("429 without x-ms-retry-after-ms: %q", resp.Header.Get("x-ms-retry-after-ms"))
			}
			s.Clock().Advance(time.Duration(ms) * time.Millisecond)
		default:
			t.Fatalf("insert: %d %s", resp.StatusCode, body)
		}
	}
	if !throttled {
		t.Fatal("20 RU/s never throttled 20 writes")
	}
	if resp, body, _ := send(t, c, "POST", s.URL()+"/Tee", `{"PartitionKey":"p","RowKey":"after"}`, "Content-Type", "application/json"); resp.StatusCode != http.StatusCreated {
		t.Fatalf("after the advised wait on the kit's clock: %d %s", resp.StatusCode, body)
	}
	var codes []string
	charged := 0
	for _, r := range s.Requests() {
		if r.Code != "" {
			codes = append(codes, r.Code)
		}
		if r.Status < 400 && r.RequestCharge > 0 {
			charged++
		}
	}
	if got := strings.Join(codes, ","); got != "TableNotFound,TooManyRequests" {
		t.Errorf("logged codes %q", got)
	}
	if charged != len(s.Requests())-2 {
		t.Errorf("%d of %d successful requests logged a charge", charged, len(s.Requests())-2)
	}
	// The controls' request log carries the charges too.
	cs := httptest.NewServer(ControlHandler(s.Kit()))
	defer cs.Close()
	var log struct {
		Requests []struct {
			Status        int
			RequestCharge float64 `json:"request_charge"`
		}
	}
	call(t, "GET", cs.URL+ControlPrefix+"/requests", "", &log)
	for i, r := range log.Requests {
		if want := s.Requests()[i].RequestCharge; r.RequestCharge != want {
			t.Errorf("control log %d: request_charge %v, the kit's %v", i, r.RequestCharge, want)
		}
	}
	if len(log.Requests) != len(s.Requests()) || log.Requests[len(log.Requests)-1].RequestCharge < 5 {
		t.Errorf("control log %+v", log.Requests)
	}
}

// TestCosmosConnectionString: the emulator's shape, at localhost.
func TestCosmosConnectionString(t *testing.T) {
	s := NewCosmosServer(t)
	cs := s.CosmosConnectionString()
	if !strings.HasPrefix(cs, "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey="+server.CosmosDevKey+";TableEndpoint=http://localhost:") ||
		!strings.HasSuffix(cs, "/;") {
		t.Errorf("connection string %q", cs)
	}
}

// TestCosmosBatchTimestampsFollowClock: under the kit, the Timestamps a
// Cosmos batch gives its entities, one each and increasing, come from
// the kit's Clock.
func TestCosmosBatchTimestampsFollowClock(t *testing.T) {
	s := NewServerWithOptions(t, &server.Options{Anonymous: true, Account: server.CosmosDevAccount, Cosmos: &server.Cosmos{}})
	c := http.DefaultClient
	if resp, body, err := send(t, c, "POST", s.URL()+"/Tables", `{"TableName":"Tee"}`); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create table: %v %s", err, body)
	}
	at := time.Date(2040, 5, 6, 7, 8, 9, 0, time.UTC)
	s.Clock().Set(at)
	var b strings.Builder
	b.WriteString("--b\r\nContent-Type: multipart/mixed; boundary=cs\r\n\r\n")
	for i := range 3 {
		b.WriteString("--cs\r\nContent-Type: application/http\r\n\r\nPOST " + s.URL() + "/Tee HTTP/1.1\r\nContent-Type: application/json\r\n\r\n" +
			`{"PartitionKey":"p","RowKey":"` + strconv.Itoa(i) + `"}` + "\r\n")
	}
	b.WriteString("--cs--\r\n--b--\r\n")
	if resp, body, err := send(t, c, "POST", s.URL()+"/$batch", b.String(), "Content-Type", "multipart/mixed; boundary=b"); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("batch: %v %s", err, body)
	}
	var prev time.Time
	for i := range 3 {
		_, body, err := send(t, c, "GET", s.URL()+"/Tee(PartitionKey='p',RowKey='"+strconv.Itoa(i)+"')", "")
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Timestamp time.Time }
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		if e.Timestamp.Before(at) || e.Timestamp.After(at.Add(time.Minute)) || !e.Timestamp.After(prev) {
			t.Errorf("row %d: Timestamp %v, want after %v, soon after %v", i, e.Timestamp, prev, at)
		}
		prev = e.Timestamp
	}
}
