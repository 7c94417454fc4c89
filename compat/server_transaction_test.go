package compat

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestServerTransactionSuccess(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	seed(t, c, 3, 1) // p0/r0000..r0002
	cur, err := c.GetEntity(ctx(t), "p0", "r0001", nil)
	if err != nil {
		t.Fatal(err)
	}
	actions := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "new1", "V": 1})},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "r0001", "V": 2}), IfMatch: &cur.ETag},
		{ActionType: aztables.TransactionTypeUpdateReplace, Entity: mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "r0002", "V": 3})},
		{ActionType: aztables.TransactionTypeDelete, Entity: mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "r0000"})},
		{ActionType: aztables.TransactionTypeInsertMerge, Entity: mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "new2", "V": 5})},
		{ActionType: aztables.TransactionTypeInsertReplace, Entity: mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "new3", "V": 6})},
	}
	if _, err := c.SubmitTransaction(ctx(t), actions, nil); err != nil {
		t.Fatalf("transaction: %v", err)
	}
	ents, _ := listAll(t, c, nil)
	var got []string
	for _, e := range ents {
		got = append(got, fmt.Sprintf("%s=%v", e.RowKey, e.Properties["V"]))
	}
	if want := "[new1=1 new2=5 new3=6 r0001=2 r0002=3]"; fmt.Sprint(got) != want {
		t.Fatalf("after transaction %v, want %s", got, want)
	}
}

// batchFailure submits actions, expects the SDK's 202 error, and returns
// the failed part's raw text.
func batchFailure(t *testing.T, c *aztables.Client, actions []aztables.TransactionAction) string {
	t.Helper()
	_, err := c.SubmitTransaction(ctx(t), actions, nil)
	if err == nil {
		t.Fatal("transaction succeeded, want failure")
	}
	var re *azcore.ResponseError
	if !errorsAs(err, &re) || re.StatusCode != http.StatusAccepted {
		t.Fatalf("want a ResponseError with status 202, got %v", err)
	}
	return responseBody(t, err)
}

func TestServerTransactionFailure(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	seed(t, c, 2, 1) // p0/r0000, p0/r0001
	add := func(rk string) aztables.TransactionAction {
		return aztables.TransactionAction{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": rk, "V": 1})}
	}
	for _, tc := range []struct {
		name    string
		actions []aztables.TransactionAction
		status  string
		code    string
		index   string
	}{
		{"exists", []aztables.TransactionAction{add("a"), add("b"), add("r0001")}, "409 Conflict", "EntityAlreadyExists", "2:"},
		{"duplicate", []aztables.TransactionAction{add("a"), add("a")}, "400 Bad Request", "InvalidDuplicateRow", "1:"},
		{"partitions", []aztables.TransactionAction{add("a"), {ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "other", "RowKey": "x"})}}, "400 Bad Request", "CommandsInBatchActOnDifferentPartitions", "1:"},
		{"missing", []aztables.TransactionAction{add("a"), {ActionType: aztables.TransactionTypeUpdateMerge, Entity: mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "zz"}), IfMatch: to.Ptr(azcore.ETagAny)}}, "404 Not Found", "ResourceNotFound", "1:"},
		{"bad key", []aztables.TransactionAction{add("a"), add("b"), add("c"), add("x/y")}, "400 Bad Request", "OutOfRangeInput", "3:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := batchFailure(t, c, tc.actions)
			if !strings.HasPrefix(body, "--batchresponse_") || !strings.Contains(body, "\r\n\r\n--changesetresponse_") {
				t.Fatalf("envelope:\n%s", body)
			}
			if !strings.Contains(body, "HTTP/1.1 "+tc.status+"\r\n") || strings.Count(body, "HTTP/1.1 ") != 1 {
				t.Fatalf("want one part with %s:\n%s", tc.status, body)
			}
			if !strings.Contains(body, `{"odata.error":{"code":"`+tc.code+`","message":{"lang":"en-US","value":"`+tc.index) {
				t.Fatalf("want code %s at index %s:\n%s", tc.code, tc.index, body)
			}
		})
	}
	// Nothing of the failed transactions was applied.
	ents, _ := listAll(t, c, nil)
	if len(ents) != 2 {
		t.Fatalf("%d entities after failed transactions, want 2", len(ents))
	}
	// A missing table fails at index 0.
	body := batchFailure(t, svc.NewClient("nosuchtable"), []aztables.TransactionAction{add("a")})
	if !strings.Contains(body, `"code":"TableNotFound","message":{"lang":"en-US","value":"0:The table specified does not exist.`) {
		t.Fatalf("missing table:\n%s", body)
	}
}
