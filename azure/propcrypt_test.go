package azure_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/tablestoretest"
)

// TestPropertyEncryptionRemote: with PropertyEncryption the service
// receives and stores only the sealed value, the client reads the
// plaintext back, and a $filter on the property is refused before it is
// sent.
func TestPropertyEncryptionRemote(t *testing.T) {
	ctx := context.Background()
	s := tablestoretest.NewServer(t)
	pe := &ts.PropertyEncryption{CurrentKeyID: "k1", Keys: map[string][]byte{"k1": bytes.Repeat([]byte{7}, 32)},
		Tables: map[string][]string{"Secrets": {"SSN"}}}
	db, err := azure.Open(s.ConnectionString(), &azure.Options{PropertyEncryption: pe})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Secrets")
	if err != nil {
		t.Fatal(err)
	}
	err = tb.SubmitTransaction(ctx, []ts.TransactionAction{
		{Type: ts.ActionInsert, Entity: &ts.Entity{PartitionKey: "p", RowKey: "1", Properties: map[string]any{"SSN": "RemoteMarker-1", "Name": "a"}}},
		{Type: ts.ActionInsert, Entity: &ts.Entity{PartitionKey: "p", RowKey: "2", Properties: map[string]any{"SSN": int64(42), "Name": "b"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := tb.Get(ctx, "p", "1", nil)
	if err != nil || e.Properties["SSN"] != "RemoteMarker-1" {
		t.Fatalf("Get: %v, %v", e, err)
	}
	page, err := tb.QueryPage(ctx, ts.Query{Filter: "Name eq 'b'"})
	if err != nil || len(page.Entities) != 1 || page.Entities[0].Properties["SSN"] != int64(42) {
		t.Fatalf("query: %+v, %v", page, err)
	}
	_, err = tb.QueryPage(ctx, ts.Query{Filter: "SSN eq 'RemoteMarker-1'"})
	if ts.ErrorCode(err) != edm.CodeInvalidInput || !strings.Contains(err.Error(), `"SSN"`) {
		t.Fatalf("filter on the encrypted property: %v; want InvalidInput naming SSN", err)
	}

	plain, err := azure.Open(s.ConnectionString(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	raw, err := plain.Table("Secrets").Get(ctx, "p", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	sealed, ok := raw.Properties["SSN"].([]byte)
	if !ok || bytes.Contains(sealed, []byte("RemoteMarker")) || raw.Properties["Name"] != "a" {
		t.Fatalf("the service holds %#v", raw.Properties)
	}
	// A sealed value moved to another entity by someone with access to
	// the service does not decrypt.
	if err := plain.Table("Secrets").Upsert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "3", Properties: map[string]any{"SSN": sealed}}, ts.Replace); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Get(ctx, "p", "3", nil); !errors.Is(err, ts.ErrCorrupt) {
		t.Fatalf("a moved value: %v; want ErrCorrupt", err)
	}
}
