package compat

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/tablestoretest"
)

// newCosmosService starts a Cosmos-flavored server and a service client
// on the Cosmos DB emulator's connection string (localhost:8902, the
// endpoint aztables takes for Cosmos DB), its connections dialled to the
// server's real port.
func newCosmosService(t *testing.T) (*tablestoretest.Server, *aztables.ServiceClient) {
	t.Helper()
	srv := tablestoretest.NewCosmosServer(t)
	addr := srv.URL()[len("http://"):]
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	cs := "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey=" + srv.Key() + ";TableEndpoint=http://localhost:8902/;"
	svc, err := aztables.NewServiceClientFromConnectionString(cs, &aztables.ClientOptions{ClientOptions: policy.ClientOptions{Transport: &http.Client{Transport: tr}}})
	if err != nil {
		t.Fatalf("service client: %v", err)
	}
	return srv, svc
}

// TestCosmosSDKPath runs aztables' Cosmos DB code path (merges sent as
// POST with X-HTTP-Method: MERGE) against the Cosmos flavor: writes,
// merges, errors without x-ms-error-code, insertion order, paging with
// its trailing empty page, and transactions, a failed one among them.
func TestCosmosSDKPath(t *testing.T) {
	srv, svc := newCosmosService(t)
	c := svc.NewClient("Cosmos")
	if _, err := c.CreateTable(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	for _, rk := range []string{"2", "10", "1"} {
		e := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: rk}, Properties: map[string]any{"v": int32(1)}}
		if _, err := c.AddEntity(ctx(t), mustJSON(t, e), nil); err != nil {
			t.Fatal(err)
		}
	}
	merge := aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "1"}, Properties: map[string]any{"w": int32(2)}}
	if _, err := c.UpdateEntity(ctx(t), mustJSON(t, merge), &aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatal(err)
	}
	merged := false
	for _, rec := range srv.Requests() {
		merged = merged || rec.Operation == "MergeEntity" && rec.Method == http.MethodPost
	}
	if !merged {
		t.Error("the SDK's Cosmos path did not send its merge as POST")
	}
	_, err := c.AddEntity(ctx(t), mustJSON(t, aztables.Entity{PartitionKey: "p", RowKey: "1"}), nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.ErrorCode != "EntityAlreadyExists" || re.StatusCode != http.StatusConflict {
		t.Errorf("duplicate insert: %v", err)
	}
	var order []string
	pages := 0
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr(int32(1))})
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, raw := range page.Entities {
			var e aztables.Entity
			if err := jsonUnmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			order = append(order, e.RowKey)
		}
	}
	if got := string(mustJSON(t, order)); got != `["2","10","1"]` || pages != 4 {
		t.Errorf("entities %s in %d pages, want insertion order in 3 full pages and an empty one", got, pages)
	}
	batch := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: mustJSON(t, aztables.Entity{PartitionKey: "p", RowKey: "9"})},
		{ActionType: aztables.TransactionTypeDelete, Entity: mustJSON(t, aztables.Entity{PartitionKey: "p", RowKey: "2"})},
	}
	if _, err := c.SubmitTransaction(ctx(t), batch, nil); err != nil {
		t.Fatal(err)
	}
	// A failed part, in Cosmos's shape, is the transaction's error.
	dup := []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, aztables.Entity{PartitionKey: "p", RowKey: "1"})}}
	if _, err := c.SubmitTransaction(ctx(t), dup, nil); err == nil {
		t.Error("a transaction inserting an existing entity succeeded")
	}
	if _, err := c.Delete(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
}
