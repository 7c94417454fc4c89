package main

import (
	"context"
	"slices"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

// native keeps the same employees in their id partition only, with a
// table-wide Unique index on Email in place of the email_ partition. The
// index spans every partition, yet each entry is written in the entity's
// own atomic commit: an email change is one merge, readers never meet a
// stale entry, and there is nothing to order, retry or check.
func native(ctx context.Context, db *tablestore.DB, staff [][4]string) {
	demo.Step("native index: the same employees, one copy each, and a table-wide index on Email")
	t := demo.CreateTable(ctx, db, "EmployeesIndexed")
	if !demo.CreateIndex(ctx, t, tablestore.IndexSpec{Name: "ByEmail", Properties: []string{"Email"}, Unique: true}) {
		return
	}
	for i, s := range staff {
		demo.NoErr(t.Insert(ctx, primary("Sales", s[0], s[1], s[2], s[3], int32(30+i))), "insert "+s[0])
	}
	// Another department's partition: the index covers it too.
	demo.NoErr(t.Insert(ctx, primary("Marketing", "000400", "Kim", "Lee", "leek@contoso.com", 27)), "insert 000400")

	demo.Step("native index: look up by email across partitions")
	hits := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "Email eq 'jonesj@contoso.com'"}, "ByEmail")
	demo.Check(len(hits) == 1 && hits[0].RowKey == "000223", "lookup by email returned %v", demo.RowKeys(hits))
	demo.Say("jonesj@contoso.com -> %s %v %v, Age %v (the whole entity, no second read)", hits[0].RowKey,
		hits[0].Properties["FirstName"], hits[0].Properties["LastName"], hits[0].Properties["Age"])
	hits = demo.ViaIndex(ctx, t, tablestore.Query{Filter: "Email eq 'leek@contoso.com'"}, "ByEmail")
	demo.Check(len(hits) == 1 && hits[0].PartitionKey == "empid_Marketing", "lookup of leek@ returned %v", demo.RowKeys(hits))

	demo.Step("native index: emails starting with j, in email order (Query.Index)")
	mails := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "Email ge 'j' and Email lt 'k'", Index: "ByEmail"}, "ByEmail")
	demo.Check(slices.Equal(demo.RowKeys(mails), []string{"000152", "000223"}), "email range returned %v", demo.RowKeys(mails))

	demo.Step("native index: change an email in one step")
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: "empid_Sales", RowKey: "000223",
		Properties: map[string]any{"Email": "jo.jones@contoso.com"}}, tablestore.Merge, tablestore.ETagAny), "merge new email")
	old := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "Email eq 'jonesj@contoso.com'"}, "ByEmail")
	demo.Check(len(old) == 0, "the old email still finds %v", demo.RowKeys(old))
	cur := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "Email eq 'jo.jones@contoso.com'"}, "ByEmail")
	demo.Check(len(cur) == 1 && cur[0].RowKey == "000223", "the new email finds %v", demo.RowKeys(cur))

	demo.Step("native index: an address in use in another partition is refused")
	err := t.Insert(ctx, primary("Marketing", "000401", "Lee", "Kim", "jonesd@contoso.com", 31))
	demo.WantErr(err, tablestore.ErrEntityAlreadyExists, "insert a Marketing employee with a Sales employee's email")

	if demo.CheckStore(ctx, db) {
		demo.Say("Check finds the index and the table in agreement")
	}
}
