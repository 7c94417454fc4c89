package console

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/server"
)

// promText is the server's metrics as Prometheus writes them: two
// accounts, two operations, a 503.
const promText = `# HELP tablestore_requests_total Requests answered.
# TYPE tablestore_requests_total counter
tablestore_requests_total{account="alpha",operation="QueryEntities",status="200"} 100
tablestore_requests_total{account="alpha",operation="InsertEntity",status="503"} 4
tablestore_requests_total{account="beta",operation="QueryEntities",status="200"} 1000
# TYPE tablestore_request_duration_seconds histogram
tablestore_request_duration_seconds_bucket{account="alpha",operation="QueryEntities",le="0.001"} 50
tablestore_request_duration_seconds_bucket{account="alpha",operation="QueryEntities",le="0.01"} 90
tablestore_request_duration_seconds_bucket{account="alpha",operation="QueryEntities",le="+Inf"} 100
tablestore_request_duration_seconds_sum{account="alpha",operation="QueryEntities"} 0.5
tablestore_request_duration_seconds_count{account="alpha",operation="QueryEntities"} 100
tablestore_request_duration_seconds_bucket{account="beta",operation="QueryEntities",le="0.001"} 1000
tablestore_request_duration_seconds_bucket{account="beta",operation="QueryEntities",le="0.01"} 1000
tablestore_request_duration_seconds_bucket{account="beta",operation="QueryEntities",le="+Inf"} 1000
tablestore_request_duration_seconds_sum{account="beta",operation="QueryEntities"} 0.25
tablestore_request_duration_seconds_count{account="beta",operation="QueryEntities"} 1000
tablestore_requests_in_flight 3
go_goroutines 12
`

func metricsHandler(text string, status int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(text))
	})
}

func sample(t *testing.T, h *harness) metricsSample {
	t.Helper()
	status, body, _ := h.do("GET", "/health/metrics", nil, http.Header{"Accept": {"application/json"}})
	require.Equal(t, http.StatusOK, status, body)
	var s metricsSample
	require.NoError(t, json.Unmarshal([]byte(body), &s), body)
	return s
}

func TestHealthPage(t *testing.T) {
	h := newHarness(t, nil)
	h.login()
	status, body, _ := h.get("/health")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<span id="health-word">Healthy</span>`)
	require.Contains(t, body, `id="no-metrics"`)
	require.NotContains(t, body, `id="chart-rps"`)
	s := sample(t, h)
	require.True(t, s.Healthy)
	require.False(t, s.Available)

	// A store that met a fault says so, with its code. (The library's
	// tests cause real corruption; here the fault is handed in.)
	h.c.healthOf = func(*tablestore.DB) error {
		return &tablestore.Error{Code: edm.CodeInternalError, Message: "corrupt block in 000012.sst"}
	}
	status, body, _ = h.get("/health")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<span id="health-word">Fault</span>`)
	require.Contains(t, body, "corrupt block in 000012.sst <code class=\"code\">InternalError</code>")
	require.Contains(t, body, "The store refuses every write from now on")
	s = sample(t, h)
	require.False(t, s.Healthy)
	require.Equal(t, "corrupt block in 000012.sst", s.Fault)
}

func TestHealthMetrics(t *testing.T) {
	h := newHarness(t, &Options{Metrics: metricsHandler(promText, http.StatusOK)})
	h.login()
	status, body, _ := h.get("/health")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<svg id="chart-rps"`)
	require.Contains(t, body, `data-metrics-url="/health/metrics"`)

	s := sample(t, h)
	require.True(t, s.Available)
	require.Empty(t, s.Error)
	require.Equal(t, 1104.0, s.Requests)
	require.Equal(t, 4.0, s.Errors)
	require.Equal(t, 3.0, s.InFlight)
	require.Equal(t, 0.75, s.DurationSum)
	require.Equal(t, 1100.0, s.DurationCount)
	require.Equal(t, []bucket{{0.001, 1050}, {0.01, 1090}, {math.Inf(1), 1100}}, s.Buckets)
	status, body, _ = h.get("/health/metrics")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `{"le":"+Inf","count":1100}`)

	// A signed-in session sees its account's series only.
	ha := newHarness(t, &Options{Metrics: metricsHandler(promText, http.StatusOK),
		Accounts: []server.Account{{Name: "alpha", Keys: []string{"k"}}}})
	ha.get("/?token=" + testToken)
	ha.get("/signin")
	ha.post("/signin", map[string][]string{"account": {"alpha"}, "key": {"k"}})
	s = sample(t, ha)
	require.Equal(t, 104.0, s.Requests)
	require.Equal(t, 100.0, s.DurationCount)
	require.Equal(t, []bucket{{0.001, 50}, {0.01, 90}, {math.Inf(1), 100}}, s.Buckets)
	require.Zero(t, s.InFlight, "the in-flight gauge names no account")

	// A failing or malformed metrics source is reported, not fatal.
	for _, src := range []http.Handler{
		metricsHandler("oops", http.StatusInternalServerError),
		metricsHandler("tablestore_requests_total{account=\"a} 1\n", http.StatusOK),
		metricsHandler(strings.Repeat("x", maxMetricsBytes+1), http.StatusOK),
	} {
		hb := newHarness(t, &Options{Metrics: src})
		hb.login()
		s = sample(t, hb)
		require.True(t, s.Available)
		require.NotEmpty(t, s.Error)
		require.True(t, s.Healthy)
	}
}

func TestParsePrometheusText(t *testing.T) {
	got, err := parsePrometheusText([]byte(`
# comment
a 1
b{x="1",y="q\"uo\\te\n"} 2.5 1700000000000
c{le="+Inf",} NaN
d{ z = "sp ace" } -Inf
`))
	require.NoError(t, err)
	require.Len(t, got, 4)
	require.Equal(t, promSample{name: "a", labels: map[string]string{}, value: 1}, got[0])
	require.Equal(t, map[string]string{"x": "1", "y": "q\"uo\\te\n"}, got[1].labels)
	require.Equal(t, 2.5, got[1].value)
	require.Equal(t, "+Inf", got[2].labels["le"])
	require.True(t, math.IsNaN(got[2].value))
	require.Equal(t, map[string]string{"z": "sp ace"}, got[3].labels)
	require.True(t, math.IsInf(got[3].value, -1))
	for _, bad := range []string{"novalue", `a{x="1" 2`, `a{x=1} 2`, "a 1 2 3", "a one", `a{x="1} 2`, "{} 1"} {
		_, err := parsePrometheusText([]byte(bad))
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "line 1", bad)
	}
}
