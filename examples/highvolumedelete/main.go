// Command highvolumedelete shows the high-volume delete pattern: login
// attempts go to one table per day, so dropping a day is one DeleteTable
// instead of a scan plus one delete per entity. Here DeleteTable is a
// single range deletion, takes the same short time whatever the table
// holds, and the name can be created again at once (Azure makes you wait).
package main

import (
	"context"
	"fmt"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

const perDay = 3000 // login attempts per day table

func dayTable(day time.Time) string { return "LoginAttempts" + day.Format("20060102") }

// fill writes perDay login attempts, spread over 30 user partitions, in
// transactions of 100 (one partition each).
func fill(ctx context.Context, t *tablestore.Table, day time.Time) {
	const users = 30
	for u := range users {
		var actions []tablestore.TransactionAction
		for i := range perDay / users {
			at := day.Add(time.Duration(i*users+u) * 17 * time.Second)
			actions = append(actions, tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{
				PartitionKey: fmt.Sprintf("user%02d", u), RowKey: at.Format("150405") + fmt.Sprintf("-%04d", i),
				Properties: map[string]any{"At": at, "Success": i%7 != 0}}})
		}
		demo.NoErr(t.SubmitTransaction(ctx, actions), "insert a day's attempts")
	}
}

// countQuery reads every entity of a table, decoding one small property.
var countQuery = tablestore.Query{Select: []string{"Success"}}

func count(ctx context.Context, t *tablestore.Table) int {
	n := 0
	for _, err := range t.Query(ctx, countQuery) {
		demo.NoErr(err, "count "+t.Name())
		n++
	}
	return n
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	first := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)

	demo.Step("three days of login attempts, one table per day")
	var days []time.Time
	for d := range 3 {
		day := first.AddDate(0, 0, d)
		days = append(days, day)
		t := demo.CreateTable(ctx, db, dayTable(day))
		if d == 0 {
			demo.Say("entities are counted with this query on each table:")
			demo.ExpectPlan(t, countQuery, demo.TableScan)
		}
		fill(ctx, t, day)
		n := count(ctx, t)
		demo.Say("%s holds %d entities", t.Name(), n)
		demo.Check(n == perDay, "%s holds %d entities, want %d", t.Name(), n, perDay)
	}

	demo.Step("without a table per day, finding old attempts means scanning every partition")
	demo.ExpectPlan(db.Table(dayTable(days[0])), tablestore.Query{Filter: "RowKey lt '120000'"}, demo.TableScan)

	demo.Step("drop the oldest day with one DeleteTable")
	oldest := dayTable(days[0])
	began := time.Now()
	demo.NoErr(db.DeleteTable(ctx, oldest), "delete "+oldest)
	demo.Say("DeleteTable(%s) removed %d entities in %v", oldest, perDay, time.Since(began).Round(time.Microsecond))
	_, err := db.Table(oldest).Get(ctx, "user00", "000000-0000", nil)
	demo.WantErr(err, tablestore.ErrTableNotFound, "read from the dropped table")
	for _, day := range days[1:] {
		n := count(ctx, db.Table(dayTable(day)))
		demo.Check(n == perDay, "%s lost entities: %d left", dayTable(day), n)
	}
	demo.Say("the other days are untouched")

	demo.Step("the name is free again at once, and the new table starts empty")
	again := demo.CreateTable(ctx, db, oldest)
	n := count(ctx, again)
	demo.Check(n == 0, "the recreated %s holds %d entities", oldest, n)
	demo.NoErr(again.Insert(ctx, &tablestore.Entity{PartitionKey: "user00", RowKey: "000000-0000",
		Properties: map[string]any{"Success": true}}), "insert into the recreated table")
	demo.Check(count(ctx, again) == 1, "the recreated table does not hold exactly the new entity")
	demo.Say("%s recreated, empty, and writable", oldest)

	demo.Step("a small table drops in about the same time")
	small := demo.CreateTable(ctx, db, "LoginAttemptsSmall")
	demo.NoErr(small.Insert(ctx, &tablestore.Entity{PartitionKey: "user00", RowKey: "x"}), "insert one")
	began = time.Now()
	demo.NoErr(db.DeleteTable(ctx, small.Name()), "delete the small table")
	demo.Say("DeleteTable of a 1-entity table took %v", time.Since(began).Round(time.Microsecond))

	page, err := db.ListTables(ctx, &tablestore.ListTablesOptions{Prefix: "LoginAttempts"})
	demo.NoErr(err, "list tables")
	demo.Say("tables now: %v", page.Names)
	demo.Check(len(page.Names) == 3, "want 3 day tables, got %v", page.Names)
	demo.Done()
}
