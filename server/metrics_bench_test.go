package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tablestore/tablestore"
)

// benchStore is an in-memory store of 20 tables of 1,000 entities,
// flushed into data files by its size.
func benchStore(b *testing.B) *tablestore.DB {
	b.Helper()
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		tb, err := db.CreateTable(ctx, fmt.Sprintf("t%02d", i))
		if err != nil {
			b.Fatal(err)
		}
		for p := 0; p < 10; p++ {
			actions := make([]tablestore.TransactionAction, 100)
			for r := range actions {
				actions[r] = tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{
					PartitionKey: fmt.Sprintf("p%d", p), RowKey: fmt.Sprintf("%03d", r), Properties: map[string]any{"N": int32(r), "S": "some text"}}}
			}
			if err := tb.SubmitTransaction(ctx, actions); err != nil {
				b.Fatal(err)
			}
		}
	}
	return db
}

// BenchmarkScrape measures one /metrics scrape: the request metrics of
// every operation seen, the engine figures and the Go collectors.
func BenchmarkScrape(b *testing.B) {
	db := benchStore(b)
	m := NewMetrics()
	h, err := New(db, &Options{Anonymous: true, Metrics: m})
	if err != nil {
		b.Fatal(err)
	}
	for _, path := range []string{"/devstoreaccount1/Tables", "/devstoreaccount1/t00()", "/devstoreaccount1/t00(PartitionKey='p1',RowKey='001')", "/devstoreaccount1/nosuch()"} {
		serve(h, httptest.NewRequest("GET", path, nil))
	}
	admin, err := NewAdminHandler(AdminOptions{Metrics: m, Stores: map[string]*tablestore.DB{DevAccount: db}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w := httptest.NewRecorder()
		admin.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
		if w.Code != http.StatusOK {
			b.Fatal(w.Code)
		}
	}
}

// BenchmarkPointRead measures a point read through the handler with and
// without metrics, for the per-request cost of counting.
func BenchmarkPointRead(b *testing.B) {
	db := benchStore(b)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("metrics=%v", on), func(b *testing.B) {
			o := &Options{Anonymous: true}
			if on {
				o.Metrics = NewMetrics()
			}
			h, err := New(db, o)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest("GET", "/devstoreaccount1/t03(PartitionKey='p4',RowKey='042')", nil))
				if w.Code != http.StatusOK {
					b.Fatal(w.Code)
				}
			}
		})
	}
}

// BenchmarkObserve is the metrics' own cost per request.
func BenchmarkObserve(b *testing.B) {
	m := NewMetrics()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.inFlight.Inc()
		m.observe(DevAccount, "QueryEntity", 200, 1234, 0, 512)
		m.inFlight.Dec()
	}
}
