package model

import (
	"math"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

func keysOf(es []*ts.Entity) []Key {
	var out []Key
	for _, e := range es {
		out = append(out, Key{e.PartitionKey, e.RowKey})
	}
	return out
}

// TestIndexOrder checks the model's index order: absent first, then by
// type, then by value (NaN first, -0 with 0), then by key; a Partitioned
// index by PartitionKey first.
func TestIndexOrder(t *testing.T) {
	m := New()
	if err := m.CreateTable("tbl"); err != nil {
		t.Fatal(err)
	}
	rows := []struct {
		pk, rk string
		v      any
	}{
		{"b", "1", "x"}, {"a", "2", int32(5)}, {"a", "3", int64(5)}, {"a", "4", 5.0},
		{"a", "5", math.NaN()}, {"a", "6", math.Copysign(0, -1)}, {"b", "7", 0.0},
		{"a", "8", nil}, {"a", "9", true}, {"a", "10", []byte{1}}, {"a", "11", "a"},
	}
	for _, r := range rows {
		if _, err := m.Insert("tbl", &ts.Entity{PartitionKey: r.pk, RowKey: r.rk, Properties: map[string]any{"V": r.v}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.CreateIndex("tbl", ts.IndexSpec{Name: "ByV", Properties: []string{"V"}}); err != nil {
		t.Fatal(err)
	}
	if err := m.CreateIndex("tbl", ts.IndexSpec{Name: "byv", Properties: []string{"W"}}); errCode(err) != edm.CodeInvalidInput {
		t.Fatalf("duplicate index name: %v", err)
	}
	got, err := m.QueryIndex("tbl", ts.Query{Index: "byV"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Key{{"a", "8"}, {"a", "11"}, {"b", "1"}, {"a", "2"}, {"a", "3"}, {"a", "5"}, {"a", "6"}, {"b", "7"}, {"a", "4"}, {"a", "9"}, {"a", "10"}}
	if g := keysOf(got); !equalKeys(g, want) {
		t.Fatalf("index order %v, want %v", g, want)
	}
	if err := m.CreateIndex("tbl", ts.IndexSpec{Name: "Local", Properties: []string{"V"}, Partitioned: true}); err != nil {
		t.Fatal(err)
	}
	got, _ = m.QueryIndex("tbl", ts.Query{Index: "Local", Filter: "V ge 0.0"})
	want = []Key{{"a", "6"}, {"a", "4"}, {"b", "7"}}
	if g := keysOf(got); !equalKeys(g, want) {
		t.Fatalf("partitioned index order %v, want %v", g, want)
	}
	if _, err := m.QueryIndex("tbl", ts.Query{Index: "Nope"}); errCode(err) != edm.CodeResourceNotFound {
		t.Fatalf("missing index: %v", err)
	}
	if err := m.DropIndex("tbl", "LOCAL"); err != nil {
		t.Fatal(err)
	}
	if specs, _ := m.Indexes("tbl"); len(specs) != 1 || specs[0].Name != "ByV" {
		t.Fatalf("indexes after drop: %v", specs)
	}
}

func equalKeys(a, b []Key) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTTL checks expiry by Default from the last write, by the TTL
// property, and that an expired entity is absent for every operation.
func TestTTL(t *testing.T) {
	m := New()
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.SetOrigin(origin)
	_ = m.CreateTable("tbl")
	_, _ = m.Insert("tbl", &ts.Entity{PartitionKey: "p", RowKey: "old"})
	_, _ = m.Insert("tbl", &ts.Entity{PartitionKey: "p", RowKey: "due", Properties: map[string]any{"Exp": origin.Add(90 * time.Minute)}})
	_, _ = m.Insert("tbl", &ts.Entity{PartitionKey: "p", RowKey: "past", Properties: map[string]any{"Exp": origin.Add(-time.Hour)}})
	if err := m.SetTTL("tbl", ts.TTL{Default: 150 * time.Minute, Property: "Exp"}); err != nil {
		t.Fatal(err)
	}
	if got := m.Keys("tbl"); !equalKeys(got, []Key{{"p", "due"}, {"p", "old"}}) {
		t.Fatalf("after SetTTL: %v", got)
	}
	m.Advance(time.Hour)
	if _, err := m.Upsert("tbl", &ts.Entity{PartitionKey: "p", RowKey: "new"}, ts.Merge); err != nil {
		t.Fatal(err)
	}
	m.Advance(time.Hour) // 2h: "due" (1h30) has expired
	if got := m.Keys("tbl"); !equalKeys(got, []Key{{"p", "new"}, {"p", "old"}}) {
		t.Fatalf("at 2h: %v", got)
	}
	m.Advance(time.Hour) // 3h: "old" (2h30) has, "new" (3h30) has not
	if _, err := m.Update("tbl", &ts.Entity{PartitionKey: "p", RowKey: "old"}, ts.Merge, ts.ETagAny); errCode(err) != edm.CodeResourceNotFound {
		t.Fatalf("update of an expired entity: %v", err)
	}
	if _, err := m.Insert("tbl", &ts.Entity{PartitionKey: "p", RowKey: "old"}); err != nil {
		t.Fatalf("insert over an expired entity: %v", err)
	}
	if got := m.Keys("tbl"); !equalKeys(got, []Key{{"p", "new"}, {"p", "old"}}) {
		t.Fatalf("at 3h: %v", got)
	}
	for _, bad := range []ts.TTL{{Default: -1}, {Property: "RowKey"}, {Property: "1x"}} {
		if err := m.SetTTL("tbl", bad); err == nil {
			t.Errorf("SetTTL(%+v) accepted", bad)
		}
	}
}

// TestFeed checks the changes the model records: kinds, images, commits.
func TestFeed(t *testing.T) {
	m := New()
	_ = m.CreateTable("tbl")
	_, _ = m.Insert("tbl", &ts.Entity{PartitionKey: "p", RowKey: "before"})
	if _, err := m.Changes("tbl", ""); errCode(err) != edm.CodeResourceNotFound {
		t.Fatalf("changes of a feed that is off: %v", err)
	}
	if err := m.EnableChangeFeed("tbl", ts.ImagesNew); err != nil {
		t.Fatal(err)
	}
	etag, _ := m.Upsert("tbl", &ts.Entity{PartitionKey: "p", RowKey: "before", Properties: map[string]any{"A": int32(1)}}, ts.Merge)
	_, err := m.SubmitTransaction("tbl", []ts.TransactionAction{
		{Type: ts.ActionInsert, Entity: &ts.Entity{PartitionKey: "q", RowKey: "1"}},
		{Type: ts.ActionDelete, Entity: &ts.Entity{PartitionKey: "q", RowKey: "2"}, IfMatch: ts.ETagAny},
	})
	if errCode(err) != edm.CodeResourceNotFound {
		t.Fatalf("failed transaction: %v", err)
	}
	_, _ = m.SubmitTransaction("tbl", []ts.TransactionAction{
		{Type: ts.ActionInsert, Entity: &ts.Entity{PartitionKey: "q", RowKey: "1"}},
		{Type: ts.ActionUpsertReplace, Entity: &ts.Entity{PartitionKey: "q", RowKey: "2"}},
	})
	_ = m.DeleteRange("tbl", "q", "2", "2") // empty: not recorded
	_ = m.DeleteRange("tbl", "q", "", "2")
	_ = m.Delete("tbl", "p", "before", ts.ETagAny)
	got, err := m.Changes("tbl", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{
		{Op: ts.ChangeUpsertMerge, PK: "p", RK: "before", ETag: etag, Count: 1},
		{Op: ts.ChangeInsert, PK: "q", RK: "1", Index: 0, Count: 2},
		{Op: ts.ChangeUpsertReplace, PK: "q", RK: "2", Index: 1, Count: 2},
		{Op: ts.ChangeDeleteRange, PK: "q", RK: "", ToRK: "2", Count: 1},
		{Op: ts.ChangeDelete, PK: "p", RK: "before", Count: 1},
	}
	if len(got) != len(want) {
		t.Fatalf("%d changes, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Op != w.Op || g.PK != w.PK || g.RK != w.RK || g.ToRK != w.ToRK || g.Index != w.Index || g.Count != w.Count {
			t.Errorf("change %d: %+v, want %+v", i, g, w)
		}
		if (g.Entity != nil) != (g.ETag != "") {
			t.Errorf("change %d: image %v with ETag %q", i, g.Entity, g.ETag)
		}
	}
	if got[0].ETag != etag || got[0].Entity.Properties["A"] != int32(1) || got[1].Commit != got[2].Commit || got[0].Commit == got[1].Commit {
		t.Errorf("versions or commits: %+v", got)
	}
	if only, _ := m.Changes("tbl", "p"); len(only) != 2 {
		t.Errorf("changes of partition p: %+v", only)
	}
	_ = m.DisableChangeFeed("tbl")
	if m.FeedOn("tbl") {
		t.Error("feed still on")
	}
}
