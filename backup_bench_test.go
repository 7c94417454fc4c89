package tablestore

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/internal/engine"
)

// BenchmarkContinuousBackup measures what continuous backup costs the
// writes, beside the same writes without it in the same run, on disk:
// synced single inserts from one writer and from eight (each in its own
// partition, so their commits can share syncs), and an unsynced
// bulk load (100,000 entities of ten properties through a BulkWriter).
//
//	go test -run XXX -bench ContinuousBackup -benchtime 2000x .
//
// TABLESTORE_BACKUP_BENCH_DIR puts the backups in that directory (on
// another device than the store's temporary directory).
func BenchmarkContinuousBackup(b *testing.B) {
	// open opens a store in a new directory, which it returns too.
	open := func(b *testing.B, on, bg, noSync bool) (*DB, string) {
		dir := b.TempDir()
		o := &Options{NoSync: noSync}
		if on {
			bdir := filepath.Join(dir, "backup")
			if other := os.Getenv("TABLESTORE_BACKUP_BENCH_DIR"); other != "" {
				// The backup on another device than the store.
				bdir = filepath.Join(other, filepath.Base(dir))
				b.Cleanup(func() { _ = os.RemoveAll(bdir) })
			}
			o.ContinuousBackup = &ContinuousBackup{Dir: bdir, BackgroundSync: bg}
		}
		db, err := Open(filepath.Join(dir, "store"), o)
		require.NoError(b, err)
		b.Cleanup(func() { _ = db.Close() })
		return db, dir
	}
	modes := []struct {
		name   string
		on, bg bool
	}{{"off", false, false}, {"on", true, false}, {"bgsync", true, true}}
	for _, writers := range []int{1, 8} {
		for _, m := range modes {
			b.Run(fmt.Sprintf("synced-inserts-%dw/backup-%s", writers, m.name), func(b *testing.B) {
				db, _ := open(b, m.on, m.bg, false)
				tb, err := db.CreateTable(ctx, "Bench")
				require.NoError(b, err)
				b.ResetTimer()
				if writers == 1 {
					for i := 0; b.Loop(); i++ {
						require.NoError(b, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprintf("%09d", i), Properties: map[string]any{"N": int64(i), "S": "some text"}}))
					}
					return
				}
				// Exactly writers goroutines, each in a partition of its
				// own: writers of one partition take turns (its lock is
				// held through the commit's sync), so only writers of
				// different partitions can share a sync.
				var next atomic.Int64
				var wg sync.WaitGroup
				for w := range writers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						pk := fmt.Sprintf("p%d", w)
						for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
							if err := tb.Insert(ctx, &Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%09d", i), Properties: map[string]any{"N": i, "S": "some text"}}); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
			})
		}
	}
	for _, m := range modes {
		b.Run("nosync-bulk-load/backup-"+m.name, func(b *testing.B) {
			const n = 100_000
			for b.Loop() {
				b.StopTimer()
				db, dir := open(b, m.on, m.bg, true)
				tb, err := db.CreateTable(ctx, "Bulk")
				require.NoError(b, err)
				b.StartTimer()
				w, err := tb.NewBulkWriter(&BulkOptions{Action: ActionUpsertReplace})
				require.NoError(b, err)
				for j := range n {
					require.NoError(b, w.Add(ctx, pitrEntity(j)))
				}
				require.NoError(b, w.Flush(ctx))
				b.StopTimer()
				require.NoError(b, db.Close())
				// Each round's store goes at once: left to the end, a
				// run of many rounds fills the disk.
				require.NoError(b, os.RemoveAll(dir))
				b.StartTimer()
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entities/s")
		})
	}
}

func pitrEntity(i int) *Entity {
	return &Entity{PartitionKey: fmt.Sprintf("p%04d", i%1000), RowKey: fmt.Sprintf("r%09d", i),
		Properties: map[string]any{"Name": fmt.Sprintf("customer-%09d", i), "Email": fmt.Sprintf("user%09d@example.com", i),
			"City": "Lisbon", "Note": fmt.Sprintf("note %016x", i*7919), "Count": int32(i % 1000), "Bucket": int32(i % 100),
			"Score": int64(i * 31), "Amount": float64(i) * 1.25, "Active": i%2 == 0, "Created": time.Unix(int64(i), 0).UTC()}}
}

