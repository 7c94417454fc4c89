package compat

import (
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestServerEntityCRUD(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	ent := map[string]any{"PartitionKey": "p1", "RowKey": "r1", "Name": "alice", "Age": 30}
	add, err := c.AddEntity(ctx(t), mustJSON(t, ent), nil)
	if err != nil {
		t.Fatalf("add: %v", err)
	}
	if add.ETag == "" || len(add.Value) == 0 {
		t.Fatalf("add: want ETag and echo, got %q %q", add.ETag, add.Value)
	}
	_, err = c.AddEntity(ctx(t), mustJSON(t, ent), nil)
	respErr(t, err, http.StatusConflict, string(aztables.EntityAlreadyExists))

	got, err := c.GetEntity(ctx(t), "p1", "r1", nil)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	var e aztables.EDMEntity
	if err := e.UnmarshalJSON(got.Value); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if e.Properties["Name"] != "alice" || e.Properties["Age"] != int32(30) || e.PartitionKey != "p1" {
		t.Fatalf("get: %+v", e)
	}
	if got.ETag != add.ETag {
		t.Fatalf("etag %q != %q", got.ETag, add.ETag)
	}

	// Merge with the current ETag, then with a stale one.
	up, err := c.UpdateEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "r1", "City": "Lisbon"}),
		&aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeMerge})
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	_, err = c.UpdateEntity(ctx(t), mustJSON(t, ent), &aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeReplace})
	respErr(t, err, http.StatusPreconditionFailed, string(aztables.UpdateConditionNotSatisfied))
	got, err = c.GetEntity(ctx(t), "p1", "r1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.ETag != up.ETag {
		t.Fatalf("etag after merge %q, want %q", got.ETag, up.ETag)
	}
	e = aztables.EDMEntity{}
	_ = e.UnmarshalJSON(got.Value)
	if e.Properties["City"] != "Lisbon" || e.Properties["Name"] != "alice" {
		t.Fatalf("after merge: %+v", e.Properties)
	}

	// Replace drops the other properties.
	if _, err := c.UpdateEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "r1", "Only": true}),
		&aztables.UpdateEntityOptions{UpdateMode: aztables.UpdateModeReplace}); err != nil {
		t.Fatalf("replace: %v", err)
	}
	got, _ = c.GetEntity(ctx(t), "p1", "r1", nil)
	e = aztables.EDMEntity{}
	_ = e.UnmarshalJSON(got.Value)
	if len(e.Properties) != 1 || e.Properties["Only"] != true {
		t.Fatalf("after replace: %+v", e.Properties)
	}

	// Update of a missing entity is 404; upsert creates it.
	_, err = c.UpdateEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "nope"}), nil)
	respErr(t, err, http.StatusNotFound, string(aztables.ResourceNotFound))
	for _, mode := range []aztables.UpdateMode{aztables.UpdateModeMerge, aztables.UpdateModeReplace} {
		if _, err := c.UpsertEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "up" + string(mode), "X": 1}),
			&aztables.UpsertEntityOptions{UpdateMode: mode}); err != nil {
			t.Fatalf("upsert %s: %v", mode, err)
		}
	}

	// Delete: wrong ETag 412, then success, then 404.
	stale := azcore.ETag(`W/"datetime'2000-01-01T00%3A00%3A00.0000000Z'"`)
	_, err = c.DeleteEntity(ctx(t), "p1", "r1", &aztables.DeleteEntityOptions{IfMatch: &stale})
	respErr(t, err, http.StatusPreconditionFailed, string(aztables.UpdateConditionNotSatisfied))
	if _, err := c.DeleteEntity(ctx(t), "p1", "r1", nil); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = c.DeleteEntity(ctx(t), "p1", "r1", nil)
	respErr(t, err, http.StatusNotFound, string(aztables.ResourceNotFound))
	_, err = c.GetEntity(ctx(t), "p1", "r1", nil)
	respErr(t, err, http.StatusNotFound, string(aztables.ResourceNotFound))
	_ = to.Ptr(1)
}

// TestServerEmptyKeys: Azure allows "" as PartitionKey and RowKey. The Go
// SDK sends an empty RowKey everywhere and an empty PartitionKey in
// inserts and queries; it refuses the empty PartitionKey itself when a
// call addresses an entity (get, update, upsert, delete).
func TestServerEmptyKeys(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	for _, k := range [][2]string{{"p", ""}, {"", ""}, {"", "r"}} {
		if _, err := c.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": k[0], "RowKey": k[1], "N": 1}), nil); err != nil {
			t.Fatalf("add (%q, %q): %v", k[0], k[1], err)
		}
	}
	got, err := c.GetEntity(ctx(t), "p", "", nil)
	if err != nil {
		t.Fatalf("get ('p', ''): %v", err)
	}
	if _, err := c.UpsertEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "", "N": 2}),
		&aztables.UpsertEntityOptions{UpdateMode: aztables.UpdateModeMerge}); err != nil {
		t.Fatalf("upsert ('p', ''): %v", err)
	}
	if _, err := c.UpdateEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": ""}),
		&aztables.UpdateEntityOptions{IfMatch: &got.ETag, UpdateMode: aztables.UpdateModeMerge}); err == nil {
		t.Fatal("update with a stale etag succeeded")
	}
	if _, err := c.SubmitTransaction(ctx(t), []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "b", "N": 3})},
		{ActionType: aztables.TransactionTypeDelete, Entity: mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": ""})},
	}, nil); err != nil {
		t.Fatalf("transaction: %v", err)
	}
	filter := "PartitionKey eq ''"
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: &filter, Top: to.Ptr[int32](1)})
	var rows []string
	for pages := 0; pager.More(); pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		page, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range page.Entities {
			var e aztables.EDMEntity
			if err := e.UnmarshalJSON(v); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, e.PartitionKey+"/"+e.RowKey)
		}
	}
	if strings.Join(rows, ",") != "/,/r" {
		t.Fatalf("partition '': %q", rows)
	}
	if _, err := c.GetEntity(ctx(t), "p", "", nil); err == nil {
		t.Fatal("the transaction did not delete ('p', '')")
	}
	// The SDK's own refusal: the request never leaves the client.
	if _, err := c.GetEntity(ctx(t), "", "", nil); err == nil || !strings.Contains(err.Error(), "partitionKey cannot be empty") {
		t.Fatalf("get ('', ''): %v", err)
	}
}
