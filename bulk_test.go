package tablestore

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// noBulkConn hides the engine's bulk commits, so a BulkWriter commits
// through transactions as it does on a remote driver.
type noBulkConn struct{ driver.Conn }

type noBulkTable struct{ driver.Table }

func (c noBulkConn) Table(name string) driver.Table { return noBulkTable{c.Conn.Table(name)} }

// bulkStores returns a store whose driver commits in bulk and one whose
// driver does not, each with table "Bulk".
func bulkStores(t *testing.T) map[string]*DB {
	t.Helper()
	withBulk := openTestDB(t, nil)
	inner := openTestDB(t, nil)
	without, err := OpenDriver(noBulkConn{inner.conn}, nil)
	require.NoError(t, err)
	stores := map[string]*DB{"bulk": withBulk, "transactions": without}
	for _, db := range stores {
		_, err := db.CreateTable(ctx, "Bulk")
		require.NoError(t, err)
	}
	_, ok := withBulk.Table("Bulk").drv.(driver.BulkCommitter)
	require.True(t, ok, "the engine commits in bulk")
	_, ok = without.Table("Bulk").drv.(driver.BulkCommitter)
	require.False(t, ok)
	return stores
}

// bulkEntity is entity i of n interleaved over parts partitions.
func bulkEntity(i, parts int) *Entity {
	return &Entity{PartitionKey: fmt.Sprintf("p%03d", i%parts), RowKey: fmt.Sprintf("r%06d", i),
		Properties: map[string]any{"I": int64(i), "S": fmt.Sprintf("value %d", i)}}
}

// commits records a writer's OnCommit calls.
type commits struct{ all []BulkCommit }

func (c *commits) on(bc BulkCommit) { c.all = append(c.all, bc) }

func (c *commits) written() (n int) {
	for _, bc := range c.all {
		n += bc.Written
	}
	return n
}

func TestBulkWriterUnsortedInsert(t *testing.T) {
	for name, db := range bulkStores(t) {
		t.Run(name, func(t *testing.T) {
			const n, parts = 3000, 40
			var cs commits
			w, err := db.Table("Bulk").NewBulkWriter(&BulkOptions{BatchEntities: 250, OnCommit: cs.on})
			require.NoError(t, err)
			for i := range n {
				require.NoError(t, w.Add(ctx, bulkEntity(i, parts)))
			}
			require.NoError(t, w.Flush(ctx))
			require.NoError(t, w.Flush(ctx), "a second Flush has nothing to do")
			require.Equal(t, BulkStats{Added: n, Written: n, Commits: n / 250}, w.Stats())
			require.Len(t, cs.all, n/250)
			for k, bc := range cs.all {
				require.Equal(t, int64((k+1)*250), bc.Through)
				require.Equal(t, 250, bc.Written)
				require.Empty(t, bc.Refused)
			}
			count := 0
			for e, err := range db.Table("Bulk").Query(ctx, Query{}) {
				require.NoError(t, err)
				var i int
				_, err := fmt.Sscanf(e.RowKey, "r%06d", &i)
				require.NoError(t, err)
				require.Equal(t, bulkEntity(i, parts).Properties, e.Properties)
				require.Equal(t, fmt.Sprintf("p%03d", i%parts), e.PartitionKey)
				count++
			}
			require.Equal(t, n, count)
		})
	}
}