// TestRestoreEqualsSnapshotLarge is the goal run: 1,000,000 entities
// loaded and 100,000 changes with continuous backup on, a snapshot
// taken during the changes, and a restore to its instant whose export
// must equal the snapshot's; it reports the restore's rate. Behind
// TABLESTORE_PITR_LARGE=1 (about a minute or more on two cores);
// TABLESTORE_PITR_ENTITIES scales it.
func TestRestoreEqualsSnapshotLarge(t *testing.T) {
	if os.Getenv("TABLESTORE_PITR_LARGE") == "" {
		t.Skip("set TABLESTORE_PITR_LARGE=1 for the run at 1,000,000 entities")
	}
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("TABLESTORE_PITR_ENTITIES")); err == nil && v > 0 {
		n = v
	}
	changes := n / 10
	dir, bdir := t.TempDir(), filepath.Join(t.TempDir(), "backup")
	db, err := Open(dir, &Options{NoSync: true, ContinuousBackup: &ContinuousBackup{Dir: bdir}})
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Big")
	require.NoError(t, err)
	w, err := tb.NewBulkWriter(&BulkOptions{Action: ActionUpsertReplace})
	require.NoError(t, err)
	for i := range n {
		require.NoError(t, w.Add(ctx, pitrEntity(i)))
	}
	require.NoError(t, w.Flush(ctx))
	rng := rand.New(rand.NewPCG(7, 7))
	var at time.Time
	var want [32]byte
	for c := range changes {
		i := rng.IntN(n)
		e := pitrEntity(i)
		e.Properties["Changed"] = int64(c)
		if c%10 == 9 {
			if err := tb.Delete(ctx, e.PartitionKey, e.RowKey, "*"); !errors.Is(err, ErrResourceNotFound) {
				require.NoError(t, err)
			}
		} else {
			require.NoError(t, tb.Upsert(ctx, e, Merge))
		}
		if c == changes/2 {
			s, err := db.Snapshot(ctx)
			require.NoError(t, err)
			at, want = s.Time(), sha256.Sum256([]byte(dumpSnapshot(t, s)))
			require.NoError(t, s.Close())
		}
	}
	require.NoError(t, db.Close())
	into := filepath.Join(t.TempDir(), "restored")
	start := time.Now()
	res, err := Restore(ctx, bdir, at, into, nil)
	require.NoError(t, err)
	took := time.Since(start)
	t.Logf("restore: %d entities, %d commits replayed, in %s: %.0f entities/s", res.Entities, res.Records, took.Round(time.Millisecond), float64(res.Entities)/took.Seconds())
	db, err = Open(into, nil)
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, want, sha256.Sum256([]byte(dumpDB(t, db))), "the restore's export differs from the snapshot's")
}

// BenchmarkRestore times a restore that replays a whole bulk load (the
// only base is the empty store at open) and splits its time into the
// phases of engine.RestorePhases. The backup is built once; each
// iteration restores it into a fresh directory. 200,000 entities by
// default, TABLESTORE_RESTORE_ENTITIES to change it:
//
//	TABLESTORE_RESTORE_ENTITIES=1000000 go test -run XXX -bench Restore -benchtime 1x .
func BenchmarkRestore(b *testing.B) {
	n := 200_000
	if v, err := strconv.Atoi(os.Getenv("TABLESTORE_RESTORE_ENTITIES")); err == nil && v > 0 {
		n = v
	}
	// TABLESTORE_RESTORE_BACKUP keeps the backup in that directory, built
	// there on the first run, for runs that compare restores.
	bdir := os.Getenv("TABLESTORE_RESTORE_BACKUP")
	if _, err := ListBackups(bdir, nil); bdir == "" || err != nil {
		if bdir == "" {
			bdir = filepath.Join(b.TempDir(), "backup")
		}
		db, err := Open(b.TempDir(), &Options{NoSync: true, ContinuousBackup: &ContinuousBackup{Dir: bdir}})
		require.NoError(b, err)
		tb, err := db.CreateTable(ctx, "Big")
		require.NoError(b, err)
		w, err := tb.NewBulkWriter(&BulkOptions{Action: ActionUpsertReplace})
		require.NoError(b, err)
		for i := range n {
			require.NoError(b, w.Add(ctx, pitrEntity(i)))
		}
		require.NoError(b, w.Flush(ctx))
		require.NoError(b, db.Close())
	}
	o := (&Options{}).withDefaults()
	var ph engine.RestorePhases
	b.ResetTimer()
	for b.Loop() {
		into := filepath.Join(b.TempDir(), "restored")
		res, err := engine.Restore(ctx, bdir, time.Time{}, into, o.engineOptions())
		require.NoError(b, err)
		if res.Entities != n {
			for k := 0; k < 3; k++ {
				db, err := Open(into, nil)
				require.NoError(b, err)
				rep, err := db.Check(ctx)
				require.NoError(b, err)
				b.Logf("recheck %d: %d", k, rep.Entities)
				require.NoError(b, db.Close())
			}
		}
		require.Equal(b, n, res.Entities)
		ph.Read += res.Phases.Read
		ph.Apply += res.Phases.Apply
		ph.Flush += res.Phases.Flush
		ph.Check += res.Phases.Check
	}
	per := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) }
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entities/s")
	b.ReportMetric(per(ph.Read), "read-s")
	b.ReportMetric(per(ph.Apply), "apply-s")
	b.ReportMetric(per(ph.Flush), "flush-s")
	b.ReportMetric(per(ph.Check), "check-s")
}
