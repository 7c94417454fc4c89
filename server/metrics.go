package server

import (
	"context"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/tablestore/tablestore"
)

// Metrics collects the server's Prometheus metrics: requests, their
// latencies and bytes, in-flight requests and admission refusals, and
// each served store's engine figures, read from tablestore's
// DB.EngineMetrics at scrape time. Names follow Prometheus' conventions:
// the tablestore_ prefix, base units (seconds, bytes), _total counters.
// Labels are bounded: account (the configured accounts), operation
// (Azure's operation names, a fixed set) and status (the HTTP status
// code). Give one Metrics to every handler through Options.Metrics and
// serve Handler on an admin listener. Safe for concurrent use.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	inFlight prometheus.Gauge
	refusals *prometheus.CounterVec
	bytesIn  *prometheus.CounterVec
	bytesOut *prometheus.CounterVec

	mu     sync.Mutex
	stores map[string]*tablestore.DB // by account

	// series caches each (account, operation, status)'s children, so a
	// request costs map lookups but no label hashing or allocation.
	series sync.Map // seriesKey -> *seriesChildren
}

type seriesKey struct {
	account, op string
	status      int
}

type seriesChildren struct {
	requests prometheus.Counter
	duration prometheus.Observer
	bytesIn  prometheus.Counter
	bytesOut prometheus.Counter
}

// requestBuckets are the request latency histogram's bounds, in seconds.
var requestBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewMetrics returns a Metrics with its own registry, which also holds
// the Go runtime and process collectors.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablestore_requests_total",
			Help: "Requests answered, by account, operation (Azure's operation name) and HTTP status code.",
		}, []string{"account", "operation", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "tablestore_request_duration_seconds",
			Help:    "Time from a request's arrival to its last response byte, by account and operation.",
			Buckets: requestBuckets,
		}, []string{"account", "operation"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "tablestore_requests_in_flight",
			Help: "Requests being served now, waiting for admission included.",
		}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablestore_admission_refusals_total",
			Help: "Requests refused with 503 ServerBusy because no slot freed up in time, by account.",
		}, []string{"account"}),
		bytesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablestore_request_bytes_total",
			Help: "Request body bytes read, by account.",
		}, []string{"account"}),
		bytesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tablestore_response_bytes_total",
			Help: "Response body bytes written, by account.",
		}, []string{"account"}),
		stores: map[string]*tablestore.DB{},
	}
	m.reg.MustRegister(m.requests, m.duration, m.inFlight, m.refusals, m.bytesIn, m.bytesOut,
		&engineCollector{m: m},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry is the registry the metrics are in, for adding collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in Prometheus' exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// addStore reports db's engine figures under account.
func (m *Metrics) addStore(account string, db *tablestore.DB) {
	m.mu.Lock()
	m.stores[account] = db
	m.mu.Unlock()
}

// observe counts one finished request.
func (m *Metrics) observe(account, op string, status int, d time.Duration, in, out int64) {
	k := seriesKey{account, op, status}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, &seriesChildren{
			requests: m.requests.WithLabelValues(account, op, strconv.Itoa(status)),
			duration: m.duration.WithLabelValues(account, op),
			bytesIn:  m.bytesIn.WithLabelValues(account),
			bytesOut: m.bytesOut.WithLabelValues(account),
		})
	}
	c := v.(*seriesChildren)
	c.requests.Inc()
	c.duration.Observe(d.Seconds())
	if in > 0 {
		c.bytesIn.Add(float64(in))
	}
	if out > 0 {
		c.bytesOut.Add(float64(out))
	}
}

// engineCollector reads every store's EngineMetrics at scrape time.
type engineCollector struct{ m *Metrics }

func engineDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc("tablestore_"+name, help, []string{"account"}, nil)
}

