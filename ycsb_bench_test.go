package tablestore

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// ycsbBenchRow is bench/'s YCSB record in the struct mapping: ten
// String fields of 100 bytes under one partition.
type ycsbBenchRow struct {
	PartitionKey, RowKey string
	F0                   string `table:"field0,omitempty"`
	F1                   string `table:"field1,omitempty"`
	F2                   string `table:"field2,omitempty"`
	F3                   string `table:"field3,omitempty"`
	F4                   string `table:"field4,omitempty"`
	F5                   string `table:"field5,omitempty"`
	F6                   string `table:"field6,omitempty"`
	F7                   string `table:"field7,omitempty"`
	F8                   string `table:"field8,omitempty"`
	F9                   string `table:"field9,omitempty"`
}

// ycsbBenchTable loads records YCSB records into one partition and
// flushes them, so reads go to sstables as in bench/'s -ycsb.
func ycsbBenchTable(b *testing.B, records int) (*Table, []string) {
	b.Helper()
	db, err := OpenInMemory(&Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = db.Close() })
	tbl, err := db.CreateTable(ctx, "YCSB")
	if err != nil {
		b.Fatal(err)
	}
	keys := make([]string, records)
	for i := range keys {
		keys[i] = fmt.Sprintf("user%019d", uint64(i)*0x9E3779B97F4A7C15%1e19)
	}
	val := strings.Repeat("x", 100)
	for r := 0; r < records; r += 100 {
		var actions []TransactionAction
		for i := r; i < r+100 && i < records; i++ {
			row := &ycsbBenchRow{PartitionKey: "ycsb", RowKey: keys[i],
				F0: val, F1: val, F2: val, F3: val, F4: val, F5: val, F6: val, F7: val, F8: val, F9: val}
			actions = append(actions, TransactionAction{Type: ActionUpsertReplace, Entity: StructEntity(row)})
		}
		if err := tbl.SubmitTransaction(ctx, actions); err != nil {
			b.Fatal(err)
		}
	}
	if err := flush(db); err != nil {
		b.Fatal(err)
	}
	return tbl, keys
}

// BenchmarkYCSBShape runs bench/'s -ycsb reads on the library alone, for
// profiling: a point get and workload E's scan (a $filter from a key on,
// Limit uniform in 1..100), through the struct and the map API.
func BenchmarkYCSBShape(b *testing.B) {
	tbl, keys := ycsbBenchTable(b, 20000)
	scanQ := func(key string, n int) Query {
		return Query{Filter: "PartitionKey eq 'ycsb' and RowKey ge '" + key + "'", Top: n, Limit: n}
	}
	b.Run("typed/get", func(b *testing.B) {
		b.ReportAllocs()
		rng := rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			r, err := GetStruct[ycsbBenchRow](ctx, tbl, "ycsb", keys[rng.IntN(len(keys))], nil)
			if err != nil || r.F9 == "" {
				b.Fatal(err)
			}
		}
	})
	b.Run("maps/get", func(b *testing.B) {
		b.ReportAllocs()
		rng := rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			e, err := tbl.Get(ctx, "ycsb", keys[rng.IntN(len(keys))], nil)
			if err != nil || len(e.Properties) != 10 {
				b.Fatal(err)
			}
		}
	})
	b.Run("typed/scan", func(b *testing.B) {
		b.ReportAllocs()
		rng := rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			n := 1 + rng.IntN(100)
			for r, err := range QueryStructs[ycsbBenchRow](ctx, tbl, scanQ(keys[rng.IntN(len(keys))], n)) {
				if err != nil || r.F9 == "" {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("maps/scan", func(b *testing.B) {
		b.ReportAllocs()
		rng := rand.New(rand.NewPCG(1, 2))
		for b.Loop() {
			n := 1 + rng.IntN(100)
			for e, err := range tbl.Query(ctx, scanQ(keys[rng.IntN(len(keys))], n)) {
				if err != nil || len(e.Properties) != 10 {
					b.Fatal(err)
				}
			}
		}
	})
}
