package azure_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/azure"
	"github.com/tablestore/tablestore/tablestoretest"
)

// fakeToken is an azcore.TokenCredential that counts the tokens asked of it.
type fakeToken struct{ asked int }

func (f *fakeToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	f.asked++
	return azcore.AccessToken{Token: "t", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestOpenEndpoint opens the remote driver with OpenEndpoint and each
// kind of credential against the in-process server: a shared key and an
// account SAS in the endpoint work end to end; a wrong key, no
// credential, or a token over plain http fail on first use with the
// service's or the SDK's refusal; a credential of another type and a
// malformed endpoint are InvalidInput at once.
func TestOpenEndpoint(t *testing.T) {
	ctx := context.Background()
	s := tablestoretest.NewServer(t)
	endpoint := s.URL() + "/" + s.Account()
	key, err := aztables.NewSharedKeyCredential(s.Account(), s.Key())
	if err != nil {
		t.Fatal(err)
	}

	roundTrip := func(t *testing.T, db *ts.DB, table string) {
		t.Helper()
		tb, err := db.CreateTable(ctx, table)
		if err != nil {
			t.Fatalf("create %s: %v", table, err)
		}
		if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"N": int32(7)}}); err != nil {
			t.Fatalf("insert: %v", err)
		}
		got, err := tb.Get(ctx, "p", "r", nil)
		if err != nil {
			t.Fatalf("get: %v", err)
		}
		if got.Properties["N"] != int32(7) {
			t.Fatalf("got N = %#v, want int32(7)", got.Properties["N"])
		}
		// The store behind the server holds what the driver wrote.
		direct, err := s.DB().Table(table).Get(ctx, "p", "r", nil)
		if err != nil || direct.Properties["N"] != int32(7) {
			t.Fatalf("the server's store has %v, %v", direct, err)
		}
	}
	open := func(t *testing.T, endpoint string, cred any) *ts.DB {
		t.Helper()
		db, err := azure.OpenEndpoint(endpoint, cred, nil)
		if err != nil {
			t.Fatalf("OpenEndpoint: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	refused := func(t *testing.T, db *ts.DB, want ts.Code) {
		t.Helper()
		_, err := db.CreateTable(ctx, "Refused")
		var e *ts.Error
		if !errors.As(err, &e) || e.Code != want {
			t.Fatalf("create: got %v, want code %s", err, want)
		}
		if _, err := s.DB().Table("Refused").Get(ctx, "p", "r", nil); !errors.Is(err, ts.ErrTableNotFound) {
			t.Fatalf("the refused create left a table behind: %v", err)
		}
	}

	t.Run("shared key", func(t *testing.T) {
		db := open(t, endpoint, key)
		roundTrip(t, db, "ByKey")
		// The extension endpoints too, under the account SAS the
		// credential signs: an index (a table's settings), a range
		// deletion and the size estimate.
		tb := db.Table("ByKey")
		if err := tb.CreateIndex(ctx, ts.IndexSpec{Name: "ByN", Properties: []string{"N"}}); err != nil {
			t.Fatalf("create index: %v", err)
		}
		if idx, err := s.DB().Table("ByKey").Indexes(ctx); err != nil || len(idx) != 1 || idx[0].Name != "ByN" {
			t.Fatalf("the server's store has indexes %+v, %v", idx, err)
		}
		if err := tb.Partition("p").DeleteAll(ctx); err != nil {
			t.Fatalf("delete the partition: %v", err)
		}
		if _, err := s.DB().Table("ByKey").Get(ctx, "p", "r", nil); !errors.Is(err, ts.ErrResourceNotFound) {
			t.Fatalf("after the range deletion the server's store has %v", err)
		}
		if stats, err := tb.Stats(ctx); err != nil || stats.Entities != 0 {
			t.Fatalf("stats: %+v, %v", stats, err)
		}
	})
	t.Run("account SAS in the endpoint", func(t *testing.T) {
		svc, err := aztables.NewServiceClientWithSharedKey(endpoint, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		sasURL, err := svc.GetAccountSASURL(
			aztables.AccountSASResourceTypes{Service: true, Container: true, Object: true},
			aztables.AccountSASPermissions{Read: true, Write: true, Delete: true, List: true, Add: true, Create: true, Update: true},
			time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		roundTrip(t, open(t, sasURL, nil), "BySAS")
	})
	t.Run("wrong key", func(t *testing.T) {
		wrong, err := aztables.NewSharedKeyCredential(s.Account(), "d3Jvbmcga2V5")
		if err != nil {
			t.Fatal(err)
		}
		refused(t, open(t, endpoint, wrong), "AuthenticationFailed")
	})
	t.Run("no credential", func(t *testing.T) {
		refused(t, open(t, endpoint, nil), "AuthenticationFailed")
	})
	t.Run("token over http", func(t *testing.T) {
		// The SDK sends bearer tokens only over https, so the request
		// fails before it leaves, without asking for a token.
		tok := &fakeToken{}
		db := open(t, endpoint, tok)
		if _, err := db.CreateTable(ctx, "Refused"); err == nil {
			t.Fatal("create with a token over http succeeded")
		}
		if tok.asked != 0 {
			t.Fatalf("a token was asked for %d times", tok.asked)
		}
		if _, err := s.DB().Table("Refused").Get(ctx, "p", "r", nil); !errors.Is(err, ts.ErrTableNotFound) {
			t.Fatalf("the refused create left a table behind: %v", err)
		}
	})
	for name, tc := range map[string]struct {
		endpoint string
		cred     any
	}{
		"credential of another type":     {endpoint, "key"},
		"malformed endpoint":             {"http://127.0.0.1:%zz/x", key},
		"endpoint without a scheme":      {"127.0.0.1:10002/devstoreaccount1", key},
		"endpoint of another scheme":     {"ftp://127.0.0.1/devstoreaccount1", key},
		"endpoint without a host":        {"http:///devstoreaccount1", nil},
		"SAS endpoint of another scheme": {"ftp://127.0.0.1/devstoreaccount1?sv=2019-02-02&sig=secret", nil},
	} {
		t.Run(name, func(t *testing.T) {
			db, err := azure.OpenEndpoint(tc.endpoint, tc.cred, nil)
			if !errors.Is(err, ts.ErrInvalidInput) {
				if db != nil {
					db.Close()
				}
				t.Fatalf("got %v, want InvalidInput", err)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("the message shows the signature: %v", err)
			}
		})
	}
}
