package console

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore"
)

// The metrics the Health page charts, as the REST server names them.
const (
	metricRequests = "tablestore_requests_total"
	metricDuration = "tablestore_request_duration_seconds"
	metricInFlight = "tablestore_requests_in_flight"
)

// maxMetricsBytes bounds the metrics text the console reads per sample.
const maxMetricsBytes = 8 << 20

// health returns a store's fault state: DB.Health, unless a test replaced
// it.
func (c *Console) health(db *tablestore.DB) error {
	if c.healthOf != nil {
		return c.healthOf(db)
	}
	return db.Health()
}

// healthBody is the data of the Health page.
type healthBody struct {
	Healthy bool
	Fault   string
	Code    tablestore.Code
	Metrics bool // request charts are available
}

func (c *Console) healthPage(w http.ResponseWriter, r *http.Request) {
	b := healthBody{Healthy: true, Metrics: c.o.Metrics != nil}
	if err := c.health(c.store(r)); err != nil {
		b.Healthy, b.Fault, b.Code = false, errorText(err), tablestore.ErrorCode(err)
	}
	c.render(w, r, http.StatusOK, "health", &pageData{Title: "Health", Tab: "health", Body: b})
}

// metricsSample is one reading of the server's request metrics, summed
// over operations and statuses (and accounts, unless the session signed in
// as one). The page turns consecutive samples into rates.
type metricsSample struct {
	// Healthy and Fault are the store's state, as on the page.
	Healthy bool   `json:"healthy"`
	Fault   string `json:"fault,omitempty"`
	// Available is false when the console has no metrics to read; Error
	// says why a reading failed.
	Available bool    `json:"available"`
	Error     string  `json:"error,omitempty"`
	Requests  float64 `json:"requests"`
	// Errors counts requests answered with a 5xx status.
	Errors   float64 `json:"errors"`
	InFlight float64 `json:"inFlight"`
	// DurationSum and DurationCount are the latency histogram's sum (in
	// seconds) and count; Buckets its cumulative counts by upper bound.
	DurationSum   float64  `json:"durationSum"`
	DurationCount float64  `json:"durationCount"`
	Buckets       []bucket `json:"buckets"`
}

// bucket is one cumulative histogram bucket; LE is +Inf for the last.
type bucket struct {
	LE    float64 `json:"le"`
	Count float64 `json:"count"`
}

