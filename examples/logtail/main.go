// Command logtail shows the log tail pattern two ways. Azure's way:
// queries return entities in RowKey order and $top takes the first n, so
// a RowKey of "inverted ticks" (DateTime.MaxValue ticks minus the time's
// ticks, zero-padded to 19 digits) puts the newest entity first and a Top
// query reads the latest n. This store's way: keep a natural, ascending
// RowKey (the time itself) and read with Query.Reverse, which returns
// entities newest first from the same key ranges; pages resume downwards.
// The second way keeps RowKeys readable and serves oldest-first reads as
// well, but it does not run on Azure, whose remote driver refuses Reverse
// with NotImplemented.
package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

// maxTicks is .NET's DateTime.MaxValue.Ticks (9999-12-31T23:59:59.9999999).
const maxTicks = 3155378975999999999

// unixEpochTicks is the tick count of 1970-01-01T00:00:00Z.
const unixEpochTicks = 621355968000000000

// ticks returns t in 100 ns units since 0001-01-01T00:00:00Z UTC.
func ticks(t time.Time) int64 {
	return unixEpochTicks + t.Unix()*10_000_000 + int64(t.Nanosecond()/100)
}

// invertedTicks is the RowKey: later times give smaller keys.
func invertedTicks(t time.Time) string { return fmt.Sprintf("%019d", maxTicks-ticks(t)) }

// timeOf recovers the time from an inverted-ticks RowKey.
func timeOf(rowKey string) (time.Time, error) {
	inv, err := strconv.ParseInt(rowKey, 10, 64)
	if err != nil {
		return time.Time{}, err
	}
	tk := maxTicks - inv - unixEpochTicks
	return time.Unix(tk/10_000_000, (tk%10_000_000)*100).UTC(), nil
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "EmployeeExpense")

	demo.Step("an employee files 40 expense claims, one every 90 minutes")
	start := time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)
	var last time.Time
	for i := range 40 {
		at := start.Add(time.Duration(i) * 90 * time.Minute)
		last = at
		demo.NoErr(t.Insert(ctx, &tablestore.Entity{PartitionKey: "empid_000123", RowKey: invertedTicks(at),
			Properties: map[string]any{"Submitted": at, "Amount": float64(10 + i), "Claim": int32(i + 1)}}), "insert claim")
	}
	demo.Say("first claim %s, last claim %s", start.Format(time.RFC3339), last.Format(time.RFC3339))

	demo.Step("the ten newest claims: the first page of $top=10 on the partition")
	q := tablestore.Query{Filter: "PartitionKey eq 'empid_000123'", Top: 10}
	demo.ExpectPlan(t, q, demo.PartitionScan)
	page, err := t.QueryPage(ctx, q)
	demo.NoErr(err, "query the ten newest claims")
	demo.Check(len(page.Entities) == 10, "the page holds %d claims, want 10", len(page.Entities))
	demo.Check(page.Continuation != "", "a partition of 40 claims should leave a continuation after 10")
	for i, e := range page.Entities {
		at, err := timeOf(e.RowKey)
		demo.NoErr(err, "decode RowKey "+e.RowKey)
		sub, _ := e.Properties["Submitted"].(time.Time)
		demo.Say("%s -> %s claim #%v", e.RowKey, at.Format(time.RFC3339), e.Properties["Claim"])
		demo.Check(at.Equal(sub), "RowKey decodes to %v, Submitted is %v", at, sub)
		want := last.Add(-time.Duration(i) * 90 * time.Minute)
		demo.Check(at.Equal(want), "entry %d is from %v, want %v (newest first)", i, at, want)
	}

	demo.Step("claims since a moment: a RowKey range, still newest first")
	since := last.Add(-6 * time.Hour)
	rq := tablestore.Query{Filter: fmt.Sprintf("PartitionKey eq 'empid_000123' and RowKey le '%s'", invertedTicks(since))}
	recent := demo.All(ctx, t, rq, demo.Range)
	demo.Say("%d claims since %s", len(recent), since.Format(time.RFC3339))
	demo.Check(len(recent) == 5, "%d claims in the last six hours, want 5 (0, 1.5, 3, 4.5 and 6 hours ago)", len(recent))
	demo.Check(recent[0].Properties["Claim"] == int32(40), "the newest recent claim is #%v, want #40", recent[0].Properties["Claim"])

	demo.Step("the same claims with ascending RowKeys (the time itself) in another partition")
	p := t.Partition("empid_000124")
	for i := range 40 {
		at := start.Add(time.Duration(i) * 90 * time.Minute)
		demo.NoErr(p.Insert(ctx, &tablestore.Entity{RowKey: at.Format(time.RFC3339),
			Properties: map[string]any{"Submitted": at, "Amount": float64(10 + i), "Claim": int32(i + 1)}}), "insert claim")
	}

	demo.Step("the ten newest claims: a Reverse query on the partition, $top=10")
	rev := tablestore.Query{Top: 10, Reverse: true}
	page, err = p.QueryPage(ctx, rev)
	if errors.Is(err, tablestore.ErrNotImplemented) {
		// A remote Azure store cannot read backwards: there the
		// inverted-ticks RowKeys above are the way.
		demo.Say("this store cannot read in reverse (NotImplemented), as Azure cannot; the inverted-ticks way above is the one for it")
		demo.Done()
		return
	}
	demo.NoErr(err, "query the ten newest claims in reverse")
	plan, err := p.Plan(ctx, rev)
	demo.NoErr(err, "plan the reverse query")
	demo.Say("%s", strings.ReplaceAll(strings.TrimSpace(plan.String()), "\n", "; "))
	demo.Check(len(page.Entities) == 10 && page.Continuation != "", "the page holds %d claims, want 10 and a continuation", len(page.Entities))
	for i, e := range page.Entities {
		want := last.Add(-time.Duration(i) * 90 * time.Minute)
		demo.Check(e.RowKey == want.Format(time.RFC3339), "entry %d is %s, want %s (newest first)", i, e.RowKey, want.Format(time.RFC3339))
	}
	demo.Say("newest %s claim #%v ... %s claim #%v", page.Entities[0].RowKey, page.Entities[0].Properties["Claim"],
		page.Entities[9].RowKey, page.Entities[9].Properties["Claim"])

	demo.Step("the next page resumes downwards")
	rev.Continuation = page.Continuation
	page, err = p.QueryPage(ctx, rev)
	demo.NoErr(err, "read the next reverse page")
	demo.Check(len(page.Entities) == 10 && page.Entities[0].Properties["Claim"] == int32(30),
		"the second page starts at claim #%v, want #30", page.Entities[0].Properties["Claim"])

	demo.Step("claims since a moment: a RowKey range read in reverse")
	rq = tablestore.Query{Filter: fmt.Sprintf("RowKey ge '%s'", since.Format(time.RFC3339)), Reverse: true}
	var recentAsc []*tablestore.Entity
	for e, err := range p.Query(ctx, rq) {
		demo.NoErr(err, "query recent claims in reverse")
		recentAsc = append(recentAsc, e)
	}
	demo.Check(len(recentAsc) == 5 && recentAsc[0].Properties["Claim"] == int32(40),
		"%d recent claims, want 5 starting with #40", len(recentAsc))
	demo.Done()
}
