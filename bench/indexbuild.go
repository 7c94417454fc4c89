package main

// The -index-build mode: building a secondary index over a loaded table
// beside a writer, an equality on the indexed property against a table
// scan and a RowKey range, and the cost of one and two indexes on
// synced single inserts and unsynced batch-100 loads.

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tablestore/tablestore"
)

// The indexes of the mode: byTag answers the equality; the second is
// only a second index's cost on writes.
var (
	byTag        = tablestore.IndexSpec{Name: "ByTag", Properties: []string{"Tag"}}
	byCityBucket = tablestore.IndexSpec{Name: "ByCityBucket", Properties: []string{"City", "Bucket"}}
)

// tagMatches is how many entities share a Tag value.
const tagMatches = 10

// Goals of the -index-build mode.
const (
	buildGoal       = 2.0    // build time over the unsynced batch-100 load time, at most
	writerGoal      = 0.5    // writer rate during the build over without one, at least
	indexVsScanGoal = 1000.0 // scan time over indexed time, at least
	indexVsRange    = 2.0    // indexed time over range time, at most
	insertCostGoal  = 1.3    // synced insert time with one index over none, at most
	loadCostGoal    = 0.6    // unsynced load rate with one index over none, at least
)

// tagOf returns entity i's Tag among n entities: tagMatches entities,
// n/tagMatches apart (so in different partitions), share each value.
func tagOf(i, n int) int64 { return int64(i % max(n/tagMatches, 1)) }

// taggedEntity is the data set's entity i with its Tag (Edm.Int64).
func taggedEntity(n int) func(rec *record, i int) *tablestore.Entity {
	return func(rec *record, i int) *tablestore.Entity {
		e := recordEntity(rec)
		e.Properties["Tag"] = tagOf(i, n)
		return e
	}
}

// indexBuildResult is what -index-build measures; it goes to
// indexbuild.json.
type indexBuildResult struct {
	Command     string    `json:"command"`
	Scale       string    `json:"scale"`
	Entities    int       `json:"entities"`
	LoadAverage [2]string `json:"loadAverage"`

	// The build: the unsynced batch-100 load, the build of ByTag beside
	// the writer, and the build alone (dropped and built again).
	LoadSeconds       float64 `json:"loadSeconds"`
	LoadRate          float64 `json:"loadRate"`
	BuildSeconds      float64 `json:"buildSeconds"`
	BuildAloneSeconds float64 `json:"buildAloneSeconds"`
	BuildOverLoad     float64 `json:"buildOverLoad"`
	BuildPass         bool    `json:"buildPass"`
	// The writer: batches of 100 upserts of existing entities, unsynced,
	// entities/s; before the build (no index), during it, after it (the
	// index ready).
	WriterBefore float64 `json:"writerBefore"`
	WriterDuring float64 `json:"writerDuring"`
	WriterAfter  float64 `json:"writerAfter"`
	WriterRatio  float64 `json:"writerRatio"` // during / before
	// WriterRatioReady is during / after: against a writer that keeps
	// the same index up to date, with no build running.
	WriterRatioReady float64 `json:"writerRatioReady"`
	WriterPass       bool    `json:"writerPass"`

	// The equality matching 10 entities: medians, ns per query.
	IndexedNs     float64 `json:"indexedNs"`
	ScanNs        float64 `json:"scanNs"`
	RangeNs       float64 `json:"rangeNs"`
	IndexedPlan   string  `json:"indexedPlan"`
	ScanPlan      string  `json:"scanPlan"`
	Queries       int     `json:"queries"` // indexed and range, each
	Scans         int     `json:"scans"`
	ScanOverIndex float64 `json:"scanOverIndexed"`
	IndexOverRng  float64 `json:"indexedOverRange"`
	QueryPass     bool    `json:"queryPass"`

	// Writes with 0, 1 and 2 indexes: synced single inserts (median ns)
	// and unsynced batch-100 loads (entities/s over the whole load).
	Inserts        int        `json:"insertsPerStore"`
	InsertMedianNs [3]float64 `json:"insertMedianNs"`
	InsertMeanNs   [3]float64 `json:"insertMeanNs"`
	InsertCost     [3]float64 `json:"insertCost"` // median over no index's
	InsertPass     bool       `json:"insertPass"`
	LoadRounds     int        `json:"loadRounds"`
	LoadRates      [3]float64 `json:"loadRates"` // best round
	LoadMedianNs   [3]float64 `json:"loadMedianBatchNs"`
	LoadCost       [3]float64 `json:"loadCost"` // rate over no index's
	LoadPass       bool       `json:"loadPass"`
	Seconds        float64    `json:"seconds"`
}

