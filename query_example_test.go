package tablestore_test

import (
	"context"
	"fmt"

	"github.com/tablestore/tablestore"
)

// A plan's String shows how a query runs: here a RowKey range inside
// one partition, with the non-key condition evaluated on each entity in it.
func ExampleQueryPlan_String() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	people, err := db.CreateTable(ctx, "People")
	if err != nil {
		panic(err)
	}
	plan, err := people.Plan(ctx, tablestore.Query{
		Filter: "PartitionKey eq 'Sales' and RowKey ge 'A' and RowKey lt 'B' and Age gt 30",
	})
	if err != nil {
		panic(err)
	}
	fmt.Print(plan.String())
	// Output:
	// plan: range
	// ranges:
	//   PartitionKey = 'Sales', 'A' <= RowKey < 'B'
	// residual: Age gt 30
}

// Plan gives the kind programmatically. A disjunction of point terms is
// a few point reads, where Azure would scan the partition.
func ExampleTable_Plan() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	people, err := db.CreateTable(ctx, "People")
	if err != nil {
		panic(err)
	}
	for _, f := range []string{
		"PartitionKey eq 'Sales' and RowKey eq '2'",
		"PartitionKey eq 'Sales' and (RowKey eq '121' or RowKey eq '322')",
		"PartitionKey eq 'Sales' and RowKey ge 'S' and RowKey lt 'T'",
		"PartitionKey eq 'Sales' and LastName eq 'Smith'",
		"LastName eq 'Jones'",
		"PartitionKey eq 'Sales' and PartitionKey eq 'HR'",
	} {
		p, err := people.Plan(ctx, tablestore.Query{Filter: f})
		if err != nil {
			panic(err)
		}
		fmt.Printf("%-15s %d range(s)  %s\n", p.Kind, len(p.Ranges), f)
	}
	// Output:
	// point           1 range(s)  PartitionKey eq 'Sales' and RowKey eq '2'
	// point           2 range(s)  PartitionKey eq 'Sales' and (RowKey eq '121' or RowKey eq '322')
	// range           1 range(s)  PartitionKey eq 'Sales' and RowKey ge 'S' and RowKey lt 'T'
	// partition scan  1 range(s)  PartitionKey eq 'Sales' and LastName eq 'Smith'
	// table scan      1 range(s)  LastName eq 'Jones'
	// empty           0 range(s)  PartitionKey eq 'Sales' and PartitionKey eq 'HR'
}

// Continuation tokens can be built from Azure's NextPartitionKey and
// NextRowKey, and a page exposes its own as that pair.
func ExampleContinuationFromNext() {
	ctx := context.Background()
	db, err := tablestore.OpenInMemory(nil)
	if err != nil {
		panic(err)
	}
	defer db.Close()
	t, err := db.CreateTable(ctx, "Items")
	if err != nil {
		panic(err)
	}
	for _, rk := range []string{"a", "b", "c", "d"} {
		if err := t.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: rk}); err != nil {
			panic(err)
		}
	}
	tok, err := tablestore.ContinuationFromNext("p", "b")
	if err != nil {
		panic(err)
	}
	page, err := t.QueryPage(ctx, tablestore.Query{Top: 2, Continuation: tok})
	if err != nil {
		panic(err)
	}
	for _, e := range page.Entities {
		fmt.Println(e.PartitionKey, e.RowKey)
	}
	fmt.Printf("next: (%s, %s)\n", page.NextPartitionKey(), page.NextRowKey())
	// Output:
	// p b
	// p c
	// next: (p, d)
}
