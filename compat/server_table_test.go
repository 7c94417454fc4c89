package compat

import (
	"fmt"
	"net/http"
	"sort"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

func TestServerTables(t *testing.T) {
	_, svc := newService(t)
	resp, err := svc.CreateTable(ctx(t), "Orders", nil)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if resp.TableName == nil || *resp.TableName != "Orders" {
		t.Fatalf("create: table name %v", resp.TableName)
	}
	_, err = svc.CreateTable(ctx(t), "orders", nil)
	respErr(t, err, http.StatusConflict, string(aztables.TableAlreadyExists))
	_, err = svc.CreateTable(ctx(t), "bad-name", nil)
	respErr(t, err, http.StatusBadRequest, "InvalidResourceName")
	_, err = svc.CreateTable(ctx(t), "ab", nil)
	respErr(t, err, http.StatusBadRequest, "OutOfRangeInput")
	_, err = svc.CreateTable(ctx(t), "tables", nil)
	respErr(t, err, http.StatusBadRequest, "InvalidInput")

	for i := 0; i < 7; i++ {
		if _, err := svc.CreateTable(ctx(t), fmt.Sprintf("t%02d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Paging through all tables two at a time.
	var names []string
	pages := 0
	pager := svc.NewListTablesPager(&aztables.ListTablesOptions{Top: to.Ptr[int32](2)})
	for pager.More() {
		p, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		pages++
		if len(p.Tables) > 2 {
			t.Fatalf("page of %d tables", len(p.Tables))
		}
		for _, tb := range p.Tables {
			names = append(names, *tb.Name)
		}
	}
	if len(names) != 8 || pages != 4 || !sort.SliceIsSorted(names, func(i, j int) bool { return names[i] < names[j] }) {
		t.Fatalf("listed %d tables in %d pages: %v", len(names), pages, names)
	}
	// A prefix range filter on TableName.
	pager = svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("TableName ge 't03' and TableName lt 't05'")})
	var got []string
	for pager.More() {
		p, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range p.Tables {
			got = append(got, *tb.Name)
		}
	}
	if fmt.Sprint(got) != "[t03 t04]" {
		t.Fatalf("filtered listing: %v", got)
	}

	if _, err := svc.DeleteTable(ctx(t), "ORDERS", nil); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = svc.DeleteTable(ctx(t), "Orders", nil)
	respErr(t, err, http.StatusNotFound, string(aztables.ResourceNotFound))
	// Entity operations on a missing table.
	_, err = svc.NewClient("Orders").AddEntity(ctx(t), mustJSON(t, map[string]any{"PartitionKey": "a", "RowKey": "b"}), nil)
	respErr(t, err, http.StatusNotFound, string(aztables.TableNotFound))
	_, err = svc.NewClient("Orders").GetEntity(ctx(t), "a", "b", nil)
	respErr(t, err, http.StatusNotFound, string(aztables.TableNotFound))
}

func TestServerServiceProperties(t *testing.T) {
	srv, svc := newService(t)
	props, err := svc.GetProperties(ctx(t), nil)
	if err != nil {
		t.Fatalf("get properties: %v", err)
	}
	if props.Logging == nil || props.HourMetrics == nil {
		t.Fatalf("properties: %+v", props)
	}
	props.Logging.Read = to.Ptr(true)
	if _, err := svc.SetProperties(ctx(t), props.ServiceProperties, nil); err != nil {
		t.Fatalf("set properties: %v", err)
	}
	props, err = svc.GetProperties(ctx(t), nil)
	if err != nil || props.Logging.Read == nil || !*props.Logging.Read {
		t.Fatalf("properties after set: %+v %v", props, err)
	}
	// Statistics exist on the secondary endpoint only, as on Azure.
	_, err = svc.GetStatistics(ctx(t), nil)
	respErr(t, err, http.StatusBadRequest, "InvalidQueryParameterValue")
	cred, err := aztables.NewSharedKeyCredential(srv.Account(), srv.Key())
	if err != nil {
		t.Fatal(err)
	}
	sec, err := aztables.NewServiceClientWithSharedKey(srv.URL()+"/"+srv.Account()+"-secondary", cred, nil)
	if err != nil {
		t.Fatal(err)
	}
	stats, err := sec.GetStatistics(ctx(t), nil)
	if err != nil || stats.GeoReplication == nil || stats.GeoReplication.LastSyncTime == nil {
		t.Fatalf("stats: %+v %v", stats, err)
	}
}
