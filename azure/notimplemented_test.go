package azure_test

import (
	"context"
	"errors"
	"testing"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/tablestoretest"
)

// TestKeyspaceOpsNotImplemented checks that the keyspace operations the
// remote driver does not offer even against tablestore's server (reverse
// reads, segments) answer NotImplemented and change nothing; range
// deletions do go through there (TestExtensionsAgainstServer), and answer
// NotImplemented elsewhere (TestExtensionsNotImplementedElsewhere).
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
	for name, err := range map[string]error{
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
		t.Fatalf("the entity is gone after refused operations: %v", err)
	}
}
