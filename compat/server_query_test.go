package compat

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

// seed inserts n entities in partitions p0..p(parts-1).
func seed(t *testing.T, c *aztables.Client, n, parts int) {
	t.Helper()
	for i := 0; i < n; i++ {
		e := map[string]any{"PartitionKey": fmt.Sprintf("p%d", i%parts), "RowKey": fmt.Sprintf("r%04d", i),
			"N": i, "Even": i%2 == 0, "Name": fmt.Sprintf("name%d", i)}
		if _, err := c.AddEntity(ctx(t), mustJSON(t, e), nil); err != nil {
			t.Fatal(err)
		}
	}
}

func listAll(t *testing.T, c *aztables.Client, o *aztables.ListEntitiesOptions) (ents []aztables.EDMEntity, pages int) {
	t.Helper()
	pager := c.NewListEntitiesPager(o)
	for pager.More() {
		p, err := pager.NextPage(ctx(t))
		if err != nil {
			t.Fatalf("list entities: %v", err)
		}
		pages++
		for _, raw := range p.Entities {
			var e aztables.EDMEntity
			if err := e.UnmarshalJSON(raw); err != nil {
				t.Fatalf("decode %s: %v", raw, err)
			}
			ents = append(ents, e)
		}
		if pages > 1000 {
			t.Fatal("pager does not end")
		}
	}
	return ents, pages
}

func TestServerQuery(t *testing.T) {
	_, svc := newService(t)
	c := newTable(t, svc)
	seed(t, c, 50, 3)

	all, pages := listAll(t, c, nil)
	if len(all) != 50 || pages != 1 {
		t.Fatalf("all: %d entities in %d pages", len(all), pages)
	}
	for i := 1; i < len(all); i++ {
		a, b := all[i-1], all[i]
		if a.PartitionKey > b.PartitionKey || a.PartitionKey == b.PartitionKey && a.RowKey >= b.RowKey {
			t.Fatalf("order: %s/%s before %s/%s", a.PartitionKey, a.RowKey, b.PartitionKey, b.RowKey)
		}
	}
	// Paging with $top follows NextPartitionKey/NextRowKey across partitions.
	paged, pages := listAll(t, c, &aztables.ListEntitiesOptions{Top: to.Ptr[int32](7)})
	if len(paged) != 50 || pages != 8 {
		t.Fatalf("paged: %d entities in %d pages", len(paged), pages)
	}
	for i := range paged {
		if paged[i].RowKey != all[i].RowKey {
			t.Fatalf("paged order differs at %d", i)
		}
	}
	// Filters.
	for _, tc := range []struct {
		filter string
		want   int
	}{
		{"PartitionKey eq 'p1'", 17},
		{"PartitionKey eq 'p1' and N lt 10", 3},
		{"N ge 40 or Name eq 'name3'", 11},
		{"Even", 25},
		{"not Even", 25},
		{"RowKey gt 'r0045'", 4},
		{"Missing eq 1", 0},
		{"Missing ne 1", 0},
		{"not (Missing eq 1)", 50},
		{"N eq 5L", 0}, // an Int32 property against an Int64 literal is not comparable
		{"Name eq 'name7' and PartitionKey eq 'p1'", 1},
		// Boolean constants, folded; false is the health-check probe.
		{"false", 0},
		{"true", 50},
		{"(true and N lt 10) or false", 10},
		{"not (Even and false) and PartitionKey eq 'p0'", 17},
	} {
		got, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr(tc.filter), Top: to.Ptr[int32](4)})
		if len(got) != tc.want {
			t.Errorf("filter %q: %d entities, want %d", tc.filter, len(got), tc.want)
		}
	}
	// The Azure client libraries' health check lists tables with the
	// filter false: 200 and no table.
	tp := svc.NewListTablesPager(&aztables.ListTablesOptions{Filter: to.Ptr("false")})
	for tp.More() {
		p, err := tp.NextPage(ctx(t))
		if err != nil {
			t.Fatalf("list tables with filter false: %v", err)
		}
		if len(p.Tables) != 0 {
			t.Fatalf("list tables with filter false: %d tables", len(p.Tables))
		}
	}
	// $select returns the selected properties; a missing one is null.
	sel, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr("RowKey eq 'r0001'"), Select: to.Ptr("Name,Nope")})
	if len(sel) != 1 || sel[0].Properties["Name"] != "name1" || sel[0].Properties["N"] != nil {
		t.Fatalf("select: %+v", sel)
	}
	if _, ok := sel[0].Properties["Nope"]; !ok {
		t.Fatalf("select: a selected property the entity lacks should come back (as null): %+v", sel[0].Properties)
	}
	// Errors: syntax, unsupported features, bad $top.
	pager := c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("N eq")})
	_, err := pager.NextPage(ctx(t))
	respErr(t, err, http.StatusBadRequest, "InvalidInput")
	pager = c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Filter: to.Ptr("N eq Name")})
	_, err = pager.NextPage(ctx(t))
	respErr(t, err, http.StatusNotImplemented, "NotImplemented")
	pager = c.NewListEntitiesPager(&aztables.ListEntitiesOptions{Top: to.Ptr[int32](1001)})
	_, err = pager.NextPage(ctx(t))
	respErr(t, err, http.StatusBadRequest, "InvalidInput")
	// Every metadata level decodes.
	for _, f := range []aztables.MetadataFormat{aztables.MetadataFormatNone, aztables.MetadataFormatMinimal, aztables.MetadataFormatFull} {
		got, _ := listAll(t, c, &aztables.ListEntitiesOptions{Filter: to.Ptr("RowKey eq 'r0002'"), Format: to.Ptr(f)})
		if len(got) != 1 || got[0].Properties["Name"] != "name2" {
			t.Fatalf("format %s: %+v", f, got)
		}
		if f == aztables.MetadataFormatFull && (got[0].ID == "" || got[0].EditLink == "" || got[0].ETag == "") {
			t.Fatalf("full metadata missing: %+v", got[0])
		}
		if f == aztables.MetadataFormatNone && got[0].ETag != "" {
			t.Fatalf("no metadata carries an etag: %+v", got[0])
		}
	}
}
