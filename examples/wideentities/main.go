// Command wideentities shows the wide entities pattern: an entity holds at
// most 252 properties, so a logical entity with a count for each of 365
// days is stored as two physical entities (RowKeys "01" and "02") in one
// partition, written together in one transaction and read back together.
package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

const days = 365
const split = 200 // days 1..200 go to RowKey "01", the rest to "02"

func dayProp(d int) string { return fmt.Sprintf("D%03d", d) }

// physical splits the logical entity's day counts over two entities.
func physical(pk string, counts []int32) (*tablestore.Entity, *tablestore.Entity) {
	a := &tablestore.Entity{PartitionKey: pk, RowKey: "01", Properties: map[string]any{}}
	b := &tablestore.Entity{PartitionKey: pk, RowKey: "02", Properties: map[string]any{}}
	for d := 1; d <= days; d++ {
		if d <= split {
			a.Properties[dayProp(d)] = counts[d-1]
		} else {
			b.Properties[dayProp(d)] = counts[d-1]
		}
	}
	return a, b
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "MessageStats")
	counts := make([]int32, days)
	for d := range counts {
		counts[d] = int32(d%24 + 1)
	}

	demo.Step("one entity cannot hold %d properties", days)
	all := &tablestore.Entity{PartitionKey: "000123", RowKey: "all", Properties: map[string]any{}}
	for d := 1; d <= days; d++ {
		all.Properties[dayProp(d)] = counts[d-1]
	}
	demo.WantErr(t.Insert(ctx, all), tablestore.ErrTooManyProperties, "insert 365 properties in one entity")

	demo.Step("two entities written in one transaction")
	a, b := physical("000123", counts)
	demo.Say("RowKey 01 holds %d properties, RowKey 02 holds %d", len(a.Properties), len(b.Properties))
	demo.NoErr(t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionInsert, Entity: a},
		{Type: tablestore.ActionInsert, Entity: b},
	}), "insert the two halves")

	demo.Step("the transaction is all or nothing: a bad second half stores no first half")
	c, d := physical("000124", counts)
	d.Properties["Extra"] = make([]byte, 70_000) // over the 64 KiB value limit
	err := t.SubmitTransaction(ctx, []tablestore.TransactionAction{
		{Type: tablestore.ActionInsert, Entity: c},
		{Type: tablestore.ActionInsert, Entity: d},
	})
	demo.WantErr(err, tablestore.ErrPropertyValueTooLarge, "insert halves of 000124 with an oversized value")
	var be *tablestore.BatchError
	demo.Check(errors.As(err, &be) && be.Index == 1, "want the failure at action 1, got %v", err)
	_, err = t.Get(ctx, "000124", "01", nil)
	demo.WantErr(err, tablestore.ErrResourceNotFound, "get the first half of 000124")

	demo.Step("read the logical entity back: one range query over the two RowKeys")
	parts := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq '000123' and RowKey ge '01' and RowKey le '02'"}, demo.Range)
	demo.Check(len(parts) == 2, "read %d physical entities, want 2", len(parts))
	merged := map[string]any{}
	for _, p := range parts {
		for k, v := range p.Properties {
			merged[k] = v
		}
	}
	demo.Say("logical entity has %d properties", len(merged))
	demo.Check(len(merged) == days, "logical entity has %d properties, want %d", len(merged), days)
	for d := 1; d <= days; d++ {
		demo.Check(merged[dayProp(d)] == counts[d-1], "%s = %v, want %d", dayProp(d), merged[dayProp(d)], counts[d-1])
	}

	demo.Step("a one-day change is a single merge on the half that holds the day")
	demo.NoErr(t.Update(ctx, &tablestore.Entity{PartitionKey: "000123", RowKey: "02",
		Properties: map[string]any{dayProp(300): int32(999)}}, tablestore.Merge, tablestore.ETagAny), "merge day 300")
	half := demo.Get(ctx, t, "000123", "02")
	demo.Check(half.Properties[dayProp(300)] == int32(999) && len(half.Properties) == days-split,
		"day 300 = %v with %d properties in the half", half.Properties[dayProp(300)], len(half.Properties))
	for d := split + 1; d <= days; d++ {
		demo.Check(d == 300 || half.Properties[dayProp(d)] == counts[d-1], "merge changed %s", dayProp(d))
	}
	demo.Say("D300 is now %v; the other %d days of the half are unchanged", half.Properties[dayProp(300)], len(half.Properties)-1)
	demo.Done()
}
