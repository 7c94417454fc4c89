package tablestore

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"
)

// benchFeedTable opens an on-disk store with one table, its feed on
// (new images) or off.
func benchFeedTable(b *testing.B, feed bool, opts *Options) (*DB, *Table) {
	b.Helper()
	db, err := Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	tb, err := db.CreateTable(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	if feed {
		if err := tb.EnableChangeFeed(ctx, ChangeFeedOptions{Images: ImagesNew}); err != nil {
			b.Fatal(err)
		}
	}
	return db, tb
}

func feedBenchEntity(pk string, i int) *Entity {
	return &Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%010d", i), Properties: map[string]any{
		"Name": "some name", "N": int64(i), "Score": 1.5, "Flag": true, "Payload": make([]byte, 100)}}
}

// BenchmarkChangesInsert: synced single inserts into two stores, the
// feed off in one and on (new images) in the other, interleaved insert
// by insert so both see the same machine; reports each side's median
// and the ratio of the medians. Goal: on >= 0.9x off.
func BenchmarkChangesInsert(b *testing.B) {
	benchFeedSides(b, nil, func(tb *Table, i int) error {
		return tb.Insert(ctx, feedBenchEntity("p", i))
	}, 1)
}

// BenchmarkChangesBatch100: unsynced loads in transactions of 100
// inserts, the feed off and on (new images), interleaved transaction by
// transaction. Goal: on >= 0.7x off.
func BenchmarkChangesBatch100(b *testing.B) {
	benchFeedSides(b, &Options{NoSync: true}, func(tb *Table, i int) error {
		batch := tb.NewBatch()
		pk := fmt.Sprint("p", i)
		for j := range 100 {
			batch.Insert(feedBenchEntity(pk, j))
		}
		return batch.Submit(ctx)
	}, 100)
}

// benchFeedSides runs write(i) b.N times on a store with the feed off
// and one with it on, alternating, and reports per-entity medians and
// the throughput ratio (median off over median on).
func benchFeedSides(b *testing.B, opts *Options, write func(*Table, int) error, perOp int) {
	_, off := benchFeedTable(b, false, opts)
	_, on := benchFeedTable(b, true, opts)
	var times [2][]time.Duration
	i := 0
	for b.Loop() {
		for k, tb := range [2]*Table{off, on} {
			t0 := time.Now()
			if err := write(tb, i); err != nil {
				b.Fatal(err)
			}
			times[k] = append(times[k], time.Since(t0))
		}
		i++
	}
	b.ReportMetric(float64(median(times[0]).Nanoseconds())/float64(perOp), "median-ns/entity-off")
	b.ReportMetric(float64(median(times[1]).Nanoseconds())/float64(perOp), "median-ns/entity-on")
	b.ReportMetric(float64(median(times[0]))/float64(median(times[1])), "throughput-on/off")
}

// BenchmarkChangesFollowerLatency: how long after a synced insert
// returns a follower (Changes with Follow) has it, in process. Reports
// the p50 and p99. Goal: p50 <= 1 ms.
func BenchmarkChangesFollowerLatency(b *testing.B) {
	_, tb := benchFeedTable(b, true, nil)
	st, err := tb.ChangeFeed(ctx)
	if err != nil {
		b.Fatal(err)
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	seen := make(chan time.Time, 1)
	go func() {
		for _, err := range tb.Changes(fctx, ChangesQuery{From: st.Latest, Follow: true}) {
			if err != nil {
				return
			}
			seen <- time.Now()
		}
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		if err := tb.Insert(ctx, feedBenchEntity("p", i)); err != nil {
			b.Fatal(err)
		}
		ret := time.Now()
		at := <-seen
		lat = append(lat, max(at.Sub(ret), 0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}
