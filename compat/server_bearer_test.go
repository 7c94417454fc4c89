package compat

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/golang-jwt/jwt/v5"
	"github.com/tablestore/tablestore/server"
	"github.com/tablestore/tablestore/tablestoretest"
)

const tokenIssuer = "https://sts.windows.net/11111111-2222-3333-4444-555555555555/"

// tokenMint signs tokens with a local RSA key and publishes it as a JWKS.
type tokenMint struct {
	key, other *rsa.PrivateKey
	jwks       []byte
}

func newTokenMint(t *testing.T) *tokenMint {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	o, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	jwks, _ := json.Marshal(map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1", "use": "sig",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}}})
	return &tokenMint{key: k, other: o, jwks: jwks}
}

// token returns a signed token; kind is one of valid, reader, expired,
// audience (a wrong audience) and signature (signed by another key).
func (m *tokenMint) token(t *testing.T, kind string) string {
	t.Helper()
	now := time.Now()
	c := jwt.MapClaims{"iss": tokenIssuer, "aud": "https://storage.azure.com", "exp": now.Add(time.Hour).Unix(),
		"nbf": now.Add(-time.Minute).Unix(), "iat": now.Unix(), "oid": "app-" + kind, "roles": []string{server.RoleTableDataContributor}}
	key := m.key
	switch kind {
	case "reader":
		c["roles"] = []string{server.RoleTableDataReader}
	case "expired":
		c["exp"] = now.Add(-time.Hour).Unix()
	case "audience":
		c["aud"] = "https://management.azure.com"
	case "signature":
		key = m.other
	}
	tk := jwt.NewWithClaims(jwt.SigningMethodRS256, c)
	tk.Header["kid"] = "k1"
	s, err := tk.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// staticCredential is an azcore.TokenCredential returning one token and
// recording the scopes asked for.
type staticCredential struct {
	token  string
	mu     sync.Mutex
	scopes []string
}

func (c *staticCredential) GetToken(_ context.Context, o policy.TokenRequestOptions) (azcore.AccessToken, error) {
	c.mu.Lock()
	c.scopes = append(c.scopes, o.Scopes...)
	c.mu.Unlock()
	return azcore.AccessToken{Token: c.token, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// TestBearerTokens drives the Go SDK with azcore.TokenCredential over
// TLS: a contributor's token does everything, a reader's reads but
// cannot write, and expired, wrong-audience and wrong-signature tokens
// are refused with 401 InvalidAuthenticationInfo and a challenge.
func TestBearerTokens(t *testing.T) {
	mint := newTokenMint(t)
	srv := tablestoretest.NewTLSServerWithOptions(t, &server.Options{Bearer: &server.Bearer{JWKS: mint.jwks, Issuers: []string{tokenIssuer}}})
	endpoint := srv.URL() + "/" + srv.Account()
	client := func(kind string) (*aztables.ServiceClient, *staticCredential) {
		cred := &staticCredential{token: mint.token(t, kind)}
		svc, err := aztables.NewServiceClient(endpoint, cred, tlsClientOptions(srv))
		if err != nil {
			t.Fatal(err)
		}
		return svc, cred
	}
	svc, cred := client("valid")
	if _, err := svc.CreateTable(ctx(t), "bytoken", nil); err != nil {
		t.Fatal(err)
	}
	if len(cred.scopes) == 0 || cred.scopes[0] != "https://storage.azure.com/.default" {
		t.Fatalf("scopes %v", cred.scopes)
	}
	tc := svc.NewClient("bytoken")
	if _, err := tc.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "1"}), nil); err != nil {
		t.Fatal(err)
	}
	actions := []aztables.TransactionAction{{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "2"})}}
	if _, err := tc.SubmitTransaction(ctx(t), actions, nil); err != nil {
		t.Fatal(err)
	}

	reader, _ := client("reader")
	rc := reader.NewClient("bytoken")
	if _, err := rc.GetEntity(ctx(t), "p", "1", nil); err != nil {
		t.Fatalf("reader reading: %v", err)
	}
	if _, err := reader.NewListTablesPager(nil).NextPage(ctx(t)); err != nil {
		t.Fatalf("reader listing: %v", err)
	}
	_, err := rc.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p", "RowKey": "3"}), nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = rc.DeleteEntity(ctx(t), "p", "1", nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = reader.DeleteTable(ctx(t), "bytoken", nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")

	for _, kind := range []string{"expired", "audience", "signature"} {
		bad, _ := client(kind)
		_, err := bad.NewClient("bytoken").GetEntity(ctx(t), "p", "1", nil)
		respErr(t, err, http.StatusUnauthorized, "InvalidAuthenticationInfo")
		var re *azcore.ResponseError
		if errorsAs(err, &re) && re.RawResponse.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: no WWW-Authenticate challenge", kind)
		}
	}
	// The data is as the contributor left it.
	pager := tc.NewListEntitiesPager(nil)
	page, err := pager.NextPage(ctx(t))
	if err != nil || len(page.Entities) != 2 {
		t.Fatalf("%d entities, %v", len(page.Entities), err)
	}
}

// TestPythonBearer: azure-data-tables with a get_token credential
// returning locally signed tokens.
func TestPythonBearer(t *testing.T) {
	py := pythonWithTables(t)
	mint := newTokenMint(t)
	srv := tablestoretest.NewTLSServerWithOptions(t, &server.Options{Bearer: &server.Bearer{JWKS: mint.jwks, Issuers: []string{tokenIssuer}}})
	runPython(t, py, "TABLES_CONNECTION_STRING="+srv.ConnectionString(), "TABLES_CA_FILE="+srv.TLS().CAFile,
		"TABLES_SCENARIOS=bearer_tokens",
		"TABLES_TOKEN_CONTRIBUTOR="+mint.token(t, "valid"), "TABLES_TOKEN_READER="+mint.token(t, "reader"),
		"TABLES_TOKEN_EXPIRED="+mint.token(t, "expired"), "TABLES_TOKEN_WRONG_AUDIENCE="+mint.token(t, "audience"),
		"TABLES_TOKEN_WRONG_SIGNATURE="+mint.token(t, "signature"))
}
