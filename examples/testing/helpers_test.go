package orders

import (
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/tablestoretest"
)

// newBook starts a server for the test and returns a Book over a fresh
// "orders" table, reached in process (no socket).
func newBook(t *testing.T) (*tablestoretest.Server, *Book) {
	t.Helper()
	srv := tablestoretest.NewServer(t)
	svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{
			Transport: srv.InProcessClient(),
			// Short backoff keeps retried tests fast (ServerBusy asks for
			// no wait); a Retry-After above MaxRetryDelay makes azcore
			// give up instead of waiting.
			Retry: policy.RetryOptions{RetryDelay: time.Millisecond, MaxRetryDelay: 100 * time.Millisecond},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("orders")
	if _, err := c.CreateTable(t.Context(), nil); err != nil {
		t.Fatal(err)
	}
	return srv, NewBook(c)
}
