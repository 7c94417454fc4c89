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

// BenchmarkChangesInsert: synced single inserts with the feed off and
// on (new images). Goal: on >= 0.9x off.
func BenchmarkChangesInsert(b *testing.B) {
	for _, feed := range []bool{false, true} {
		b.Run(fmt.Sprint("feed=", feed), func(b *testing.B) {
			_, tb := benchFeedTable(b, feed, nil)
			b.ResetTimer()
			for i := range b.N {
				if err := tb.Insert(ctx, feedBenchEntity("p", i)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkChangesBatch100: unsynced loads in transactions of 100
// inserts with the feed off and on (new images). Goal: on >= 0.7x off.
func BenchmarkChangesBatch100(b *testing.B) {
	for _, feed := range []bool{false, true} {
		b.Run(fmt.Sprint("feed=", feed), func(b *testing.B) {
			_, tb := benchFeedTable(b, feed, &Options{NoSync: true})
			b.ResetTimer()
			for i := range b.N {
				batch := tb.NewBatch()
				pk := fmt.Sprint("p", i)
				for j := range 100 {
					batch.Insert(feedBenchEntity(pk, j))
				}
				if err := batch.Submit(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "entities/s")
		})
	}
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