// writerBatches prebuilds the writer's batches: count batches of 100
// existing entities, each a run of one partition, partitions spread over
// the table.
func writerBatches(n, count int) [][]tablestore.TransactionAction {
	build := taggedEntity(n)
	parts := n / partitionSize
	var rec record
	out := make([][]tablestore.TransactionAction, count)
	for b := range out {
		p := b * parts / count
		first := p*partitionSize + (b*batchSize)%partitionSize
		acts := make([]tablestore.TransactionAction, batchSize)
		for j := range acts {
			genRecord(&rec, first+j)
			acts[j] = tablestore.TransactionAction{Type: tablestore.ActionUpsertReplace, Entity: build(&rec, first+j)}
		}
		out[b] = acts
	}
	return out
}

// writer upserts prebuilt batches into a table in a loop until stopped,
// counting the entities written.
type writer struct {
	written atomic.Int64
	stop    atomic.Bool
	wg      sync.WaitGroup
	err     error
}

func startWriter(ctx context.Context, t *tablestore.Table, batches [][]tablestore.TransactionAction) *writer {
	w := &writer{}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for k := 0; !w.stop.Load(); k++ {
			acts := batches[k%len(batches)]
			if err := t.SubmitTransaction(ctx, acts); err != nil {
				w.err = fmt.Errorf("writer: %w", err)
				return
			}
			w.written.Add(int64(len(acts)))
		}
	}()
	return w
}

// finish stops the writer and returns its error.
func (w *writer) finish() error {
	w.stop.Store(true)
	w.wg.Wait()
	return w.err
}

// writerRate runs the writer alone for d and returns its entities/s.
func writerRate(ctx context.Context, t *tablestore.Table, batches [][]tablestore.TransactionAction, d time.Duration) (float64, error) {
	w := startWriter(ctx, t, batches)
	t0 := time.Now()
	err := sleepCtx(ctx, d)
	n := w.written.Load()
	el := time.Since(t0)
	if werr := w.finish(); err == nil {
		err = werr
	}
	return float64(n) / el.Seconds(), err
}

// runIndexBuild is the -index-build mode.
func runIndexBuild(ctx context.Context, c config, dataDir string, args []string) error {
	n := c.scale.Entities
	if n < tagMatches*partitionSize {
		return fmt.Errorf("index-build needs at least %d entities", tagMatches*partitionSize)
	}
	res := &indexBuildResult{Command: commandLine("go run .", args), Scale: c.scale.Name, Entities: n}
	res.LoadAverage[0] = loadAvg()
	started := time.Now()
	logf("index-build: scale %s, %s entities, load average %s", c.scale.Name, commas(float64(n)), res.LoadAverage[0])
	if err := measureBuild(ctx, c, filepath.Join(dataDir, "index-build"), res); err != nil {
		return err
	}
	if err := measureInsertCost(ctx, c, filepath.Join(dataDir, "index-inserts"), res); err != nil {
		return err
	}
	if err := measureLoadCost(ctx, c, filepath.Join(dataDir, "index-loads"), res); err != nil {
		return err
	}
	res.LoadAverage[1] = loadAvg()
	res.Seconds = time.Since(started).Seconds()
	printIndexBuild(os.Stdout, res)
	return writeResultJSON(c.outDir, "indexbuild.json", res)
}