// TestBulkWriterRefusals runs inserts over entities that partly exist,
// with and without ContinueOnError, on both commit paths, and requires
// the same outcome: what is written, what is refused, where it stops.
func TestBulkWriterRefusals(t *testing.T) {
	const n, parts = 400, 7
	existing := map[int]bool{13: true, 150: true, 151: true, 399: true}
	for _, cont := range []bool{true, false} {
		for name, db := range bulkStores(t) {
			t.Run(fmt.Sprintf("%s/continue=%v", name, cont), func(t *testing.T) {
				tb := db.Table("Bulk")
				for i := range existing {
					e := bulkEntity(i, parts)
					e.Properties = map[string]any{"Old": true}
					require.NoError(t, tb.Insert(ctx, e))
				}
				var cs commits
				w, err := tb.NewBulkWriter(&BulkOptions{BatchEntities: 100, ContinueOnError: cont, OnCommit: cs.on})
				require.NoError(t, err)
				var addErr error
				for i := 0; i < n && addErr == nil; i++ {
					addErr = w.Add(ctx, bulkEntity(i, parts))
				}
				if addErr == nil {
					addErr = w.Flush(ctx)
				}
				if cont {
					require.NoError(t, addErr)
					var refused []int64
					for _, bc := range cs.all {
						for _, be := range bc.Refused {
							require.ErrorIs(t, be, ErrEntityAlreadyExists)
							refused = append(refused, be.Seq)
						}
					}
					require.Equal(t, []int64{13, 150, 151, 399}, refused)
					require.Equal(t, n-4, cs.written())
					require.Equal(t, BulkStats{Added: n, Written: n - 4, Refused: 4, Commits: 4}, w.Stats())
				} else {
					// Stops at 13: 0..12 written, nothing at or after 13.
					var be *BulkError
					require.ErrorAs(t, addErr, &be)
					require.Equal(t, int64(13), be.Seq)
					require.Equal(t, "r000013", be.RowKey)
					require.ErrorIs(t, addErr, ErrEntityAlreadyExists)
					require.Len(t, cs.all, 1)
					require.Equal(t, BulkCommit{Through: 13, Written: 13}, cs.all[0])
					require.Equal(t, addErr, w.Add(ctx, bulkEntity(1000, parts)), "the writer stays stopped")
					require.Equal(t, addErr, w.Flush(ctx))
				}
				for i := range n {
					e, err := tb.Get(ctx, fmt.Sprintf("p%03d", i%parts), fmt.Sprintf("r%06d", i), nil)
					switch {
					case existing[i]:
						require.NoError(t, err)
						require.Equal(t, map[string]any{"Old": true}, e.Properties, "entity %d is left alone", i)
					case cont || i < 13:
						require.NoError(t, err, "entity %d", i)
						require.Equal(t, int64(i), e.Properties["I"])
					default:
						require.ErrorIs(t, err, ErrResourceNotFound, "entity %d", i)
					}
				}
			})
		}
	}
}

func TestBulkWriterValidation(t *testing.T) {
	for name, db := range bulkStores(t) {
		t.Run(name, func(t *testing.T) {
			w, err := db.Table("Bulk").NewBulkWriter(nil)
			require.NoError(t, err)
			require.NoError(t, w.Add(ctx, bulkEntity(0, 1)))
			bad := []struct {
				e    *Entity
				code Code
			}{
				{&Entity{PartitionKey: "a/b", RowKey: "r"}, edm.CodeOutOfRangeInput},
				{&Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"1x": int32(1)}}, edm.CodePropertyNameInvalid},
				{&Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"X": struct{}{}}}, edm.CodeInvalidValueType},
				{nil, edm.CodeInvalidInput},
			}
			for k, b := range bad {
				err := w.Add(ctx, b.e)
				var be *BulkError
				require.ErrorAs(t, err, &be)
				require.Equal(t, int64(k+1), be.Seq)
				require.Equal(t, b.code, ErrorCode(err), "%v", err)
				require.ErrorIs(t, err, sentinels[b.code])
			}
			// The same errors as a single write's.
			for _, b := range bad[:3] {
				single := db.Table("Bulk").Insert(ctx, b.e)
				require.Equal(t, ErrorCode(single), ErrorCode(w.Add(ctx, b.e)))
			}
			require.NoError(t, w.Add(ctx, bulkEntity(1, 1)), "the writer goes on")
			require.NoError(t, w.Flush(ctx))
			st := w.Stats()
			require.Equal(t, int64(2), st.Written)
			require.Equal(t, int64(7), st.Invalid)
		})
	}
}

