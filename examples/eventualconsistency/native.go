package main

import (
	"context"
	"errors"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/examples/internal/demo"
)

// pendingFor is the query for the work item that moves (dept, id), read
// through the ByEmployee index wherever the item's RowKey says otherwise.
func pendingFor(dept, id string) tablestore.Query {
	return tablestore.Query{Filter: "Department eq '" + dept + "' and EmployeeID eq '" + id + "'"}
}

// native runs the same pattern on the same tables with native secondary
// indexes. They do not make the move across tables atomic, so the work
// queue stays; but an index needs no eventual consistency of its own: its
// entries are written in each entity's commit, so they are right after
// every crash. A Unique index on WorkItems (Department, EmployeeID)
// turns a client's repeated request, under a new request id, into a
// refusal instead of a second move, and finds an employee's pending move
// without knowing its RowKey. It reopens the store (Done closes it).
func native(ctx context.Context, db *tablestore.DB, dir string) {
	demo.Step("native index: one pending move per employee, enforced by a unique index on WorkItems")
	work := db.Table("WorkItems")
	if !demo.CreateIndex(ctx, work, tablestore.IndexSpec{Name: "ByEmployee", Properties: []string{"Department", "EmployeeID"}, Unique: true}) {
		return
	}
	enqueue := func(requestID string) error {
		return work.Insert(ctx, &tablestore.Entity{PartitionKey: pending, RowKey: "archive-Sales-000123-" + requestID,
			Properties: map[string]any{"Department": "Sales", "EmployeeID": "000123", "Attempts": int32(0)}})
	}
	demo.NoErr(enqueue("r1"), "enqueue the move of 000123")
	demo.WantErr(enqueue("r2"), tablestore.ErrEntityAlreadyExists, "enqueue it again under another request id")

	demo.Step("native index: find 000123's pending move by employee, not by RowKey")
	items := demo.ViaIndex(ctx, work, pendingFor("Sales", "000123"), "ByEmployee")
	demo.Check(len(items) == 1 && items[0].RowKey == "archive-Sales-000123-r1", "pending moves of 000123: %v", demo.RowKeys(items))

	demo.Step("native index: the worker stops %s; after reopening, the index is exact", afterArchiving)
	_, err := archiveWorker(ctx, db, afterArchiving)
	demo.Check(errors.Is(err, errStopped), "worker returned %v, want it stopped", err)
	db = crashAndReopen(db, dir)
	work = db.Table("WorkItems")
	items = demo.ViaIndex(ctx, work, pendingFor("Sales", "000123"), "ByEmployee")
	demo.Check(len(items) == 1 && items[0].Properties["Attempts"] == int32(1), "after the stop the index finds %v", demo.RowKeys(items))
	if demo.CheckStore(ctx, db) {
		demo.Say("Check finds the index and WorkItems in agreement after the stop")
	}

	demo.Step("native index: the worker completes; the index no longer finds the move")
	done, err := archiveWorker(ctx, db, never)
	demo.NoErr(err, "worker run")
	demo.Check(done == 1, "worker completed %d items, want 1", done)
	items = demo.ViaIndex(ctx, work, pendingFor("Sales", "000123"), "ByEmployee")
	demo.Check(len(items) == 0, "the index still finds %v", demo.RowKeys(items))
	demo.Check(present(ctx, db.Table("Archive"), "Sales", "000123") && !present(ctx, db.Table("Current"), "Sales", "000123"),
		"000123 was not moved exactly once")
	demo.NoErr(enqueue("r3"), "a new move of 000123 can be queued once the last one is done")
}
