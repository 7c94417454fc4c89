// Command heterogeneous shows how to work with heterogeneous entity types:
// one partition holds department and employee entities side by side (so a
// transaction can change both), each carrying an EntityType property and a
// RowKey prefix naming its kind. A query returns plain entities; the
// program resolves each into the Go struct of its type with
// UnmarshalEntity, and writes structs with MarshalEntity.
package main

import (
	"context"
	"fmt"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

// Department is the "department" entity type; its RowKey is "D_<name>".
type Department struct {
	PartitionKey, RowKey string
	ETag                 tablestore.ETag
	EntityType           string
	DepartmentName       string
	EmployeeCount        int32
}

// Employee is the "employee" entity type; its RowKey is "E_<id>".
type Employee struct {
	PartitionKey, RowKey string
	ETag                 tablestore.ETag
	EntityType           string
	FirstName, LastName  string
	Age                  int32
	Email                string `table:",omitempty"`
}

// resolve turns an entity into the struct its EntityType names.
func resolve(e *tablestore.Entity) (any, error) {
	switch kind, _ := e.Properties["EntityType"].(string); kind {
	case "department":
		var d Department
		return &d, tablestore.UnmarshalEntity(e, &d)
	case "employee":
		var emp Employee
		return &emp, tablestore.UnmarshalEntity(e, &emp)
	default:
		return nil, fmt.Errorf("%s/%s has unknown entity type %q", e.PartitionKey, e.RowKey, kind)
	}
}

// insertAction marshals a struct into an insert action.
func insertAction(v any) tablestore.TransactionAction {
	e, err := tablestore.MarshalEntity(v)
	demo.NoErr(err, fmt.Sprintf("marshal %T", v))
	return tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: e}
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "Company")

	demo.Step("a department and its employees in one partition, written from structs")
	actions := []tablestore.TransactionAction{insertAction(&Department{PartitionKey: "Sales", RowKey: "D_Sales",
		EntityType: "department", DepartmentName: "Sales", EmployeeCount: 3})}
	for i, name := range [][2]string{{"Ana", "Alves"}, {"Don", "Jones"}, {"Jo", "Jones"}} {
		actions = append(actions, insertAction(&Employee{PartitionKey: "Sales", RowKey: fmt.Sprintf("E_%06d", 100+i),
			EntityType: "employee", FirstName: name[0], LastName: name[1], Age: int32(30 + i),
			Email: fmt.Sprintf("%s@contoso.com", name[0])}))
	}
	demo.NoErr(t.SubmitTransaction(ctx, actions), "insert the Sales partition")

	demo.Step("read the whole partition and resolve each entity by its EntityType")
	var depts, emps int
	for _, e := range demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales'"}, demo.PartitionScan) {
		v, err := resolve(e)
		demo.NoErr(err, "resolve "+e.RowKey)
		switch v := v.(type) {
		case *Department:
			depts++
			demo.Say("%-9s Department{%s, %d employees}", e.RowKey, v.DepartmentName, v.EmployeeCount)
			demo.Check(v.EmployeeCount == 3 && v.ETag == e.ETag, "department resolved as %+v", *v)
		case *Employee:
			emps++
			demo.Say("%-9s Employee{%s %s, %d, %s}", e.RowKey, v.FirstName, v.LastName, v.Age, v.Email)
			demo.Check(v.RowKey == e.RowKey && v.FirstName != "" && v.Age >= 30, "employee resolved as %+v", *v)
		}
	}
	demo.Check(depts == 1 && emps == 3, "resolved %d departments and %d employees, want 1 and 3", depts, emps)

	demo.Step("the RowKey prefix selects one type with a range query")
	only := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq 'Sales' and RowKey ge 'E_' and RowKey lt 'F'"}, demo.Range)
	for _, e := range only {
		var emp Employee
		demo.NoErr(tablestore.UnmarshalEntity(e, &emp), "unmarshal "+e.RowKey)
		demo.Check(emp.EntityType == "employee", "%s is a %q", e.RowKey, emp.EntityType)
	}
	demo.Check(len(only) == 3, "the employee range returned %d entities", len(only))
	demo.Say("%d employees, no department", len(only))

	demo.Step("hire: insert an Employee and bump the Department's count in one transaction")
	var dept Department
	demo.NoErr(tablestore.UnmarshalEntity(demo.Get(ctx, t, "Sales", "D_Sales"), &dept), "read department")
	dept.EmployeeCount++
	de, err := tablestore.MarshalEntity(&dept)
	demo.NoErr(err, "marshal department")
	demo.NoErr(t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		insertAction(&Employee{PartitionKey: "Sales", RowKey: "E_000200", EntityType: "employee", FirstName: "Kim", LastName: "Lee", Age: 27}),
		{Type: tablestore.ActionUpdateReplace, Entity: de, IfMatch: dept.ETag},
	}), "hire Kim Lee")
	var kim Employee
	demo.NoErr(tablestore.UnmarshalEntity(demo.Get(ctx, t, "Sales", "E_000200"), &kim), "read Kim")
	_, hasEmail := demo.Get(ctx, t, "Sales", "E_000200").Properties["Email"]
	demo.Check(kim.FirstName == "Kim" && !hasEmail, "Kim read back as %+v (Email stored: %v)", kim, hasEmail)

	demo.Step("update without knowing the type: check the property exists, then merge")
	raw := demo.Get(ctx, t, "Sales", "D_Sales")
	count, ok := raw.Properties["EmployeeCount"].(int32)
	demo.Check(ok && count == 4, "EmployeeCount is %#v, want int32(4)", raw.Properties["EmployeeCount"])
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "D_Sales",
		Properties: map[string]any{"EmployeeCount": count + 1}}, tablestore.Merge, raw.ETag), "merge EmployeeCount")
	v, err := resolve(demo.Get(ctx, t, "Sales", "D_Sales"))
	demo.NoErr(err, "resolve department")
	d, ok := v.(*Department)
	demo.Check(ok && d.EmployeeCount == 5 && d.DepartmentName == "Sales", "department after merge: %+v", v)
	demo.Say("department now counts %d employees", d.EmployeeCount)

	demo.Step("an entity of an unknown type is reported, not guessed")
	demo.NoErr(t.Insert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: "X_1",
		Properties: map[string]any{"EntityType": "printer"}}), "insert a printer")
	_, err = resolve(demo.Get(ctx, t, "Sales", "X_1"))
	demo.Check(err != nil, "a printer entity resolved to a Go struct")
	demo.Say("resolve: %v", err)
	demo.Done()
}