// measureBuild loads the data set, builds ByTag beside the writer, and
// times the equality queries.
func measureBuild(ctx context.Context, c config, dir string, res *indexBuildResult) error {
	n := c.scale.Entities
	db, err := openBenchStore(dir, c, true, nil, 0)
	if err != nil {
		return err
	}
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	tbl, err := db.CreateTable(ctx, benchTable)
	if err != nil {
		return err
	}
	d, err := loadTable(ctx, tbl, "index-build: load", n, taggedEntity(n))
	if err != nil {
		return err
	}
	res.LoadSeconds, res.LoadRate = d.Seconds(), rate(n, d)
	batches := writerBatches(n, 64)
	wd := 2 * c.scale.WriteDuration
	if res.WriterBefore, err = writerRate(ctx, tbl, batches, wd); err != nil {
		return err
	}
	logf("index-build: writer alone %s entities/s", commas(res.WriterBefore))

	w := startWriter(ctx, tbl, batches)
	w0 := w.written.Load()
	t0 := time.Now()
	err = tbl.CreateIndex(ctx, byTag)
	build := time.Since(t0)
	written := w.written.Load() - w0
	if werr := w.finish(); err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("build beside the writer: %w", err)
	}
	res.BuildSeconds = build.Seconds()
	res.WriterDuring = float64(written) / build.Seconds()
	logf("index-build: build beside the writer %s, writer %s entities/s meanwhile", build.Round(time.Millisecond), commas(res.WriterDuring))
	if res.WriterAfter, err = writerRate(ctx, tbl, batches, wd); err != nil {
		return err
	}
	if err := tbl.DropIndex(ctx, byTag.Name); err != nil {
		return err
	}
	t0 = time.Now()
	if err := tbl.CreateIndex(ctx, byTag); err != nil {
		return fmt.Errorf("build alone: %w", err)
	}
	res.BuildAloneSeconds = time.Since(t0).Seconds()
	logf("index-build: build alone %.2f s", res.BuildAloneSeconds)
	res.BuildOverLoad = res.BuildSeconds / res.LoadSeconds
	res.BuildPass = res.BuildOverLoad <= buildGoal
	res.WriterRatio = ratio(res.WriterDuring, res.WriterBefore)
	res.WriterRatioReady = ratio(res.WriterDuring, res.WriterAfter)
	res.WriterPass = res.WriterRatio >= writerGoal

	// The queries run on the store compacted whole.
	if err := db.Close(); err != nil {
		return err
	}
	db = nil
	if err := compactClosedStore(ctx, dir, storeSettings{cacheSize: c.cacheSize, blockSize: c.blockSize}); err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	if db, err = openBenchStore(dir, c, true, nil, 0); err != nil {
		return err
	}
	return measureQueries(ctx, c, db.Table(benchTable), res)
}

// countTagged runs q to its end and checks it returns tagMatches
// entities, each with Tag tag when tag >= 0.
func countTagged(ctx context.Context, t *tablestore.Table, q tablestore.Query, tag int64) error {
	got := 0
	for e, err := range t.Query(ctx, q) {
		if err != nil {
			return err
		}
		if tag >= 0 && e.Properties["Tag"] != tag {
			return fmt.Errorf("%s: %s/%s has Tag %v, want %d", q.Filter, e.PartitionKey, e.RowKey, e.Properties["Tag"], tag)
		}
		got++
	}
	if got != tagMatches {
		return fmt.Errorf("%s: %d entities, want %d", q.Filter, got, tagMatches)
	}
	return nil
}

