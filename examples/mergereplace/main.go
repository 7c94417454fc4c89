// Command mergereplace shows the difference between the two update modes:
// Merge changes the properties it is given and keeps the rest; Replace
// stores exactly the properties it is given. A nil value removes a
// property under Replace and is ignored under Merge. Upsert and the
// transaction actions take the same two modes.
package main

import (
	"context"
	"maps"
	"slices"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

func names(e *tablestore.Entity) []string { return slices.Sorted(maps.Keys(e.Properties)) }

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "Employees")
	reset := func(rk string) {
		demo.NoErr(t.Upsert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: rk, Properties: map[string]any{
			"FirstName": "Jo", "LastName": "Jones", "Age": int32(38), "Email": "jonesj@contoso.com"}}, tablestore.Replace), "reset "+rk)
	}
	change := map[string]any{"Email": "jo@contoso.com", "Phone": "425-555-0101"}

	demo.Step("start: FirstName, LastName, Age, Email")
	reset("000223")
	demo.Say("%v", names(demo.Get(ctx, t, "Sales", "000223")))

	demo.Step("Update with Merge: Email changes, Phone is added, the rest stays")
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000223", Properties: maps.Clone(change)},
		tablestore.Merge, tablestore.ETagAny), "merge")
	e := demo.Get(ctx, t, "Sales", "000223")
	demo.Say("%v", e.Properties)
	demo.Check(slices.Equal(names(e), []string{"Age", "Email", "FirstName", "LastName", "Phone"}), "after merge: %v", names(e))
	demo.Check(e.Properties["Email"] == "jo@contoso.com" && e.Properties["Age"] == int32(38), "after merge: %v", e.Properties)

	demo.Step("Update with Replace: only Email and Phone remain")
	reset("000223")
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000223", Properties: maps.Clone(change)},
		tablestore.Replace, tablestore.ETagAny), "replace")
	e = demo.Get(ctx, t, "Sales", "000223")
	demo.Say("%v", e.Properties)
	demo.Check(slices.Equal(names(e), []string{"Email", "Phone"}), "after replace: %v", names(e))

	demo.Step("a nil value: ignored by Merge, dropped by Replace")
	reset("000223")
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000223", Properties: map[string]any{"Age": nil, "Phone": "1"}},
		tablestore.Merge, tablestore.ETagAny), "merge with nil Age")
	e = demo.Get(ctx, t, "Sales", "000223")
	demo.Check(e.Properties["Age"] == int32(38) && e.Properties["Phone"] == "1", "merge with nil Age: %v", e.Properties)
	demo.Say("merge with Age=nil keeps Age: %v", e.Properties["Age"])
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000223", Properties: map[string]any{"Age": nil, "Phone": "1"}},
		tablestore.Replace, tablestore.ETagAny), "replace with nil Age")
	e = demo.Get(ctx, t, "Sales", "000223")
	demo.Check(slices.Equal(names(e), []string{"Phone"}), "replace with nil Age: %v", names(e))
	demo.Say("replace with Age=nil leaves %v", names(e))

	demo.Step("Upsert takes the same modes, and inserts when the entity is missing")
	demo.NoErr(t.Upsert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000300", Properties: maps.Clone(change)},
		tablestore.Merge), "upsert-merge a missing entity")
	e = demo.Get(ctx, t, "Sales", "000300")
	demo.Check(slices.Equal(names(e), []string{"Email", "Phone"}), "upsert-merge of a missing entity: %v", names(e))
	reset("000300")
	demo.NoErr(t.Upsert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "000300", Properties: map[string]any{"Age": int32(40)}},
		tablestore.Merge), "upsert-merge an existing entity")
	e = demo.Get(ctx, t, "Sales", "000300")
	demo.Check(len(e.Properties) == 4 && e.Properties["Age"] == int32(40), "upsert-merge of an existing entity: %v", e.Properties)
	demo.Say("upsert-merge kept %v and set Age to %v", names(e), e.Properties["Age"])

	demo.Step("in a transaction: UpdateMerge and UpdateReplace side by side")
	reset("000401")
	reset("000402")
	demo.NoErr(t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionUpdateMerge, IfMatch: tablestore.ETagAny,
			Entity: &tablestore.Entity{PartitionKey: "Sales", RowKey: "000401", Properties: maps.Clone(change)}},
		{Type: tablestore.ActionUpdateReplace, IfMatch: tablestore.ETagAny,
			Entity: &tablestore.Entity{PartitionKey: "Sales", RowKey: "000402", Properties: maps.Clone(change)}},
	}), "transaction")
	m, r := demo.Get(ctx, t, "Sales", "000401"), demo.Get(ctx, t, "Sales", "000402")
	demo.Say("merged: %v; replaced: %v", names(m), names(r))
	demo.Check(len(m.Properties) == 5 && len(r.Properties) == 2, "merged has %d properties, replaced %d", len(m.Properties), len(r.Properties))

	demo.Step("updating a missing entity fails in either mode; upsert does not")
	for _, mode := range []tablestore.UpdateMode{tablestore.Merge, tablestore.Replace} {
		err := t.Update(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "999999", Properties: change}, mode, tablestore.ETagAny)
		demo.WantErr(err, tablestore.ErrResourceNotFound, "update ("+mode.String()+") of a missing entity")
	}
	demo.Done()
}
