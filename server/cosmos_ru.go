package server

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/tablestore/tablestore/edm"
)

// Request units: the Cosmos flavor's cost model and its throughput
// budget. docs/cosmos.md states the model and where its figures come
// from.

// The cost model, in request units.
const (
	// ruPointReadPer10KB: Cosmos DB's guidance prices a point read of a
	// 1 KB item at 1 RU and of a 100 KB item at 10 RU; a read costs one
	// RU per started 10 KB of the entity, and at least one.
	ruPointReadPer10KB = 1.0
	// ruWritePerKB: a write (insert, update, upsert, delete) costs five
	// point reads per started KB of its body, at least five: the figure
	// commonly quoted for a 1 KB write with default indexing.
	ruWritePerKB = 5.0
	// ruQueryBase is what any query or table list costs before the items
	// it returns: a query costs more than a point read.
	ruQueryBase = 2.0
	// ruOther is the charge of everything else: table creation and
	// deletion, ACLs, service properties, a refused request.
	ruOther = 1.0
)

// startedKB counts n bytes in started kilobytes, at least one.
func startedKB(n int64) float64 { return max(1, math.Ceil(float64(n)/1024)) }

// requestCharge is the cost model: o's charge for a request answered
// status, with in body bytes read, out written and items returned (for
// a query; -1 when unknown), writes the entities a write touched.
func requestCharge(o opRoute, kind kind, status int, in, out int64, items, writes int) float64 {
	if status >= 400 {
		return ruOther
	}
	switch {
	case kind == kindEntity && o.op == opRead:
		return ruPointReadPer10KB * math.Ceil(startedKB(out)/10)
	case kind == kindEntities && o.op == opRead, o.op == opListTables:
		if items < 0 { // Storage order: about one entity a KB
			items = int(startedKB(out))
		}
		return ruQueryBase + float64(items) + math.Ceil(startedKB(out)/10)
	case o.op == opInsert, o.op == opUpdate, o.op == opUpsert, o.op == opDelete, o.op == opBatch:
		return ruWritePerKB * max(startedKB(in), float64(writes))
	}
	return ruOther
}

// ruBucket is a token bucket of request units: it holds at most one
// second's worth and refills continuously.
type ruBucket struct {
	tokens float64
	last   time.Time
}

// throttle answers 429 TooManyRequests, with x-ms-retry-after-ms, when
// the budget the request draws on is used up. Each request is charged
// after it has run, so the budget may go below zero; it is admitted
// again once refilled above.
func (q *request) throttle() error {
	c := q.h.cosmos
	rate := c.opt.RequestUnitsPerSecond
	if rate <= 0 {
		return nil
	}
	c.mu.Lock()
	b := c.bucket(q.budgetName())
	now := c.now()
	if dt := now.Sub(b.last); dt > 0 {
		b.tokens = min(rate, b.tokens+dt.Seconds()*rate)
	}
	b.last = now
	tokens := b.tokens
	c.mu.Unlock()
	if tokens > 0 {
		return nil
	}
	q.cq.throttled = true
	wait := time.Duration((-tokens + rate/100) / rate * float64(time.Second)) // refilled to a hundredth of a second's worth
	hd := q.w.Header()
	hd.Set("x-ms-retry-after-ms", retryAfterMillis(wait))
	if c.opt.ChargeHeader {
		hd.Set("x-ms-request-charge", "0")
	}
	return errTooManyRequests
}

// errTooManyRequests is Cosmos DB's answer once the provisioned
// throughput is used up.
var errTooManyRequests = apiError(http.StatusTooManyRequests, edm.Code("TooManyRequests"),
	"The request rate is too large: the provisioned request units per second are used up. Retry after x-ms-retry-after-ms.")

// budgetName is the budget a request draws on: its table's with
// ThroughputPerTable, else the account's ("").
func (q *request) budgetName() string {
	if !q.h.cosmos.opt.ThroughputPerTable {
		return ""
	}
	return strings.ToLower(q.res.table)
}

// bucket returns the named budget, full when new. REQUIRES: c.mu held.
func (c *cosmosState) bucket(name string) *ruBucket {
	b := c.buckets[name]
	if b == nil {
		b = &ruBucket{tokens: c.opt.RequestUnitsPerSecond, last: c.now()}
		c.buckets[name] = b
	}
	return b
}

// charge computes the request's charge, takes it from its budget, and
// reports it: x-ms-request-charge (with ChargeHeader) and the metrics.
func (q *request) charge(o opRoute, status int, in int64, out int) {
	c := q.h.cosmos
	if q.cq.throttled {
		return
	}
	items := -1
	if q.cq.items >= 0 && q.cq.counted {
		items = q.cq.items
	}
	ru := requestCharge(o, q.res.kind, status, in, int64(out), items, len(q.cq.touched))
	q.cq.charge = ru
	if c.opt.RequestUnitsPerSecond > 0 {
		c.mu.Lock()
		c.bucket(q.budgetName()).tokens -= ru
		c.mu.Unlock()
	}
	if c.opt.ChargeHeader {
		q.w.Header().Set("x-ms-request-charge", strconv.FormatFloat(ru, 'f', 2, 64))
	}
	if m := q.h.metrics; m != nil {
		ruCounter(m).WithLabelValues(q.h.account, operationName(q.r, q.res)).Add(ru)
	}
}

// ruCounters holds each Metrics' request unit counter, registered in
// its registry on first use.
var ruCounters sync.Map // *Metrics -> *prometheus.CounterVec

func ruCounter(m *Metrics) *prometheus.CounterVec {
	if v, ok := ruCounters.Load(m); ok {
		return v.(*prometheus.CounterVec)
	}
	cv := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tablestore_cosmos_request_units_total",
		Help: "Request units charged by the Cosmos DB flavor's cost model, by account and operation.",
	}, []string{"account", "operation"})
	v, loaded := ruCounters.LoadOrStore(m, cv)
	if !loaded {
		m.reg.MustRegister(cv)
	}
	return v.(*prometheus.CounterVec)
}

// Outcome is what a handler reports of a request it answered, for test
// kits' request logs: the error code answered (also when the answer
// carries no x-ms-error-code header, as Cosmos DB's do) and the request
// units the Cosmos flavor charged (0 on Storage's).
type Outcome struct {
	Code          string
	RequestCharge float64
}

type outcomeKey struct{}

// WithOutcome returns r carrying o, which the handler fills in once it
// has answered r (before its ServeHTTP returns).
func WithOutcome(r *http.Request, o *Outcome) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), outcomeKey{}, o))
}

// reportOutcome fills in the request's Outcome, if it carries one.
func (q *request) reportOutcome() {
	o, _ := q.r.Context().Value(outcomeKey{}).(*Outcome)
	if o == nil {
		return
	}
	o.Code = q.code
	if q.cq != nil {
		o.RequestCharge = q.cq.charge
	}
}
