package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"testing"
)

// The benchmarks here measure the target pairs (tablestore and raw Pebble
// doing the same work) under go test, so they can be profiled:
//
//	go test -run '^$' -bench 'Txn100/tablestore/nosync' -cpuprofile cpu.out
//
// Read benchmarks share one data set of benchEntities entities per side,
// loaded once per test binary run into a temporary directory.

// benchEntities is the data set size of the read benchmarks.
const benchEntities = 100_000

var (
	benchOnce   sync.Once
	benchDir    string
	benchStores map[string]store
	benchErr    error
)

// benchData returns side's store holding the benchmark data set.
func benchData(b *testing.B, side string) store {
	b.Helper()
	benchOnce.Do(func() {
		benchDir, benchErr = os.MkdirTemp("", "tablestore-bench-test-")
		if benchErr != nil {
			return
		}
		benchStores = map[string]store{}
		for _, side := range benchSides() {
			dir := filepath.Join(benchDir, side)
			s, err := safeOpen(side, dir, storeSettings{cacheSize: 64 << 20})
			if err != nil {
				benchErr = err
				return
			}
			if benchErr = loadRecords(context.Background(), s, benchEntities); benchErr != nil {
				return
			}
			// Settle the store into its bottom level, as the program does
			// by default (-settle), so every side reads the same LSM shape
			// and the first benchmark pays for no compaction the load left.
			if s, benchErr = settleBenchStore(side, dir, s); benchErr != nil {
				return
			}
			benchStores[side] = s
		}
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchStores[side]
}

// settleBenchStore compacts side's store s, loaded in dir, whole and
// returns it (reopened, for tablestore's sides).
func settleBenchStore(side, dir string, s store) (store, error) {
	ctx := context.Background()
	settings := storeSettings{cacheSize: 64 << 20}
	switch p := s.(type) {
	case *pebbleStore:
		return s, compactAll(ctx, p.db)
	case *tablestoreStore, *typedStore:
		if err := s.close(); err != nil {
			return nil, err
		}
		if err := compactClosedStore(ctx, filepath.Join(dir, "tablestore"), settings); err != nil {
			return nil, err
		}
		return safeOpen(side, dir, settings)
	}
	return s, nil
}

// loadRecords upserts records 0 to n-1 (genRecord's) into s in batches
// of batchSize.
func loadRecords(ctx context.Context, s store, n int) error {
	recs := make([]record, batchSize)
	for i := 0; i < n; i += batchSize {
		for j := range recs {
			genRecord(&recs[j], i+j)
		}
		if err := s.upsertBatch(ctx, recs); err != nil {
			return err
		}
	}
	return nil
}

func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == bareServeArg {
		// startBare's child, when a test starts the transport floor.
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
		err := runBareServe(ctx, os.Args[2])
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if len(os.Args) > 1 && (os.Args[1] == ycsbWorkerArg || os.Args[1] == sdkServeArg) {
		// A YCSB side's worker or the in-memory server child, when a
		// test runs the -ycsb mode.
		if err := run(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	for _, s := range benchStores {
		s.close()
	}
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

// BenchmarkTxn100 measures batches of 100 upserts: tablestore
// transactions of built entities against raw Pebble batches of 100 Sets
// of the encoded bytes; one op is one batch. Building entities and
// encoding is outside the timer. The typed side commits structs.
func BenchmarkTxn100(b *testing.B) {
	for _, side := range benchSides() {
		for _, sync := range []bool{false, true} {
			name := side + "/nosync"
			if sync {
				name = side + "/sync"
			}
			b.Run(name, func(b *testing.B) {
				s, err := safeOpen(side, b.TempDir(), storeSettings{sync: sync, cacheSize: 64 << 20})
				if err != nil {
					b.Fatal(err)
				}
				defer s.close()
				bp := s.(batchPreparer)
				ctx := context.Background()
				recs := make([]record, batchSize)
				commits := make([]func() error, 0, txnChunk)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if i%txnChunk == 0 {
						b.StopTimer()
						commits = commits[:0]
						for k := 0; k < txnChunk; k++ {
							for j := range recs {
								genRecord(&recs[j], (i+k)*batchSize+j)
							}
							commits = append(commits, bp.prepareBatch(ctx, recs))
						}
						b.StartTimer()
					}
					if err := commits[i%txnChunk](); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer() // closing (a final sync) is not part of the work
				b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "entities/s")
			})
		}
	}
}

// benchSides are the sides of the benchmarks here: the targets' and the
// typed path.
func benchSides() []string { return append(targetSides(), sideTyped) }

// BenchmarkGet measures point gets of random existing entities.
func BenchmarkGet(b *testing.B) {
	for _, side := range benchSides() {
		b.Run(side, func(b *testing.B) {
			s := benchData(b, side)
			pks, rks := randomKeys(scale{Entities: benchEntities}, 4096, 1)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.get(context.Background(), pks[i%4096], rks[i%4096]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRange measures queries of 100 consecutive RowKeys of one
// partition.
func BenchmarkRange(b *testing.B) {
	for _, side := range benchSides() {
		b.Run(side, func(b *testing.B) {
			s := benchData(b, side)
			qs := rangeQueries(rand.New(rand.NewPCG(3, 4)), 1024, benchEntities/partitionSize)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q := qs[i%len(qs)]
				if n, err := s.rangeQuery(context.Background(), q.pk, q.lo, q.hi); err != nil || n != rangeRows {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// BenchmarkPartitionScan measures scans of a 1,000-entity partition.
func BenchmarkPartitionScan(b *testing.B) {
	for _, side := range benchSides() {
		b.Run(side, func(b *testing.B) {
			s := benchData(b, side)
			r := rand.New(rand.NewPCG(1, 2))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n, err := s.partitionScan(context.Background(), partitionKey(r.IntN(benchEntities/partitionSize)))
				if err != nil || n != partitionSize {
					b.Fatal(n, err)
				}
			}
			b.ReportMetric(float64(b.N*partitionSize)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}

// BenchmarkFilterScan measures a table scan with a 1% non-key filter.
func BenchmarkFilterScan(b *testing.B) {
	want := countMatches(benchEntities)
	for _, side := range targetSides() {
		b.Run(side, func(b *testing.B) {
			s := benchData(b, side)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n, err := s.filterScan(context.Background(), filterBucket)
				if err != nil || n != want {
					b.Fatal(n, err)
				}
			}
			b.ReportMetric(float64(b.N*benchEntities)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}

// BenchmarkResume measures reading page 1 and page 100 (Top 1000) of the
// whole table; the target compares the two on tablestore.
func BenchmarkResume(b *testing.B) {
	for _, side := range targetSides() {
		s := benchData(b, side)
		token := ""
		for p := 1; p < 100; p++ {
			_, next, err := s.page(context.Background(), token, pageTop)
			if err != nil {
				b.Fatal(err)
			}
			token = next
		}
		for _, c := range []struct {
			name, token string
		}{{"page1", ""}, {"page100", token}} {
			b.Run(fmt.Sprintf("%s/%s", side, c.name), func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					if n, _, err := s.page(context.Background(), c.token, pageTop); err != nil || n != pageTop {
						b.Fatal(n, err)
					}
				}
			})
		}
	}
}

// BenchmarkPaging measures reading the table in pages of pageTop, each
// resumed from the last one's token, from the start again after the last;
// one op is one page. cpu-ns/op is the process's CPU time per page:
//
//	go test -run '^$' -bench 'Paging/(typed|pebble)$' -benchmem -cpuprofile cpu.out
func BenchmarkPaging(b *testing.B) {
	for _, side := range benchSides() {
		b.Run(side, func(b *testing.B) {
			s := benchData(b, side)
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := selfCPU()
			read, token := 0, ""
			for i := 0; i < b.N; i++ {
				n, next, err := s.page(context.Background(), token, pageTop)
				if err != nil || n == 0 {
					b.Fatal(n, err)
				}
				read, token = read+n, next
			}
			b.ReportMetric((selfCPU()-cpu0)*1e9/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}
