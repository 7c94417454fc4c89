package model

import (
	"strings"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// code returns the model error's code and index, or ("", -1) for nil.
func code(err error) (ts.Code, int) {
	if err == nil {
		return "", -1
	}
	e := err.(*Error)
	return e.Code, e.Index
}

// errCode returns the model error's code, or "" for nil.
func errCode(err error) ts.Code {
	c, _ := code(err)
	return c
}

func TestTableNames(t *testing.T) {
	m := New()
	for _, tc := range []struct {
		name string
		want ts.Code
	}{
		{"abc", ""},
		{"ABC", edm.CodeTableAlreadyExists},
		{"Mixed1Case", ""},
		{"mixed1case", edm.CodeTableAlreadyExists},
		{"ab", edm.CodeOutOfRangeInput},
		{strings.Repeat("a", 63), ""},
		{strings.Repeat("a", 64), edm.CodeOutOfRangeInput},
		{"1abc", edm.CodeInvalidResourceName},
		{"a-bc", edm.CodeInvalidResourceName},
		{"tables", edm.CodeInvalidInput},
	} {
		if got, _ := code(m.CreateTable(tc.name)); got != tc.want {
			t.Errorf("CreateTable(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	// "aaa..." sorts before "abc"; "Mixed1Case" sorts by its lower case.
	if got, want := strings.Join(m.TableNames(), ","), strings.Repeat("a", 63)+",abc,Mixed1Case"; got != want {
		t.Errorf("TableNames = %q, want %q", got, want)
	}
	if got, _ := code(m.DeleteTable("MIXED1CASE")); got != "" {
		t.Errorf("DeleteTable: %q", got)
	}
	if got, _ := code(m.DeleteTable("mixed1case")); got != edm.CodeResourceNotFound {
		t.Errorf("second DeleteTable: %q", got)
	}
	if _, err := m.Insert("mixed1case", &ts.Entity{PartitionKey: "p", RowKey: "r"}); errCode(err) != edm.CodeTableNotFound {
		t.Errorf("Insert into deleted table: %v", err)
	}
}

func TestEntityRules(t *testing.T) {
	m := New()
	if err := m.CreateTable("t1x"); err != nil {
		t.Fatal(err)
	}
	e := func(pk, rk string, props map[string]any) *ts.Entity {
		return &ts.Entity{PartitionKey: pk, RowKey: rk, Properties: props}
	}
	many := map[string]any{}
	for i := 0; i < 253; i++ {
		many["P"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+strings.Repeat("y", i/26)] = int32(i)
	}
	for _, tc := range []struct {
		e    *ts.Entity
		want ts.Code
	}{
		{e("p", "r", map[string]any{"A": int32(1), "N": nil}), ""},
		{e("p", "r", nil), edm.CodeEntityAlreadyExists},
		{e("", "r", nil), ""},
		{e("p", "", nil), ""},
		{e("", "", nil), ""},
		{e("", "", nil), edm.CodeEntityAlreadyExists},
		{e("a/b", "r", nil), edm.CodeOutOfRangeInput},
		{e("p", "a\x7fb", nil), edm.CodeOutOfRangeInput},
		{e("p", strings.Repeat("k", 1025), nil), edm.CodeKeyValueTooLarge},
		{e("p", strings.Repeat("k", 1024), nil), ""},
		{e("p", "r2", many), edm.CodeTooManyProperties},
		{e("p", "r3", map[string]any{"1abc": int32(1)}), edm.CodePropertyNameInvalid},
		{e("p", "r4", map[string]any{"A": float32(1)}), edm.CodeInvalidValueType},
		{e("p", "r4", map[string]any{"A": uint64(1 << 63)}), edm.CodeOutOfRangeInput},
		{e("p", "r4", map[string]any{"A": 1, "B": 1 << 40, "C": uint8(3)}), ""},
		{e("p", "r5", map[string]any{"A": strings.Repeat("s", 32769)}), edm.CodePropertyValueTooLarge},
		{e("p", "r6", map[string]any{"A": time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)}), edm.CodeOutOfRangeInput},
		{e("p", "r7", map[string]any{"A": strings.Repeat("s", 32768)}), ""},
	} {
		if _, err := m.Insert("t1x", tc.e); errCode(err) != tc.want {
			got := errCode(err)
			t.Errorf("Insert(%q,%q,%d props) = %q, want %q", tc.e.PartitionKey, tc.e.RowKey, len(tc.e.Properties), got, tc.want)
		}
	}
	got, err := m.Get("T1X", "p", "r", nil)
	if err != nil || len(got.Properties) != 1 || got.Properties["A"] != int32(1) {
		t.Fatalf("Get = %v, %v; want only A=1 (nil values are not stored)", got, err)
	}
	// Go integers are stored by the integer rule: Int32 when they fit.
	got, err = m.Get("t1x", "p", "r4", nil)
	if err != nil || got.Properties["A"] != int32(1) || got.Properties["B"] != int64(1<<40) || got.Properties["C"] != int32(3) {
		t.Fatalf("Get = %v, %v; want A=int32(1), B=int64(1<<40), C=int32(3)", got, err)
	}
}

func TestUpdateAndDelete(t *testing.T) {
	m := New()
	if err := m.CreateTable("tab"); err != nil {
		t.Fatal(err)
	}
	v1, _ := m.Insert("tab", &ts.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(1), "B": "b"}})
	if _, err := m.Update("tab", &ts.Entity{PartitionKey: "p", RowKey: "r"}, ts.Merge, ""); err == nil || err.(*Error).Code != edm.CodeInvalidInput {
		t.Fatalf("empty If-Match: %v", err)
	}
	v2, err := m.Update("tab", &ts.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(2), "B": nil, "C": true}}, ts.Merge, v1)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := m.Get("tab", "p", "r", nil)
	if len(got.Properties) != 3 || got.Properties["A"] != int32(2) || got.Properties["B"] != "b" || got.Properties["C"] != true {
		t.Fatalf("after merge: %v", got.Properties)
	}
	if c, _ := code(m.Delete("tab", "p", "r", v1)); c != edm.CodeUpdateConditionNotSatisfied {
		t.Fatalf("delete with stale ETag: %q", c)
	}
	if _, err := m.Update("tab", &ts.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"D": int64(4)}}, ts.Replace, ts.ETagAny); err != nil {
		t.Fatal(err)
	}
	got, _ = m.Get("tab", "p", "r", []string{"D", "A"})
	if len(got.Properties) != 1 || got.Properties["D"] != int64(4) {
		t.Fatalf("after replace, select D,A: %v", got.Properties)
	}
	if c, _ := code(m.Delete("tab", "p", "r", v2)); c != edm.CodeUpdateConditionNotSatisfied {
		t.Fatalf("delete with replaced ETag: %q", c)
	}
	if err := m.Delete("tab", "p", "r", ts.ETagAny); err != nil {
		t.Fatal(err)
	}
	if c, _ := code(m.Delete("tab", "p", "r", ts.ETagAny)); c != edm.CodeResourceNotFound {
		t.Fatalf("second delete: %q", c)
	}
	if _, err := m.Update("tab", &ts.Entity{PartitionKey: "p", RowKey: "r"}, ts.Merge, ts.ETagAny); errCode(err) != edm.CodeResourceNotFound {
		t.Fatalf("update of missing: %v", err)
	}
}

