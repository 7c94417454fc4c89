package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2"
)

// lsmShape is the shape of one store's LSM tree: what a point get may
// have to look through.
type lsmShape struct {
	L0Files int64 `json:"l0Files"`
	// L0Depth is the most L0 files whose key ranges hold one key: the
	// L0 files a point get may have to look in (Pebble's L0 sublevels,
	// computed from the files' bounds, as a read-only store does not
	// report them).
	L0Depth int      `json:"l0Depth"`
	Files   [7]int64 `json:"files"` // per level
	Bytes   [7]int64 `json:"bytes"` // per level
	// Debt is Pebble's estimate of the bytes compactions must still
	// rewrite before every level fits its target size.
	Debt uint64 `json:"compactionDebtBytes"`
	// ReadAmp is the number of sorted runs in files a read may consult:
	// L0 sublevels and non-empty levels below (memtables apart).
	ReadAmp    int    `json:"readAmp"`
	Memtables  int64  `json:"memtables"`
	MemBytes   uint64 `json:"memtableBytes"`
	Compacting int64  `json:"compactionsInProgress"` // -1 when unknown (a checkpoint)
}

func shapeOf(db *pebble.DB) (lsmShape, error) {
	m := db.Metrics()
	depth, err := l0Depth(db)
	if err != nil {
		return lsmShape{}, err
	}
	s := lsmShape{L0Files: m.Levels[0].TablesCount, L0Depth: depth,
		Debt: m.Compact.EstimatedDebt, ReadAmp: depth, Memtables: m.MemTable.Count,
		MemBytes: m.MemTable.Size, Compacting: m.Compact.NumInProgress}
	for i := range m.Levels {
		s.Files[i], s.Bytes[i] = m.Levels[i].TablesCount, m.Levels[i].TablesSize
		if i > 0 && s.Files[i] > 0 {
			s.ReadAmp++
		}
	}
	return s, nil
}

// l0Depth returns the most L0 files whose key ranges overlap at one key.
func l0Depth(db *pebble.DB) (int, error) {
	levels, err := db.SSTables()
	if err != nil {
		return 0, err
	}
	if len(levels) == 0 {
		return 0, nil
	}
	type edge struct {
		key   []byte
		delta int // +1 at a file's smallest key, -1 past its largest
	}
	var edges []edge
	for _, f := range levels[0] {
		edges = append(edges, edge{f.Smallest.UserKey, 1}, edge{f.Largest.UserKey, -1})
	}
	// Ranges are inclusive: at equal keys, starts come before ends.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := bytes.Compare(a.key, b.key); c != 0 {
			return c
		}
		return b.delta - a.delta
	})
	depth, most := 0, 0
	for _, e := range edges {
		depth += e.delta
		most = max(most, depth)
	}
	return most, nil
}

// String is one line: L0 files and sublevels, files per level L1..L6
// (a dash for none), debt, read amplification.
func (s lsmShape) String() string {
	var lv []string
	for i := 1; i < 7; i++ {
		if s.Files[i] == 0 {
			lv = append(lv, "-")
		} else {
			lv = append(lv, fmt.Sprintf("%d", s.Files[i]))
		}
	}
	comp := ""
	if s.Compacting > 0 {
		comp = fmt.Sprintf(", %d compacting", s.Compacting)
	}
	return fmt.Sprintf("L0 %d files, depth %d; L1-L6 files %s; debt %.1f MiB; read-amp %d; %d memtables%s",
		s.L0Files, s.L0Depth, strings.Join(lv, " "), float64(s.Debt)/(1<<20), s.ReadAmp, s.Memtables, comp)
}

// checkpoints numbers the checkpoint directories storeShape makes.
var checkpoints atomic.Int64

// storeShape returns the LSM shape of side's main store. Raw Pebble's is
// read from its metrics. tablestore does not expose its Pebble, so its
// shape is read from a checkpoint (hard links to the same sstables and a
// copy of the manifest and log) opened read-only with raw Pebble: the
// same files at the same levels, the memtable replayed from the log;
// compactions running at that moment are not seen.
func storeShape(e *env, side string) (lsmShape, error) {
	s, err := e.mainStore(side)
	if err != nil {
		return lsmShape{}, err
	}
	switch s := s.(type) {
	case *pebbleStore:
		return shapeOf(s.db)
	case pebbleMapsStore:
		return shapeOf(s.db)
	case *tablestoreStore:
		return checkpointShape(e.ctx, s, e.dataDir)
	case *typedStore:
		return checkpointShape(e.ctx, s.tablestoreStore, e.dataDir)
	}
	return lsmShape{}, fmt.Errorf("no LSM shape for side %s", side)
}

func checkpointShape(ctx context.Context, s *tablestoreStore, tmp string) (lsmShape, error) {
	dir := filepath.Join(tmp, fmt.Sprintf("checkpoint-%d", checkpoints.Add(1)))
	defer os.RemoveAll(dir)
	if err := s.db.Checkpoint(ctx, dir); err != nil {
		return lsmShape{}, err
	}
	o := rawPebbleOptions(storeSettings{cacheSize: 8 << 20})
	o.ReadOnly = true
	db, err := pebble.Open(dir, o)
	o.Cache.Unref()
	if err != nil {
		return lsmShape{}, err
	}
	sh, err := shapeOf(db)
	sh.Compacting = -1
	return sh, errors.Join(err, db.Close())
}