// TestBulkWriterStructs: Add takes StructEntity(v) and stores what
// InsertStruct stores; a struct that does not encode is a *BulkError
// with its keys and MarshalEntity's or Insert's code.
func TestBulkWriterStructs(t *testing.T) {
	db := openTestDB(t, nil)
	tb, err := db.CreateTable(ctx, "BulkStructs")
	require.NoError(t, err)
	type row struct {
		PartitionKey, RowKey string
		N                    int32
		S                    string
	}
	w, err := tb.NewBulkWriter(nil)
	require.NoError(t, err)
	require.NoError(t, w.Add(ctx, StructEntity(&row{"p", "a", 1, "x"})))
	require.NoError(t, w.Add(ctx, StructEntity(row{"p", "b", 2, "y"})))
	var be *BulkError
	require.ErrorAs(t, w.Add(ctx, StructEntity(row{"p", "c/d", 3, ""})), &be)
	require.Equal(t, [3]any{int64(2), "p", "c/d"}, [3]any{be.Seq, be.PartitionKey, be.RowKey})
	requireCode(t, be, edm.CodeOutOfRangeInput)
	requireCode(t, w.Add(ctx, StructEntity(7)), edm.CodeInvalidValueType)
	requireCode(t, w.Add(ctx, StructEntity(nil)), edm.CodeInvalidInput)
	requireCode(t, w.Add(ctx, nil), edm.CodeInvalidInput)
	require.NoError(t, w.Flush(ctx))
	require.Equal(t, int64(4), w.Stats().Invalid)

	require.NoError(t, tb.InsertStruct(ctx, row{"q", "b", 2, "y"}))
	want := mustGet(t, tb, "q", "b")
	got := mustGet(t, tb, "p", "b")
	requireSameProperties(t, want.Properties, got.Properties)
	n, err := GetStruct[row](ctx, tb, "p", "a", nil)
	require.NoError(t, err)
	require.Equal(t, int32(1), n.N)
}

// TestBulkWriterRepeatedEntity adds entities more than once within one
// batch: the later value wins (upserts), merges apply in order, and a
// repeated insert is refused.
func TestBulkWriterRepeatedEntity(t *testing.T) {
	for name, db := range bulkStores(t) {
		t.Run(name, func(t *testing.T) {
			tb := db.Table("Bulk")
			e := func(props map[string]any) *Entity { return &Entity{PartitionKey: "p", RowKey: "r", Properties: props} }

			var cs commits
			w, err := tb.NewBulkWriter(&BulkOptions{Action: ActionUpsertMerge, OnCommit: cs.on})
			require.NoError(t, err)
			require.NoError(t, w.Add(ctx, e(map[string]any{"A": int32(1), "B": int32(1)})))
			require.NoError(t, w.Add(ctx, &Entity{PartitionKey: "q", RowKey: "r"}))
			require.NoError(t, w.Add(ctx, e(map[string]any{"B": int32(2), "C": int32(2)})))
			require.NoError(t, w.Flush(ctx))
			require.Len(t, cs.all, 2, "the repeat starts a new commit")
			require.Equal(t, int64(2), cs.all[0].Through)
			got, err := tb.Get(ctx, "p", "r", nil)
			require.NoError(t, err)
			require.Equal(t, map[string]any{"A": int32(1), "B": int32(2), "C": int32(2)}, got.Properties)

			w, err = tb.NewBulkWriter(&BulkOptions{Action: ActionUpsertReplace})
			require.NoError(t, err)
			require.NoError(t, w.Add(ctx, e(map[string]any{"X": "first"})))
			require.NoError(t, w.Add(ctx, e(map[string]any{"X": "second"})))
			require.NoError(t, w.Flush(ctx))
			got2, err := tb.Get(ctx, "p", "r", nil)
			require.NoError(t, err)
			require.Equal(t, map[string]any{"X": "second"}, got2.Properties)
			require.True(t, got2.Timestamp.After(got.Timestamp), "Timestamps increase")

			cs = commits{}
			w, err = tb.NewBulkWriter(&BulkOptions{ContinueOnError: true, OnCommit: cs.on})
			require.NoError(t, err)
			require.NoError(t, w.Add(ctx, &Entity{PartitionKey: "n", RowKey: "1"}))
			require.NoError(t, w.Add(ctx, &Entity{PartitionKey: "n", RowKey: "1"}))
			require.NoError(t, w.Flush(ctx))
			require.Len(t, cs.all, 2)
			require.Len(t, cs.all[1].Refused, 1)
			require.Equal(t, int64(1), cs.all[1].Refused[0].Seq)
			require.ErrorIs(t, cs.all[1].Refused[0], ErrEntityAlreadyExists)
		})
	}
}

