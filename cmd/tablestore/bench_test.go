package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkImport imports 20,000 generated entities (ten properties
// each, 20 partitions of 1,000) per iteration into a new unsynced store,
// with the lines sorted by key. Figures against the library come from
// bench/ (go run . -cli-import).
func BenchmarkImport(b *testing.B) { benchmarkImport(b, false, false) }

// BenchmarkImportInterleaved is BenchmarkImport with the partitions
// interleaved: no two consecutive lines share a partition.
func BenchmarkImportInterleaved(b *testing.B) { benchmarkImport(b, true, false) }

// BenchmarkImportInterleavedSynced is BenchmarkImportInterleaved with
// synced commits.
func BenchmarkImportInterleavedSynced(b *testing.B) { benchmarkImport(b, true, true) }

// BenchmarkImportTransactionsInterleavedSynced is the interleaved synced
// import with --transactions: one transaction, and one sync, per line.
func BenchmarkImportTransactionsInterleavedSynced(b *testing.B) {
	benchmarkImport(b, true, true, "--transactions")
}

func benchmarkImport(b *testing.B, interleave, synced bool, flags ...string) {
	dir := b.TempDir()
	var buf bytes.Buffer
	const n, parts = 20_000, 20
	for j := range n {
		i := j
		if interleave {
			i = (j%parts)*(n/parts) + j/parts
		}
		fmt.Fprintf(&buf, `{"PartitionKey":"p%05d","RowKey":"r%05d","Active":true,"Amount":%d.25,"Bucket":%d,"City":"Lisbon","Count":%d,"Created@odata.type":"Edm.DateTime","Created":"2024-01-01T00:00:00.0000000Z","Email":"user%09d@example.com","Name":"customer-%09d","Note":"note %016x","Score@odata.type":"Edm.Int64","Score":"%d"}`+"\n",
			i/1000, i%1000, i, i%100, i, i, i, i*7919, i*31)
	}
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	k := 0
	for b.Loop() {
		k++
		io := &stdio{stdin: &bytes.Buffer{}, stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}
		store := filepath.Join(dir, fmt.Sprint("store", k))
		args := append([]string{"import", "--store", store, "T" + "able", in}, flags...)
		if !synced {
			args = append(args, "--no-sync")
		}
		if code := run(context.Background(), args, io); code != 0 {
			b.Fatal(io.stderr)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entities/s")
}
