// Command interpartitionindex shows the inter-partition secondary index
// pattern: employees live in partition "empid_<dept>" keyed by id, and a
// second, slimmer copy lives in partition "email_<dept>" keyed by email.
// Spreading the copies over partitions spreads the load, but one
// transaction can no longer cover both, so updates are ordered and
// idempotent and readers check the index against the primary copy. Then
// it does the same with a native table-wide secondary index (native.go),
// which is written atomically with each entity.
package main

import (
	"context"
	"slices"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

func primary(dept, id, first, last, email string, age int32) *tablestore.Entity {
	return &tablestore.Entity{PartitionKey: "empid_" + dept, RowKey: id, Properties: map[string]any{
		"FirstName": first, "LastName": last, "Email": email, "Age": age}}
}

// indexEntry is the email copy: no Age, since lookups by email never
// need it.
func indexEntry(dept, id, email string) *tablestore.Entity {
	return &tablestore.Entity{PartitionKey: "email_" + dept, RowKey: email, Properties: map[string]any{
		"EmployeeID": id}}
}

// findByEmail resolves an email through the index, then reads the primary
// copy and trusts the index entry only if the primary agrees: between the
// steps of an email change the index may point at a stale address.
func findByEmail(ctx context.Context, t *tablestore.Table, dept, email string) (*tablestore.Entity, bool) {
	q := tablestore.Query{Filter: "PartitionKey eq 'email_" + dept + "' and RowKey eq '" + email + "'"}
	hits := demo.All(ctx, t, q, demo.Point)
	if len(hits) == 0 {
		return nil, false
	}
	id, _ := hits[0].Properties["EmployeeID"].(string)
	e, err := t.Get(ctx, "empid_"+dept, id, nil)
	if err != nil {
		demo.WantErr(err, tablestore.ErrResourceNotFound, "read the primary copy of "+id)
		return nil, false
	}
	return e, e.Properties["Email"] == email
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "Employees")

	demo.Step("write each employee to two partitions")
	staff := [][4]string{
		{"000100", "Ana", "Alves", "alvesa@contoso.com"},
		{"000152", "Don", "Jones", "jonesd@contoso.com"},
		{"000199", "Ed", "Baker", "bakere@contoso.com"},
		{"000223", "Jo", "Jones", "jonesj@contoso.com"},
	}
	for i, s := range staff {
		// Upserts are idempotent: a writer that fails half-way just runs again.
		demo.NoErr(t.Upsert(ctx, primary("Sales", s[0], s[1], s[2], s[3], int32(30+i)), tablestore.Replace), "write primary "+s[0])
		demo.NoErr(t.Upsert(ctx, indexEntry("Sales", s[0], s[3]), tablestore.Replace), "write index "+s[3])
	}
	err := t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionUpsertReplace, Entity: primary("Sales", "000400", "Kim", "Lee", "leek@contoso.com", 27)},
		{Type: tablestore.ActionUpsertReplace, Entity: indexEntry("Sales", "000400", "leek@contoso.com")},
	})
	demo.WantErr(err, tablestore.ErrCommandsInBatchActOnDifferentPartitions, "one transaction over both partitions")

	demo.Step("point lookups through either partition")
	byID := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'empid_Sales' and RowKey eq '000223'"}, demo.Point)
	demo.Check(len(byID) == 1 && byID[0].Properties["Email"] == "jonesj@contoso.com", "lookup by id returned %d entities", len(byID))
	e, ok := findByEmail(ctx, t, "Sales", "jonesj@contoso.com")
	demo.Check(ok && e.RowKey == "000223", "lookup by email did not find 000223")
	demo.Say("jonesj@contoso.com -> %s %v %v, Age %v", e.RowKey, e.Properties["FirstName"], e.Properties["LastName"], e.Properties["Age"])
	slim := demo.Get(ctx, t, "email_Sales", "jonesj@contoso.com")
	_, hasAge := slim.Properties["Age"]
	demo.Check(!hasAge, "the index entry should not copy Age")

	demo.Step("ranges sorted by id, or by email")
	ids := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'empid_Sales' and RowKey ge '000100' and RowKey le '000199'"}, demo.Range)
	demo.Say("ids 000100..000199: %v", demo.RowKeys(ids))
	demo.Check(slices.Equal(demo.RowKeys(ids), []string{"000100", "000152", "000199"}), "id range returned %v", demo.RowKeys(ids))
	mails := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'email_Sales' and RowKey ge 'j' and RowKey lt 'k'"}, demo.Range)
	demo.Say("emails starting with j: %v", demo.RowKeys(mails))
	demo.Check(slices.Equal(demo.RowKeys(mails), []string{"jonesd@contoso.com", "jonesj@contoso.com"}), "email range returned %v", demo.RowKeys(mails))

	demo.Step("change an email in three idempotent steps; readers stay correct in between")
	// Step 1: add the new index entry.
	demo.NoErr(t.Upsert(ctx, indexEntry("Sales", "000223", "jo.jones@contoso.com"), tablestore.Replace), "add new index entry")
	_, ok = findByEmail(ctx, t, "Sales", "jo.jones@contoso.com")
	demo.Check(!ok, "the new address resolved before the primary copy changed")
	demo.Say("after step 1 the new address is not trusted yet (the primary still has the old one)")
	// Step 2: change the primary copy; from now on the new address resolves.
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: "empid_Sales", RowKey: "000223",
		Properties: map[string]any{"Email": "jo.jones@contoso.com"}}, tablestore.Merge, tablestore.ETagAny), "merge new email into primary")
	_, ok = findByEmail(ctx, t, "Sales", "jonesj@contoso.com")
	demo.Check(!ok, "the old address still resolved after the primary changed")
	e, ok = findByEmail(ctx, t, "Sales", "jo.jones@contoso.com")
	demo.Check(ok && e.RowKey == "000223", "the new address does not resolve after step 2")
	demo.Say("after step 2 the new address resolves and the stale entry is ignored")
	// Step 3: drop the stale entry; deleting twice is harmless.
	demo.NoErr(t.Delete(ctx, "email_Sales", "jonesj@contoso.com", tablestore.ETagAny), "delete old index entry")
	err = t.Delete(ctx, "email_Sales", "jonesj@contoso.com", tablestore.ETagAny)
	demo.WantErr(err, tablestore.ErrResourceNotFound, "delete the old index entry again (a retried step 3)")

	idx := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'email_Sales'"}, demo.PartitionScan)
	prim := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'empid_Sales'"}, demo.PartitionScan)
	demo.Say("index partition %v", demo.RowKeys(idx))
	demo.Check(len(idx) == len(prim) && len(prim) == len(staff), "%d index entries for %d employees", len(idx), len(prim))

	native(ctx, db, staff)
	demo.Done()
}
