package tablestore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
)

// TestReadChanges reads a feed a page at a time: pages end at the limit
// with More, an empty read still yields a position cursor that misses
// nothing, Follow waits for the next commit, and a bad limit or an
// expired cursor fails with its code.
func TestReadChanges(t *testing.T) {
	ctx := context.Background()
	db, err := ts.OpenInMemory(&ts.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := db.CreateTable(ctx, "pages")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{-1, ts.MaxChangesPage + 1} {
		if _, err := tb.ReadChanges(ctx, ts.ChangesQuery{Top: n}); ts.ErrorCode(err) != "InvalidInput" {
			t.Fatalf("top %d: %v", n, err)
		}
	}
	empty, err := tb.ReadChanges(ctx, ts.ChangesQuery{From: ts.CursorNow(), Top: 10})
	if err != nil || len(empty.Changes) != 0 || empty.Cursor.Seq() == 0 {
		t.Fatalf("empty read: %+v %v", empty, err)
	}
	for _, rk := range []string{"a", "b", "c"} {
		if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: rk}); err != nil {
			t.Fatal(err)
		}
	}
	p1, err := tb.ReadChanges(ctx, ts.ChangesQuery{From: empty.Cursor, Top: 2})
	if err != nil || len(p1.Changes) != 2 || !p1.More || p1.Changes[0].RowKey != "a" || p1.Cursor != p1.Changes[1].Cursor {
		t.Fatalf("first page: %+v %v", p1, err)
	}
	p2, err := tb.ReadChanges(ctx, ts.ChangesQuery{From: p1.Cursor, Top: 2})
	if err != nil || len(p2.Changes) != 1 || p2.More || p2.Changes[0].RowKey != "c" {
		t.Fatalf("second page: %+v %v", p2, err)
	}
	// Top 0 is MaxChangesPage: one page holds the three.
	all, err := tb.ReadChanges(ctx, ts.ChangesQuery{From: empty.Cursor})
	if err != nil || len(all.Changes) != 3 || all.More || all.Cursor != p2.Cursor {
		t.Fatalf("page of Top 0: %+v %v", all, err)
	}
	// Follow: woken by the commit.
	got := make(chan *ts.ChangesPage, 1)
	go func() {
		p, err := tb.ReadChanges(ctx, ts.ChangesQuery{From: p2.Cursor, Follow: true, Top: 10})
		if err != nil {
			t.Error(err)
		}
		got <- p
	}()
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "d"}); err != nil {
		t.Fatal(err)
	}
	if p := <-got; p == nil || len(p.Changes) != 1 || p.Changes[0].RowKey != "d" {
		t.Fatalf("followed page: %+v", p)
	}
	// Follow that times out: the empty page, its position, ctx's error.
	wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	last, _ := tb.ChangeFeed(ctx)
	p, err := tb.ReadChanges(wctx, ts.ChangesQuery{From: last.Latest, Follow: true, Top: 10})
	if !errors.Is(err, context.DeadlineExceeded) || p == nil || len(p.Changes) != 0 || p.Cursor != last.Latest {
		t.Fatalf("timed-out follow: %+v %v", p, err)
	}
	if _, err := tb.ReadChanges(ctx, ts.ChangesQuery{From: ts.CursorAt(time.Now().Add(-48 * time.Hour)), Top: 10}); !errors.Is(err, ts.ErrCursorExpired) || ts.ErrorCode(err) != "OutOfRangeInput" {
		t.Fatalf("expired: %v", err)
	}
	if err := db.DeleteTable(ctx, "pages"); err != nil {
		t.Fatal(err)
	}
	p, err = tb.ReadChanges(ctx, ts.ChangesQuery{From: last.Latest, Follow: true, Top: 10})
	if err != nil || !p.Dropped || p.Changes[len(p.Changes)-1].Op != ts.ChangeDropTable {
		t.Fatalf("after the drop: %+v %v", p, err)
	}
}
