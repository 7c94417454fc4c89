// Command concurrency shows optimistic concurrency with ETags: every write
// gives the entity a new ETag; an update or delete that names the ETag it
// read fails with UpdateConditionNotSatisfied if someone wrote in between,
// and the writer reads again and retries. ETagAny opts out: last writer
// wins, and an update can be lost.
package main

import (
	"context"
	"errors"
	"sync"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

// withdraw takes amount from the account balance with an ETag-guarded
// read-modify-write, retrying on conflict. It reports the attempts made.
func withdraw(ctx context.Context, t *tablestore.Table, amount int64) (int, error) {
	for attempt := 1; ; attempt++ {
		acct, err := t.Get(ctx, "bank", "acct-1", nil)
		if err != nil {
			return attempt, err
		}
		bal, _ := acct.Properties["Balance"].(int64)
		acct.Properties["Balance"] = bal - amount
		err = t.Update(ctx, acct, tablestore.Replace, acct.ETag)
		if !errors.Is(err, tablestore.ErrUpdateConditionNotSatisfied) {
			return attempt, err
		}
	}
}

func main() {
	ctx := context.Background()
	db, _ := demo.Open()
	t := demo.CreateTable(ctx, db, "Accounts")
	open := &tablestore.Entity{PartitionKey: "bank", RowKey: "acct-1", Properties: map[string]any{"Balance": int64(1000)}}
	demo.NoErr(t.Insert(ctx, open), "open the account")

	demo.Step("two clients read the same version")
	a := demo.Get(ctx, t, "bank", "acct-1")
	b := demo.Get(ctx, t, "bank", "acct-1")
	demo.Say("both hold ETag %s", a.ETag)
	demo.Check(a.ETag == b.ETag && a.ETag == open.ETag, "reads of one version carry different ETags")

	demo.Step("client A writes first; the entity gets a new ETag and a later Timestamp")
	a.Properties["Balance"] = int64(900)
	demo.NoErr(t.Update(ctx, a, tablestore.Replace, a.ETag), "A's update")
	demo.Say("new ETag %s", a.ETag)
	demo.Check(a.ETag != b.ETag, "the update did not change the ETag")
	demo.Check(a.Timestamp.After(b.Timestamp), "Timestamp %v is not after %v", a.Timestamp, b.Timestamp)

	demo.Step("client B's write, based on the old version, is refused")
	b.Properties["Balance"] = int64(800)
	err := t.Update(ctx, b, tablestore.Replace, b.ETag)
	demo.WantErr(err, tablestore.ErrUpdateConditionNotSatisfied, "B's update with the stale ETag")
	err = t.Delete(ctx, "bank", "acct-1", b.ETag)
	demo.WantErr(err, tablestore.ErrUpdateConditionNotSatisfied, "B's delete with the stale ETag")
	cur := demo.Get(ctx, t, "bank", "acct-1")
	demo.Check(cur.Properties["Balance"] == int64(900), "balance %v, want A's 900", cur.Properties["Balance"])

	demo.Step("B reads again and retries: both withdrawals count")
	n, err := withdraw(ctx, t, 100)
	demo.NoErr(err, "B's retried withdrawal")
	cur = demo.Get(ctx, t, "bank", "acct-1")
	demo.Say("balance %v after %d attempt(s)", cur.Properties["Balance"], n)
	demo.Check(cur.Properties["Balance"] == int64(800), "balance %v, want 800", cur.Properties["Balance"])

	demo.Step("ten concurrent clients withdraw 10 each, retrying on conflict")
	var wg sync.WaitGroup
	errs := make([]error, 10)
	tries := make([]int, 10)
	for i := range errs {
		wg.Go(func() { tries[i], errs[i] = withdraw(ctx, t, 10) })
	}
	wg.Wait()
	demo.NoErr(errors.Join(errs...), "concurrent withdrawals")
	total := 0
	for _, n := range tries {
		total += n
	}
	cur = demo.Get(ctx, t, "bank", "acct-1")
	demo.Say("balance %v; %d attempts for 10 withdrawals", cur.Properties["Balance"], total)
	demo.Check(cur.Properties["Balance"] == int64(700), "balance %v, want 700: an update was lost", cur.Properties["Balance"])

	demo.Step("with ETagAny the last writer wins and an update is lost")
	x := demo.Get(ctx, t, "bank", "acct-1")
	y := demo.Get(ctx, t, "bank", "acct-1")
	xb, _ := x.Properties["Balance"].(int64)
	yb, _ := y.Properties["Balance"].(int64)
	x.Properties["Balance"] = xb - 50
	y.Properties["Balance"] = yb - 20
	demo.NoErr(t.Update(ctx, x, tablestore.Replace, tablestore.ETagAny), "X's unconditional update")
	demo.NoErr(t.Update(ctx, y, tablestore.Replace, tablestore.ETagAny), "Y's unconditional update")
	cur = demo.Get(ctx, t, "bank", "acct-1")
	demo.Say("balance %v: X's withdrawal of 50 vanished", cur.Properties["Balance"])
	demo.Check(cur.Properties["Balance"] == int64(680), "balance %v, want 680 (only Y's write)", cur.Properties["Balance"])

	demo.Step("an insert never takes an ETag: a second insert of the key fails")
	err = t.Insert(ctx, &tablestore.Entity{PartitionKey: "bank", RowKey: "acct-1"})
	demo.WantErr(err, tablestore.ErrEntityAlreadyExists, "insert acct-1 again")
	demo.Done()
}
