package tablestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/engine"
)

// TestCorruption damages a closed store's files (sstables, the WAL, the
// MANIFEST, the catalog's sstable) at seeded random places, reopens it and
// requires: no panic and no exit (either would end the test binary),
// every failure matching ErrCorrupt, Check (or CheckDir when Open
// refuses) naming every damaged file, every table whose files are intact
// still fully readable, and writes refused once damage is known.
// TABLESTORE_CORRUPTION_ROUNDS sets the rounds per kind (default 3).
func TestCorruption(t *testing.T) {
	rounds := 3
	if s := os.Getenv("TABLESTORE_CORRUPTION_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(t, err)
		rounds = n
	}
	pristine := t.TempDir()
	layout := buildDamageStore(t, pristine)
	kinds := []string{"sstable", "two sstables", "catalog", "wal", "manifest"}
	for _, kind := range kinds {
		for round := range rounds {
			seed := uint64(round)*7919 + uint64(len(kind))
			t.Run(fmt.Sprintf("%s/seed=%d", strings.ReplaceAll(kind, " ", "_"), seed), func(t *testing.T) {
				runDamage(t, pristine, layout, kind, seed)
			})
		}
	}
}

// damageLayout says which file holds what in the pristine store.
type damageLayout struct {
	tableFile map[string]string // table -> its sstable's name
	catalog   string            // the sstable holding the catalog
	wal       string            // the WAL holding table "Wal"
	manifest  string
	want      map[string]int // table -> entity count
}

var damageTables = []string{"Alpha", "Beta", "Gamma", "Delta"}

// buildDamageStore writes a store where the catalog and each table sit in
// their own sstable (one flush each, no compaction) and table Wal only in
// the WAL.
func buildDamageStore(t *testing.T, dir string) damageLayout {
	ctx := context.Background()
	frozen := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e, err := engine.Open(dir, engine.Options{
		CacheSize: 1 << 20, MemTableSize: 64 << 20, BloomBitsPerKey: 10, PageScanLimit: 100_000,
		PageTimeLimit: time.Minute, Clock: func() time.Time { return frozen }, DisableAutoCompactions: true,
	})
	require.NoError(t, err)
	db, err := OpenDriver(e, nil)
	require.NoError(t, err)
	lay := damageLayout{tableFile: map[string]string{}, want: map[string]int{}}
	newSSTs := func() []string {
		var out []string
		ls, _ := os.ReadDir(dir)
		for _, f := range ls {
			if strings.HasSuffix(f.Name(), ".sst") {
				out = append(out, f.Name())
			}
		}
		return out
	}
	for _, name := range append(slices.Clone(damageTables), "Wal") {
		_, err := db.CreateTable(ctx, name)
		require.NoError(t, err)
	}
	// The first commit writes the clock ceiling next to the catalog; with a
	// frozen clock it is the only one.
	require.NoError(t, db.Table("Alpha").Insert(ctx, &Entity{PartitionKey: "seed", RowKey: "0"}))
	require.NoError(t, db.Table("Alpha").Delete(ctx, "seed", "0", ETagAny))
	require.NoError(t, e.Flush())
	lay.catalog = newSSTs()[0]
	for i, name := range damageTables {
		before := newSSTs()
		n := 300 + 100*i
		insertRows(t, db.Table(name), n)
		lay.want[name] = n
		require.NoError(t, e.Flush())
		for _, f := range newSSTs() {
			if !slices.Contains(before, f) {
				lay.tableFile[name] = f
			}
		}
		require.NotEmpty(t, lay.tableFile[name])
	}
	insertRows(t, db.Table("Wal"), 200)
	lay.want["Wal"] = 200
	require.NoError(t, db.Close())
	ls, _ := os.ReadDir(dir)
	for _, f := range ls {
		switch {
		case strings.HasSuffix(f.Name(), ".log"):
			if info, _ := f.Info(); info.Size() > 0 {
				lay.wal = f.Name()
			}
		case strings.HasPrefix(f.Name(), "MANIFEST-"):
			lay.manifest = f.Name()
		}
	}
	require.NotEmpty(t, lay.wal)
	require.NotEmpty(t, lay.manifest)
	return lay
}

func insertRows(t *testing.T, tb *Table, n int) {
	ctx := context.Background()
	for i := 0; i < n; i += 50 {
		b := tb.NewBatch()
		for j := i; j < min(i+50, n); j++ {
			b.Insert(&Entity{PartitionKey: fmt.Sprintf("p%02d", j/50), RowKey: fmt.Sprintf("r%05d", j),
				Properties: map[string]any{"N": int32(j), "S": strings.Repeat("x", 40+j%30)}})
		}
		require.NoError(t, b.Submit(ctx))
	}
}

