package azure_test

import (
	"context"
	"errors"
	"testing"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/tablestoretest"
)

// TestKeyspaceOpsNotImplemented checks that the operations Azure has no
// counterpart for answer NotImplemented through the remote driver and
// change nothing.
func TestKeyspaceOpsNotImplemented(t *testing.T) {
	ctx := context.Background()
	s := tablestoretest.NewServer(t)
	db, err := azure.Open(s.ConnectionString(), nil)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Keyspace")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "r"}); err != nil {
		t.Fatalf("insert: %v", err)
	}
	p := tb.Partition("p")
	for name, err := range map[string]error{
		"DeleteAll":   p.DeleteAll(ctx),
		"DeleteRange": p.DeleteRange(ctx, "a", "z"),
		"Reverse": func() error {
			_, err := tb.QueryPage(ctx, ts.Query{Reverse: true})
			return err
		}(),
		"Segments": func() error {
			_, err := tb.Segments(ctx, 2)
			return err
		}(),
	} {
		if !errors.Is(err, ts.ErrNotImplemented) {
			t.Errorf("%s: got %v, want NotImplemented", name, err)
		}
	}
	if _, err := tb.Get(ctx, "p", "r", nil); err != nil {
		t.Fatalf("the entity is gone after refused deletes: %v", err)
	}
}
