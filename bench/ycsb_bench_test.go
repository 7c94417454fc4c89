package main

import (
	"math/rand/v2"
	"os"
	"testing"
)

// BenchmarkYCSBReads runs YCSB's read (C) and scan (E's, 1..100 records
// from a zipfian key) operations on the tablestore, typed and raw Pebble
// sides of -ycsb, loaded with 20,000 records, for profiling one side:
//
//	go test -run '^$' -bench 'YCSBReads/typed/scan' -cpuprofile cpu.out
//
// cpu-ns/op is the process's CPU time per operation.
func BenchmarkYCSBReads(b *testing.B) {
	const records = 20_000
	for _, side := range []string{sideTablestore, sideTyped, sidePebble} {
		dir, err := os.MkdirTemp("", "ycsb-bench-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = os.RemoveAll(dir) })
		var s ycsbStore
		b.Run(side, func(b *testing.B) {
			if s == nil {
				if s, err = openYCSB(side, dir, storeSettings{cacheSize: 64 << 20}); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { _ = s.close() })
				if res := loadYCSB(s, records); res.Err != "" {
					b.Fatal(res.Err)
				}
			}
			z := newScrambledZipfian(records)
			b.Run("read", func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				b.ReportAllocs()
				cpu0 := selfCPU()
				for b.Loop() {
					if n, err := s.read(ycsbKey(z.next(r, records-1))); err != nil || n != ycsbFieldCount {
						b.Fatal(n, err)
					}
				}
				b.ReportMetric((selfCPU()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
			})
			b.Run("scan", func(b *testing.B) {
				r := rand.New(rand.NewPCG(1, 2))
				b.ReportAllocs()
				cpu0 := selfCPU()
				for b.Loop() {
					if _, err := s.scan(ycsbKey(z.next(r, records-1)), 1+r.IntN(100)); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((selfCPU()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
			})
		})
	}
}
