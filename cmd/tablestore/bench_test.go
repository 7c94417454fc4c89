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
// each) per iteration into a new unsynced store. Figures against the
// library come from bench/ (go run . -cli-import).
func BenchmarkImport(b *testing.B) {
	dir := b.TempDir()
	var buf bytes.Buffer
	const n = 20_000
	for i := range n {
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
		if code := run(context.Background(), []string{"import", "--store", store, "--no-sync", "T" + "able", in}, io); code != 0 {
			b.Fatal(io.stderr)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entities/s")
}
