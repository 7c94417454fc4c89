package tablestore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tablestore/tablestore"
)

func TestEngineMetrics(t *testing.T) {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Metered")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := tb.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: string(rune('a' + i))}); err != nil {
			t.Fatal(err)
		}
	}
	m, err := db.EngineMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Tables != 1 || db.Health() != nil || m.DiskBytes == 0 || m.WALSync.Count == 0 || len(m.WALSync.Buckets) == 0 {
		t.Fatalf("%+v", m)
	}
	last := m.WALSync.Buckets[len(m.WALSync.Buckets)-1]
	if last.Count > m.WALSync.Count {
		t.Fatalf("bucket count %d over total %d", last.Count, m.WALSync.Count)
	}
	db.Close()
	if _, err := db.EngineMetrics(ctx); err == nil {
		t.Fatal("metrics of a closed store")
	}
}

func TestServicePropertiesPersist(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "s")
	db, err := tablestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if doc, err := db.ServiceProperties(ctx); err != nil || doc != nil {
		t.Fatalf("fresh store: %q %v", doc, err)
	}
	if err := db.SetServiceProperties(ctx, []byte("<doc/>")); err != nil {
		t.Fatal(err)
	}
	if err := db.SetServiceProperties(ctx, make([]byte, tablestore.MaxServicePropertiesSize+1)); tablestore.ErrorCode(err) != tablestore.CodeInvalidInput {
		t.Fatalf("oversized: %v", err)
	}
	// Service properties are not a table.
	if tables, err := db.ListTables(ctx, nil); err != nil || len(tables.Names) != 0 {
		t.Fatalf("%+v %v", tables, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = tablestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if doc, err := db.ServiceProperties(ctx); err != nil || string(doc) != "<doc/>" {
		t.Fatalf("reopened: %q %v", doc, err)
	}
	if err := db.SetServiceProperties(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if doc, err := db.ServiceProperties(ctx); err != nil || doc != nil {
		t.Fatalf("removed: %q %v", doc, err)
	}
}
