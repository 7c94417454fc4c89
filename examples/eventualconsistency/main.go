// Command eventualconsistency shows the eventually consistent transactions
// pattern: moving an employee from table Current to table Archive cannot
// be one transaction, so a client records the request in a durable
// WorkItems table and a worker carries it out in idempotent steps. The
// program stops the worker between steps, reopens the store from disk and
// runs the worker again, and checks that every move completes exactly once.
// Then native.go adds a native secondary index to the work queue, which
// stays exact across the same stops.
package main

import (
	"context"
	"errors"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

const pending = "pending" // the WorkItems partition holding queued moves

var errStopped = errors.New("worker stopped between steps")

// The points where a run of the worker can be stopped.
const (
	never          = ""
	afterArchiving = "after inserting into Archive"
	afterDeleting  = "after deleting from Current"
)

// archiveWorker carries out every pending work item, in three idempotent
// steps: upsert into Archive, delete from Current if present, delete the
// work item. Each item's Attempts counts how often a worker picked it up
// (Azure queues call it the dequeue count). stopAt simulates a crash.
func archiveWorker(ctx context.Context, db *tablestore.DB, stopAt string) (done int, err error) {
	current, archive, work := db.Table("Current"), db.Table("Archive"), db.Table("WorkItems")
	q := tablestore.Query{Filter: "PartitionKey eq '" + pending + "'"}
	demo.ExpectPlan(work, q, demo.PartitionScan)
	for item, err := range work.Query(ctx, q) {
		if err != nil {
			return done, err
		}
		attempts, _ := item.Properties["Attempts"].(int32)
		item.Properties["Attempts"] = attempts + 1
		// Claim the item: the ETag check fails if another worker claimed it.
		if err := work.Update(ctx, item, tablestore.Merge, item.ETag); err != nil {
			return done, err
		}
		dept, _ := item.Properties["Department"].(string)
		id, _ := item.Properties["EmployeeID"].(string)
		demo.Say("worker: archive %s/%s (attempt %d)", dept, id, attempts+1)

		e, err := current.Get(ctx, dept, id, nil)
		switch {
		case err == nil:
			e.Properties["ArchivedBy"] = item.RowKey
			if err := archive.Upsert(ctx, e, tablestore.Replace); err != nil {
				return done, err
			}
		case errors.Is(err, tablestore.ErrResourceNotFound):
			// A previous attempt got past the delete below: Archive already has it.
			if _, err := archive.Get(ctx, dept, id, nil); err != nil {
				return done, err
			}
		default:
			return done, err
		}
		if stopAt == afterArchiving {
			return done, errStopped
		}
		err = current.Delete(ctx, dept, id, tablestore.ETagAny)
		if err != nil && !errors.Is(err, tablestore.ErrResourceNotFound) {
			return done, err
		}
		if stopAt == afterDeleting {
			return done, errStopped
		}
		if err := work.Delete(ctx, item.PartitionKey, item.RowKey, tablestore.ETagAny); err != nil {
			return done, err
		}
		done++
	}
	return done, nil
}

// present reports whether (dept, id) is in table t.
func present(ctx context.Context, t *tablestore.Table, dept, id string) bool {
	_, err := t.Get(ctx, dept, id, nil)
	if errors.Is(err, tablestore.ErrResourceNotFound) {
		return false
	}
	demo.NoErr(err, "get "+dept+"/"+id+" from "+t.Name())
	return true
}

// crashAndReopen closes the store the stopped worker used and opens it
// again from its directory, as a restarted process would.
func crashAndReopen(db *tablestore.DB, dir string) *tablestore.DB {
	demo.NoErr(db.Close(), "close the store")
	demo.Say("store closed; reopening it from %s", dir)
	return demo.Reopen(dir)
}

func main() {
	ctx := context.Background()
	db, dir := demo.Open()
	current := demo.CreateTable(ctx, db, "Current")
	demo.CreateTable(ctx, db, "Archive")
	work := demo.CreateTable(ctx, db, "WorkItems")

	demo.Step("three current employees; a client asks to archive two of them")
	for _, id := range []string{"000123", "000456", "000789"} {
		demo.NoErr(current.Insert(ctx, &tablestore.Entity{PartitionKey: "Sales", RowKey: id,
			Properties: map[string]any{"Name": "employee " + id, "Salary": int64(50000)}}), "insert "+id)
	}
	for _, id := range []string{"000456", "000789"} {
		demo.NoErr(work.Insert(ctx, &tablestore.Entity{PartitionKey: pending, RowKey: "archive-Sales-" + id,
			Properties: map[string]any{"Department": "Sales", "EmployeeID": id, "Attempts": int32(0)}}), "enqueue "+id)
	}
	queued := demo.All(ctx, work, tablestore.Query{Filter: "PartitionKey eq '" + pending + "'"}, demo.PartitionScan)
	demo.Check(len(queued) == 2, "%d work items queued, want 2", len(queued))

	demo.Step("the worker stops %s", afterArchiving)
	_, err := archiveWorker(ctx, db, afterArchiving)
	demo.Check(errors.Is(err, errStopped), "worker returned %v, want it stopped", err)
	db = crashAndReopen(db, dir)
	inCur, inArc := present(ctx, db.Table("Current"), "Sales", "000456"), present(ctx, db.Table("Archive"), "Sales", "000456")
	demo.Say("000456 in Current: %v, in Archive: %v (readers may see both until the move completes)", inCur, inArc)
	demo.Check(inCur && inArc, "after the first stop 000456 should be in both tables")

	demo.Step("the restarted worker repeats the step and stops %s", afterDeleting)
	_, err = archiveWorker(ctx, db, afterDeleting)
	demo.Check(errors.Is(err, errStopped), "worker returned %v, want it stopped", err)
	db = crashAndReopen(db, dir)
	inCur, inArc = present(ctx, db.Table("Current"), "Sales", "000456"), present(ctx, db.Table("Archive"), "Sales", "000456")
	demo.Say("000456 in Current: %v, in Archive: %v; its work item is still queued", inCur, inArc)
	demo.Check(!inCur && inArc, "after the second stop 000456 should be in Archive only")
	item := demo.Get(ctx, db.Table("WorkItems"), pending, "archive-Sales-000456")
	demo.Check(item.Properties["Attempts"] == int32(2), "Attempts = %v, want 2", item.Properties["Attempts"])

	demo.Step("the worker runs to the end")
	done, err := archiveWorker(ctx, db, never)
	demo.NoErr(err, "worker run")
	demo.Check(done == 2, "worker completed %d items, want 2", done)

	demo.Step("every move happened exactly once")
	cur := demo.All(ctx, db.Table("Current"), tablestore.Query{Filter: "PartitionKey eq 'Sales'"}, demo.PartitionScan)
	arc := demo.All(ctx, db.Table("Archive"), tablestore.Query{Filter: "PartitionKey eq 'Sales'"}, demo.PartitionScan)
	left := demo.All(ctx, db.Table("WorkItems"), tablestore.Query{}, demo.TableScan)
	demo.Say("Current %v, Archive %v, work items left %d", demo.RowKeys(cur), demo.RowKeys(arc), len(left))
	demo.Check(len(cur) == 1 && cur[0].RowKey == "000123", "Current holds %v", demo.RowKeys(cur))
	demo.Check(len(arc) == 2 && arc[0].RowKey == "000456" && arc[1].RowKey == "000789", "Archive holds %v", demo.RowKeys(arc))
	for _, e := range arc {
		demo.Check(e.Properties["Salary"] == int64(50000) && e.Properties["Name"] == "employee "+e.RowKey,
			"archived %s lost data: %v", e.RowKey, e.Properties)
	}
	demo.Check(len(left) == 0, "%d work items left", len(left))

	done, err = archiveWorker(ctx, db, never)
	demo.NoErr(err, "idle worker run")
	demo.Check(done == 0, "an idle worker completed %d items", done)
	demo.Say("a further run finds nothing to do")

	native(ctx, db, dir)
	demo.Done()
}
