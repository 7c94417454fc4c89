// Command highvolumedeletettl is the high-volume delete pattern with a
// time to live: instead of one table per day dropped with DeleteTable,
// login attempts go to one table whose entities expire a day after they
// are written. Expired attempts are absent at once for every read, and a
// background sweeper removes them at a bounded rate (Options.SweepRate).
// A fake clock stands in for two days.
package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

const perDay = 3000

func main() {
	ctx := context.Background()
	var now atomic.Int64
	now.Store(time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	db, err := tablestore.Open(demo.TempDir(), &tablestore.Options{Clock: clock, SweepRate: 100_000})
	demo.NoErr(err, "open the store")
	demo.Defer(func() { db.Close() })
	t := demo.CreateTable(ctx, db, "LoginAttempts")
	demo.NoErr(t.SetTTL(ctx, tablestore.TTL{Default: 24 * time.Hour}), "set the TTL")

	fill := func(day int) {
		w, err := t.NewBulkWriter(nil)
		demo.NoErr(err, "start a bulk writer")
		for i := range perDay {
			demo.NoErr(w.Add(ctx, &tablestore.Entity{PartitionKey: fmt.Sprintf("user%02d", i%30), RowKey: fmt.Sprintf("d%d-%05d", day, i),
				Properties: map[string]any{"Success": i%7 != 0}}), "add an attempt")
		}
		demo.NoErr(w.Flush(ctx), "write the attempts")
	}
	count := func() int {
		n := 0
		for _, err := range t.Query(ctx, tablestore.Query{Select: []string{"Success"}}) {
			demo.NoErr(err, "count")
			n++
		}
		return n
	}

	demo.Step("day one: %d attempts", perDay)
	fill(1)
	demo.Check(count() == perDay, "day one holds %d attempts", count())
	demo.Step("twelve hours later, day two's attempts")
	now.Add(int64(12 * time.Hour))
	fill(2)
	demo.Say("the table holds %d attempts", count())
	demo.Check(count() == 2*perDay, "want %d attempts", 2*perDay)

	demo.Step("a day after day one: its attempts are gone, without a DeleteTable")
	now.Add(int64(13 * time.Hour))
	n := count()
	demo.Say("the table holds %d attempts", n)
	demo.Check(n == perDay, "want only day two's %d attempts, got %d", perDay, n)
	_, err = t.Get(ctx, "user00", "d1-00000", nil)
	demo.WantErr(err, tablestore.ErrResourceNotFound, "read a day-one attempt")
	deadline := time.Now().Add(10 * time.Second)
	for {
		left, err := t.ExpiredCount(ctx)
		demo.NoErr(err, "count expired attempts")
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			demo.Fail("%d expired attempts still await the sweeper", left)
		}
		time.Sleep(20 * time.Millisecond)
	}
	demo.Say("the sweeper removed day one's %d attempts from disk", perDay)
	demo.Done()
}
