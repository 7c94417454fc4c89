package main

import (
	"context"
	"slices"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

// native stores the same employees once each, keyed by id, and lets a
// native secondary index do what the email_ copies do: a Partitioned
// Unique index on Email orders each department's employees by email and
// refuses a second employee with the same address. The entry is written
// in the same atomic commit as the entity, so no transaction pairs the
// copies and there is no second copy to keep in step.
func native(ctx context.Context, db *tablestore.DB, staff []employee) {
	demo.Step("native index: the same employees stored once, with an index on Email")
	t := demo.CreateTable(ctx, db, "EmployeesIndexed")
	if !demo.CreateIndex(ctx, t, tablestore.IndexSpec{Name: "ByEmail", Properties: []string{"Email"}, Partitioned: true, Unique: true}) {
		return
	}
	for _, e := range staff {
		demo.NoErr(t.Insert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: e.ID, Properties: e.props()}), "insert "+e.ID)
	}
	all := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales'"}, demo.PartitionScan)
	demo.Check(len(all) == len(staff), "partition holds %d entities, want %d", len(all), len(staff))
	demo.Say("partition Sales holds %d entities, one per employee", len(all))

	demo.Step("native index: look up by id (a point query) and by email (through the index)")
	byID := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and RowKey eq '000223'"}, demo.Point)
	demo.Check(len(byID) == 1, "lookup by id returned %d entities", len(byID))
	byMail := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and Email eq 'jonesj@contoso.com'"}, "ByEmail")
	demo.Check(len(byMail) == 1 && byMail[0].RowKey == "000223", "lookup by email returned %v", demo.RowKeys(byMail))

	demo.Step("native index: emails starting with 'a', in email order (Query.Index)")
	mails := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and Email ge 'a' and Email lt 'b'", Index: "ByEmail"}, "ByEmail")
	var got []string
	for _, e := range mails {
		got = append(got, e.Properties["Email"].(string))
	}
	demo.Say("emails: %v", got)
	demo.Check(slices.Equal(got, []string{"adamsa@contoso.com", "alvesa@contoso.com"}), "email range returned %v", got)

	demo.Step("native index: change an email with one merge; the index follows in the same commit")
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000223",
		Properties: map[string]any{"Email": "jo.jones@contoso.com"}}, tablestore.Merge, tablestore.ETagAny), "merge new email")
	old := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and Email eq 'jonesj@contoso.com'"}, "ByEmail")
	demo.Check(len(old) == 0, "the old email still finds %v", demo.RowKeys(old))
	cur := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and Email eq 'jo.jones@contoso.com'"}, "ByEmail")
	demo.Check(len(cur) == 1 && cur[0].RowKey == "000223", "the new email finds %v", demo.RowKeys(cur))

	demo.Step("native index: the unique index refuses an email already in use")
	err := t.Update(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000152",
		Properties: map[string]any{"Email": "bakere@contoso.com"}}, tablestore.Merge, tablestore.ETagAny)
	demo.WantErr(err, tablestore.ErrEntityAlreadyExists, "change 000152's email to one already in use")
	e := demo.Get(ctx, t, "Sales", "000152")
	demo.Check(e.Properties["Email"] == "jonesd@contoso.com", "000152's email changed to %v although the write failed", e.Properties["Email"])

	if demo.CheckStore(ctx, db) {
		demo.Say("Check finds the index and the table in agreement")
	}
}
