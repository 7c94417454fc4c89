// Command dataseries shows the data series pattern: instead of 24 entities
// per employee and day (one per hour), one entity holds the whole day as
// 24 properties. A merge updates one hour; one point read returns the
// series. Concurrent counters use the ETag to avoid lost updates.
package main

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

func hourProp(h int) string { return fmt.Sprintf("H%02d", h) }

// addMessages adds n to one hour's count, retrying on a concurrent change.
func addMessages(ctx context.Context, t *tablestore.Table, pk, rk string, hour int, n int32) (tries int, err error) {
	for tries = 1; ; tries++ {
		e, err := t.Get(ctx, pk, rk, &tablestore.GetOptions{Select: []string{hourProp(hour)}})
		if err != nil {
			return tries, err
		}
		cur, _ := e.Properties[hourProp(hour)].(int32)
		upd := &tablestore.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{hourProp(hour): cur + n}}
		err = t.Update(ctx, upd, tablestore.Merge, e.ETag)
		if !errors.Is(err, tablestore.ErrUpdateConditionNotSatisfied) {
			return tries, err
		}
	}
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "MessageStats")

	demo.Step("the naive design: one entity per hour (24 entities for a day)")
	for h := range 24 {
		demo.NoErr(t.Insert(ctx, &tablestore.Entity{PartitionKey: "000123", RowKey: "20240501_" + hourProp(h),
			Properties: map[string]any{"Count": int32(h * 2)}}), "insert hourly entity")
	}
	hours := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq '000123' and RowKey ge '20240501_' and RowKey lt '20240501`'"}, demo.Range)
	demo.Say("charting the day reads %d entities", len(hours))
	demo.Check(len(hours) == 24, "read %d hourly entities, want 24", len(hours))

	demo.Step("the data series design: one entity, one property per hour")
	props := map[string]any{}
	for h := range 24 {
		props[hourProp(h)] = int32(0)
	}
	demo.NoErr(t.Insert(ctx, &tablestore.Entity{PartitionKey: "000124", RowKey: "20240501", Properties: props}), "insert the day")

	demo.Step("count messages: a merge changes one hour and keeps the rest")
	for _, m := range []struct {
		hour int
		n    int32
	}{{9, 12}, {10, 30}, {9, 3}, {17, 8}} {
		_, err := addMessages(ctx, t, "000124", "20240501", m.hour, m.n)
		demo.NoErr(err, "add messages")
	}

	demo.Step("eight senders count hour 14 at once; ETag retries lose nothing")
	var wg sync.WaitGroup
	var mu sync.Mutex
	var retries int
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			for range 5 {
				tries, err := addMessages(ctx, t, "000124", "20240501", 14, 1)
				mu.Lock()
				retries += tries - 1
				if err != nil {
					errs[i] = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	demo.NoErr(errors.Join(errs...), "concurrent counting")
	demo.Say("40 increments needed %d retries after ETag conflicts", retries)

	demo.Step("the whole day in one point read")
	day := demo.All(ctx, t, tablestore.Query{Filter: "PartitionKey eq '000124' and RowKey eq '20240501'"}, demo.Point)
	demo.Check(len(day) == 1, "point query returned %d entities", len(day))
	series := make([]int32, 24)
	var total int32
	for h := range 24 {
		v, ok := day[0].Properties[hourProp(h)].(int32)
		demo.Check(ok, "%s is missing or not Int32: %#v", hourProp(h), day[0].Properties[hourProp(h)])
		series[h] = v
		total += v
	}
	demo.Say("series: %v (total %d)", series, total)
	demo.Check(series[9] == 15 && series[10] == 30 && series[17] == 8, "merged hours are %d, %d, %d", series[9], series[10], series[17])
	demo.Check(series[14] == 40, "hour 14 counted %d, want 40", series[14])
	demo.Check(total == 93, "total %d, want 93", total)
	demo.Done()
}
