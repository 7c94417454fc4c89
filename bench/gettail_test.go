package main

import (
	"math"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
)

const histText = `# TYPE tablestore_request_duration_seconds histogram
tablestore_request_duration_seconds_bucket{account="devstoreaccount1",operation="EntityGroupTransaction",le="0.001"} 7
tablestore_request_duration_seconds_bucket{account="devstoreaccount1",operation="QueryEntity",le="0.0005"} %d
tablestore_request_duration_seconds_bucket{account="devstoreaccount1",operation="QueryEntity",le="0.001"} %d
tablestore_request_duration_seconds_bucket{account="devstoreaccount1",operation="QueryEntity",le="0.0025"} %d
tablestore_request_duration_seconds_bucket{account="devstoreaccount1",operation="QueryEntity",le="+Inf"} %d
tablestore_request_duration_seconds_sum{account="devstoreaccount1",operation="QueryEntity"} 1.5
`

func hist(t *testing.T, counts ...int) handlerHist {
	t.Helper()
	text := histText
	for _, c := range counts {
		text = strings.Replace(text, "%d", strconv.Itoa(c), 1)
	}
	h, ok := parseGetHist(strings.NewReader(text))
	if !ok || len(h.bounds) != 4 || !math.IsInf(h.bounds[3], 1) || h.bounds[0] != 0.0005 {
		t.Fatalf("parsed %+v, %v", h, ok)
	}
	return h
}

// TestGetHist: the gets between two scrapes are the buckets'
// differences, and the p99 bound is the first bucket holding 99 % of
// them.
func TestGetHist(t *testing.T) {
	before := hist(t, 100, 100, 100, 100)
	after := hist(t, 1080, 1095, 1100, 1100) // 1000 gets: 980 <= 0.5 ms, 995 <= 1 ms
	if b, n := quantileBound(before, after, 0.99); b != 0.001 || n != 1000 {
		t.Fatalf("p99 bound %v over %v gets, want 0.001 over 1000", b, n)
	}
	if b, _ := quantileBound(before, after, 0.5); b != 0.0005 {
		t.Fatalf("p50 bound %v, want 0.0005", b)
	}
	if b, n := quantileBound(after, after, 0.99); !math.IsNaN(b) || n != 0 {
		t.Fatalf("no gets: %v over %v", b, n)
	}
	if _, ok := parseGetHist(strings.NewReader("# nothing\n")); ok {
		t.Fatal("a page without the histogram parsed")
	}
}

// TestRunQueueWait: this process's run-queue wait reads on Linux and
// never goes down.
func TestRunQueueWait(t *testing.T) {
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	w0 := runQueueWait(os.Getpid())
	if w0 < 0 {
		t.Skip("schedstat not available")
	}
	if d := waitSince(os.Getpid(), w0); d < 0 {
		t.Fatalf("wait went down by %v", -d)
	}
	if runQueueWait(-1) != -1 || waitSince(-1, 0) != -1 {
		t.Fatal("an unknown process's wait is not -1")
	}
}

// TestSchedQuantile: the quantile of the scheduling latencies between two
// reads is the upper bound of the bucket that reaches it.
func TestSchedQuantile(t *testing.T) {
	before := &metrics.Float64Histogram{Counts: []uint64{5, 5, 5}, Buckets: []float64{0, 1e-6, 1e-3, math.Inf(1)}}
	after := &metrics.Float64Histogram{Counts: []uint64{95, 14, 6}, Buckets: before.Buckets} // 90, 9 and 1 more
	if q := schedQuantile(before, after, 0.5); q != 1e-6 {
		t.Fatalf("p50 %v, want 1e-6", q)
	}
	if q := schedQuantile(before, after, 0.99); q != 1e-3 {
		t.Fatalf("p99 %v, want 1e-3", q)
	}
	if q := schedQuantile(after, after, 0.99); !math.IsNaN(q) {
		t.Fatalf("no latencies: %v", q)
	}
	if h := schedLatencies(); h == nil || len(h.Buckets) != len(h.Counts)+1 {
		t.Fatalf("this process's latencies: %+v", h)
	}
}
