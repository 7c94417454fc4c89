package compat

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/tablestore/tablestore/tablestoretest"
)

func TestServerAccessPolicy(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	got, err := c.GetAccessPolicy(ctx(t), nil)
	if err != nil || len(got.SignedIdentifiers) != 0 {
		t.Fatalf("empty policy list: %+v %v", got, err)
	}
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	expiry := start.Add(48 * time.Hour)
	acl := []*aztables.SignedIdentifier{
		{ID: to.Ptr("readers"), AccessPolicy: &aztables.AccessPolicy{Start: &start, Expiry: &expiry, Permission: to.Ptr("r")}},
		{ID: to.Ptr("writers"), AccessPolicy: &aztables.AccessPolicy{Permission: to.Ptr("raud")}},
	}
	if _, err := c.SetAccessPolicy(ctx(t), &aztables.SetAccessPolicyOptions{TableACL: acl}); err != nil {
		t.Fatalf("set policy: %v", err)
	}
	got, err = c.GetAccessPolicy(ctx(t), nil)
	if err != nil || len(got.SignedIdentifiers) != 2 {
		t.Fatalf("get policy: %+v %v", got, err)
	}
	r := got.SignedIdentifiers[0]
	if *r.ID != "readers" || !r.AccessPolicy.Start.Equal(start) || !r.AccessPolicy.Expiry.Equal(expiry) || *r.AccessPolicy.Permission != "r" {
		t.Fatalf("policy round trip: %+v %+v", *r.ID, *r.AccessPolicy)
	}
	var six []*aztables.SignedIdentifier
	for i := 0; i < 6; i++ {
		six = append(six, &aztables.SignedIdentifier{ID: to.Ptr(strings.Repeat("x", i+1)), AccessPolicy: &aztables.AccessPolicy{Permission: to.Ptr("r")}})
	}
	_, err = c.SetAccessPolicy(ctx(t), &aztables.SetAccessPolicyOptions{TableACL: six})
	if err == nil {
		t.Fatal("six policies accepted")
	}
	_, err = svc.NewClient("nosuchtable").GetAccessPolicy(ctx(t), nil)
	respErr(t, err, http.StatusNotFound, "")
}

// serviceSAS signs a service SAS by hand: the Go SDK signs key ranges but
// leaves them out of the query string.
func serviceSAS(t *testing.T, srv *tablestoretest.Server, table, sp, si string, ranges [4]string) string {
	t.Helper()
	v := url.Values{}
	v.Set("sv", "2019-02-02")
	v.Set("tn", strings.ToLower(table))
	se := ""
	if si == "" {
		se = time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04:05Z")
		v.Set("sp", sp)
		v.Set("se", se)
	} else {
		v.Set("si", si)
	}
	names := [4]string{"spk", "srk", "epk", "erk"}
	for i, r := range ranges {
		if r != "" {
			v.Set(names[i], r)
		}
	}
	toSign := strings.Join([]string{v.Get("sp"), "", se, "/table/" + srv.Account() + "/" + strings.ToLower(table), si, "", "", "2019-02-02",
		ranges[0], ranges[1], ranges[2], ranges[3]}, "\n")
	key, _ := base64.StdEncoding.DecodeString(srv.Key())
	m := hmac.New(sha256.New, key)
	m.Write([]byte(toSign))
	v.Set("sig", base64.StdEncoding.EncodeToString(m.Sum(nil)))
	return v.Encode()
}

