// Command paging shows how to read many entities: QueryPage returns at
// most Top entities and a continuation token; passing the token back reads
// the next page, even from another process, since the token holds the
// position itself. A page can hold fewer than Top entities (even none)
// and still carry a token, so loop until the token is empty. The Query
// iterator does that loop for you.
package main

import (
	"context"
	"fmt"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

const partitions, perPartition = 5, 400

func main() {
	ctx := context.Background()
	dir := demo.TempDir()
	// A small per-page scan budget makes selective queries return short
	// pages, as a large table would.
	opts := &tablestore.Options{PageScanLimit: 250}
	db, err := tablestore.Open(dir, opts)
	demo.NoErr(err, "open store")
	demo.Defer(func() { db.Close() })
	t := demo.CreateTable(ctx, db, "Orders")

	demo.Step("load %d orders in %d partitions", partitions*perPartition, partitions)
	for p := range partitions {
		for start := 0; start < perPartition; start += 100 {
			var actions []tablestore.TransactionAction
			for i := start; i < start+100; i++ {
				actions = append(actions, tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: &tablestore.Entity{
					PartitionKey: fmt.Sprintf("customer%d", p), RowKey: fmt.Sprintf("order%05d", i),
					Properties: map[string]any{"Amount": int32(i % 97), "Rush": i%50 == 0}}})
			}
			demo.NoErr(t.SubmitTransaction(ctx, actions), "load orders")
		}
	}

	demo.Step("read the whole table, 300 entities per page")
	q := tablestore.Query{Top: 300}
	demo.ExpectPlan(t, q, demo.TableScan)
	var pages, total int
	var lastKey string
	for {
		page, err := t.QueryPage(ctx, q)
		demo.NoErr(err, "read a page")
		pages++
		demo.Check(len(page.Entities) <= 300, "page %d holds %d entities, more than Top", pages, len(page.Entities))
		for _, e := range page.Entities {
			key := e.PartitionKey + "\x00" + e.RowKey
			demo.Check(key > lastKey, "page %d: %s/%s is out of order or repeated", pages, e.PartitionKey, e.RowKey)
			lastKey = key
			total++
		}
		demo.Say("page %d: %d entities, more: %v", pages, len(page.Entities), page.Continuation != "")
		if page.Continuation == "" {
			break
		}
		q.Continuation = page.Continuation
	}
	demo.Check(total == partitions*perPartition, "read %d entities, want %d", total, partitions*perPartition)
	demo.Check(pages >= (total+299)/300, "read %d entities in only %d pages of 300", total, pages)

	demo.Step("a saved token resumes after the store is closed and reopened")
	cq := tablestore.Query{Filter: "PartitionKey eq 'customer2'", Top: 150}
	demo.ExpectPlan(t, cq, demo.PartitionScan)
	first, err := t.QueryPage(ctx, cq)
	demo.NoErr(err, "read first page of customer2")
	token := first.Continuation
	demo.Check(token != "", "customer2 has %d orders; the first page of 150 should leave a token", perPartition)
	demo.NoErr(db.Close(), "close store")
	db, err = tablestore.Open(dir, opts)
	demo.NoErr(err, "reopen store")
	demo.Defer(func() { db.Close() })
	t = db.Table("Orders")
	rest := 0
	next := tablestore.Query{Filter: "PartitionKey eq 'customer2'", Top: 150, Continuation: token}
	demo.ExpectPlan(t, next, demo.PartitionScan)
	for {
		page, err := t.QueryPage(ctx, next)
		demo.NoErr(err, "read with the saved token")
		if rest == 0 && len(page.Entities) > 0 {
			last := first.Entities[len(first.Entities)-1].RowKey
			demo.Check(page.Entities[0].RowKey > last, "resumed at %s, not after %s", page.Entities[0].RowKey, last)
		}
		rest += len(page.Entities)
		if next.Continuation = page.Continuation; next.Continuation == "" {
			break
		}
	}
	demo.Say("first page %d, the rest %d after reopening", len(first.Entities), rest)
	demo.Check(len(first.Entities)+rest == perPartition, "read %d+%d orders of customer2, want %d", len(first.Entities), rest, perPartition)

	demo.Step("a selective filter: pages may be short, even empty, yet carry a token")
	sel := tablestore.Query{Filter: "Rush eq true", Top: 10}
	demo.ExpectPlan(t, sel, demo.TableScan)
	var rush, short, empty int
	for {
		page, err := t.QueryPage(ctx, sel)
		demo.NoErr(err, "read a page of rush orders")
		rush += len(page.Entities)
		if page.Continuation == "" {
			break
		}
		if len(page.Entities) < 10 {
			short++
		}
		if len(page.Entities) == 0 {
			empty++
		}
		sel.Continuation = page.Continuation
	}
	demo.Say("%d rush orders; %d pages shorter than Top before the end (%d empty)", rush, short, empty)
	demo.Check(rush == partitions*perPartition/50, "found %d rush orders, want %d", rush, partitions*perPartition/50)
	// A scan budget of 250 entities meets at most 5 rush orders, so pages
	// end on the budget before they fill up.
	demo.Check(short > 0, "no page ended early although each may examine only %d entities", opts.PageScanLimit)

	demo.Step("the iterator walks every page; breaking out early is fine")
	n := 0
	iq := tablestore.Query{Filter: "Rush eq true", Top: 10}
	demo.ExpectPlan(t, iq, demo.TableScan)
	for e, err := range t.Query(ctx, iq) {
		demo.NoErr(err, "iterate rush orders")
		demo.Check(e.Properties["Rush"] == true, "%s/%s is not a rush order", e.PartitionKey, e.RowKey)
		n++
	}
	demo.Check(n == rush, "the iterator found %d rush orders, the page loop %d", n, rush)
	seen := 0
	demo.ExpectPlan(t, tablestore.Query{}, demo.TableScan)
	for _, err := range t.Query(ctx, tablestore.Query{}) {
		demo.NoErr(err, "iterate")
		if seen++; seen == 10 {
			break
		}
	}
	demo.Say("iterator: %d rush orders; a second loop stopped after %d entities", n, seen)

	demo.Step("Top must be 1..1000")
	_, err = t.QueryPage(ctx, tablestore.Query{Top: 1001})
	demo.WantErr(err, tablestore.ErrInvalidInput, "a page of 1001")
	demo.Done()
}
