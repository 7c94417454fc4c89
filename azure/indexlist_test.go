package azure_test

import (
	"context"
	"testing"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/tablestoretest"
)

// TestFilteredQueryListsNoIndexes checks that a filtered key-order query
// through the remote driver costs no listing of the table's indexes (the
// server plans its own index reads), while Plan still lists them to
// explain the query.
func TestFilteredQueryListsNoIndexes(t *testing.T) {
	ctx := context.Background()
	s := tablestoretest.NewServer(t)
	db := openRemote(t, s.ConnectionString())
	tb, err := db.CreateTable(ctx, "Listed")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: string(rune('a' + i)), Properties: map[string]any{"N": int32(i % 2)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.CreateIndex(ctx, ts.IndexSpec{Name: "ByN", Properties: []string{"N"}}); err != nil {
		t.Fatal(err)
	}
	listings := func() int {
		n := 0
		for _, r := range s.Requests() {
			if r.Operation == "TablestoreListIndexes" {
				n++
			}
		}
		return n
	}
	s.ClearRequests()
	q := ts.Query{Filter: "N eq 1"}
	page, err := tb.QueryPage(ctx, q)
	if err != nil || len(page.Entities) != 2 {
		t.Fatalf("query: %v, %v", page, err)
	}
	if n := listings(); n != 0 {
		t.Errorf("a filtered query listed the indexes %d times", n)
	}
	plan, err := tb.Plan(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Index != "ByN" || listings() == 0 {
		t.Errorf("Plan: index %q after %d listings, want ByN from the listing", plan.Index, listings())
	}
}
