package compat

import (
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/tablestoretest"
)

// inProcessService returns a service client that reaches srv through
// InProcessClient, with fast retries.
func inProcessService(t *testing.T, srv *tablestoretest.Server) *aztables.ServiceClient {
	t.Helper()
	svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{
			Transport: srv.InProcessClient(),
			Retry:     policy.RetryOptions{MaxRetries: 3, RetryDelay: time.Millisecond, MaxRetryDelay: 5 * time.Millisecond},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestTestkitInProcessAztables(t *testing.T) {
	srv := tablestoretest.NewServer(t)
	svc := inProcessService(t, srv)
	c := svc.NewClient("inproc")
	if _, err := c.CreateTable(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r", "N": 7}), nil); err != nil {
		t.Fatal(err)
	}
	got, err := c.GetEntity(ctx(t), "p", "r", nil)
	if err != nil {
		t.Fatal(err)
	}
	var e aztables.EDMEntity
	if err := e.UnmarshalJSON(got.Value); err != nil || e.Properties["N"] != int32(7) {
		t.Fatalf("entity %s (%v)", got.Value, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[2].Operation != "QueryEntity" || reqs[2].PartitionKey != "p" || reqs[2].Status != http.StatusOK {
		t.Fatalf("requests: %+v", reqs)
	}
}

func TestTestkitRetriesServerBusy(t *testing.T) {
	srv := tablestoretest.NewServer(t)
	svc := inProcessService(t, srv)
	c := svc.NewClient("busy")
	if _, err := c.CreateTable(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	srv.InjectFault(tablestoretest.Fault{Operation: "InsertEntity", Code: "ServerBusy", Times: 2, RetryAfter: new(time.Millisecond)})
	if _, err := c.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil); err != nil {
		t.Fatalf("the SDK did not retry through ServerBusy: %v", err)
	}
	var codes []string
	for _, r := range srv.Requests() {
		if r.Operation == "InsertEntity" {
			codes = append(codes, r.Code)
		}
	}
	if len(codes) != 3 || codes[0] != "ServerBusy" || codes[1] != "ServerBusy" || codes[2] != "" {
		t.Fatalf("InsertEntity attempts: %q", codes)
	}
}

func TestTestkitAmbiguousWrite(t *testing.T) {
	srv := tablestoretest.NewServer(t)
	svc := inProcessService(t, srv)
	c := svc.NewClient("ambiguous")
	if _, err := c.CreateTable(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	// The insert commits, the answer is lost, the SDK retries: the retry
	// finds the entity already there.
	srv.InjectFault(tablestoretest.Fault{Operation: "InsertEntity", Drop: tablestoretest.DropAfter, Times: 1})
	_, err := c.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "r"}), nil)
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.ErrorCode != "EntityAlreadyExists" {
		t.Fatalf("retried insert: %v", err)
	}
}

func TestTestkitClockDrivesSAS(t *testing.T) {
	srv := tablestoretest.NewServer(t)
	svc := inProcessService(t, srv)
	c := svc.NewClient("sasclock")
	if _, err := c.CreateTable(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	cred, err := aztables.NewSharedKeyCredential(srv.Account(), srv.Key())
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := aztables.NewClientWithSharedKey(srv.URL()+"/"+srv.Account()+"/sasclock", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	sasURL, err := keyed.GetTableSASURL(aztables.SASPermissions{Read: true}, now.Add(-time.Minute), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(sasURL)
	ro, err := aztables.NewClientWithNoCredential(srv.URL()+"/"+srv.Account()+"/sasclock?"+u.RawQuery, &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{Transport: srv.InProcessClient()},
	})
	if err != nil {
		t.Fatal(err)
	}
	list := func() error {
		_, err := ro.NewListEntitiesPager(nil).NextPage(ctx(t))
		return err
	}
	if err := list(); err != nil {
		t.Fatalf("within the window: %v", err)
	}
	srv.Clock().Advance(2 * time.Hour)
	respErr(t, list(), http.StatusForbidden, "AuthenticationFailed")
	srv.Clock().Advance(-2 * time.Hour)
	if err := list(); err != nil {
		t.Fatalf("back within the window: %v", err)
	}
}