func TestBulkWriterErrors(t *testing.T) {
	db := openTestDB(t, nil)
	_, err := db.Table("Nothere").NewBulkWriter(&BulkOptions{Action: ActionDelete})
	requireCode(t, err, edm.CodeInvalidInput)
	_, err = db.Table("Nothere").NewBulkWriter(&BulkOptions{BatchEntities: maxBulkEntities + 1})
	requireCode(t, err, edm.CodeInvalidInput)
	_, err = db.Table("Nothere").NewBulkWriter(&BulkOptions{BatchBytes: maxBulkBytes + 1})
	requireCode(t, err, edm.CodeInvalidInput)

	// A missing table fails the commit and stops the writer.
	w, err := db.Table("Nothere").NewBulkWriter(&BulkOptions{BatchEntities: 2})
	require.NoError(t, err)
	require.NoError(t, w.Add(ctx, bulkEntity(0, 1)))
	require.NoError(t, w.Add(ctx, bulkEntity(1, 1)))
	require.NoError(t, w.Add(ctx, bulkEntity(2, 1)), "the commit of the first two runs in the background")
	err = w.Flush(ctx)
	requireCode(t, err, edm.CodeTableNotFound)
	require.Equal(t, err, w.Add(ctx, bulkEntity(3, 1)))
	require.Equal(t, err, w.Flush(ctx))
	require.Equal(t, int64(0), w.Stats().Written)

	// A closed store.
	_, err = db.CreateTable(ctx, "Bulk")
	require.NoError(t, err)
	w, err = db.Table("Bulk").NewBulkWriter(nil)
	require.NoError(t, err)
	require.NoError(t, w.Add(ctx, bulkEntity(0, 1)))
	require.NoError(t, db.Close())
	require.ErrorIs(t, w.Flush(ctx), ErrClosed)
}

// TestBulkWriterMergeLimits refuses a merge whose result exceeds Azure's
// property limit, per entity, on both paths.
func TestBulkWriterMergeLimits(t *testing.T) {
	for name, db := range bulkStores(t) {
		t.Run(name, func(t *testing.T) {
			tb := db.Table("Bulk")
			big := map[string]any{}
			for i := range 200 {
				big[fmt.Sprintf("A%d", i)] = int32(i)
			}
			require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: "full", Properties: big}))
			more := map[string]any{}
			for i := range 100 {
				more[fmt.Sprintf("B%d", i)] = int32(i)
			}
			var cs commits
			w, err := tb.NewBulkWriter(&BulkOptions{Action: ActionUpsertMerge, ContinueOnError: true, OnCommit: cs.on})
			require.NoError(t, err)
			require.NoError(t, w.Add(ctx, &Entity{PartitionKey: "p", RowKey: "a"}))
			require.NoError(t, w.Add(ctx, &Entity{PartitionKey: "p", RowKey: "full", Properties: more}))
			require.NoError(t, w.Add(ctx, &Entity{PartitionKey: "p", RowKey: "b"}))
			require.NoError(t, w.Flush(ctx))
			require.Len(t, cs.all, 1)
			require.Equal(t, 2, cs.all[0].Written)
			require.Len(t, cs.all[0].Refused, 1)
			require.Equal(t, edm.CodeTooManyProperties, ErrorCode(cs.all[0].Refused[0]))
		})
	}
}

