package server

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
)

// TestMetricsSnapshots: /metrics shows the open snapshots, the oldest's
// age and the bytes kept for them, and shows them gone once closed.
func TestMetricsSnapshots(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	db, err := tablestore.OpenInMemory(&tablestore.Options{NoSync: true, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	m := NewMetrics()
	if _, err := New(db, &Options{Anonymous: true, Metrics: m}); err != nil {
		t.Fatal(err)
	}
	admin, err := NewAdminHandler(AdminOptions{Metrics: m, Stores: map[string]*tablestore.DB{DevAccount: db}})
	if err != nil {
		t.Fatal(err)
	}
	expect := func(want ...string) {
		t.Helper()
		text := scrape(t, admin)
		for _, w := range want {
			if !strings.Contains(text, w+"\n") {
				t.Errorf("no %s in:\n%s", w, text)
			}
		}
	}
	expect(`tablestore_engine_snapshots{account="devstoreaccount1"} 0`,
		`tablestore_engine_oldest_snapshot_age_seconds{account="devstoreaccount1"} 0`,
		`tablestore_engine_snapshot_pinned_bytes_total{account="devstoreaccount1"} 0`)

	s1, err := db.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(90 * time.Second)
	mu.Unlock()
	s2, err := db.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	expect(`tablestore_engine_snapshots{account="devstoreaccount1"} 2`,
		`tablestore_engine_oldest_snapshot_age_seconds{account="devstoreaccount1"} 90`)
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	expect(`tablestore_engine_snapshots{account="devstoreaccount1"} 1`,
		`tablestore_engine_oldest_snapshot_age_seconds{account="devstoreaccount1"} 0`)
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	expect(`tablestore_engine_snapshots{account="devstoreaccount1"} 0`)
}
