// Command compoundkey shows the compound key pattern: yearly review
// entities live in the employee's partition under RowKeys
// "empid_<id>_<year>", so one point query returns one year's review, one
// range query returns an employee with all reviews, and a transaction can
// change an employee and a review together.
package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

func reviewKey(id string, year int) string { return fmt.Sprintf("empid_%s_%d", id, year) }

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "Employees")

	demo.Step("employees with yearly reviews under compound RowKeys")
	for _, id := range []string{"000122", "000123", "000124"} {
		actions := []tablestore.TransactionAction{{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{
			PartitionKey: "Sales", RowKey: "empid_" + id, Properties: map[string]any{"Name": "employee " + id}}}}
		for year := 2012; year <= 2014; year++ {
			actions = append(actions, tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{
				PartitionKey: "Sales", RowKey: reviewKey(id, year), Properties: map[string]any{
					"ManagerRating": int32(year - 2009), "PeerRating": int32(3), "Comments": fmt.Sprintf("%s in %d", id, year)}}})
		}
		demo.NoErr(t.SubmitTransaction(ctx, actions), "insert employee "+id+" and reviews")
	}

	demo.Step("one year's review of one employee: a point query")
	one := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and RowKey eq '" + reviewKey("000123", 2013) + "'"}, demo.Point)
	demo.Check(len(one) == 1 && one[0].Properties["ManagerRating"] == int32(4), "2013 review: %v", demo.RowKeys(one))
	demo.Say("%s: manager rating %v, %q", one[0].RowKey, one[0].Properties["ManagerRating"], one[0].Properties["Comments"])

	demo.Step("every review of 000123: a range query, only the columns needed")
	// '`' is the character after '_', so the range is every key starting with "empid_000123_".
	q := tablestore.Query{
		Filter: "PartitionKey eq 'Sales' and RowKey ge 'empid_000123_' and RowKey lt 'empid_000123`'",
		Select: []string{"ManagerRating", "PeerRating", "Comments"},
	}
	reviews := demo.All(ctx, t, q, demo.Range)
	for _, r := range reviews {
		demo.Say("%s manager=%v peer=%v", r.RowKey, r.Properties["ManagerRating"], r.Properties["PeerRating"])
	}
	want := []string{reviewKey("000123", 2012), reviewKey("000123", 2013), reviewKey("000123", 2014)}
	demo.Check(slices.Equal(demo.RowKeys(reviews), want), "reviews of 000123: %v", demo.RowKeys(reviews))

	demo.Step("the employee with all reviews, as the guide writes it: RowKey ge 'empid_000123' and lt 'empid_000124'")
	both := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and RowKey ge 'empid_000123' and RowKey lt 'empid_000124'"}, demo.Range)
	demo.Say("%v", demo.RowKeys(both))
	demo.Check(len(both) == 4 && both[0].RowKey == "empid_000123", "employee plus reviews: %v", demo.RowKeys(both))

	demo.Step("a new review and a change to the employee commit together")
	demo.NoErr(t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{PartitionKey: "Sales", RowKey: reviewKey("000123", 2015),
			Properties: map[string]any{"ManagerRating": int32(5), "PeerRating": int32(4), "Comments": "promoted"}}},
		{Type: tablestore.ActionUpdateMerge, IfMatch: tablestore.ETagAny, Entity: &tablestore.Entity{PartitionKey: "Sales",
			RowKey: "empid_000123", Properties: map[string]any{"Title": "Senior Sales Rep", "LastReviewYear": int32(2015)}}},
	}), "add 2015 review and promote")
	emp := demo.Get(ctx, t, "Sales", "empid_000123")
	demo.Check(emp.Properties["Title"] == "Senior Sales Rep" && emp.Properties["LastReviewYear"] == int32(2015),
		"employee after promotion: %v", emp.Properties)
	reviews = demo.All(ctx, t, q, demo.Range)
	demo.Check(len(reviews) == 4, "000123 now has %d reviews, want 4", len(reviews))
	demo.Say("000123 is now %v with %d reviews", emp.Properties["Title"], len(reviews))
	demo.Done()
}