func TestTransactionRules(t *testing.T) {
	act := func(typ ts.ActionType, pk, rk string, ifMatch ts.ETag) ts.TransactionAction {
		return ts.TransactionAction{Type: typ, Entity: &ts.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"V": int32(7)}}, IfMatch: ifMatch}
	}
	ins := func(pk, rk string) ts.TransactionAction { return act(ts.ActionInsert, pk, rk, "") }
	var hundred, hundredOne []ts.TransactionAction
	for i := 0; i < 101; i++ {
		a := act(ts.ActionUpsertMerge, "p", strings.Repeat("x", i+1), "")
		if i < 100 {
			hundred = append(hundred, a)
		}
		hundredOne = append(hundredOne, a)
	}
	for _, tc := range []struct {
		name    string
		table   string
		actions []ts.TransactionAction
		code    ts.Code
		index   int
	}{
		{"missing table", "nope", []ts.TransactionAction{ins("p", "a")}, edm.CodeTableNotFound, 0},
		{"empty", "tab", nil, edm.CodeInvalidInput, 0},
		{"101 actions", "tab", hundredOne, edm.CodeInvalidInput, 0},
		{"other partition", "tab", []ts.TransactionAction{ins("p", "a"), ins("p", "b"), ins("q", "c"), ins("r", "d")}, edm.CodeCommandsInBatchActOnDifferentPartitions, 2},
		{"duplicate row", "tab", []ts.TransactionAction{ins("p", "a"), ins("p", "b"), ins("p", "c"), ins("p", "b")}, edm.CodeInvalidDuplicateRow, 3},
		{"insert existing", "tab", []ts.TransactionAction{ins("p", "a"), ins("p", "exists")}, edm.CodeEntityAlreadyExists, 1},
		{"update missing", "tab", []ts.TransactionAction{ins("p", "a"), act(ts.ActionUpdateMerge, "p", "b", "*")}, edm.CodeResourceNotFound, 1},
		{"stale etag", "tab", []ts.TransactionAction{act(ts.ActionDelete, "p", "exists", `W/"m999"`)}, edm.CodeUpdateConditionNotSatisfied, 0},
		{"if-match on insert", "tab", []ts.TransactionAction{ins("p", "a"), act(ts.ActionInsert, "p", "b", "*")}, edm.CodeInvalidInput, 1},
		{"no if-match on delete", "tab", []ts.TransactionAction{ins("p", "a"), act(ts.ActionDelete, "p", "exists", "")}, edm.CodeInvalidInput, 1},
		{"bad entity", "tab", []ts.TransactionAction{ins("p", "a"), {Type: ts.ActionUpsertReplace, Entity: &ts.Entity{PartitionKey: "p", RowKey: "b", Properties: map[string]any{"x-y": int32(1)}}}}, edm.CodePropertyNameInvalid, 1},
		{"100 actions", "tab", hundred, "", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			if err := m.CreateTable("tab"); err != nil {
				t.Fatal(err)
			}
			if _, err := m.Insert("tab", &ts.Entity{PartitionKey: "p", RowKey: "exists"}); err != nil {
				t.Fatal(err)
			}
			_, err := m.SubmitTransaction(tc.table, tc.actions)
			c, i := code(err)
			if c != tc.code || i != tc.index {
				t.Fatalf("got (%q, %d), want (%q, %d)", c, i, tc.code, tc.index)
			}
			want := 1
			if err == nil {
				want += len(tc.actions)
			}
			if n := m.Len("tab"); n != want {
				t.Fatalf("table holds %d entities, want %d (all or nothing)", n, want)
			}
		})
	}
}