// TestBulkWriterMatchesSingleWrites runs a random sequence of entities
// (repeats, existing ones, invalid ones) through a bulk writer and
// through single writes of the same action, and requires the same
// stored entities and the same per-entity errors.
func TestBulkWriterMatchesSingleWrites(t *testing.T) {
	seed := time.Now().UnixNano()
	if s := os.Getenv("TABLESTORE_SEED"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		require.NoError(t, err)
		seed = v
	}
	t.Logf("seed %d (replay: TABLESTORE_SEED=%d)", seed, seed)
	rng := rand.New(rand.NewSource(seed))
	for _, action := range []ActionType{ActionInsert, ActionUpsertReplace, ActionUpsertMerge} {
		bulkDB, singleDB := openTestDB(t, nil), openTestDB(t, nil)
		for _, db := range []*DB{bulkDB, singleDB} {
			_, err := db.CreateTable(ctx, "Bulk")
			require.NoError(t, err)
		}
		var bulkErrs, singleErrs []string
		w, err := bulkDB.Table("Bulk").NewBulkWriter(&BulkOptions{Action: action, ContinueOnError: true,
			BatchEntities: 1 + rng.Intn(40), OnCommit: func(c BulkCommit) {
				for _, be := range c.Refused {
					bulkErrs = append(bulkErrs, fmt.Sprintf("%d %s", be.Seq, be.Err.Code))
				}
			}})
		require.NoError(t, err)
		for i := range 600 {
			props := map[string]any{fmt.Sprintf("P%d", rng.Intn(5)): int32(rng.Intn(100))}
			if rng.Intn(30) == 0 {
				props["bad name"] = int32(1)
			}
			e := &Entity{PartitionKey: fmt.Sprintf("p%d", rng.Intn(6)), RowKey: fmt.Sprintf("r%d", rng.Intn(60)), Properties: props}
			if err := w.Add(ctx, e); err != nil {
				var be *BulkError
				require.ErrorAs(t, err, &be)
				bulkErrs = append(bulkErrs, fmt.Sprintf("%d %s", be.Seq, be.Err.Code))
			}
			var serr error
			tb := singleDB.Table("Bulk")
			switch action {
			case ActionInsert:
				serr = tb.Insert(ctx, e)
			case ActionUpsertReplace:
				serr = tb.Upsert(ctx, e, Replace)
			default:
				serr = tb.Upsert(ctx, e, Merge)
			}
			if serr != nil {
				singleErrs = append(singleErrs, fmt.Sprintf("%d %s", i, ErrorCode(serr)))
			}
		}
		require.NoError(t, w.Flush(ctx))
		sortStrings := func(s []string) []string {
			// Validation errors come at Add, refusals at commit: compare as sets.
			m := map[string]bool{}
			for _, x := range s {
				m[x] = true
			}
			require.Len(t, m, len(s))
			return s
		}
		require.ElementsMatch(t, sortStrings(singleErrs), sortStrings(bulkErrs), "seed %d, %s", seed, action)
		var a, b []string
		for e, err := range bulkDB.Table("Bulk").Query(ctx, Query{}) {
			require.NoError(t, err)
			a = append(a, fmt.Sprint(e.PartitionKey, e.RowKey, e.Properties))
		}
		for e, err := range singleDB.Table("Bulk").Query(ctx, Query{}) {
			require.NoError(t, err)
			b = append(b, fmt.Sprint(e.PartitionKey, e.RowKey, e.Properties))
		}
		require.Equal(t, b, a, "seed %d, %s", seed, action)
	}
}

// TestBulkWritersConcurrent runs bulk writers and single writes on the
// same partitions at once: bulk commits lock many partitions in one
// order, so nothing deadlocks, and every write lands.
func TestBulkWritersConcurrent(t *testing.T) {
	db := openTestDB(t, nil)
	_, err := db.CreateTable(ctx, "Bulk")
	require.NoError(t, err)
	tb := db.Table("Bulk")
	const writers, each, parts = 4, 1500, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers+2)
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := tb.NewBulkWriter(&BulkOptions{BatchEntities: 10 + 90*g})
			if err != nil {
				errs <- err
				return
			}
			for i := range each {
				e := &Entity{PartitionKey: fmt.Sprintf("p%02d", (i*7+g)%parts), RowKey: fmt.Sprintf("g%d-%05d", g, i)}
				if err := w.Add(ctx, e); err != nil {
					errs <- err
					return
				}
			}
			errs <- w.Flush(ctx)
		}()
	}
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				e := &Entity{PartitionKey: fmt.Sprintf("p%02d", i%parts), RowKey: fmt.Sprintf("single%d", g),
					Properties: map[string]any{"N": int32(i)}}
				if err := tb.Upsert(ctx, e, Replace); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	count := 0
	for _, err := range tb.Query(ctx, Query{}) {
		require.NoError(t, err)
		count++
	}
	require.Equal(t, writers*each+2*parts, count)
}

