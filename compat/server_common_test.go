package compat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/tablestoretest"
)

var (
	tableSeq   atomic.Int64
	tableNames sync.Map // *aztables.Client -> table name
)

// newService starts a server and returns a service client for it.
func newService(t *testing.T) (*tablestoretest.Server, *aztables.ServiceClient) {
	t.Helper()
	srv := tablestoretest.NewServer(t)
	svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), nil)
	if err != nil {
		t.Fatalf("service client: %v", err)
	}
	return srv, svc
}

// newTable creates a fresh table and returns its client.
func newTable(t *testing.T, svc *aztables.ServiceClient) *aztables.Client {
	t.Helper()
	name := fmt.Sprintf("compat%d", tableSeq.Add(1))
	c := svc.NewClient(name)
	if _, err := c.CreateTable(ctx(t), nil); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
	tableNames.Store(c, name)
	return c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// respErr asserts err is an *azcore.ResponseError with status and code.
func respErr(t *testing.T, err error, status int, code string) {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) {
		t.Fatalf("want *azcore.ResponseError %d %s, got %v", status, code, err)
	}
	if re.StatusCode != status || (code != "" && re.ErrorCode != code) {
		t.Fatalf("want %d %s, got %d %s (%v)", status, code, re.StatusCode, re.ErrorCode, err)
	}
}

// responseBody returns the raw body of a failed call's response.
func responseBody(t *testing.T, err error) string {
	t.Helper()
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.RawResponse == nil {
		t.Fatalf("no raw response in %v", err)
	}
	// azcore keeps the body readable after it builds the error.
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, rerr := re.RawResponse.Body.Read(buf)
		b.Write(buf[:n])
		if rerr != nil {
			break
		}
	}
	return b.String()
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }

func newServiceB(b *testing.B) (*tablestoretest.Server, *aztables.ServiceClient) {
	srv := tablestoretest.NewServer(b)
	svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), nil)
	if err != nil {
		b.Fatal(err)
	}
	return srv, svc
}

// seedDirect writes partition p (100 entities) straight into the store.
func seedDirect(b *testing.B, tb *tablestore.Table, p int) error {
	actions := make([]tablestore.TransactionAction, 100)
	for j := range actions {
		actions[j] = tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{
			PartitionKey: fmt.Sprintf("p%03d", p), RowKey: fmt.Sprintf("%03d", j),
			Properties: map[string]any{"Name": "entity", "N": int32(j), "F": 1.5}}}
	}
	return tb.SubmitTransaction(b.Context(), actions)
}
