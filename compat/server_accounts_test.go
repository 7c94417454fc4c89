package compat

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/server"
)

// TestSecondaryStatistics: the SDK's GetStatistics against the
// ACCOUNT-secondary endpoint, signed with the account's key; a write
// there is refused.
func TestSecondaryStatistics(t *testing.T) {
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	key := base64.StdEncoding.EncodeToString([]byte("a key of the account"))
	h, err := server.NewAccounts([]server.Account{{Name: "first", Keys: []string{server.DevKey}, DB: db},
		{Name: "second", Keys: []string{key}, DB: db}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	cred, err := aztables.NewSharedKeyCredential("second", key)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := aztables.NewServiceClientWithSharedKey(ts.URL+"/second-secondary", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := sec.GetStatistics(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.GeoReplication == nil || st.GeoReplication.Status == nil || *st.GeoReplication.Status != aztables.GeoReplicationStatusLive {
		t.Fatalf("%+v", st)
	}
	_, err = sec.CreateTable(context.Background(), "onsecondary", nil)
	respErr(t, err, 403, "AuthorizationFailure")
	// The other account's key does not read this one's statistics.
	wrong, _ := aztables.NewSharedKeyCredential("second", server.DevKey)
	bad, _ := aztables.NewServiceClientWithSharedKey(ts.URL+"/second-secondary", wrong, nil)
	_, err = bad.GetStatistics(context.Background(), nil)
	respErr(t, err, 403, "AuthenticationFailed")
}