// measureQueries times the equality on Tag through ByTag, the same
// filter written so the planner cannot use the index (a table scan),
// and a RowKey range of 10 entities; the indexed and range queries
// alternate, so drift in the machine's speed slows both alike.
func measureQueries(ctx context.Context, c config, t *tablestore.Table, res *indexBuildResult) error {
	n := c.scale.Entities
	tags := int64(n / tagMatches)
	indexed := func(tag int64) tablestore.Query {
		return tablestore.Query{Filter: fmt.Sprintf("Tag eq %dL", tag)}
	}
	scan := func(tag int64) tablestore.Query {
		return tablestore.Query{Filter: fmt.Sprintf("not (Tag ne %dL)", tag)}
	}
	ranged := func(p, first int) tablestore.Query {
		return tablestore.Query{Filter: fmt.Sprintf("PartitionKey eq '%s' and RowKey ge '%s' and RowKey lt '%s'",
			partitionKey(p), rowKey(first), rowKey(first+tagMatches))}
	}
	for _, x := range []struct {
		q         tablestore.Query
		wantIndex bool
		plan      *string
	}{{indexed(tags / 2), true, &res.IndexedPlan}, {scan(tags / 2), false, &res.ScanPlan}} {
		p, err := t.Plan(ctx, x.q)
		if err != nil {
			return err
		}
		*x.plan = p.String()
		if (p.Index != "") != x.wantIndex {
			return fmt.Errorf("%s: plan %s", x.q.Filter, p)
		}
	}
	res.Scans = 3
	var scans []time.Duration
	for k := range res.Scans {
		tag := int64(k) * tags / int64(res.Scans)
		t0 := time.Now()
		if err := countTagged(ctx, t, scan(tag), tag); err != nil {
			return err
		}
		scans = append(scans, time.Since(t0))
		logf("index-build: scan %d: %s", k+1, scans[k].Round(time.Millisecond))
	}
	res.Queries = c.scale.RangeQueries
	r := rand.New(rand.NewPCG(5, 5))
	type pair struct {
		tag    int64
		iq, rq tablestore.Query
	}
	qs := make([]pair, res.Queries)
	for j := range qs {
		tag := r.Int64N(tags)
		qs[j] = pair{tag, indexed(tag), ranged(r.IntN(c.scale.partitions()), r.IntN(partitionSize-tagMatches+1))}
	}
	// Warm-up.
	for j := range min(100, len(qs)) {
		if err := countTagged(ctx, t, qs[j].iq, qs[j].tag); err != nil {
			return err
		}
		if err := countTagged(ctx, t, qs[j].rq, -1); err != nil {
			return err
		}
	}
	ti, tr := make([]time.Duration, len(qs)), make([]time.Duration, len(qs))
	for j, q := range qs {
		t0 := time.Now()
		if err := countTagged(ctx, t, q.iq, q.tag); err != nil {
			return err
		}
		t1 := time.Now()
		if err := countTagged(ctx, t, q.rq, -1); err != nil {
			return err
		}
		ti[j], tr[j] = t1.Sub(t0), time.Since(t1)
	}
	res.IndexedNs = float64(median(ti))
	res.RangeNs = float64(median(tr))
	res.ScanNs = float64(median(scans))
	res.ScanOverIndex = ratio(res.ScanNs, res.IndexedNs)
	res.IndexOverRng = ratio(res.IndexedNs, res.RangeNs)
	res.QueryPass = res.ScanOverIndex >= indexVsScanGoal && res.IndexOverRng <= indexVsRange
	return nil
}

// openIndexStores opens three fresh stores under dir with a table of 0,
// 1 and 2 indexes.
func openIndexStores(ctx context.Context, c config, dir string, noSync bool) ([3]*tablestore.DB, [3]*tablestore.Table, error) {
	var dbs [3]*tablestore.DB
	var tbls [3]*tablestore.Table
	for k := range dbs {
		db, err := openBenchStore(filepath.Join(dir, fmt.Sprintf("idx%d", k)), c, noSync, nil, 0)
		if err != nil {
			closeAllDBs(dbs)
			return dbs, tbls, err
		}
		dbs[k] = db
		tbl, err := db.CreateTable(ctx, benchTable)
		if err != nil {
			closeAllDBs(dbs)
			return dbs, tbls, err
		}
		for _, s := range []tablestore.IndexSpec{byTag, byCityBucket}[:k] {
			if err := tbl.CreateIndex(ctx, s); err != nil {
				closeAllDBs(dbs)
				return dbs, tbls, err
			}
		}
		tbls[k] = tbl
	}
	return dbs, tbls, nil
}

func closeAllDBs(dbs [3]*tablestore.DB) {
	for _, db := range dbs {
		if db != nil {
			if err := db.Close(); err != nil {
				logf("close: %v", err)
			}
		}
	}
}

// insertsPerStore is how many synced single inserts each store of the
// insert cost takes at each scale.
func insertsPerStore(sc scale) int {
	switch {
	case sc.Entities <= 10_000:
		return 300
	case sc.Entities <= 100_000:
		return 1000
	}
	return 2000
}

