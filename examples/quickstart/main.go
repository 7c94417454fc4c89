// Command quickstart tours the library: open a store, create a table,
// insert, read, update, merge, upsert and delete entities, run queries and
// see their plans, and commit an atomic transaction.
//
//	go run ./examples/quickstart
package main

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

func main() {
	ctx := context.Background()

	demo.Step("open a store in a temporary directory")
	db, dir := demo.Open()
	demo.Say("store at %s", dir)

	demo.Step("create table Customers")
	customers := demo.CreateTable(ctx, db, "Customers")
	_, err := db.CreateTable(ctx, "customers")
	demo.WantErr(err, tablestore.ErrTableAlreadyExists, "create table customers (names ignore case)")

	demo.Step("insert an entity")
	joined := time.Date(2019, 3, 14, 9, 26, 53, 0, time.UTC)
	jeff := &tablestore.Entity{
		PartitionKey: "Smith",
		RowKey:       "Jeff",
		Properties: map[string]any{
			"Email":   "jeff@contoso.com",
			"Age":     int32(42),
			"Joined":  joined,
			"Balance": 120.5,
			"Active":  true,
		},
	}
	demo.NoErr(customers.Insert(ctx, jeff), "insert Smith/Jeff")
	demo.Check(jeff.ETag != "", "insert did not set the ETag")
	demo.Say("inserted Smith/Jeff, ETag %s", jeff.ETag)
	err = customers.Insert(ctx, &tablestore.Entity{PartitionKey: "Smith", RowKey: "Jeff"})
	demo.WantErr(err, tablestore.ErrEntityAlreadyExists, "insert Smith/Jeff again")

	demo.Step("get it back")
	got := demo.Get(ctx, customers, "Smith", "Jeff")
	demo.Say("%s/%s: %v", got.PartitionKey, got.RowKey, got.Properties)
	demo.Check(got.Properties["Age"] == int32(42), "Age = %#v, want int32(42)", got.Properties["Age"])
	demo.Check(got.Properties["Email"] == "jeff@contoso.com", "Email = %#v", got.Properties["Email"])
	tm, ok := got.Properties["Joined"].(time.Time)
	demo.Check(ok && tm.Equal(joined), "Joined = %#v, want %v", got.Properties["Joined"], joined)
	demo.Check(got.ETag == jeff.ETag, "ETag of the read %s differs from the insert's %s", got.ETag, jeff.ETag)

	demo.Step("update in Replace mode: only the given properties remain")
	repl := &tablestore.Entity{PartitionKey: "Smith", RowKey: "Jeff",
		Properties: map[string]any{"Email": "jeff.smith@contoso.com"}}
	demo.NoErr(customers.Update(ctx, repl, tablestore.Replace, got.ETag), "replace Smith/Jeff")
	got = demo.Get(ctx, customers, "Smith", "Jeff")
	demo.Say("after replace: %v", got.Properties)
	demo.Check(len(got.Properties) == 1 && got.Properties["Email"] == "jeff.smith@contoso.com",
		"after replace the properties are %v, want only the new Email", got.Properties)

	demo.Step("update in Merge mode: given properties change, others stay")
	merge := &tablestore.Entity{PartitionKey: "Smith", RowKey: "Jeff",
		Properties: map[string]any{"Phone": "425-555-0101"}}
	demo.NoErr(customers.Update(ctx, merge, tablestore.Merge, tablestore.ETagAny), "merge Smith/Jeff")
	got = demo.Get(ctx, customers, "Smith", "Jeff")
	demo.Say("after merge: %v", got.Properties)
	demo.Check(len(got.Properties) == 2 && got.Properties["Phone"] == "425-555-0101" &&
		got.Properties["Email"] == "jeff.smith@contoso.com", "after merge the properties are %v", got.Properties)

	demo.Step("an update with a stale ETag is refused")
	err = customers.Update(ctx, repl, tablestore.Merge, jeff.ETag)
	demo.WantErr(err, tablestore.ErrUpdateConditionNotSatisfied, "merge with the first insert's ETag")

	demo.Step("upsert inserts a missing entity, then updates it")
	ann := &tablestore.Entity{PartitionKey: "Jones", RowKey: "Ann", Properties: map[string]any{"Age": int32(31)}}
	demo.NoErr(customers.Upsert(ctx, ann, tablestore.Replace), "upsert Jones/Ann")
	ann.Properties = map[string]any{"Email": "ann@contoso.com"}
	demo.NoErr(customers.Upsert(ctx, ann, tablestore.Merge), "upsert-merge Jones/Ann")
	got = demo.Get(ctx, customers, "Jones", "Ann")
	demo.Say("Jones/Ann: %v", got.Properties)
	demo.Check(got.Properties["Age"] == int32(31) && got.Properties["Email"] == "ann@contoso.com",
		"Jones/Ann holds %v, want Age 31 and Email", got.Properties)

	demo.Step("an entity group transaction: all of it or nothing")
	var add []tablestore.TransactionAction
	for _, name := range []string{"Bob", "Carol", "Dave"} {
		add = append(add, tablestore.TransactionAction{Type: tablestore.ActionInsert,
			Entity: &tablestore.Entity{PartitionKey: "Brown", RowKey: name,
				Properties: map[string]any{"Age": int32(20 + len(name))}}})
	}
	demo.NoErr(customers.SubmitTransaction(ctx, add), "transaction inserting 3 Browns")
	demo.Say("inserted Brown/Bob, Brown/Carol, Brown/Dave atomically")
	bad := []tablestore.TransactionAction{
		{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{PartitionKey: "Brown", RowKey: "Eve"}},
		{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{PartitionKey: "Brown", RowKey: "Bob"}},
	}
	err = customers.SubmitTransaction(ctx, bad)
	demo.WantErr(err, tablestore.ErrEntityAlreadyExists, "transaction inserting Eve and Bob again")
	var be *tablestore.BatchError
	demo.Check(errors.As(err, &be) && be.Index == 1, "want a *BatchError at index 1, got %v", err)
	demo.Say("the failing action is index %d", be.Index)
	_, err = customers.Get(ctx, "Brown", "Eve", nil)
	demo.WantErr(err, tablestore.ErrResourceNotFound, "get Brown/Eve (its insert was rolled back)")

	demo.Step("queries and their plans")
	browns := demo.All(ctx, customers, tablestore.Query{Filter: "PartitionKey eq 'Brown'"}, demo.PartitionScan)
	demo.Say("Brown partition: %v", demo.RowKeys(browns))
	demo.Check(len(browns) == 3, "Brown partition holds %d entities, want 3", len(browns))
	point := demo.All(ctx, customers, tablestore.Query{Filter: "PartitionKey eq 'Brown' and RowKey eq 'Carol'"}, demo.Point)
	demo.Check(len(point) == 1 && point[0].RowKey == "Carol", "point query returned %v", demo.RowKeys(point))
	rng := demo.All(ctx, customers, tablestore.Query{Filter: "PartitionKey eq 'Brown' and RowKey ge 'C'"}, demo.Range)
	demo.Check(len(rng) == 2, "range query returned %v, want Carol and Dave", demo.RowKeys(rng))
	older := demo.All(ctx, customers, tablestore.Query{Filter: "Age ge 25"}, demo.TableScan)
	for _, e := range older {
		demo.Say("Age ge 25: %s/%s Age=%v", e.PartitionKey, e.RowKey, e.Properties["Age"])
	}
	demo.Check(len(older) == 2, "Age ge 25 matched %d entities, want 2 (Carol 25, Ann 31)", len(older))
	plan, err := customers.Plan(ctx, tablestore.Query{Filter: "PartitionKey eq 'Brown' and Age gt 23"})
	demo.NoErr(err, "plan")
	demo.Say("Plan(PartitionKey eq 'Brown' and Age gt 23) says:")
	for _, line := range strings.Split(strings.TrimSpace(plan.String()), "\n") {
		demo.Say("  | %s", line)
	}

	demo.Step("delete")
	demo.NoErr(customers.Delete(ctx, "Smith", "Jeff", tablestore.ETagAny), "delete Smith/Jeff")
	_, err = customers.Get(ctx, "Smith", "Jeff", nil)
	demo.WantErr(err, tablestore.ErrResourceNotFound, "get Smith/Jeff after delete")

	demo.Step("list and delete tables")
	page, err := db.ListTables(ctx, nil)
	demo.NoErr(err, "list tables")
	demo.Say("tables: %v", page.Names)
	demo.Check(len(page.Names) == 1 && page.Names[0] == "Customers", "tables = %v, want [Customers]", page.Names)
	demo.NoErr(db.DeleteTable(ctx, "Customers"), "delete table")
	_, err = customers.Get(ctx, "Jones", "Ann", nil)
	demo.WantErr(err, tablestore.ErrTableNotFound, "get from the deleted table")

	demo.Done()
}
