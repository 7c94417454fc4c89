// Command logdatattl is the log data pattern with a time to live: log
// messages kept in a table (keyed by source, then time) for one hour
// only. The guide writes logs as files because a table grows without
// bound and deleting old messages costs a scan; with TTL settings the
// store hides every message older than an hour at once and a background
// sweeper removes them, through an expiry index, without scanning the
// table. A fake clock stands in for three hours of logging.
package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

func main() {
	ctx := context.Background()
	var now atomic.Int64
	now.Store(time.Date(2024, 5, 1, 15, 0, 0, 0, time.UTC).UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()).UTC() }
	db, err := tablestore.Open(demo.TempDir(), &tablestore.Options{Clock: clock})
	demo.NoErr(err, "open the store")
	demo.Defer(func() { db.Close() })
	logs := demo.CreateTable(ctx, db, "Logs")

	demo.Step("keep messages for one hour")
	demo.NoErr(logs.SetTTL(ctx, tablestore.TTL{Default: time.Hour}), "set the TTL")
	s, err := logs.TTL(ctx)
	demo.NoErr(err, "read the TTL")
	demo.Say("settings: %+v", s)

	demo.Step("three hours of logging: four servers, one message a minute each")
	sources := []string{"web1", "web2", "db1", "db2"}
	for m := range 180 {
		for _, src := range sources {
			at := clock()
			demo.NoErr(logs.Insert(ctx, &tablestore.Entity{PartitionKey: src, RowKey: at.Format("20060102T150405"),
				Properties: map[string]any{"Level": "info", "Text": fmt.Sprintf("minute %d", m)}}), "log a message")
		}
		now.Add(int64(time.Minute))
	}
	q := tablestore.Query{Filter: "PartitionKey eq 'web1'"}
	kept := demo.All(ctx, logs, q, demo.PartitionScan)
	demo.Say("web1 holds %d messages, from %s to %s", len(kept), kept[0].RowKey, kept[len(kept)-1].RowKey)
	demo.Check(len(kept) == 60, "web1 holds %d messages, want the last hour's 60", len(kept))
	_, err = logs.Get(ctx, "web1", "20240501T150000", nil)
	demo.WantErr(err, tablestore.ErrResourceNotFound, "read the first message, expired")

	demo.Step("the sweeper removes expired messages in the background")
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := logs.ExpiredCount(ctx)
		demo.NoErr(err, "count expired messages")
		if n == 0 {
			demo.Say("no expired message is left on disk")
			break
		}
		if time.Now().After(deadline) {
			demo.Fail("%d expired messages still await the sweeper", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	demo.Done()
}
