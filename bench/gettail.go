package main

// Where a point get's time goes in the server mode: the run-queue wait
// of the server's and this process's threads (the scheduler's share)
// and the server's own handler time, from its /metrics histogram.

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// runQueueWait sums the time process pid's threads have spent runnable
// but waiting for a CPU (/proc/pid/task/*/schedstat, second field, ns),
// in seconds; -1 when it cannot be read. A thread that ends takes its
// wait with it, so over a phase the difference can only miss wait.
func runQueueWait(pid int) float64 {
	var ns int64
	ok := eachThreadFile(pid, "schedstat", func(b []byte) bool {
		f := strings.Fields(string(b))
		if len(f) < 2 {
			return false
		}
		w, err := strconv.ParseInt(f[1], 10, 64)
		ns += w
		return err == nil
	})
	if !ok {
		return -1
	}
	return float64(ns) / 1e9
}

// waitSince is process pid's run-queue wait since it was w0
// (runQueueWait), -1 when either is unknown.
func waitSince(pid int, w0 float64) float64 {
	w1 := runQueueWait(pid)
	if w0 < 0 || w1 < 0 {
		return -1
	}
	return w1 - w0
}

// getCompanions are the figures a get phase records beside its rate:
// the client's p50 and p99, and the least bucket bound of the server's
// own duration histogram under which 99 % of its gets finished.
var getCompanions = []string{"-p50", "-p99", "-server-p99", "-client-sched-p99"}

// schedLatencies is this process's histogram of the time goroutines
// spent runnable before they ran (runtime/metrics), cumulative.
func schedLatencies() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return s[0].Value.Float64Histogram()
}

// schedQuantile returns the upper bound (seconds) of the bucket holding
// quantile q of the scheduling latencies between before and after; NaN
// when there are none.
func schedQuantile(before, after *metrics.Float64Histogram, q float64) float64 {
	if before == nil || after == nil || len(before.Counts) != len(after.Counts) {
		return math.NaN()
	}
	var total uint64
	for i := range after.Counts {
		total += after.Counts[i] - before.Counts[i]
	}
	if total == 0 {
		return math.NaN()
	}
	var sum uint64
	for i := range after.Counts {
		sum += after.Counts[i] - before.Counts[i]
		if float64(sum) >= q*float64(total) {
			return after.Buckets[i+1]
		}
	}
	return math.NaN()
}

// printGetTail writes, for each get phase of each server, what its
// latency is made of: the client's percentiles, the server's handler
// p99, and per get the run-queue wait and CPU of the server and of this
// process (the client).
func printGetTail(w io.Writer, rs []*srvResult) {
	fmt.Fprintln(w, "\npoint-get latency against its parts (best round): the client's p50 and p99; the server's own p99 (its /metrics request durations, a bucket bound); the p99 of the time this client's goroutines waited runnable for a P (runtime/metrics /sched/latencies, a bucket bound); per get, the time the server's and this client's threads waited runnable for a CPU (/proc/<pid>/task/*/schedstat, summed over threads) and their CPU:")
	for _, id := range []string{"get1", "getN"} {
		for _, r := range rs {
			p, ok := r.Phases[id]
			if !ok || p.Requests == 0 {
				continue
			}
			n := float64(p.Requests)
			srv, sched := "n/a", "n/a"
			if v, ok := r.Values[id+"-server-p99"]; ok {
				srv = "<= " + commas(v) + " µs"
			}
			if v, ok := r.Values[id+"-client-sched-p99"]; ok {
				sched = "<= " + commas(v) + " µs"
			}
			wait := func(s float64) string {
				if s < 0 {
					return "n/a"
				}
				return commas(s/n*1e6) + " µs"
			}
			fmt.Fprintf(w, "  %-5s %-14s client p50 %s µs, p99 %s µs; server p99 %s; client goroutines' wait for a P, p99 %s; run-queue wait per get: server %s, client %s; CPU per get: server %.1f µs, client %.1f µs\n",
				id, r.Server, commas(r.Values[id+"-p50"]), commas(r.Values[id+"-p99"]), srv, sched, wait(p.ServerWait), wait(p.ClientWait),
				p.ServerCPU/n*1e6, p.ClientCPU/n*1e6)
		}
	}
}

// handlerHist is the cumulative count of a server's point gets
// (operation QueryEntity) at or under each bound of its request
// duration histogram (tablestore serve's /metrics), bounds in seconds,
// ascending, +Inf last.
type handlerHist struct {
	bounds []float64
	counts []float64
}

// scrapeGetHist reads the point gets' duration histogram from the
// metrics endpoint url; ok is false without one.
func scrapeGetHist(url string) (h handlerHist, ok bool) {
	if url == "" {
		return h, false
	}
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return h, false
	}
	defer resp.Body.Close()
	return parseGetHist(resp.Body)
}

// parseGetHist reads the tablestore_request_duration_seconds buckets of
// operation QueryEntity from a Prometheus text exposition.
func parseGetHist(r io.Reader) (h handlerHist, ok bool) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "tablestore_request_duration_seconds_bucket{") || !strings.Contains(line, `operation="QueryEntity"`) {
			continue
		}
		_, le, found := strings.Cut(line, `le="`)
		le, rest, found2 := strings.Cut(le, `"}`)
		if !found || !found2 {
			continue
		}
		bound := math.Inf(1)
		if le != "+Inf" {
			b, err := strconv.ParseFloat(le, 64)
			if err != nil {
				continue
			}
			bound = b
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		if err != nil {
			continue
		}
		h.bounds, h.counts = append(h.bounds, bound), append(h.counts, n)
	}
	return h, len(h.bounds) > 0
}

// quantileBound returns the least bound (seconds) at or under which a
// fraction q of the gets counted between before and after finished, and
// the count; NaN when none were.
func quantileBound(before, after handlerHist, q float64) (float64, float64) {
	if len(after.bounds) == 0 {
		return math.NaN(), 0
	}
	at := func(h handlerHist, i int) float64 {
		if i < len(h.counts) {
			return h.counts[i]
		}
		return 0
	}
	total := at(after, len(after.counts)-1) - at(before, len(after.counts)-1)
	if total <= 0 {
		return math.NaN(), 0
	}
	for i, b := range after.bounds {
		if at(after, i)-at(before, i) >= q*total {
			return b, total
		}
	}
	return math.Inf(1), total
}