// runDamage copies the pristine store, damages it and checks the outcome.
func runDamage(t *testing.T, pristine string, lay damageLayout, kind string, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	dir := t.TempDir()
	copyDir(t, pristine, dir)

	var files []string // damaged file names
	damagedTables := map[string]bool{}
	switch kind {
	case "sstable", "two sstables":
		names := slices.Clone(damageTables)
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		k := 1
		if kind == "two sstables" {
			k = 2
		}
		for _, name := range names[:k] {
			files = append(files, lay.tableFile[name])
			damagedTables[name] = true
		}
	case "catalog":
		files = []string{lay.catalog}
	case "wal":
		files = []string{lay.wal}
	case "manifest":
		files = []string{lay.manifest}
	}
	for _, f := range files {
		damageFile(t, filepath.Join(dir, f), rng, kind == "wal")
	}

	db, err := Open(dir, nil)
	if err != nil {
		require.ErrorIs(t, err, ErrCorrupt, "open")
		require.Equal(t, edm.CodeInternalError, ErrorCode(err))
		rep, err := CheckDir(ctx, dir, nil)
		require.NoError(t, err)
		requireNamed(t, rep, files)
		return
	}
	defer func() {
		if err := db.Close(); err != nil {
			require.ErrorIs(t, err, ErrCorrupt, "close")
		}
	}()
	// A damaged WAL or MANIFEST that Open accepted would mean a silent loss.
	require.False(t, kind == "wal" || kind == "manifest", "open accepted a damaged %s", kind)
	compact := func() {
		if err := db.conn.(*engine.Engine).Compact(); err != nil {
			require.ErrorIs(t, err, ErrCorrupt, "compact")
			require.ErrorIs(t, db.Health(), ErrCorrupt)
		}
	}
	if seed%2 == 1 {
		compact() // the compaction meets the damage first
	}
	for _, name := range append(slices.Clone(damageTables), "Wal") {
		n, err := countRows(ctx, db.Table(name))
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt, "query %s", name)
			require.True(t, damagedTables[name] || kind == "catalog", "table %s is intact but unreadable: %v", name, err)
			continue
		}
		if !damagedTables[name] {
			require.Equal(t, lay.want[name], n, "table %s", name)
		}
		if _, err := db.Table(name).Get(ctx, "p00", "r00007", nil); err != nil {
			require.ErrorIs(t, err, ErrCorrupt, "get %s", name)
		}
	}
	// A compaction (Open starts one: five files sit in L0) that read every
	// block of a damaged file but the unread ones (a bloom filter) rewrote
	// it whole and dropped it from the store; then its tables must read
	// completely.
	live, err := db.conn.(*engine.Engine).LiveSSTables()
	require.NoError(t, err)
	var present []string
	for _, f := range files {
		if _, ok := live[f]; ok {
			present = append(present, f)
			continue
		}
		for name := range damagedTables {
			if lay.tableFile[name] == f {
				delete(damagedTables, name)
				n, err := countRows(ctx, db.Table(name))
				require.NoError(t, err, "table %s rewritten by a compaction", name)
				require.Equal(t, lay.want[name], n, "table %s rewritten by a compaction", name)
			}
		}
	}
	rep, err := db.Check(ctx)
	require.NoError(t, err)
	requireNamed(t, rep, present)
	if len(present) == 0 {
		return
	}
	require.ErrorIs(t, db.Health(), ErrCorrupt)
	for _, name := range damageTables {
		err := db.Table(name).Upsert(ctx, &Entity{PartitionKey: "new", RowKey: "1"}, Replace)
		require.ErrorIs(t, err, ErrCorrupt, "write to %s after damage", name)
	}
	_, err = db.CreateTable(ctx, "Another")
	require.ErrorIs(t, err, ErrCorrupt)
	compact()
	for name := range lay.want {
		if damagedTables[name] || kind == "catalog" {
			continue
		}
		n, err := countRows(ctx, db.Table(name))
		require.NoError(t, err, "table %s after compaction", name)
		require.Equal(t, lay.want[name], n, "table %s after compaction", name)
	}
}

func countRows(ctx context.Context, tb *Table) (int, error) {
	n := 0
	for _, err := range tb.Query(ctx, Query{}) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// requireNamed requires rep to name every file of files.
func requireNamed(t *testing.T, rep *CheckReport, files []string) {
	t.Helper()
	var named []string
	for _, d := range rep.Damaged {
		named = append(named, filepath.Base(d.Path))
	}
	for _, f := range files {
		require.Contains(t, named, f, "check report %+v", rep.Damaged)
	}
}

// damageFile flips 1 to 8 bytes at a seeded place; in a WAL the place is
// before its last quarter, so an intact record follows it (damage to a
// WAL's last record is indistinguishable from a write torn by a crash).
func damageFile(t *testing.T, path string, rng *rand.Rand, wal bool) {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotEmpty(t, data)
	span := len(data)
	if wal {
		end, err := engine.LogExtent(path)
		require.NoError(t, err)
		span = int(end) * 3 / 4
	}
	off := rng.IntN(span)
	for i := range 1 + rng.IntN(8) {
		if off+i < len(data) {
			data[off+i] ^= byte(1 + rng.IntN(255))
		}
	}
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func copyDir(t *testing.T, from, to string) {
	ls, err := os.ReadDir(from)
	require.NoError(t, err)
	for _, f := range ls {
		if f.IsDir() || f.Name() == "LOCK" {
			continue
		}
		src, err := os.Open(filepath.Join(from, f.Name()))
		require.NoError(t, err)
		dst, err := os.Create(filepath.Join(to, f.Name()))
		require.NoError(t, err)
		_, err = io.Copy(dst, src)
		require.NoError(t, errors.Join(err, src.Close(), dst.Close()))
	}
}
