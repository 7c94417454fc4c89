// Command projection shows server-side projection: Query.Select and
// GetOptions.Select name the properties to return, so a query that needs
// one column does not decode or copy the others. PartitionKey, RowKey,
// Timestamp and ETag always come back.
package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

// payload estimates the bytes of the user properties an entity carries.
func payload(e *tablestore.Entity) int {
	n := 0
	for k, v := range e.Properties {
		n += len(k)
		switch v := v.(type) {
		case string:
			n += len(v)
		case []byte:
			n += len(v)
		default:
			n += 8
		}
	}
	return n
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "Employees")

	demo.Step("employees with a long biography and a photo thumbnail")
	for i := range 50 {
		props := map[string]any{
			"FirstName": fmt.Sprintf("First%d", i), "LastName": fmt.Sprintf("Last%d", i),
			"Email": fmt.Sprintf("e%03d@contoso.com", i), "Age": int32(20 + i%40),
			"Bio": strings.Repeat("experienced in sales. ", 1000), "Thumbnail": make([]byte, 16_000),
		}
		if i%10 == 0 {
			delete(props, "Email") // a few have no email on file
		}
		demo.NoErr(t.Insert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: fmt.Sprintf("%06d", i), Properties: props}), "insert")
	}

	demo.Step("all properties versus $select=Email")
	full := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales'"}, demo.PartitionScan)
	proj := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales'", Select: []string{"Email"}}, demo.PartitionScan)
	demo.Check(len(full) == 50 && len(proj) == 50, "read %d and %d entities, want 50 each", len(full), len(proj))
	fullBytes, projBytes := 0, 0
	for i := range full {
		fullBytes += payload(full[i])
		projBytes += payload(proj[i])
	}
	demo.Say("all properties: ~%d KB of values; only Email: ~%d KB", fullBytes/1000, projBytes/1000)
	demo.Check(projBytes*100 < fullBytes, "the projection returned %d of %d bytes", projBytes, fullBytes)

	demo.Step("each projected entity keeps its keys and ETag and holds at most Email")
	withEmail := 0
	for i, e := range proj {
		demo.Check(e.PartitionKey == "Sales" && e.RowKey == full[i].RowKey, "projected entity %d has keys %s/%s", i, e.PartitionKey, e.RowKey)
		demo.Check(e.ETag == full[i].ETag && !e.Timestamp.IsZero(), "projected %s lacks its ETag or Timestamp", e.RowKey)
		for name, v := range e.Properties {
			demo.Check(name == "Email", "projected %s carries %s", e.RowKey, name)
			if v != nil {
				demo.Check(v == full[i].Properties["Email"], "projected Email %v, stored %v", v, full[i].Properties["Email"])
				withEmail++
			}
		}
	}
	demo.Say("%d of 50 have an email; the others return no Email value", withEmail)
	demo.Check(withEmail == 45, "%d projected emails, want 45", withEmail)
	demo.Check(proj[0].Properties["Email"] == nil, "000000 has no email but the projection returned %v", proj[0].Properties["Email"])

	demo.Step("select several properties; the filter may use others")
	q := tablestore.Query{Filter: "PartitionKey eq 'Sales' and Age ge 55", Select: []string{"FirstName", "LastName"}}
	old := demo.All(ctx, t, q, demo.PartitionScan)
	for _, e := range old {
		keys := slices.Sorted(maps.Keys(e.Properties))
		demo.Check(slices.Equal(keys, []string{"FirstName", "LastName"}), "%s carries %v", e.RowKey, keys)
	}
	demo.Say("%d employees aged 55 or more, returned with just %v", len(old), q.Select)
	demo.Check(len(old) == 5, "%d employees aged 55+, want 5 (ids 35..39)", len(old))

	demo.Step("Get takes a projection too")
	e, err := t.Get(ctx, "Sales", "000007", &tablestore.GetOptions{Select: []string{"Age"}})
	demo.NoErr(err, "get with $select=Age")
	demo.Check(len(e.Properties) == 1 && e.Properties["Age"] == int32(27), "projected get returned %v", e.Properties)
	demo.Say("000007: %v", e.Properties)
	demo.Done()
}
