package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/keys"
	"github.com/tablestore/tablestore/internal/plan"
)

func indexTestOptions() Options {
	return Options{CacheSize: 1 << 20, MemTableSize: 1 << 20, PageScanLimit: 1000,
		PageTimeLimit: time.Second, Clock: time.Now}
}

// fillIndexTable inserts n entities (N = i % 7) into table T, spread
// over 10 partitions.
func fillIndexTable(t *testing.T, db *Engine, n int) {
	t.Helper()
	tbl := db.Table("T")
	for i := range n {
		props := []driver.Property{{Name: "N", Value: edm.Value{Type: edm.TypeInt32, Int: int64(i % 7)}}}
		_, err := tbl.Commit(context.Background(), []driver.Action{{Type: driver.ActionInsert,
			PartitionKey: fmt.Sprintf("p%d", i%10), RowKey: fmt.Sprintf("r%04d", i), Properties: props}})
		require.NoError(t, err)
	}
}

// liveKeys counts the keys of [lo, hi) in the store.
func liveKeys(t *testing.T, db *Engine, lo, hi []byte) int {
	t.Helper()
	it, err := db.pdb.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	require.NoError(t, err)
	defer it.Close()
	n := 0
	for valid := it.First(); valid; valid = it.Next() {
		n++
	}
	return n
}

// indexKeyspace returns the keys of table T's indexes and index
// metadata.
func indexKeyspace(t *testing.T, db *Engine) (lo, hi []byte) {
	info, err := db.lookupTable("T")
	require.NoError(t, err)
	_, hi = keys.TableSpan(info.id)
	return keys.EntitiesEnd(nil, info.id), hi
}

func catalogIndexKeys(t *testing.T, db *Engine) int {
	prefix := append(keys.TablePrefix(nil, keys.MetaTableID), catalogIndexTag)
	return liveKeys(t, db, prefix, keys.ValueEnd(prefix))
}

// TestIndexCancelledBuild cancels a build midway: the index, its entries
// and its declaration are gone, and writes during the build left nothing
// either.
func TestIndexCancelledBuild(t *testing.T) {
	db, err := OpenInMemory(indexTestOptions())
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.CreateTable(context.Background(), "T"))
	fillIndexTable(t, db, 500)
	defer SetBuildChunk(50)()
	ctx, cancel := context.WithCancel(context.Background())
	steps := 0
	defer SetBuildHook(func(done int64) {
		if steps++; steps == 4 {
			// A write during the build, then the cancellation.
			_, err := db.Table("T").Commit(context.Background(), []driver.Action{{Type: driver.ActionUpsertReplace,
				PartitionKey: "p0", RowKey: "new", Properties: []driver.Property{{Name: "N", Value: edm.Value{Type: edm.TypeInt32, Int: 1}}}}})
			require.NoError(t, err)
			cancel()
		}
	})()
	tbl := db.Table("T").(*table)
	err = tbl.CreateIndex(ctx, driver.IndexSpec{Name: "ByN", Properties: []string{"N"}})
	require.ErrorIs(t, err, context.Canceled)
	infos, err := tbl.Indexes(context.Background())
	require.NoError(t, err)
	require.Empty(t, infos)
	lo, hi := indexKeyspace(t, db)
	require.Zero(t, liveKeys(t, db, lo, hi), "index keys left")
	require.Zero(t, catalogIndexKeys(t, db))
	rep, err := db.Check(context.Background())
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
}

