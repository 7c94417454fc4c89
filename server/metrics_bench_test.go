package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
		admin.ServeHTTP(w, httptest.NewRequest("GET", "http://127.0.0.1/metrics", nil))
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

// BenchmarkLoadScraped runs point reads and inserts over HTTP on
// loopback from parallel clients, with /metrics scraped every second (as
// Prometheus would) or never, for the goal that a 1 s scrape costs under
// 2% of throughput. Compare the two sub-benchmarks' ns/op over several
// -count runs: this machine's noise is larger than the difference.
func BenchmarkLoadScraped(b *testing.B) {
	db := benchStore(b)
	for _, scrape := range []bool{false, true} {
		b.Run(fmt.Sprintf("scrape=%v", scrape), func(b *testing.B) {
			m := NewMetrics()
			h, err := New(db, &Options{Anonymous: true, Metrics: m})
			if err != nil {
				b.Fatal(err)
			}
			admin, err := NewAdminHandler(AdminOptions{Metrics: m, Stores: map[string]*tablestore.DB{DevAccount: db}})
			if err != nil {
				b.Fatal(err)
			}
			data := httptest.NewServer(h)
			defer data.Close()
			adm := httptest.NewServer(admin)
			defer adm.Close()
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				if !scrape {
					return
				}
				tick := time.NewTicker(time.Second)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						resp, err := http.Get(adm.URL + "/metrics")
						if err == nil {
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
				}
			}()
			var seq atomic.Int64
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				client := &http.Client{}
				for pb.Next() {
					n := seq.Add(1)
					var req *http.Request
					if n%4 == 0 {
						req, _ = http.NewRequest("POST", data.URL+"/devstoreaccount1/t05",
							strings.NewReader(fmt.Sprintf(`{"PartitionKey":"load","RowKey":"%d-%d","N":1}`, time.Now().UnixNano(), n)))
						req.Header.Set("Content-Type", "application/json")
						req.Header.Set("Prefer", "return-no-content")
					} else {
						req, _ = http.NewRequest("GET", data.URL+fmt.Sprintf("/devstoreaccount1/t03(PartitionKey='p%d',RowKey='%03d')", n%10, n%100), nil)
					}
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode >= 300 {
						b.Errorf("%s: %d", req.URL, resp.StatusCode)
						return
					}
				}
			})
			b.StopTimer()
			close(stop)
			<-done
		})
	}
}

// BenchmarkQueryPage reads a page of 1,000 entities through the handler
// at each metadata level: the server's cost per paged entity.
//
// Reproduce: go test ./server -run XXX -bench QueryPage -benchmem
func BenchmarkQueryPage(b *testing.B) {
	db := benchStore(b)
	h, err := New(db, &Options{Anonymous: true})
	if err != nil {
		b.Fatal(err)
	}
	for _, level := range []string{"nometadata", "minimalmetadata", "fullmetadata"} {
		b.Run(level, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				r := httptest.NewRequest("GET", "/devstoreaccount1/t03()?$top=1000", nil)
				r.Header.Set("Accept", "application/json;odata="+level)
				h.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatal(w.Code)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/entity")
		})
	}
}

// BenchmarkQueryPageHTTP is BenchmarkQueryPage without metadata over a
// loopback connection: the handler, net/http and the socket.
//
// Reproduce: go test ./server -run XXX -bench QueryPageHTTP -benchmem
func BenchmarkQueryPageHTTP(b *testing.B) {
	ns := newNetServer(b, benchStore(b), &Options{Anonymous: true})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	req, err := http.NewRequest("GET", ns.url+"/t03()?$top=1000", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Accept", "application/json;odata=nometadata")
	for b.Loop() {
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || n < 1000 {
			b.Fatal(resp.StatusCode, n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/entity")
}

// BenchmarkPointReadHTTP is a point read over a loopback connection,
// signed with SharedKeyLite as the SDKs sign it, with metrics: a get's
// fixed cost (net/http, authentication, routing, headers) beside the
// store's read.
//
// Reproduce: go test ./server -run XXX -bench PointReadHTTP -benchmem
func BenchmarkPointReadHTTP(b *testing.B) {
	ns := newNetServer(b, benchStore(b), &Options{Metrics: NewMetrics()})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	url := ns.url + "/t03(PartitionKey='p4',RowKey='042')"
	b.ReportAllocs()
	for b.Loop() {
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Accept", "application/json;odata=minimalmetadata")
		req.RequestURI = req.URL.RequestURI() // what signLite signs, as the server will see it
		signLite(req, DevAccount, DevKey, time.Now())
		req.RequestURI = ""
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatal(resp.StatusCode, err)
		}
	}
}
