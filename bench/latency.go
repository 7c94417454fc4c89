package main

import (
	"math"
	"slices"
	"time"
)

// latencies summarises a set of operation latencies.
type latencies struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50Ns"`
	P99   float64 `json:"p99Ns"`
	P999  float64 `json:"p999Ns"`
	Max   float64 `json:"maxNs"`
	Mean  float64 `json:"meanNs"`
	// Rate is operations per second of wall time over the whole run
	// (0 when the caller gave no duration).
	Rate float64 `json:"perSecond"`
}

// percentile returns the q-quantile (0 <= q <= 1) of sorted by the
// nearest-rank method: the smallest value with at least q of the values
// at or below it. It returns 0 for an empty slice.
func percentile(sorted []time.Duration, q float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := int(math.Ceil(q * float64(n)))
	return sorted[min(max(rank, 1), n)-1]
}

// summarize sorts lat in place and returns its summary; wall is the
// run's wall time for Rate (0: none).
func summarize(lat []time.Duration, wall time.Duration) latencies {
	slices.Sort(lat)
	s := latencies{Count: len(lat)}
	if len(lat) == 0 {
		return s
	}
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	s.P50 = float64(percentile(lat, 0.50))
	s.P99 = float64(percentile(lat, 0.99))
	s.P999 = float64(percentile(lat, 0.999))
	s.Max = float64(lat[len(lat)-1])
	s.Mean = float64(sum) / float64(len(lat))
	if wall > 0 {
		s.Rate = float64(len(lat)) / wall.Seconds()
	}
	return s
}

// median returns the median of ds without changing it (0 when empty).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return percentile(s, 0.5)
}

// meanOf returns the mean of ds, ns (NaN when empty).
func meanOf(ds []time.Duration) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum) / float64(len(ds))
}

// ratio returns a / b, NaN when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// goalLine formats one goal check: the name, the value as a ratio, the
// goal and ok or MISS.
func goalLine(name string, value float64, goal string, ok bool) string {
	return name + ": " + formatRatio(value) + ", goal " + goal + "  " + okMiss(ok && !math.IsNaN(value))
}
