package tablestore

import (
	"fmt"
	"testing"
	"time"
)

// benchEntity is the shape of bench/'s data set: ten properties.
func benchEntity(i int) *Entity {
	return &Entity{
		PartitionKey: "p0001",
		RowKey:       fmt.Sprintf("r%08d", i),
		Properties: map[string]any{
			"Name":    fmt.Sprintf("customer-%09d", i),
			"Email":   fmt.Sprintf("user%09d@example.com", i),
			"City":    "Lisbon",
			"Note":    fmt.Sprintf("note %016x %016x", i*7919, i*104729),
			"Count":   int32(i % 1000),
			"Bucket":  int32(i % 100),
			"Score":   int64(i) * 31,
			"Amount":  float64(i) * 1.25,
			"Active":  i%2 == 0,
			"Created": time.Date(2024, 1, 1, 0, 0, i%60, 0, time.UTC),
		},
	}
}

// emptyBenchTable returns a new table in an unsynced in-memory store that is
// closed when b ends.
func emptyBenchTable(b *testing.B) *Table {
	db, err := OpenInMemory(&Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	tbl, err := db.CreateTable(ctx, "Bench")
	if err != nil {
		b.Fatal(err)
	}
	return tbl
}

// BenchmarkSubmitTransaction100 submits transactions of 100 upserts
// (replace) of bench/'s entity shape to an unsynced in-memory store; the
// allocations per op are per transaction, so divide by 100 for an entity.
// Most of B/op is the in-memory file system's write-ahead log growing.
func BenchmarkSubmitTransaction100(b *testing.B) {
	tbl := emptyBenchTable(b)
	const n = 100
	// 50 transactions of distinct entities, as bench/ prepares them: the
	// maps are mostly out of the CPU caches when submitted.
	txns := make([][]TransactionAction, 50)
	for t := range txns {
		txns[t] = make([]TransactionAction, n)
		for i := range txns[t] {
			txns[t][i] = TransactionAction{Type: ActionUpsertReplace, Entity: benchEntity(t*n + i)}
		}
	}
	b.ReportAllocs()
	k := 0
	for b.Loop() {
		if err := tbl.SubmitTransaction(ctx, txns[k%len(txns)]); err != nil {
			b.Fatal(err)
		}
		k++
	}
}

// benchStructActions returns n upserts (replace) of bench/'s entity
// shape as structs, entities first onwards.
func benchStructActions(first, n int) []TransactionAction {
	actions := make([]TransactionAction, n)
	for i := range actions {
		e := benchEntity(first + i)
		p := e.Properties
		actions[i] = TransactionAction{Type: ActionUpsertReplace, Entity: StructEntity(&allocRow{
			PartitionKey: e.PartitionKey, RowKey: e.RowKey,
			Name: p["Name"].(string), Email: p["Email"].(string), City: p["City"].(string), Note: p["Note"].(string),
			Count: p["Count"].(int32), Bucket: p["Bucket"].(int32), Score: p["Score"].(int64),
			Amount: p["Amount"].(float64), Active: p["Active"].(bool), Created: p["Created"].(time.Time),
		})}
	}
	return actions
}

// BenchmarkSubmitTransaction100Typed is BenchmarkSubmitTransaction100
// with struct actions.
func BenchmarkSubmitTransaction100Typed(b *testing.B) {
	tbl := emptyBenchTable(b)
	actions := benchStructActions(0, 100)
	b.ReportAllocs()
	for b.Loop() {
		if err := tbl.SubmitTransaction(ctx, actions); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrepareTransaction100Typed times the library's share of a
// transaction of 100 struct upserts: validating and encoding it, without
// the commit. 50 transactions of distinct structs take turns, as in
// BenchmarkSubmitTransaction100.
func BenchmarkPrepareTransaction100Typed(b *testing.B) {
	txns := make([][]TransactionAction, 50)
	for t := range txns {
		txns[t] = benchStructActions(t*100, 100)
	}
	benchPrepareTransactions(b, txns)
}

// BenchmarkPrepareTransaction100 is BenchmarkPrepareTransaction100Typed
// with entity maps.
func BenchmarkPrepareTransaction100(b *testing.B) {
	txns := make([][]TransactionAction, 50)
	for t := range txns {
		txns[t] = make([]TransactionAction, 100)
		for i := range txns[t] {
			txns[t][i] = TransactionAction{Type: ActionUpsertReplace, Entity: benchEntity(t*100 + i)}
		}
	}
	benchPrepareTransactions(b, txns)
}

// benchPrepareTransactions validates and encodes txns in turn, one per
// iteration, without committing them.
func benchPrepareTransactions(b *testing.B, txns [][]TransactionAction) {
	b.ReportAllocs()
	k := 0
	for b.Loop() {
		s := getScratch()
		if _, err := s.prepareTransaction(txns[k%len(txns)]); err != nil {
			b.Fatal(err)
		}
		putScratch(s)
		k++
	}
}