// measureInsertCost inserts entities one at a time, synced, into three
// fresh stores with 0, 1 and 2 indexes, in turn, and compares the
// median insert times.
func measureInsertCost(ctx context.Context, c config, dir string, res *indexBuildResult) error {
	defer os.RemoveAll(dir)
	dbs, tbls, err := openIndexStores(ctx, c, dir, false)
	if err != nil {
		return err
	}
	defer closeAllDBs(dbs)
	n := c.scale.Entities
	res.Inserts = insertsPerStore(c.scale)
	build := taggedEntity(n)
	var times [3][]time.Duration
	var rec record
	p := startProgress("index-build: synced inserts", "inserts", 3*res.Inserts)
	defer p.finish()
	for i := range res.Inserts {
		genRecord(&rec, i)
		for k, tbl := range tbls {
			e := build(&rec, i)
			t0 := time.Now()
			if err := tbl.Insert(ctx, e); err != nil {
				return fmt.Errorf("insert into the store with %d indexes: %w", k, err)
			}
			times[k] = append(times[k], time.Since(t0))
		}
		p.add(3)
	}
	for k := range times {
		s := summarize(times[k], 0)
		res.InsertMedianNs[k], res.InsertMeanNs[k] = s.P50, s.Mean
		res.InsertCost[k] = ratio(s.P50, res.InsertMedianNs[0])
	}
	res.InsertPass = res.InsertCost[1] <= insertCostGoal
	return nil
}

// measureLoadCost loads the data set in unsynced batches of 100 into
// fresh stores with 0, 1 and 2 indexes, one store at a time (closed and
// removed before the next, so no store's compactions run beside another's
// load), in rounds whose order rotates, and keeps each configuration's
// best rate (the time in the store; generation excluded) and the median
// batch time of that round.
func measureLoadCost(ctx context.Context, c config, dir string, res *indexBuildResult) error {
	defer os.RemoveAll(dir)
	res.LoadRounds = c.rounds
	for r := range c.rounds {
		for j := range 3 {
			k := (j + r) % 3
			sdir := filepath.Join(dir, fmt.Sprintf("r%d-idx%d", r, k))
			rt, med, err := loadWithIndexes(ctx, c, sdir, k)
			os.RemoveAll(sdir)
			if err != nil {
				return err
			}
			logf("index-build: load with %d indexes, round %d: %s entities/s", k, r+1, commas(rt))
			if rt > res.LoadRates[k] {
				res.LoadRates[k], res.LoadMedianNs[k] = rt, med
			}
		}
	}
	for k := range res.LoadRates {
		res.LoadCost[k] = ratio(res.LoadRates[k], res.LoadRates[0])
	}
	res.LoadPass = res.LoadCost[1] >= loadCostGoal
	return nil
}

// loadWithIndexes loads the data set into a fresh store in dir whose
// table has the first k of the mode's indexes, and returns the rate and
// the median batch time, ns.
func loadWithIndexes(ctx context.Context, c config, dir string, k int) (float64, float64, error) {
	n := c.scale.Entities
	db, err := openBenchStore(dir, c, true, nil, 0)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	tbl, err := db.CreateTable(ctx, benchTable)
	if err != nil {
		return 0, 0, err
	}
	for _, s := range []tablestore.IndexSpec{byTag, byCityBucket}[:k] {
		if err := tbl.CreateIndex(ctx, s); err != nil {
			return 0, 0, err
		}
	}
	batches := make([]time.Duration, 0, n/batchSize+1)
	total, err := loadTableEach(ctx, tbl, fmt.Sprintf("index-build: load with %d indexes", k), n, taggedEntity(n),
		func(d time.Duration) { batches = append(batches, d) })
	if err != nil {
		return 0, 0, fmt.Errorf("load into the store with %d indexes: %w", k, err)
	}
	return rate(n, total), float64(median(batches)), db.Close()
}

