package orders

import (
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/tablestoretest"
)

func TestInsertRetriedThroughServerBusy(t *testing.T) {
	srv := tablestoretest.NewServer(t) // closed by t.Cleanup
	svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(),
		&aztables.ClientOptions{ClientOptions: policy.ClientOptions{
			Transport: srv.InProcessClient(), // no socket
			// Retries for tests: waits of RetryDelay * 2**n, jittered, at most
			// MaxRetryDelay (azcore's defaults are 800 ms and 60 s).
			Retry: policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond},
		}})
	if err != nil {
		t.Fatal(err)
	}
	orders := svc.NewClient("orders")
	if _, err := orders.CreateTable(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	srv.InjectFault(tablestoretest.Fault{Operation: "InsertEntity", Code: "ServerBusy", Times: 2})
	if _, err := orders.AddEntity(t.Context(), []byte(`{"PartitionKey":"alice","RowKey":"1","Total":30}`), nil); err != nil {
		t.Fatal(err)
	}
	var statuses []int
	for _, r := range srv.Requests() {
		statuses = append(statuses, r.Status)
	}
	if want := []int{201, 503, 503, 201}; !slices.Equal(statuses, want) {
		t.Fatalf("statuses %v, want %v", statuses, want)
	}
}