var (
	descUp          = engineDesc("engine_up", "1 when the store answered for its metrics, 0 when it could not (closed).")
	descFault       = engineDesc("engine_fault", "1 when the store has met a fault (such as corruption) and refuses writes; see /readyz.")
	descDebt        = engineDesc("engine_compaction_debt_bytes", "Estimated bytes compactions must rewrite for the LSM to reach a stable shape.")
	descCompacting  = engineDesc("engine_compactions_in_progress", "Compactions running now.")
	descCompactions = engineDesc("engine_compactions_total", "Compactions since the store opened.")
	descFlushes     = engineDesc("engine_flushes_total", "Memtable flushes since the store opened.")
	descL0Files     = engineDesc("engine_l0_files", "Files in level 0.")
	descL0Sub       = engineDesc("engine_l0_sublevels", "Sublevels of level 0 (read amplification at L0).")
	descHits        = engineDesc("engine_block_cache_hits_total", "Block cache hits since the store opened.")
	descMisses      = engineDesc("engine_block_cache_misses_total", "Block cache misses since the store opened.")
	descHitRatio    = engineDesc("engine_block_cache_hit_ratio", "Block cache hits over lookups since the store opened (0 before any lookup).")
	descCacheBytes  = engineDesc("engine_block_cache_size_bytes", "Bytes held in the block cache.")
	descMemTable    = engineDesc("engine_memtable_bytes", "Bytes held by memtables.")
	descDisk        = engineDesc("engine_disk_usage_bytes", "Disk space taken by the store's files, WAL included.")
	descWAL         = engineDesc("engine_wal_bytes", "Disk space taken by the write-ahead log.")
	descWALSync     = engineDesc("engine_wal_sync_duration_seconds", "Write-ahead log sync latency.")
	descTables      = engineDesc("tables", "Tables in the store.")
	descEntities    = engineDesc("entities_estimated", "Estimated entities, from data file metadata (writes still in memory are missing; versions not yet compacted away count).")

	descSnapshots      = engineDesc("engine_snapshots", "Snapshots (DB.Snapshot) open now.")
	descSnapshotAge    = engineDesc("engine_oldest_snapshot_age_seconds", "Age of the oldest open snapshot (0 when none).")
	descSnapshotPinned = engineDesc("engine_snapshot_pinned_bytes_total", "Bytes compactions had to keep for open snapshots since the store opened.")
)

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descUp, descFault, descDebt, descCompacting, descCompactions, descFlushes,
		descL0Files, descL0Sub, descHits, descMisses, descHitRatio, descCacheBytes, descMemTable, descDisk, descWAL,
		descWALSync, descTables, descEntities, descSnapshots, descSnapshotAge, descSnapshotPinned} {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	accounts := make([]string, 0, len(c.m.stores))
	for a := range c.m.stores {
		accounts = append(accounts, a)
	}
	stores := make([]*tablestore.DB, 0, len(accounts))
	sort.Strings(accounts)
	for _, a := range accounts {
		stores = append(stores, c.m.stores[a])
	}
	c.m.mu.Unlock()
	for i, a := range accounts {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		em, err := stores[i].EngineMetrics(ctx)
		cancel()
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, a)
		}
		counter := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, a)
		}
		fault := 0.0
		if stores[i].Health() != nil {
			fault = 1
		}
		gauge(descFault, fault)
		if err != nil {
			gauge(descUp, 0)
			continue
		}
		gauge(descUp, 1)
		gauge(descDebt, float64(em.CompactionDebtBytes))
		gauge(descCompacting, float64(em.CompactionsInProgress))
		counter(descCompactions, float64(em.Compactions))
		counter(descFlushes, float64(em.Flushes))
		gauge(descL0Files, float64(em.L0Files))
		gauge(descL0Sub, float64(em.L0Sublevels))
		counter(descHits, float64(em.BlockCacheHits))
		counter(descMisses, float64(em.BlockCacheMisses))
		ratio := 0.0
		if n := em.BlockCacheHits + em.BlockCacheMisses; n > 0 {
			ratio = float64(em.BlockCacheHits) / float64(n)
		}
		gauge(descHitRatio, ratio)
		gauge(descCacheBytes, float64(em.BlockCacheBytes))
		gauge(descMemTable, float64(em.MemTableBytes))
		gauge(descDisk, float64(em.DiskBytes))
		gauge(descWAL, float64(em.WALBytes))
		buckets := make(map[float64]uint64, len(em.WALSync.Buckets))
		for _, b := range em.WALSync.Buckets {
			buckets[b.UpperBound.Seconds()] = b.Count
		}
		ch <- prometheus.MustNewConstHistogram(descWALSync, em.WALSync.Count, em.WALSync.Sum.Seconds(), buckets, a)
		gauge(descTables, float64(em.Tables))
		gauge(descEntities, float64(em.Entities))
		gauge(descSnapshots, float64(em.Snapshots))
		gauge(descSnapshotAge, em.OldestSnapshotAge.Seconds())
		counter(descSnapshotPinned, float64(em.SnapshotPinnedBytes))
	}
}
