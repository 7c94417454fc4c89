package tablestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/rootapi"
)

func propEnc(current string, ids ...string) *ts.PropertyEncryption {
	p := &ts.PropertyEncryption{CurrentKeyID: current, Keys: map[string][]byte{}, Tables: map[string][]string{"secrets": {"SSN", "Card", "Other"}}}
	for i, id := range ids {
		p.Keys[id] = bytes.Repeat([]byte{byte(i + 1)}, 32)
	}
	return p
}

// TestPropertyEncryption: encrypted properties are stored as sealed
// binary values holding none of the plaintext, read back whole, with
// every type; other properties and tables are untouched.
func TestPropertyEncryption(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := ts.Open(dir, &ts.Options{PropertyEncryption: propEnc("k1", "k1")})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := db.CreateTable(ctx, "Secrets")
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2024, 5, 6, 7, 8, 9, 100, time.UTC)
	values := map[string]any{"SSN": "123-45-6789 MarkerSSN", "Plain": "visible"}
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "1", Properties: values}); err != nil {
		t.Fatal(err)
	}
	typed := []any{int32(-7), int64(1) << 40, 3.25, true, when, ts.GUID{1, 2, 3}, []byte("bin"), ""}
	for i, v := range typed {
		if err := tb.Upsert(ctx, &ts.Entity{PartitionKey: "t", RowKey: string(rune('a' + i)), Properties: map[string]any{"Card": v}}, ts.Replace); err != nil {
			t.Fatal(err)
		}
	}
	e, err := tb.Get(ctx, "p", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.Properties["SSN"] != values["SSN"] || e.Properties["Plain"] != "visible" {
		t.Fatalf("read back %v", e.Properties)
	}
	n := 0
	for e, err := range tb.Query(ctx, ts.Query{Filter: "PartitionKey eq 't'"}) {
		if err != nil {
			t.Fatal(err)
		}
		want := typed[e.RowKey[0]-'a']
		if got := e.Properties["Card"]; !equalValue(got, want) {
			t.Errorf("%s: read %#v, want %#v", e.RowKey, got, want)
		}
		n++
	}
	if n != len(typed) {
		t.Fatalf("query read %d entities, want %d", n, len(typed))
	}
	db.Close()

	// Without PropertyEncryption the stored values are sealed binary.
	raw, err := ts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	re, err := raw.Table("Secrets").Get(ctx, "p", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	sealed, ok := re.Properties["SSN"].([]byte)
	if !ok || bytes.Contains(sealed, []byte("MarkerSSN")) || re.Properties["Plain"] != "visible" {
		t.Fatalf("stored: %#v", re.Properties)
	}
}

func equalValue(a, b any) bool {
	if ab, ok := a.([]byte); ok {
		bb, ok := b.([]byte)
		return ok && bytes.Equal(ab, bb)
	}
	if at, ok := a.(time.Time); ok {
		bt, ok := b.(time.Time)
		return ok && at.Equal(bt)
	}
	return a == b
}

// TestPropertyEncryptionBinding: a sealed value copied to another entity
// or another property fails to decrypt (ErrCorrupt), as does an altered
// one, and a plaintext value where a sealed one belongs.
func TestPropertyEncryptionBinding(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := ts.Open(dir, &ts.Options{PropertyEncryption: propEnc("k1", "k1")})
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := db.CreateTable(ctx, "Secrets")
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "1", Properties: map[string]any{"SSN": "one"}}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := ts.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	rt := raw.Table("Secrets")
	e, _ := rt.Get(ctx, "p", "1", nil)
	sealed, ok := e.Properties["SSN"].([]byte)
	if !ok {
		t.Fatalf("the stored value is %#v, not sealed binary", e.Properties["SSN"])
	}
	altered := bytes.Clone(sealed)
	altered[len(altered)-1] ^= 1
	for _, w := range []*ts.Entity{
		{PartitionKey: "p", RowKey: "2", Properties: map[string]any{"SSN": sealed}},   // another entity
		{PartitionKey: "p", RowKey: "3", Properties: map[string]any{"Other": sealed}}, // another property
		{PartitionKey: "p", RowKey: "4", Properties: map[string]any{"SSN": altered}},
		{PartitionKey: "p", RowKey: "5", Properties: map[string]any{"SSN": "plain text"}},
	} {
		if err := rt.Insert(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	db, err = ts.Open(dir, &ts.Options{PropertyEncryption: propEnc("k1", "k1")})
	if err != nil {
		t.Fatal(err)
	}
	tb = db.Table("Secrets")
	if e, err := tb.Get(ctx, "p", "1", nil); err != nil || e.Properties["SSN"] != "one" {
		t.Fatalf("the original: %v, %v", e, err)
	}
	for _, rk := range []string{"2", "3", "4", "5"} {
		if _, err := tb.Get(ctx, "p", rk, nil); !errors.Is(err, ts.ErrCorrupt) {
			t.Errorf("entity %s: Get = %v; want ErrCorrupt", rk, err)
		}
	}
	for _, err := range tb.Query(ctx, ts.Query{}) {
		if err != nil {
			if !errors.Is(err, ts.ErrCorrupt) {
				t.Fatalf("query: %v; want ErrCorrupt", err)
			}
			break
		}
	}
	db.Close()
	// AllowPlaintext reads the plaintext one, and still refuses the others.
	pe := propEnc("k1", "k1")
	pe.AllowPlaintext = true
	db, err = ts.Open(dir, &ts.Options{PropertyEncryption: pe})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb = db.Table("Secrets")
	if e, err := tb.Get(ctx, "p", "5", nil); err != nil || e.Properties["SSN"] != "plain text" {
		t.Fatalf("AllowPlaintext: %v, %v", e, err)
	}
	if _, err := tb.Get(ctx, "p", "2", nil); !errors.Is(err, ts.ErrCorrupt) {
		t.Fatalf("AllowPlaintext, a moved value: %v; want ErrCorrupt", err)
	}
}

// TestPropertyEncryptionFilter: a $filter on an encrypted property is
// refused with InvalidInput naming it; one on other properties works.
func TestPropertyEncryptionFilter(t *testing.T) {
	ctx := context.Background()
	db, err := ts.OpenInMemory(&ts.Options{PropertyEncryption: propEnc("k1", "k1")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, _ := db.CreateTable(ctx, "Secrets")
	if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: "1", Properties: map[string]any{"SSN": "x", "Plain": "y"}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"SSN eq 'x'", "Plain eq 'y' and not (Card gt 'a')"} {
		_, err := tb.QueryPage(ctx, ts.Query{Filter: f})
		if ts.ErrorCode(err) != edm.CodeInvalidInput || !strings.Contains(err.Error(), "encrypted property") {
			t.Errorf("filter %q: %v; want InvalidInput naming an encrypted property", f, err)
		}
	}
	if !strings.Contains(func() string { _, err := tb.QueryPage(ctx, ts.Query{Filter: "SSN eq 'x'"}); return err.Error() }(), `"SSN"`) {
		t.Error("the error does not name the property")
	}
	page, err := tb.QueryPage(ctx, ts.Query{Filter: "Plain eq 'y'"})
	if err != nil || len(page.Entities) != 1 || page.Entities[0].Properties["SSN"] != "x" {
		t.Fatalf("filter on a plain property: %v, %v", page, err)
	}
}

// TestPropertyEncryptionRotation: values under an older key read while
// it is in Keys; a rewrite moves them to the current key; without the
// old key a value under it is an EncryptionKeyError naming it.
func TestPropertyEncryptionRotation(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(p *ts.PropertyEncryption) *ts.DB {
		db, err := ts.Open(dir, &ts.Options{PropertyEncryption: p})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open(propEnc("k1", "k1"))
	tb, _ := db.CreateTable(ctx, "Secrets")
	for _, rk := range []string{"a", "b"} {
		if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "p", RowKey: rk, Properties: map[string]any{"SSN": "v" + rk}}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	both := propEnc("k2", "k1", "k2")
	db = open(both)
	tb = db.Table("Secrets")
	e, err := tb.Get(ctx, "p", "a", nil)
	if err != nil || e.Properties["SSN"] != "va" {
		t.Fatalf("read under the old key: %v, %v", e, err)
	}
	if err := tb.Update(ctx, e, ts.Replace, ts.ETagAny); err != nil {
		t.Fatal(err)
	}
	db.Close()
	only2 := propEnc("k2", "k1", "k2")
	delete(only2.Keys, "k1")
	only2.Keys["k2"] = both.Keys["k2"]
	db = open(only2)
	defer db.Close()
	tb = db.Table("Secrets")
	if e, err := tb.Get(ctx, "p", "a", nil); err != nil || e.Properties["SSN"] != "va" {
		t.Fatalf("the rewritten entity with the new key alone: %v, %v", e, err)
	}
	_, err = tb.Get(ctx, "p", "b", nil)
	var ke *ts.EncryptionKeyError
	if !errors.As(err, &ke) || ke.KeyID != "k1" || !errors.Is(err, ts.ErrEncryptionKey) {
		t.Fatalf("the entity under the dropped key: %v; want an EncryptionKeyError naming k1", err)
	}
}

func TestPropertyEncryptionBadOptions(t *testing.T) {
	for name, p := range map[string]*ts.PropertyEncryption{
		"short key":     {CurrentKeyID: "a", Keys: map[string][]byte{"a": make([]byte, 16)}},
		"no current":    {CurrentKeyID: "b", Keys: map[string][]byte{"a": make([]byte, 32)}},
		"empty id":      {CurrentKeyID: "", Keys: map[string][]byte{"": make([]byte, 32)}},
		"encrypted key": {CurrentKeyID: "a", Keys: map[string][]byte{"a": make([]byte, 32)}, Tables: map[string][]string{"t": {"RowKey"}}},
	} {
		if _, err := ts.OpenInMemory(&ts.Options{PropertyEncryption: p}); ts.ErrorCode(err) != edm.CodeInvalidInput {
			t.Errorf("%s: %v; want InvalidInput", name, err)
		}
	}
}

// TestPropertyEncryptionTableFeatures: bulk writes seal like other
// writes; reverse queries open the sealed values and partition deletes
// work (both go by keys alone); the features that would bypass the seal
// (indexes, change feeds, TTL) answer NotImplemented on a table with
// encrypted properties, and work on the others.
func TestPropertyEncryptionTableFeatures(t *testing.T) {
	ctx := context.Background()
	db, err := ts.OpenInMemory(&ts.Options{PropertyEncryption: propEnc("k1", "k1")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, _ := db.CreateTable(ctx, "Secrets")
	w, err := tb.NewBulkWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := w.Add(ctx, &ts.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i), Properties: map[string]any{"SSN": fmt.Sprint("s", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if e, err := tb.Get(ctx, "p", "7", nil); err != nil || e.Properties["SSN"] != "s7" {
		t.Fatalf("a bulk-written entity: %v, %v", e, err)
	}
	page, err := tb.QueryPage(ctx, ts.Query{Reverse: true, Top: 3})
	if err != nil || len(page.Entities) != 3 || page.Entities[0].RowKey != "9" || page.Entities[0].Properties["SSN"] != "s9" {
		t.Fatalf("a reverse page of the encrypted table: %+v, %v; want RowKey 9 first with SSN s9", page, err)
	}
	if _, err := tb.QueryPage(ctx, ts.Query{Reverse: true, Filter: "SSN eq 's1'"}); ts.ErrorCode(err) != edm.CodeInvalidInput {
		t.Fatalf("a reverse query filtering an encrypted property: %v; want InvalidInput", err)
	}
	if err := tb.Partition("p").DeleteRange(ctx, "5", ""); err != nil {
		t.Fatalf("a range delete on the encrypted table: %v", err)
	}
	if err := tb.Partition("p").DeleteAll(ctx); err != nil {
		t.Fatalf("a partition delete on the encrypted table: %v", err)
	}
	if n := countEntities(t, tb); n != 0 {
		t.Fatalf("%d entities left after the partition delete", n)
	}
	if err := tb.CreateIndex(ctx, ts.IndexSpec{Name: "bySSN", Properties: []string{"SSN"}}); ts.ErrorCode(err) != edm.CodeInvalidInput || !strings.Contains(err.Error(), `"SSN"`) {
		t.Fatalf("an index on an encrypted property: %v; want InvalidInput naming SSN", err)
	}
	if err := tb.CreateIndex(ctx, ts.IndexSpec{Name: "byPlain", Properties: []string{"Plain"}}); err != nil {
		t.Fatalf("an index on a plain property of the encrypted table: %v", err)
	}
	for i := range 4 {
		if err := tb.Insert(ctx, &ts.Entity{PartitionKey: "q", RowKey: fmt.Sprint(i), Properties: map[string]any{"SSN": fmt.Sprint("x", i), "Plain": int32(i % 2)}}); err != nil {
			t.Fatal(err)
		}
	}
	var viaIndex []string
	for e, err := range tb.Query(ctx, ts.Query{Filter: "Plain eq 1", Index: "byPlain"}) {
		if err != nil {
			t.Fatalf("a query through the index: %v", err)
		}
		viaIndex = append(viaIndex, e.Properties["SSN"].(string))
	}
	if strings.Join(viaIndex, ",") != "x1,x3" {
		t.Fatalf("through the index: SSN %v; want x1,x3 opened", viaIndex)
	}
	if _, err := tb.QueryPage(ctx, ts.Query{Filter: "Plain eq 1 and SSN eq 'x1'", Index: "byPlain"}); ts.ErrorCode(err) != edm.CodeInvalidInput {
		t.Fatalf("a query through the index filtering an encrypted property: %v; want InvalidInput", err)
	}
	other, _ := db.CreateTable(ctx, "Other")
	for name, f := range map[string]func(tb *ts.Table) error{
		"feed": func(tb *ts.Table) error { return tb.EnableChangeFeed(ctx, ts.ChangeFeedOptions{}) },
		"ttl":  func(tb *ts.Table) error { return tb.SetTTL(ctx, ts.TTL{Default: time.Hour}) },
	} {
		if err := f(tb); ts.ErrorCode(err) != edm.CodeNotImplemented {
			t.Errorf("%s on the encrypted table: %v; want NotImplemented", name, err)
		}
		if err := f(other); err != nil {
			t.Errorf("%s on another table: %v", name, err)
		}
	}
}

// TestPropertyEncryptionDistinctTimestamps: a transaction with
// DistinctTimestamps on a table with encrypted properties seals them and
// gives each entity its own Timestamp, increasing.
func TestPropertyEncryptionDistinctTimestamps(t *testing.T) {
	ctx := context.Background()
	db, err := ts.OpenInMemory(&ts.Options{PropertyEncryption: propEnc("k1", "k1")})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tb, err := db.CreateTable(ctx, "Secrets")
	if err != nil {
		t.Fatal(err)
	}
	var actions []ts.TransactionAction
	for _, rk := range []string{"1", "2", "3"} {
		actions = append(actions, ts.TransactionAction{Type: ts.ActionInsert,
			Entity: &ts.Entity{PartitionKey: "p", RowKey: rk, Properties: map[string]any{"SSN": "ssn " + rk}}})
	}
	if err := rootAPI.SubmitTransaction(tb, ctx, actions, driver.CommitOptions{DistinctTimestamps: true}); err != nil {
		t.Fatal(err)
	}
	var prev time.Time
	for _, a := range actions {
		e := a.Entity.(*ts.Entity)
		got, err := tb.Get(ctx, e.PartitionKey, e.RowKey, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.Properties["SSN"] != "ssn "+e.RowKey || got.ETag != e.ETag || !got.Timestamp.After(prev) {
			t.Errorf("%s: %v %s %v, after %v", e.RowKey, got.Properties, got.ETag, got.Timestamp, prev)
		}
		prev = got.Timestamp
	}
}

// rootAPI reaches the root's transaction with options.
var rootAPI = rootapi.Get[*ts.DB, *ts.Table, ts.Query, *ts.Page, ts.JSONOptions, ts.TransactionAction]()
