package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tablestore/tablestore"
)

// newTestService serves an in-memory store holding one table.
func newTestService(t *testing.T) http.Handler {
	t.Helper()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	orders, err := db.CreateTableIfNotExists(context.Background(), "Orders")
	if err != nil {
		t.Fatal(err)
	}
	return (&service{orders: orders}).routes()
}

func do(t *testing.T, h http.Handler, method, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, target, strings.NewReader(body)))
	return rec
}

func TestListOrdersPages(t *testing.T) {
	h := newTestService(t)
	for _, o := range []string{`{"id":"a","amount":5}`, `{"id":"b","amount":50}`, `{"id":"c","amount":70}`, `{"id":"d","amount":90}`} {
		if rec := do(t, h, "POST", "/customers/ann/orders", o); rec.Code != http.StatusCreated {
			t.Fatalf("POST %s: %d %s", o, rec.Code, rec.Body)
		}
	}
	if rec := do(t, h, "POST", "/customers/ann/orders", `{"id":"a","amount":1}`); rec.Code != http.StatusConflict {
		t.Fatalf("duplicate POST: %d", rec.Code)
	}

	var got []string
	target := "/customers/ann/orders?min=50&top=2"
	for range 5 {
		rec := do(t, h, "GET", target, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", target, rec.Code, rec.Body)
		}
		var page ordersPage
		if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Orders {
			got = append(got, o.ID)
		}
		if page.Next == "" {
			break
		}
		target = "/customers/ann/orders?min=50&top=2&next=" + page.Next
	}
	if strings.Join(got, ",") != "b,c,d" {
		t.Fatalf("orders %v, want b,c,d", got)
	}
}

func TestListOrdersInjection(t *testing.T) {
	h := newTestService(t)
	do(t, h, "POST", "/customers/ann/orders", `{"id":"a","amount":5}`)
	rec := do(t, h, "GET", "/customers/x'%20or%20PartitionKey%20ne%20'x/orders", "")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"orders":[]`) {
		t.Fatalf("injection answered %d %s", rec.Code, rec.Body)
	}
}

func TestListOrdersBadInput(t *testing.T) {
	h := newTestService(t)
	for _, target := range []string{
		"/customers/ann/orders?min=x",
		"/customers/ann/orders?min=99999999999",
		"/customers/ann/orders?top=0",
		"/customers/ann/orders?next=forged",
	} {
		if rec := do(t, h, "GET", target, ""); rec.Code != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", target, rec.Code)
		}
	}
	if rec := do(t, h, "POST", "/customers/ann/orders", `{"id":"bad/id","amount":1}`); rec.Code != http.StatusBadRequest {
		t.Errorf("POST with a bad key: %d, want 400", rec.Code)
	}
}
