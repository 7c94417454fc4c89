// Command intrapartitionindex shows the intra-partition secondary index
// pattern: each employee is stored twice in its department's partition,
// once under RowKey "empid_<id>" and once under "email_<address>", so both
// lookups are point queries. Entity group transactions keep the two copies
// consistent. Then it does the same with a native secondary index
// (native.go): one entity per employee and an index on Email.
package main

import (
	"context"
	"slices"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

type employee struct {
	ID, First, Last, Email string
	Age                    int32
}

func (e employee) props() map[string]any {
	return map[string]any{"EmployeeID": e.ID, "FirstName": e.First, "LastName": e.Last,
		"Email": e.Email, "Age": e.Age}
}

// hire inserts both copies of a new employee in one transaction.
func hire(ctx context.Context, t *tablestore.Table, dept string, e employee) error {
	return t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{PartitionKey: dept, RowKey: "empid_" + e.ID, Properties: e.props()}},
		{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{PartitionKey: dept, RowKey: "email_" + e.Email, Properties: e.props()}},
	})
}

// changeEmail moves the email copy to its new RowKey and updates the id
// copy, atomically. The ETags read first make the change fail if another
// writer changed either copy in between.
func changeEmail(ctx context.Context, t *tablestore.Table, dept, id, newEmail string) error {
	byID, err := t.Get(ctx, dept, "empid_"+id, nil)
	if err != nil {
		return err
	}
	oldEmail, _ := byID.Properties["Email"].(string)
	byEmail, err := t.Get(ctx, dept, "email_"+oldEmail, nil)
	if err != nil {
		return err
	}
	byID.Properties["Email"] = newEmail
	return t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionUpdateReplace, Entity: byID, IfMatch: byID.ETag},
		{Type: tablestore.ActionDelete, Entity: byEmail, IfMatch: byEmail.ETag},
		{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{PartitionKey: dept, RowKey: "email_" + newEmail, Properties: byID.Properties}},
	})
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "Employees")

	demo.Step("hire five Sales employees, two entities each, one transaction per employee")
	staff := []employee{
		{"000100", "Ana", "Alves", "alvesa@contoso.com", 34},
		{"000152", "Don", "Jones", "jonesd@contoso.com", 29},
		{"000199", "Ed", "Baker", "bakere@contoso.com", 41},
		{"000223", "Jo", "Jones", "jonesj@contoso.com", 38},
		{"000310", "Al", "Adams", "adamsa@contoso.com", 25},
	}
	for _, e := range staff {
		demo.NoErr(hire(ctx, t, "Sales", e), "hire "+e.ID)
	}
	all := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales'"}, demo.PartitionScan)
	demo.Say("partition Sales holds %d entities", len(all))
	demo.Check(len(all) == 2*len(staff), "partition holds %d entities, want %d", len(all), 2*len(staff))

	demo.Step("look up one employee by id and by email: both are point queries")
	byID := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and RowKey eq 'empid_000223'"}, demo.Point)
	byMail := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and RowKey eq 'email_jonesj@contoso.com'"}, demo.Point)
	demo.Check(len(byID) == 1 && len(byMail) == 1, "lookups returned %d and %d entities", len(byID), len(byMail))
	demo.Check(byID[0].Properties["Email"] == "jonesj@contoso.com" && byMail[0].Properties["EmployeeID"] == "000223",
		"the two copies disagree: %v / %v", byID[0].Properties, byMail[0].Properties)
	demo.Say("empid_000223 -> %v %v; email_jonesj@contoso.com -> id %v",
		byID[0].Properties["FirstName"], byID[0].Properties["LastName"], byMail[0].Properties["EmployeeID"])

	demo.Step("without the index, finding by email scans the partition")
	scan := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and Email eq 'jonesj@contoso.com'"}, demo.PartitionScan)
	demo.Check(len(scan) == 2, "scan by Email found %d entities (both copies), want 2", len(scan))

	demo.Step("ranges in either order: ids 000100..000199, emails starting with 'a'")
	ids := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and RowKey ge 'empid_000100' and RowKey le 'empid_000199'"}, demo.Range)
	demo.Say("ids: %v", demo.RowKeys(ids))
	demo.Check(slices.Equal(demo.RowKeys(ids), []string{"empid_000100", "empid_000152", "empid_000199"}),
		"id range returned %v", demo.RowKeys(ids))
	mails := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and RowKey ge 'email_a' and RowKey lt 'email_b'"}, demo.Range)
	demo.Say("emails: %v", demo.RowKeys(mails))
	demo.Check(slices.Equal(demo.RowKeys(mails), []string{"email_adamsa@contoso.com", "email_alvesa@contoso.com"}),
		"email range returned %v", demo.RowKeys(mails))

	demo.Step("change an email: update, delete and insert in one transaction")
	demo.NoErr(changeEmail(ctx, t, "Sales", "000223", "jo.jones@contoso.com"), "change email of 000223")
	e := demo.Get(ctx, t, "Sales", "empid_000223")
	demo.Check(e.Properties["Email"] == "jo.jones@contoso.com", "id copy has Email %v", e.Properties["Email"])
	demo.Get(ctx, t, "Sales", "email_jo.jones@contoso.com")
	_, err := t.Get(ctx, "Sales", "email_jonesj@contoso.com", nil)
	demo.WantErr(err, tablestore.ErrResourceNotFound, "get the old email copy")

	demo.Step("a change that cannot complete leaves both copies as they were")
	err = changeEmail(ctx, t, "Sales", "000152", "bakere@contoso.com") // taken by 000199
	demo.WantErr(err, tablestore.ErrEntityAlreadyExists, "change 000152's email to one already in use")
	e = demo.Get(ctx, t, "Sales", "empid_000152")
	demo.Check(e.Properties["Email"] == "jonesd@contoso.com", "id copy changed to %v although the transaction failed", e.Properties["Email"])
	demo.Get(ctx, t, "Sales", "email_jonesd@contoso.com")
	other := demo.Get(ctx, t, "Sales", "email_bakere@contoso.com")
	demo.Check(other.Properties["EmployeeID"] == "000199", "email_bakere now points at %v", other.Properties["EmployeeID"])
	demo.Say("000152 still has %v, and email_bakere@contoso.com still belongs to 000199", e.Properties["Email"])

	all = demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales'"}, demo.PartitionScan)
	demo.Check(len(all) == 2*len(staff), "partition holds %d entities, want %d", len(all), 2*len(staff))
	demo.Say("every employee still has exactly two copies (%d entities)", len(all))

	native(ctx, db, staff)
	demo.Done()
}