// TestIndexBuildInterruptedByCrash leaves a declared, half-built index
// in a store closed without finishing it, as a crash would: the next
// Open removes it, entries and declaration, and a new build of the same
// name succeeds.
func TestIndexBuildInterruptedByCrash(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, indexTestOptions())
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(context.Background(), "T"))
	fillIndexTable(t, db, 300)
	tbl := db.Table("T").(*table)
	ix, err := tbl.declareIndex(driver.IndexSpec{Name: "ByN", Properties: []string{"N"}})
	require.NoError(t, err)
	info, err := db.lookupTable("T")
	require.NoError(t, err)
	lo, hi := keys.EntitySpan(info.id)
	_, err = db.buildStep(ix, lo, hi, []string{"p0", "p1", "p2"})
	require.NoError(t, err)
	ilo, ihi := keys.IndexSpan(info.id, ix.id)
	require.Equal(t, 90, liveKeys(t, db, ilo, ihi))
	require.NoError(t, db.Close())

	db, err = Open(dir, indexTestOptions())
	require.NoError(t, err)
	defer db.Close()
	tbl = db.Table("T").(*table)
	infos, err := tbl.Indexes(context.Background())
	require.NoError(t, err)
	require.Empty(t, infos)
	require.Zero(t, liveKeys(t, db, ilo, ihi))
	require.Zero(t, catalogIndexKeys(t, db))
	require.NoError(t, tbl.CreateIndex(context.Background(), driver.IndexSpec{Name: "ByN", Properties: []string{"N"}}))
	infos, err = tbl.Indexes(context.Background())
	require.NoError(t, err)
	require.Len(t, infos, 1)
	require.NotEqual(t, ix.identity(), infos[0].ID, "a new index gets a new ID")
	rep, err := db.Check(context.Background())
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
}

// TestIndexSurvivesReopenAndTableDrop checks that a ready index is
// loaded at Open and that deleting its table removes it, declaration
// included.
func TestIndexSurvivesReopenAndTableDrop(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	db, err := Open(dir, indexTestOptions())
	require.NoError(t, err)
	require.NoError(t, db.CreateTable(ctx, "T"))
	fillIndexTable(t, db, 50)
	require.NoError(t, db.Table("T").(*table).CreateIndex(ctx, driver.IndexSpec{Name: "ByN", Properties: []string{"N"}, Unique: false}))
	require.NoError(t, db.Close())
	db, err = Open(dir, indexTestOptions())
	require.NoError(t, err)
	defer db.Close()
	infos, err := db.Table("T").(*table).Indexes(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 1)
	require.Equal(t, driver.IndexReady, infos[0].State)
	rep, err := db.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
	require.Equal(t, 1, catalogIndexKeys(t, db))
	require.NoError(t, db.DeleteTable(ctx, "T"))
	require.Zero(t, catalogIndexKeys(t, db))
	require.NoError(t, db.CreateTable(ctx, "T"))
	infos, err = db.Table("T").(*table).Indexes(ctx)
	require.NoError(t, err)
	require.Empty(t, infos)
}

// TestIndexCheckFindsDamage removes an entry, adds a stray one and
// changes one, each in its own store, and expects Check to name them.
func TestIndexCheckFindsDamage(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, want string
		damage     func(db *Engine, ix *index)
	}{
		{"missing", "missing entry for entity (\"p3\", \"r0003\")", func(db *Engine, ix *index) {
			tuple, _ := propsTuple(nil, ix, []driver.Property{{Name: "N", Value: edm.Value{Type: edm.TypeInt32, Int: 3}}})
			require.NoError(t, db.pdb.Delete(ix.entryKey(tuple, "p3", "r0003"), pebble.Sync))
		}},
		{"stray", "stale entry (N = 5) for entity (\"p9\", \"zz\")", func(db *Engine, ix *index) {
			tuple, _ := propsTuple(nil, ix, []driver.Property{{Name: "N", Value: edm.Value{Type: edm.TypeInt32, Int: 5}}})
			require.NoError(t, db.pdb.Set(ix.entryKey(tuple, "p9", "zz"), nil, pebble.Sync))
		}},
		{"stale", "stale entry (N = 6L) for entity (\"p1\", \"r0001\")", func(db *Engine, ix *index) {
			tuple, _ := propsTuple(nil, ix, []driver.Property{{Name: "N", Value: edm.Value{Type: edm.TypeInt64, Int: 6}}})
			require.NoError(t, db.pdb.Set(ix.entryKey(tuple, "p1", "r0001"), nil, pebble.Sync))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := OpenInMemory(indexTestOptions())
			require.NoError(t, err)
			defer db.Close()
			require.NoError(t, db.CreateTable(ctx, "T"))
			fillIndexTable(t, db, 40)
			tbl := db.Table("T").(*table)
			require.NoError(t, tbl.CreateIndex(ctx, driver.IndexSpec{Name: "ByN", Properties: []string{"N"}}))
			rep, err := db.Check(ctx)
			require.NoError(t, err)
			require.Empty(t, rep.Damaged)
			info, err := db.lookupTable("T")
			require.NoError(t, err)
			tc.damage(db, db.tableIndexes(info.id)[0])
			rep, err = db.Check(ctx)
			require.NoError(t, err)
			require.Len(t, rep.Damaged, 1)
			d := rep.Damaged[0]
			require.Equal(t, "index", d.Kind)
			require.Equal(t, []string{"T"}, d.Tables)
			require.ErrorContains(t, d.Err, "index ByN: ")
			require.ErrorContains(t, d.Err, tc.want)
		})
	}
}

