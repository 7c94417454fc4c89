package azure_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/server"
	"github.com/tablestore/tablestore/tablestoretest"
	"github.com/tablestore/tablestore/tablestoretest/modeltest"
)

// TestModelCosmos runs the model workload through the driver's Cosmos
// DB path (the emulator's localhost:8902 connection string, dialled to
// the Cosmos-flavored test server) with the differences the model
// cannot follow switched off: key order (the driver gives the service's
// order, as drivers.md says) and Storage's key limits (the model writes
// empty and long keys). Table names stay case-sensitive, a quirk the
// workload knows.
func TestModelCosmos(t *testing.T) {
	s := tablestoretest.NewCosmosServerWithOptions(t, &server.Cosmos{Order: server.OrderSorted, StorageLimits: true})
	cfg := remoteConfig(t, "Cosmos")
	cfg.Quirks.TableNameCase = true
	cfg.Advance = s.Clock().Advance
	addr := strings.TrimPrefix(s.URL(), "http://")
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	cs := "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey=" + s.Key() + ";TableEndpoint=http://localhost:8902/;"
	open := func(t *testing.T, _ func() time.Time) *ts.DB {
		db, err := azure.Open(cs, &azure.Options{Client: azcore.ClientOptions{Transport: &http.Client{Transport: tr}}})
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		return db
	}
	modeltest.Run(t, open, cfg)
}
