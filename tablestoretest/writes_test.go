package tablestoretest

import (
	"context"
	"testing"

	"github.com/tablestore/tablestore"
)

// TestRandomWrites checks that a seed's writes are repeatable and that
// they take more than one write path (the change feed sees both upserts
// and deletions).
func TestRandomWrites(t *testing.T) {
	ctx := context.Background()
	dump := func(seed uint64) (map[string]int64, map[tablestore.ChangeOp]int) {
		db, err := tablestore.OpenInMemory(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		tb, err := db.CreateTable(ctx, "Random")
		if err != nil {
			t.Fatal(err)
		}
		if err := tb.EnableChangeFeed(ctx, tablestore.ChangeFeedOptions{}); err != nil {
			t.Fatal(err)
		}
		RandomWrites(t, tb, seed, 400)
		rows := map[string]int64{}
		for e, err := range tb.Query(ctx, tablestore.Query{}) {
			if err != nil {
				t.Fatal(err)
			}
			n, _ := e.Properties["N"].(int64)
			rows[e.PartitionKey+"/"+e.RowKey] = n
		}
		ops := map[tablestore.ChangeOp]int{}
		for c, err := range tb.Changes(ctx, tablestore.ChangesQuery{}) {
			if err != nil {
				t.Fatal(err)
			}
			ops[c.Op]++
		}
		return rows, ops
	}
	a, ops := dump(7)
	b, _ := dump(7)
	if len(a) < 50 {
		t.Fatalf("%d entities after 400 random writes", len(a))
	}
	if len(a) != len(b) {
		t.Fatalf("the same seed left %d and %d entities", len(a), len(b))
	}
	for k, v := range a {
		if b[k] != v {
			t.Fatalf("the same seed left %s at N=%d and N=%d", k, v, b[k])
		}
	}
	if len(ops) < 2 {
		t.Fatalf("the change feed saw only %v", ops)
	}
}
