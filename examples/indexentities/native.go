package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

// native adds the same employees to a table with a Partitioned index on
// LastName instead of index entities. An add is one plain insert: its
// index entry is written in the same commit and no other writer's entry
// shares it, so there is no list to read, no ETag to race on and no retry.
func native(ctx context.Context, db *tablestore.DB) {
	demo.Step("native index: the same employees, with an index on LastName instead of index entities")
	t := demo.CreateTable(ctx, db, "EmployeesIndexed")
	if !demo.CreateIndex(ctx, t, tablestore.IndexSpec{Name: "ByLastName", Properties: []string{"LastName"}, Partitioned: true}) {
		return
	}
	add := func(id, first, last string) error {
		return t.Insert(ctx, &tablestore.Entity{PartitionKey: dept, RowKey: id,
			Properties: map[string]any{"FirstName": first, "LastName": last}})
	}
	for _, e := range [][3]string{{"000100", "Ana", "Alves"}, {"000152", "Don", "Jones"}, {"000223", "Jo", "Jones"},
		{"000300", "Liz", "Jones"}, {"000301", "Max", "Jones"}} {
		demo.NoErr(add(e[0], e[1], e[2]), "add "+e[0])
	}

	demo.Step("native index: every Jones in one query, whole entities, in key order")
	jones := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "PartitionKey eq '" + dept + "' and LastName eq 'Jones'"}, "ByLastName")
	demo.Check(slices.Equal(demo.RowKeys(jones), []string{"000152", "000223", "000300", "000301"}), "Jones are %v", demo.RowKeys(jones))
	for _, e := range jones {
		demo.Say("%s %v %v", e.RowKey, e.Properties["FirstName"], e.Properties["LastName"])
	}

	demo.Step("native index: eight concurrent writers add Smiths, each with one insert")
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = add(fmt.Sprintf("0004%02d", i), "Pat", "Smith") })
	}
	wg.Wait()
	demo.NoErr(errors.Join(errs...), "concurrent adds")
	smiths := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "PartitionKey eq '" + dept + "' and LastName eq 'Smith'"}, "ByLastName")
	demo.Check(len(smiths) == 8, "the index finds %d Smiths, want 8", len(smiths))

	demo.Step("native index: a name change moves the entry in the same commit")
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: dept, RowKey: "000300",
		Properties: map[string]any{"LastName": "Smith"}}, tablestore.Merge, tablestore.ETagAny), "rename 000300")
	jones = demo.ViaIndex(ctx, t, tablestore.Query{Filter: "PartitionKey eq '" + dept + "' and LastName eq 'Jones'"}, "ByLastName")
	demo.Check(len(jones) == 3 && !slices.Contains(demo.RowKeys(jones), "000300"), "Jones are %v after the rename", demo.RowKeys(jones))
	nobody := demo.ViaIndex(ctx, t, tablestore.Query{Filter: "PartitionKey eq '" + dept + "' and LastName eq 'Nobody'"}, "ByLastName")
	demo.Check(len(nobody) == 0, "an unknown name matched %v", demo.RowKeys(nobody))

	if demo.CheckStore(ctx, db) {
		demo.Say("Check finds the index and the table in agreement")
	}
}