// MarshalJSON writes +Inf as the string "+Inf", which JSON has no number for.
func (b bucket) MarshalJSON() ([]byte, error) {
	le := strconv.FormatFloat(b.LE, 'g', -1, 64)
	if math.IsInf(b.LE, 1) {
		le = `"+Inf"`
	}
	return []byte(`{"le":` + le + `,"count":` + strconv.FormatFloat(b.Count, 'g', -1, 64) + `}`), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (b *bucket) UnmarshalJSON(data []byte) error {
	var raw struct {
		LE    json.RawMessage `json:"le"`
		Count float64         `json:"count"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	b.Count = raw.Count
	if string(raw.LE) == `"+Inf"` {
		b.LE = math.Inf(1)
		return nil
	}
	return json.Unmarshal(raw.LE, &b.LE)
}

// metricsAPI answers one metrics sample as JSON.
func (c *Console) metricsAPI(w http.ResponseWriter, r *http.Request) {
	s := metricsSample{Healthy: true, Buckets: []bucket{}}
	if err := c.health(c.store(r)); err != nil {
		s.Healthy, s.Fault = false, errorText(err)
	}
	if c.o.Metrics != nil {
		s.Available = true
		account := ""
		if a := sessionFrom(r.Context()).account(); a != nil {
			account = a.Name
		}
		if err := c.readMetrics(r, account, &s); err != nil {
			s.Error = err.Error()
		}
	}
	for _, f := range []*float64{&s.Requests, &s.Errors, &s.InFlight, &s.DurationSum, &s.DurationCount} {
		*f = finite(*f)
	}
	for i := range s.Buckets {
		s.Buckets[i].Count = finite(s.Buckets[i].Count)
	}
	writeJSON(w, http.StatusOK, s)
}

// finite returns f, or 0 for NaN and infinities, which JSON cannot carry.
func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// readMetrics asks the metrics handler for the text exposition format and
// sums the charted series into s.
func (c *Console) readMetrics(r *http.Request, account string, s *metricsSample) error {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, "/metrics", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	c.o.Metrics.ServeHTTP(rec, req)
	if rec.status != http.StatusOK {
		return fmt.Errorf("the metrics handler answered %d", rec.status)
	}
	if rec.overflow {
		return fmt.Errorf("the metrics are larger than %d MiB", maxMetricsBytes>>20)
	}
	samples, err := parsePrometheusText(rec.body.Bytes())
	if err != nil {
		return err
	}
	le := map[float64]float64{}
	for _, m := range samples {
		if account != "" && m.labels["account"] != account {
			continue
		}
		switch m.name {
		case metricRequests:
			s.Requests += m.value
			if strings.HasPrefix(m.labels["status"], "5") {
				s.Errors += m.value
			}
		case metricInFlight:
			s.InFlight += m.value
		case metricDuration + "_sum":
			s.DurationSum += m.value
		case metricDuration + "_count":
			s.DurationCount += m.value
		case metricDuration + "_bucket":
			bound, err := parseFloat(m.labels["le"])
			if err == nil {
				le[bound] += m.value
			}
		}
	}
	for bound, n := range le {
		s.Buckets = append(s.Buckets, bucket{LE: bound, Count: n})
	}
	sort.Slice(s.Buckets, func(i, k int) bool { return s.Buckets[i].LE < s.Buckets[k].LE })
	return nil
}

// recorder is the http.ResponseWriter the metrics handler writes into.
type recorder struct {
	header   http.Header
	status   int
	wrote    bool
	body     bytes.Buffer
	overflow bool
}

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) WriteHeader(status int) {
	if !rec.wrote {
		rec.status, rec.wrote = status, true
	}
}

func (rec *recorder) Write(p []byte) (int, error) {
	rec.wrote = true
	if rec.body.Len()+len(p) > maxMetricsBytes {
		rec.overflow = true
		return 0, fmt.Errorf("console: metrics too large")
	}
	return rec.body.Write(p)
}

// promSample is one sample line of the text exposition format.
type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

// parsePrometheusText reads the sample lines of Prometheus' text
// exposition format (version 0.0.4): NAME{LABEL="VALUE",...} VALUE
// [TIMESTAMP], with comments and blank lines skipped. Errors name the line.
func parsePrometheusText(text []byte) ([]promSample, error) {
	var out []promSample
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), maxMetricsBytes)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parsePromLine(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d: %v", n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parsePromLine(line string) (promSample, error) {
	s := promSample{labels: map[string]string{}}
	i := strings.IndexAny(line, "{ \t")
	if i <= 0 {
		return s, fmt.Errorf("no value")
	}
	s.name, line = line[:i], line[i:]
	if line[0] == '{' {
		line = line[1:]
		for {
			line = strings.TrimLeft(line, " \t,")
			if line == "" {
				return s, fmt.Errorf("unterminated labels")
			}
			if line[0] == '}' {
				line = line[1:]
				break
			}
			eq := strings.IndexByte(line, '=')
			if eq <= 0 {
				return s, fmt.Errorf("malformed label")
			}
			key := strings.TrimSpace(line[:eq])
			line = strings.TrimLeft(line[eq+1:], " \t")
			if key == "" || line == "" || line[0] != '"' {
				return s, fmt.Errorf("malformed label")
			}
			line = line[1:]
			var val strings.Builder
			closed := false
			for k := 0; k < len(line); k++ {
				ch := line[k]
				if ch == '\\' && k+1 < len(line) {
					k++
					switch line[k] {
					case 'n':
						val.WriteByte('\n')
					default:
						val.WriteByte(line[k])
					}
					continue
				}
				if ch == '"' {
					line, closed = line[k+1:], true
					break
				}
				val.WriteByte(ch)
			}
			if !closed {
				return s, fmt.Errorf("unterminated label value")
			}
			s.labels[key] = val.String()
		}
	}
	fields := strings.Fields(line)
	if len(fields) == 0 || len(fields) > 2 {
		return s, fmt.Errorf("want a value and an optional timestamp")
	}
	v, err := parseFloat(fields[0])
	if err != nil {
		return s, err
	}
	s.value = v
	return s, nil
}

// parseFloat reads a sample value: a Go float, or +Inf, -Inf, NaN.
func parseFloat(s string) (float64, error) {
	switch s {
	case "+Inf", "Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("bad value %q", s)
	}
	return f, nil
}