// BenchmarkBulkLoad loads 100,000 entities of ten properties in 100
// partitions into a new unsynced in-memory store: through a BulkWriter
// in key order and interleaved (no two consecutive entities in one
// partition), and through transactions of 100 in key order (what a bulk
// writer needs no sort for). Generation is included in every case.
func BenchmarkBulkLoad(b *testing.B) {
	const n, parts = 100_000, 100
	entity := func(j int, interleave bool) *Entity {
		i := j
		if interleave {
			i = (j%parts)*(n/parts) + j/parts
		}
		return &Entity{PartitionKey: fmt.Sprintf("p%04d", i/(n/parts)), RowKey: fmt.Sprintf("r%06d", i%(n/parts)),
			Properties: map[string]any{"Name": fmt.Sprintf("customer-%09d", i), "Email": fmt.Sprintf("user%09d@example.com", i),
				"City": "Lisbon", "Note": fmt.Sprintf("note %016x", i*7919), "Count": int32(i % 1000), "Bucket": int32(i % 100),
				"Score": int64(i * 31), "Amount": float64(i) * 1.25, "Active": i%2 == 0, "Created": time.Unix(int64(i), 0).UTC()}}
	}
	for _, tc := range []struct {
		name       string
		interleave bool
		txn        bool
	}{{"bulk-sorted", false, false}, {"bulk-interleaved", true, false}, {"transactions-sorted", false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				db, err := OpenInMemory(&Options{NoSync: true})
				require.NoError(b, err)
				tb, err := db.CreateTable(ctx, "Bulk")
				require.NoError(b, err)
				b.StartTimer()
				if tc.txn {
					acts := make([]TransactionAction, 0, 100)
					for j := range n {
						acts = append(acts, TransactionAction{Type: ActionUpsertReplace, Entity: entity(j, false)})
						if len(acts) == 100 {
							require.NoError(b, tb.SubmitTransaction(ctx, acts))
							acts = acts[:0]
						}
					}
				} else {
					w, err := tb.NewBulkWriter(&BulkOptions{Action: ActionUpsertReplace})
					require.NoError(b, err)
					for j := range n {
						require.NoError(b, w.Add(ctx, entity(j, tc.interleave)))
					}
					require.NoError(b, w.Flush(ctx))
				}
				b.StopTimer()
				require.NoError(b, db.Close())
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}

// TestBulkWriterKeepsIndexes checks that bulk writes to a table with
// secondary indexes keep them exact and unique ones enforced.
func TestBulkWriterKeepsIndexes(t *testing.T) {
	ctx := context.Background()
	db, err := OpenInMemory(nil)
	require.NoError(t, err)
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "Indexed")
	require.NoError(t, err)
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByColor", Properties: []string{"Color"}}))
	require.NoError(t, tbl.CreateIndex(ctx, IndexSpec{Name: "ByCode", Properties: []string{"Code"}, Unique: true}))
	var refused []*BulkError
	w, err := tbl.NewBulkWriter(&BulkOptions{Action: ActionUpsertReplace, ContinueOnError: true,
		OnCommit: func(c BulkCommit) { refused = append(refused, c.Refused...) }})
	require.NoError(t, err)
	for i := range 60 {
		color := []string{"red", "green", "blue"}[i%3]
		require.NoError(t, w.Add(ctx, &Entity{PartitionKey: fmt.Sprintf("p%d", i%7), RowKey: fmt.Sprintf("r%03d", i),
			Properties: map[string]any{"Color": color, "Code": int32(i)}}))
	}
	// A second entity with Code 5 breaks the unique index.
	require.NoError(t, w.Add(ctx, &Entity{PartitionKey: "q", RowKey: "dup", Properties: map[string]any{"Code": int32(5)}}))
	require.NoError(t, w.Flush(ctx))
	require.Len(t, refused, 1)
	require.ErrorIs(t, refused[0], ErrEntityAlreadyExists)
	require.Equal(t, int64(60), w.Stats().Written)
	n := 0
	for e, err := range tbl.Query(ctx, Query{Filter: "Color eq 'red'", Index: "ByColor"}) {
		require.NoError(t, err)
		require.Equal(t, "red", e.Properties["Color"])
		n++
	}
	require.Equal(t, 20, n)
	report, err := db.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, report.Damaged)
}
