// Command denormalization shows the denormalization pattern: the
// department entity keeps a copy of its manager's details, so one point
// query returns everything a department page shows. The department and the
// manager's employee entity share a partition, so a transaction keeps the
// copy in step with the original.
package main

import (
	"context"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "Company")

	demo.Step("store employees and a department that copies its manager's details")
	manager := &tablestore.Entity{PartitionKey: "Sales", RowKey: "emp_000123", Properties: map[string]any{
		"FirstName": "Mia", "LastName": "Jones", "Email": "jonesm@contoso.com", "Phone": "425-555-0100"}}
	clerk := &tablestore.Entity{PartitionKey: "Sales", RowKey: "emp_000124", Properties: map[string]any{
		"FirstName": "Ben", "LastName": "Smith", "Email": "smithb@contoso.com", "Phone": "425-555-0101"}}
	department := &tablestore.Entity{PartitionKey: "Sales", RowKey: "department", Properties: map[string]any{
		"DepartmentName": "Sales", "EmployeeCount": int32(2),
		"ManagerID": "000123", "ManagerName": "Mia Jones", "ManagerEmail": "jonesm@contoso.com", "ManagerPhone": "425-555-0100"}}
	demo.NoErr(t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionInsert, Entity: manager},
		{Type: tablestore.ActionInsert, Entity: clerk},
		{Type: tablestore.ActionInsert, Entity: department},
	}), "insert the Sales partition")

	demo.Step("normalized: two round trips (department, then its manager)")
	dq := tablestore.Query{Filter: "PartitionKey eq 'Sales' and RowKey eq 'department'"}
	d := demo.All(ctx, t, dq, demo.Point)
	demo.Check(len(d) == 1, "department query returned %d entities", len(d))
	mgrID, _ := d[0].Properties["ManagerID"].(string)
	m := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and RowKey eq 'emp_" + mgrID + "'"}, demo.Point)
	demo.Check(len(m) == 1, "manager query returned %d entities", len(m))
	demo.Say("2 queries: manager %v %v, %v", m[0].Properties["FirstName"], m[0].Properties["LastName"], m[0].Properties["Phone"])

	demo.Step("denormalized: one point query has everything")
	d = demo.All(ctx, t, dq, demo.Point)
	demo.Say("1 query: %v managed by %v (%v, %v)", d[0].Properties["DepartmentName"],
		d[0].Properties["ManagerName"], d[0].Properties["ManagerEmail"], d[0].Properties["ManagerPhone"])
	demo.Check(d[0].Properties["ManagerPhone"] == m[0].Properties["Phone"], "the copy and the original disagree")

	demo.Step("the manager's phone changes: original and copy in one transaction")
	emp := demo.Get(ctx, t, "Sales", "emp_000123")
	dep := demo.Get(ctx, t, "Sales", "department")
	demo.NoErr(t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionUpdateMerge, IfMatch: emp.ETag, Entity: &tablestore.Entity{
			PartitionKey: "Sales", RowKey: "emp_000123", Properties: map[string]any{"Phone": "425-555-0199"}}},
		{Type: tablestore.ActionUpdateMerge, IfMatch: dep.ETag, Entity: &tablestore.Entity{
			PartitionKey: "Sales", RowKey: "department", Properties: map[string]any{"ManagerPhone": "425-555-0199"}}},
	}), "update phone and its copy")
	emp = demo.Get(ctx, t, "Sales", "emp_000123")
	dep = demo.Get(ctx, t, "Sales", "department")
	demo.Say("employee phone %v, department copy %v", emp.Properties["Phone"], dep.Properties["ManagerPhone"])
	demo.Check(emp.Properties["Phone"] == "425-555-0199" && dep.Properties["ManagerPhone"] == "425-555-0199",
		"phone %v, copy %v", emp.Properties["Phone"], dep.Properties["ManagerPhone"])

	demo.Step("a change based on a stale read fails as a whole: the copy never drifts")
	err := t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionUpdateMerge, IfMatch: dep.ETag, Entity: &tablestore.Entity{
			PartitionKey: "Sales", RowKey: "department", Properties: map[string]any{"ManagerEmail": "mia@contoso.com"}}},
		{Type: tablestore.ActionUpdateMerge, IfMatch: manager.ETag, Entity: &tablestore.Entity{ // ETag from the insert: stale
			PartitionKey: "Sales", RowKey: "emp_000123", Properties: map[string]any{"Email": "mia@contoso.com"}}},
	})
	demo.WantErr(err, tablestore.ErrUpdateConditionNotSatisfied, "update with the manager's stale ETag")
	dep = demo.Get(ctx, t, "Sales", "department")
	demo.Check(dep.Properties["ManagerEmail"] == "jonesm@contoso.com", "the department copy changed to %v", dep.Properties["ManagerEmail"])
	demo.Say("department copy still says %v", dep.Properties["ManagerEmail"])
	demo.Done()
}
