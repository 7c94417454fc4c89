package engine

import (
	"bytes"
	"context"
	"math"
	"time"

	"github.com/cockroachdb/pebble/v2"
	dto "github.com/prometheus/client_model/go"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/keys"
)

var (
	_ driver.MetricsReader          = (*Engine)(nil)
	_ driver.ServicePropertiesStore = (*Engine)(nil)
)

// walSyncBounds are the WAL sync latency bucket bounds reported, a
// subset of Pebble's (FsyncLatencyBuckets, which has 100): each is
// mapped to the greatest Pebble bound at or below it, so the counts are
// exact for the bounds reported.
var walSyncBounds = []time.Duration{
	100 * time.Microsecond, 500 * time.Microsecond, time.Millisecond, 2 * time.Millisecond,
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond, time.Second, 10 * time.Second,
}

// Metrics implements driver.MetricsReader from Pebble's metrics (no
// I/O), the catalog, and sstable properties for the entity estimate
// (file metadata only).
func (db *Engine) Metrics(ctx context.Context) (driver.Metrics, error) {
	release, err := db.enter(ctx)
	if err != nil {
		return driver.Metrics{}, err
	}
	defer release()
	pm := db.pdb.Metrics()
	m := driver.Metrics{
		CompactionDebtBytes:   pm.Compact.EstimatedDebt,
		CompactionsInProgress: pm.Compact.NumInProgress,
		Compactions:           pm.Compact.Count,
		Flushes:               pm.Flush.Count,
		L0Files:               pm.Levels[0].TablesCount,
		L0Sublevels:           pm.Levels[0].Sublevels,
		BlockCacheHits:        pm.BlockCache.Hits,
		BlockCacheMisses:      pm.BlockCache.Misses,
		BlockCacheBytes:       pm.BlockCache.Size,
		MemTableBytes:         pm.MemTable.Size,
		DiskBytes:             pm.DiskSpaceUsage(),
		WALBytes:              pm.WAL.PhysicalSize,
	}
	if h := pm.LogWriter.FsyncLatency; h != nil {
		var dm dto.Metric
		if err := h.Write(&dm); err == nil && dm.Histogram != nil {
			m.WALSync = walHistogram(dm.Histogram)
		}
	}
	db.catMu.RLock()
	m.Tables = len(db.tables)
	db.catMu.RUnlock()
	var oldest time.Time
	if m.Snapshots, oldest = db.viewStats(); m.Snapshots > 0 {
		m.OldestSnapshotAge = max(db.opts.Clock().Sub(oldest), 0)
	}
	m.SnapshotPinnedBytes = pm.Snapshots.PinnedSize
	// Entities: live entries of every sstable outside the metadata table.
	start := keys.TablePrefix(nil, keys.MetaTableID+1)
	levels, err := db.pdb.SSTables(pebble.WithProperties())
	if err != nil {
		return driver.Metrics{}, db.storageErr("metrics", err)
	}
	for _, level := range levels {
		for _, f := range level {
			if f.Properties == nil || bytes.Compare(f.Largest.UserKey, start) < 0 {
				continue
			}
			if live := int64(f.Properties.NumEntries) - int64(f.Properties.NumDeletions); live > 0 {
				m.Entities += live
			}
		}
	}
	return m, nil
}

// walHistogram converts Pebble's fsync histogram (nanoseconds) to the
// reported bounds.
func walHistogram(h *dto.Histogram) driver.Histogram {
	out := driver.Histogram{Count: h.GetSampleCount(), Sum: time.Duration(h.GetSampleSum())}
	bs := h.GetBucket()
	for _, bound := range walSyncBounds {
		var n uint64
		for _, b := range bs {
			if ub := b.GetUpperBound(); ub <= float64(bound) || math.IsInf(ub, -1) {
				n = b.GetCumulativeCount()
			}
		}
		out.Buckets = append(out.Buckets, driver.Bucket{UpperBound: bound, Count: n})
	}
	return out
}

// servicePropertiesKey holds the service's document:
//
//	meta | 'V'  ->  the document, as set
func servicePropertiesKey() []byte {
	return append(keys.TablePrefix(nil, keys.MetaTableID), 'V')
}

// ServiceProperties implements driver.ServicePropertiesStore.
func (db *Engine) ServiceProperties(ctx context.Context) ([]byte, error) {
	release, err := db.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	v, closer, err := db.pdb.Get(servicePropertiesKey())
	if err == pebble.ErrNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, db.storageErr("read the service properties", err)
	}
	defer closer.Close()
	return bytes.Clone(v), nil
}

// SetServiceProperties implements driver.ServicePropertiesStore with
// one synced write (unless NoSync).
func (db *Engine) SetServiceProperties(ctx context.Context, doc []byte) error {
	release, err := db.enter(ctx)
	if err != nil {
		return err
	}
	defer release()
	if err := db.Health(); err != nil {
		return err
	}
	if len(doc) == 0 {
		return db.storageErr("write the service properties", db.deleteKey(servicePropertiesKey(), db.writeOpts))
	}
	return db.storageErr("write the service properties", db.setKey(servicePropertiesKey(), doc, db.writeOpts))
}
