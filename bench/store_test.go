package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// storeTestEntities is the data set size of the store tests: three
// partitions.
const storeTestEntities = 3 * partitionSize

// openTestStore opens side on a fresh directory with the test data set
// loaded. A tablestore engine that has not landed yet skips the test.
func openTestStore(t *testing.T, side string, sync bool) store {
	t.Helper()
	s, err := safeOpen(side, t.TempDir(), storeSettings{sync: sync, cacheSize: 8 << 20})
	if err != nil {
		if strings.Contains(err.Error(), "skeleton") {
			t.Skipf("%s is not implemented yet: %v", side, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.close(); err != nil {
			t.Error(err)
		}
	})
	if err := loadRecords(context.Background(), s, storeTestEntities); err != nil {
		t.Fatal(err)
	}
	return s
}

// skipOnSkeleton skips the test when a part of tablestore that has not
// landed yet panics with "skeleton"; other panics go on.
func skipOnSkeleton(t *testing.T) {
	if r := recover(); r != nil {
		if r == "skeleton" {
			t.Skip("tablestore queries are not implemented yet")
		}
		panic(r)
	}
}

func TestStoresAgree(t *testing.T) {
	for _, side := range sideNames {
		t.Run(side, func(t *testing.T) {
			defer skipOnSkeleton(t)
			s := openTestStore(t, side, false)
			ctx := context.Background()

			n, err := s.get(ctx, partitionKey(1), rowKey(17))
			if err != nil || n != propertyCount {
				t.Fatalf("get: %d properties, %v", n, err)
			}
			if _, err := s.get(ctx, partitionKey(1), "nope"); !errors.Is(err, errNotFound) {
				t.Fatalf("get of a missing entity: %v, want errNotFound", err)
			}
			writer := s
			if m, ok := s.(pebbleMapsStore); ok {
				writer = m.pebbleStore
				if err := s.insert(ctx, &record{PK: "a", RK: "b"}); !errors.Is(err, errReadsOnly) {
					t.Fatalf("insert through the raw-maps side: %v", err)
				}
			}
			var rec record
			genRecord(&rec, 5)
			if err := writer.insert(ctx, &rec); err == nil {
				t.Fatal("insert of an existing entity succeeded")
			}
			genRecordKeys(&rec, 5, "new", "row")
			if err := writer.insert(ctx, &rec); err != nil {
				t.Fatal(err)
			}

			before, err := writer.readCount(ctx, partitionKey(0), rowKey(3))
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if err := writer.readModifyWrite(ctx, partitionKey(0), rowKey(3)); err != nil {
					t.Fatal(err)
				}
			}
			after, err := writer.readCount(ctx, partitionKey(0), rowKey(3))
			if err != nil || after != before+3 {
				t.Fatalf("Count %d after 3 updates from %d (%v)", after, before, err)
			}
			// The inserted entity is in partition "new", after the data set.

			if n, err := s.rangeQuery(ctx, partitionKey(2), rowKey(100), rowKey(200)); err != nil || n != 100 {
				t.Fatalf("range: %d, %v; want 100", n, err)
			}
			if n, err := s.partitionScan(ctx, partitionKey(0)); err != nil || n != partitionSize {
				t.Fatalf("partition scan: %d, %v; want %d", n, err, partitionSize)
			}
			if n, err := s.partitionScan(ctx, partitionKey(9)); err != nil || n != 0 {
				t.Fatalf("scan of an empty partition: %d, %v", n, err)
			}
			want := countMatches(storeTestEntities)
			if rec.Bucket == filterBucket {
				want++ // the inserted entity
			}
			if n, err := s.filterScan(ctx, filterBucket); err != nil || n != want {
				t.Fatalf("filter scan: %d, %v; want %d", n, err, want)
			}

			// Paging with a page size that does not divide the table.
			var sizes []int
			token := ""
			for {
				n, next, err := s.page(ctx, token, 700)
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, n)
				if next == "" {
					break
				}
				if len(sizes) > 10 {
					t.Fatalf("paging does not end: %v", sizes)
				}
				token = next
			}
			total := 0
			for _, n := range sizes {
				total += n
			}
			if total != storeTestEntities+1 || sizes[0] != 700 {
				t.Fatalf("pages %v: %d entities, want %d in pages of 700", sizes, total, storeTestEntities+1)
			}
		})
	}
}

func TestConcurrentReadModifyWriteLosesNoUpdate(t *testing.T) {
	for _, side := range sideNames {
		if readsOnly(side) {
			continue
		}
		t.Run(side, func(t *testing.T) {
			s := openTestStore(t, side, false)
			ctx := context.Background()
			pk, rk := partitionKey(0), rowKey(9)
			before, err := s.readCount(ctx, pk, rk)
			if err != nil {
				t.Fatal(err)
			}
			var done atomic.Int64
			var wg sync.WaitGroup
			for w := 0; w < 4; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 40 {
						switch err := s.readModifyWrite(ctx, pk, rk); {
						case err == nil:
							done.Add(1)
						case !errors.Is(err, errConflict):
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			after, err := s.readCount(ctx, pk, rk)
			if err != nil {
				t.Fatal(err)
			}
			if int64(after-before) != done.Load() || done.Load() == 0 {
				t.Fatalf("Count grew by %d, %d updates succeeded", after-before, done.Load())
			}
		})
	}
}
