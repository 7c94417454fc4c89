package compat

import (
	"crypto/tls"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/tablestoretest"
)

// tlsClientOptions trusts srv's CA through a custom transport, the way
// a Go program supplies a private CA to azcore.
func tlsClientOptions(srv *tablestoretest.Server) *aztables.ClientOptions {
	return &aztables.ClientOptions{ClientOptions: policy.ClientOptions{
		Transport: srv.HTTPClient(),
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}}
}

// TestTLSConnectionString drives the SDK over https with a connection
// string naming DefaultEndpointsProtocol=https, the CA given through a
// custom transport: tables, entities, a query, a transaction and a SAS.
func TestTLSConnectionString(t *testing.T) {
	srv := tablestoretest.NewTLSServerWithOptions(t, nil)
	cs := srv.ConnectionString()
	if !strings.HasPrefix(cs, "DefaultEndpointsProtocol=https;") || !strings.Contains(cs, "TableEndpoint=https://127.0.0.1:") {
		t.Fatalf("connection string %q", cs)
	}
	svc, err := aztables.NewServiceClientFromConnectionString(cs, tlsClientOptions(srv))
	if err != nil {
		t.Fatal(err)
	}
	c := svc.NewClient("secure")
	if _, err := c.CreateTable(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "1", "N": 1}), nil); err != nil {
		t.Fatal(err)
	}
	actions := []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "2"})},
		{ActionType: aztables.TransactionTypeUpdateMerge, Entity: mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "1", "N": 2})},
	}
	if _, err := c.SubmitTransaction(ctx(t), actions, nil); err != nil {
		t.Fatal(err)
	}
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr(int32(1))})
	n := 0
	for pager.More() {
		page, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		n += len(page.Entities)
	}
	if n != 2 {
		t.Fatalf("%d entities", n)
	}
	got, err := c.GetEntity(ctx(t), "p", "1", nil)
	if err != nil || !strings.Contains(string(got.Value), `"N":2`) {
		t.Fatalf("%s %v", got.Value, err)
	}
	// Full metadata names the https service root.
	full := aztables.MetadataFormatFull
	got, err = c.GetEntity(ctx(t), "p", "1", &aztables.GetEntityOptions{Format: &full})
	if err != nil || !strings.Contains(string(got.Value), `"odata.id":"https://127.0.0.1:`) {
		t.Fatalf("%s %v", got.Value, err)
	}

	// A table SAS over https, spr=https.
	sasURL, err := c.GetTableSASURL(aztables.SASPermissions{Read: true}, time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sasURL, "https://") {
		t.Fatalf("SAS URL %s", sasURL)
	}
	u, err := url.Parse(sasURL)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := aztables.NewClientWithNoCredential(srv.URL()+"/"+srv.Account()+"/secure?"+u.RawQuery, tlsClientOptions(srv))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.GetEntity(ctx(t), "p", "2", nil); err != nil {
		t.Fatal(err)
	}
	_, err = sc.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "3"}), nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
}

// TestTLSUntrusted: a client that does not trust the CA fails the
// handshake, and plain http to the TLS port gets no table data.
func TestTLSUntrusted(t *testing.T) {
	srv := tablestoretest.NewTLSServerWithOptions(t, nil)
	svc, err := aztables.NewServiceClientFromConnectionString(srv.ConnectionString(), &aztables.ClientOptions{
		ClientOptions: policy.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1},
			Transport: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12}}}}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateTable(ctx(t), "nope", nil)
	var re *azcore.ResponseError
	if err == nil || errorsAs(err, &re) || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("untrusted CA: %v", err)
	}
	resp, err := http.Get(strings.Replace(srv.URL(), "https://", "http://", 1) + "/devstoreaccount1/Tables")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("plain http to the TLS port: %d", resp.StatusCode)
		}
	}
}
