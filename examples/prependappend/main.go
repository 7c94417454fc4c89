// Command prependappend shows the prepend/append anti-pattern and its fix.
// Keying access-log events by the current hour sends every write of the
// hour to one partition: a hot spot (in Azure, one partition server; here,
// one partition lock that every writer queues on). Keying by department and
// employee, with the time in the RowKey, spreads the writes over many
// partitions and still answers "this employee's events in this hour" with
// a range query.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

const (
	employees = 20
	perWriter = 10 // events each employee logs in the hour
)

type keyFunc func(emp, i int, at time.Time) (pk, rk string)

// hot: PartitionKey is the hour, so all of the hour's events share it.
func hot(emp, i int, at time.Time) (string, string) {
	return at.Format("2006010215"), fmt.Sprintf("%s_emp%03d_%03d", at.Format("0405"), emp, i)
}

// spread: PartitionKey is department and employee; RowKey starts with the
// time so an employee's events sort chronologically.
func spread(emp, i int, at time.Time) (string, string) {
	return fmt.Sprintf("Sales_%06d", emp), fmt.Sprintf("%s_%03d", at.Format("2006010215"+"0405"), i)
}

// logHour writes every employee's events concurrently, one writer per
// employee, and returns how long it took.
func logHour(ctx context.Context, t *tablestore.Table, key keyFunc, hour time.Time) time.Duration {
	began := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for emp := range employees {
		wg.Go(func() {
			for i := range perWriter {
				at := hour.Add(time.Duration(i*employees+emp) * time.Second)
				pk, rk := key(emp, i, at)
				err := t.Insert(ctx, &tablestore.Entity{PartitionKey: pk, RowKey: rk,
					Properties: map[string]any{"Employee": int32(emp), "Resource": "printer", "At": at}})
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	demo.NoErr(firstErr, "log events into "+t.Name())
	return time.Since(began)
}

// partitionShares counts the entities of each PartitionKey in t.
func partitionShares(ctx context.Context, t *tablestore.Table) (partitions, largest int) {
	counts := map[string]int{}
	q := tablestore.Query{Select: []string{"Employee"}}
	demo.ExpectPlan(t, q, demo.TableScan)
	for e, err := range t.Query(ctx, q) {
		demo.NoErr(err, "scan "+t.Name())
		counts[e.PartitionKey]++
	}
	for _, n := range counts {
		largest = max(largest, n)
	}
	return len(counts), largest
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	hour := time.Date(2024, 5, 1, 14, 0, 0, 0, time.UTC)
	total := employees * perWriter

	demo.Step("anti-pattern: PartitionKey = current hour; %d writers log %d events", employees, total)
	hotT := demo.CreateTable(ctx, db, "AccessLogHot")
	took := logHour(ctx, hotT, hot, hour)
	parts, largest := partitionShares(ctx, hotT)
	demo.Say("%d partition(s) took the hour's writes; the busiest took %d of %d (%v)", parts, largest, total, took.Round(time.Millisecond))
	demo.Check(parts == 1 && largest == total, "hot design spread writes over %d partitions", parts)

	demo.Step("fix: PartitionKey = department_employee, RowKey = time")
	spreadT := demo.CreateTable(ctx, db, "AccessLogSpread")
	took = logHour(ctx, spreadT, spread, hour)
	parts, largest = partitionShares(ctx, spreadT)
	demo.Say("%d partitions took the writes; the busiest took %d of %d (%v)", parts, largest, total, took.Round(time.Millisecond))
	demo.Check(parts == employees && largest == perWriter, "spread design: %d partitions, busiest %d", parts, largest)

	demo.Step("the fix still serves the per-employee query with a key range")
	q := tablestore.Query{Filter: "PartitionKey eq 'Sales_000007' and RowKey ge '2024050114' and RowKey lt '2024050115'"}
	evs := demo.All(ctx, spreadT, q, demo.Range)
	demo.Check(len(evs) == perWriter, "employee 7 has %d events in the hour, want %d", len(evs), perWriter)
	for i := 1; i < len(evs); i++ {
		a, _ := evs[i-1].Properties["At"].(time.Time)
		b, _ := evs[i].Properties["At"].(time.Time)
		demo.Check(a.Before(b), "events out of time order at %d", i)
	}
	demo.Say("employee 7: %d events in time order", len(evs))

	demo.Step("the trade-off: 'everything in this hour' is cheap only in the hot design")
	demo.ExpectPlan(hotT, tablestore.Query{Filter: "PartitionKey eq '2024050114'"}, demo.PartitionScan)
	wide := demo.All(ctx, spreadT, tablestore.Query{Filter: "RowKey ge '2024050114' and RowKey lt '2024050115'"}, demo.TableScan)
	demo.Check(len(wide) == total, "the hour across all employees has %d events, want %d", len(wide), total)
	demo.Say("in the spread design it visits every partition (%d events found)", len(wide))
	demo.Done()
}