// TestIndexSweep checks that a range deletion's entries are swept in the
// background, and that a Partitioned index loses a deleted partition's
// entries at once.
func TestIndexSweep(t *testing.T) {
	ctx := context.Background()
	db, err := OpenInMemory(indexTestOptions())
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.CreateTable(ctx, "T"))
	fillIndexTable(t, db, 100)
	tbl := db.Table("T").(*table)
	require.NoError(t, tbl.CreateIndex(ctx, driver.IndexSpec{Name: "Wide", Properties: []string{"N"}}))
	require.NoError(t, tbl.CreateIndex(ctx, driver.IndexSpec{Name: "Local", Properties: []string{"N"}, Partitioned: true}))
	info, err := db.lookupTable("T")
	require.NoError(t, err)
	ixs := db.tableIndexes(info.id)
	count := func(ix *index) int {
		lo, hi := keys.IndexSpan(info.id, ix.id)
		return liveKeys(t, db, lo, hi)
	}
	before := db.IndexSweeps()
	_, err = tbl.DeleteRange(ctx, "p3", "", "")
	require.NoError(t, err)
	require.Equal(t, 90, count(ixs[1]), "a partitioned index loses the partition at once")
	require.Eventually(t, func() bool { return db.IndexSweeps() > before }, 10*time.Second, time.Millisecond)
	require.Equal(t, 90, count(ixs[0]), "the table-wide index is swept")
	mlo := sweepRecordPrefix(info.id)
	require.Zero(t, liveKeys(t, db, mlo, keys.ValueEnd(mlo)), "pending records removed")
	_, err = tbl.DeleteRange(ctx, "p4", "r0010", "r0050")
	require.NoError(t, err)
	require.NoError(t, db.SweepIndexes(ctx))
	require.Equal(t, 86, count(ixs[0]))
	require.Equal(t, 86, count(ixs[1]))
	rep, err := db.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
}

// TestIndexFilterLiteralBeyondKeys reads ranges whose bounds no key can
// hold (a PartitionKey starting with 0xFF, which a hand-built filter can
// name): they must stop before the table's index keyspace.
func TestIndexFilterLiteralBeyondKeys(t *testing.T) {
	ctx := context.Background()
	db, err := OpenInMemory(indexTestOptions())
	require.NoError(t, err)
	defer db.Close()
	require.NoError(t, db.CreateTable(ctx, "T"))
	fillIndexTable(t, db, 20)
	tbl := db.Table("T").(*table)
	require.NoError(t, tbl.CreateIndex(ctx, driver.IndexSpec{Name: "ByN", Properties: []string{"N"}}))
	pk := func(op filter.Op, s string) filter.Node {
		return &filter.CompareNode{Property: "PartitionKey", Op: op, Value: edm.Value{Type: edm.TypeString, Bytes: []byte(s)}}
	}
	for _, tc := range []struct {
		f    filter.Node
		want int
	}{
		{pk(filter.OpGE, "p5"), 10},
		{pk(filter.OpLT, "\xff\xff"), 20},
		{pk(filter.OpGE, "\xff"), 0},
		{&filter.AndNode{X: pk(filter.OpEQ, "\xff\x00\x00\x00\x01"), Y: &filter.CompareNode{Property: "RowKey", Op: filter.OpEQ, Value: edm.Value{Type: edm.TypeString, Bytes: []byte("x")}}}, 0},
	} {
		p := plan.New(tc.f)
		q := &driver.QueryRequest{Filter: tc.f, Ranges: p.Ranges, Residual: p.Residual, Top: 1000}
		n := 0
		_, err := tbl.QueryPage(ctx, q, func(r driver.Row) error {
			n++
			if strings.HasPrefix(r.PartitionKey, "\xff") {
				return errors.New("read an index key as an entity")
			}
			return nil
		})
		require.NoError(t, err, filter.Format(tc.f))
		require.Equal(t, tc.want, n, filter.Format(tc.f))
	}
}