func printIndexBuild(w io.Writer, r *indexBuildResult) {
	fmt.Fprintf(w, "index-build: %s entities, load average %s at the start, %s at the end (%.0f s)\n",
		commas(float64(r.Entities)), r.LoadAverage[0], r.LoadAverage[1], r.Seconds)
	fmt.Fprintf(w, "\nbuild of ByTag over the loaded table:\n")
	fmt.Fprintf(w, "  unsynced batch-100 load: %.2f s (%s entities/s)\n", r.LoadSeconds, commas(r.LoadRate))
	fmt.Fprintf(w, "  build beside the writer: %.2f s; alone (dropped and built again): %.2f s\n", r.BuildSeconds, r.BuildAloneSeconds)
	fmt.Fprintf(w, "  %s\n", goalLine("build beside the writer / load", r.BuildOverLoad, fmt.Sprintf("<= %gx", buildGoal), r.BuildPass))
	fmt.Fprintf(w, "  writer (unsynced batches of 100 upserts): %s entities/s alone, %s during the build, %s after it (index ready)\n",
		commas(r.WriterBefore), commas(r.WriterDuring), commas(r.WriterAfter))
	fmt.Fprintf(w, "  %s\n", goalLine("writer during the build / alone (no index)", r.WriterRatio, fmt.Sprintf(">= %gx", writerGoal), r.WriterPass))
	fmt.Fprintf(w, "  writer during the build / after it (index ready, no build): %s\n", formatRatio(r.WriterRatioReady))
	fmt.Fprintf(w, "\nequality matching %d of %s entities (median ns per query; %d indexed and range queries alternating, %d scans):\n",
		tagMatches, commas(float64(r.Entities)), r.Queries, r.Scans)
	fmt.Fprintf(w, "  with the index:      %12s ns  (%s)\n", commas(r.IndexedNs), firstLine(r.IndexedPlan))
	fmt.Fprintf(w, "  without (table scan): %11s ns  (%s)\n", commas(r.ScanNs), firstLine(r.ScanPlan))
	fmt.Fprintf(w, "  RowKey range of %d:   %11s ns\n", tagMatches, commas(r.RangeNs))
	fmt.Fprintf(w, "  %s\n", goalLine("scan time / indexed time", r.ScanOverIndex, fmt.Sprintf(">= %gx", indexVsScanGoal), r.ScanOverIndex >= indexVsScanGoal))
	fmt.Fprintf(w, "  %s\n", goalLine("indexed time / range time", r.IndexOverRng, fmt.Sprintf("<= %gx", indexVsRange), r.IndexOverRng <= indexVsRange))
	fmt.Fprintf(w, "\ncost on writes (indexes: none, ByTag, ByTag and ByCityBucket):\n")
	fmt.Fprintf(w, "  %-50s %12s %12s %12s\n", "", "0 indexes", "1 index", "2 indexes")
	fmt.Fprintf(w, "  %-50s %12s %12s %12s\n", fmt.Sprintf("synced single insert, median ns (%d each)", r.Inserts),
		commas(r.InsertMedianNs[0]), commas(r.InsertMedianNs[1]), commas(r.InsertMedianNs[2]))
	fmt.Fprintf(w, "  %-50s %12s %12s %12s\n", "synced single insert, mean ns",
		commas(r.InsertMeanNs[0]), commas(r.InsertMeanNs[1]), commas(r.InsertMeanNs[2]))
	fmt.Fprintf(w, "  %-50s %12s %12s %12s\n", "  time over no index's", formatRatio(r.InsertCost[0]), formatRatio(r.InsertCost[1]), formatRatio(r.InsertCost[2]))
	fmt.Fprintf(w, "  %-50s %12s %12s %12s\n", fmt.Sprintf("unsynced batch-100 load, entities/s (best of %d)", r.LoadRounds),
		commas(r.LoadRates[0]), commas(r.LoadRates[1]), commas(r.LoadRates[2]))
	fmt.Fprintf(w, "  %-50s %12s %12s %12s\n", "  median batch, ns",
		commas(r.LoadMedianNs[0]), commas(r.LoadMedianNs[1]), commas(r.LoadMedianNs[2]))
	fmt.Fprintf(w, "  %-50s %12s %12s %12s\n", "  rate over no index's", formatRatio(r.LoadCost[0]), formatRatio(r.LoadCost[1]), formatRatio(r.LoadCost[2]))
	fmt.Fprintf(w, "  %s\n", goalLine("one index, synced insert time", r.InsertCost[1], fmt.Sprintf("<= %gx", insertCostGoal), r.InsertPass))
	fmt.Fprintf(w, "  %s\n", goalLine("one index, unsynced load rate", r.LoadCost[1], fmt.Sprintf(">= %gx", loadCostGoal), r.LoadPass))
}

// firstLine returns s up to its first newline.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