func sasClient(t *testing.T, srv *tablestoretest.Server, table, query string) *aztables.Client {
	t.Helper()
	c, err := aztables.NewClientWithNoCredential(srv.URL()+"/"+srv.Account()+"/"+table+"?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestServerServiceSAS(t *testing.T) {
	srv, svc := newService(t)
	c := newTable(t, svc)
	seed(t, c, 9, 3) // p0 p1 p2, r0000..r0008

	// The SDK's own SAS URL (no key range).
	cred, err := aztables.NewSharedKeyCredential(srv.Account(), srv.Key())
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := aztables.NewClientWithSharedKey(srv.URL()+"/"+srv.Account()+"/"+tableName(c), cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	sasURL, err := keyed.GetTableSASURL(aztables.SASPermissions{Read: true}, time.Now().UTC().Add(-time.Minute), time.Now().UTC().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(sasURL)
	ro := sasClient(t, srv, tableName(c), u.RawQuery)
	if _, err := ro.GetEntity(ctx(t), "p0", "r0000", nil); err != nil {
		t.Fatalf("read with r: %v", err)
	}
	ents, _ := listAll(t, ro, nil)
	if len(ents) != 9 {
		t.Fatalf("query with r: %d entities", len(ents))
	}
	_, err = ro.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "x"}), nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = ro.DeleteEntity(ctx(t), "p0", "r0000", nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")

	// A tampered signature fails.
	bad := sasClient(t, srv, tableName(c), strings.Replace(u.RawQuery, "sp=r", "sp=raud", 1))
	_, err = bad.GetEntity(ctx(t), "p0", "r0000", nil)
	respErr(t, err, http.StatusForbidden, "AuthenticationFailed")

	// Key range p1..p2/r0004: reads filtered, writes outside refused.
	rq := serviceSAS(t, srv, tableName(c), "raud", "", [4]string{"p1", "", "p2", "r0004"})
	ranged := sasClient(t, srv, tableName(c), rq)
	ents, _ = listAll(t, ranged, nil)
	var keys []string
	for _, e := range ents {
		keys = append(keys, e.PartitionKey+"/"+e.RowKey)
	}
	if strings.Join(keys, " ") != "p1/r0001 p1/r0004 p1/r0007 p2/r0002" {
		t.Fatalf("ranged query: %v", keys)
	}
	ents, _ = listAll(t, ranged, &aztables.ListEntitiesOptions{Filter: to.Ptr("N ge 4 or PartitionKey eq 'p0'")})
	if len(ents) != 2 {
		t.Fatalf("ranged filtered query: %d entities", len(ents))
	}
	_, err = ranged.GetEntity(ctx(t), "p0", "r0000", nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = ranged.GetEntity(ctx(t), "p2", "r0005", nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	if _, err := ranged.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p1", "RowKey": "new"}), nil); err != nil {
		t.Fatalf("insert in range: %v", err)
	}
	_, err = ranged.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p3", "RowKey": "new"}), nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	// Each operation of a batch is checked.
	_, err = ranged.SubmitTransaction(ctx(t), []aztables.TransactionAction{
		{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p2", "RowKey": "r0000a"})},
		{ActionType: aztables.TransactionTypeAdd, Entity: mustJSON(t, map[string]any{"PartitionKey": "p2", "RowKey": "r0009"})},
	}, nil)
	if body := responseBody(t, err); !strings.Contains(body, "HTTP/1.1 403") || !strings.Contains(body, `"value":"1:`) {
		t.Fatalf("batch outside range:\n%s", body)
	}
	if _, err := c.GetEntity(ctx(t), "p2", "r0000a", nil); err == nil {
		t.Fatal("a refused batch wrote an entity")
	}

	// Stored access policy: si takes permissions and expiry from the ACL;
	// removing the policy revokes the signature.
	exp := time.Now().UTC().Add(time.Hour)
	if _, err := c.SetAccessPolicy(ctx(t), &aztables.SetAccessPolicyOptions{TableACL: []*aztables.SignedIdentifier{
		{ID: to.Ptr("ro"), AccessPolicy: &aztables.AccessPolicy{Expiry: &exp, Permission: to.Ptr("r")}},
	}}); err != nil {
		t.Fatal(err)
	}
	pol := sasClient(t, srv, tableName(c), serviceSAS(t, srv, tableName(c), "", "ro", [4]string{}))
	if _, err := pol.GetEntity(ctx(t), "p0", "r0000", nil); err != nil {
		t.Fatalf("read through policy: %v", err)
	}
	_, err = pol.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "y"}), nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	if _, err := c.SetAccessPolicy(ctx(t), nil); err != nil {
		t.Fatal(err)
	}
	_, err = pol.GetEntity(ctx(t), "p0", "r0000", nil)
	respErr(t, err, http.StatusForbidden, "AuthenticationFailed")

	// A service SAS cannot list tables.
	tsvc, err := aztables.NewServiceClientWithNoCredential(srv.URL()+"/"+srv.Account()+"?"+u.RawQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tsvc.NewListTablesPager(nil).NextPage(ctx(t))
	respErr(t, err, http.StatusForbidden, "")
}

func TestServerAccountSAS(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	seed(t, c, 3, 1)
	sasURL, err := svc.GetAccountSASURL(aztables.AccountSASResourceTypes{Container: true, Object: true},
		aztables.AccountSASPermissions{Read: true, List: true, Add: true, Create: true},
		time.Now().UTC().Add(-time.Minute), time.Now().UTC().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	asvc, err := aztables.NewServiceClientWithNoCredential(sasURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := asvc.CreateTable(ctx(t), "viaaccountsas", nil); err != nil {
		t.Fatalf("create table with account SAS: %v", err)
	}
	p, err := asvc.NewListTablesPager(nil).NextPage(ctx(t))
	if err != nil || len(p.Tables) != 2 {
		t.Fatalf("list tables with account SAS: %+v %v", p, err)
	}
	ac := asvc.NewClient(tableName(c))
	if _, err := ac.GetEntity(ctx(t), "p0", "r0000", nil); err != nil {
		t.Fatalf("read with account SAS: %v", err)
	}
	if _, err := ac.AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "p0", "RowKey": "z"}), nil); err != nil {
		t.Fatalf("add with account SAS: %v", err)
	}
	_, err = ac.DeleteEntity(ctx(t), "p0", "z", nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = asvc.DeleteTable(ctx(t), "viaaccountsas", nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationPermissionMismatch")
	_, err = asvc.GetProperties(ctx(t), nil)
	respErr(t, err, http.StatusForbidden, "AuthorizationResourceTypeMismatch")
}

func TestServerSharedKeyChecks(t *testing.T) {
	srv, _ := newService(t)
	// A wrong key fails.
	cred, _ := aztables.NewSharedKeyCredential(srv.Account(), base64.StdEncoding.EncodeToString([]byte("not the key")))
	svc, err := aztables.NewServiceClientWithSharedKey(srv.URL()+"/"+srv.Account(), cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.CreateTable(ctx(t), "nope", nil)
	respErr(t, err, http.StatusForbidden, "AuthenticationFailed")
	// No credentials at all fail.
	anon, _ := aztables.NewServiceClientWithNoCredential(srv.URL()+"/"+srv.Account(), nil)
	_, err = anon.CreateTable(ctx(t), "nope", nil)
	respErr(t, err, http.StatusForbidden, "AuthenticationFailed")
}

func tableName(c *aztables.Client) string {
	n, _ := tableNames.Load(c)
	return n.(string)
}
