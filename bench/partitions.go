package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/tablestore/tablestore"
)

// The targets of partitions and reverse reads, measured on tablestore
// alone: neither raw Pebble nor SQLite has the API to compare with.

// reversePage reads one page of the whole table in reverse.
func (s *tablestoreStore) reversePage(ctx context.Context, token string, top int) (int, string, error) {
	p, err := s.t.QueryPage(ctx, tablestore.Query{Top: top, Continuation: token, Reverse: true})
	if err != nil {
		return 0, "", err
	}
	return len(p.Entities), p.Continuation, nil
}

// reverseResumeTarget is resumeTarget for reverse pages: page k of the
// table read newest first, from its token, against page 1.
func reverseResumeTarget(e *env) target {
	k := e.sc.resumePage()
	t := target{Name: fmt.Sprintf("reverse resume at page %s vs page 1 (Top 1000)", commas(float64(k))),
		Goal: "<= 1.2x time", Unit: "x", Value: math.NaN(), Limit: 1.2, AtMost: true}
	if k < 1000 {
		t.Note = fmt.Sprintf("page %d is the deepest page at scale %s; page 1,000 needs -scale=1m", k, e.sc.Name)
	}
	s, err := e.mainStore(sideTablestore)
	if err != nil {
		t.Measured = "error: " + err.Error()
		return t
	}
	ts, ok := s.(*tablestoreStore)
	if !ok {
		t.Measured = "error: not a tablestore store"
		return t
	}
	first, deep, err := measurePages(e, "tablestore reverse", ts.reversePage, k)
	if err != nil {
		t.Measured = "error: " + err.Error()
		return t
	}
	t.Value = float64(deep) / float64(first)
	t.Pass = t.Value <= t.Limit
	t.Measured = fmt.Sprintf("median page %d %s vs page 1 %s", k, deep.Round(time.Microsecond), first.Round(time.Microsecond))
	if ps, err := e.mainStore(sidePebble); err == nil {
		if raw, ok := ps.(*pebbleStore); ok {
			if pf, pd, err := measurePages(e, "raw pebble reverse", raw.reversePage, k); err == nil {
				t.Measured += fmt.Sprintf("; raw pebble %s vs %s (%.2fx)", pd.Round(time.Microsecond), pf.Round(time.Microsecond), float64(pd)/float64(pf))
			}
		}
	}
	return t
}

// partitionDropTarget loads one partition of the scale's entity count
// into a fresh NoSync store, flushes nothing by hand (the load leaves
// most of it in sstables), and times Partition.DeleteAll; it checks the
// partition reads empty afterwards and its neighbour is intact.
func partitionDropTarget(e *env) target {
	n := e.sc.Entities
	t := target{Name: fmt.Sprintf("drop a partition of %s entities (NoSync)", commas(float64(n))),
		Goal: "< 10 ms", Unit: "ms", Value: math.NaN(), Limit: 10, AtMost: true}
	err := func() (err error) {
		defer recoverInto(&err)
		db, err := tablestore.Open(filepath.Join(e.dataDir, "tablestore-drop"), &tablestore.Options{NoSync: true, CacheSize: e.cacheSize, BlockSize: e.blockSize})
		if err != nil {
			return err
		}
		defer db.Close()
		tb, err := db.CreateTable(e.ctx, "drop")
		if err != nil {
			return err
		}
		if err := tb.Insert(e.ctx, &tablestore.Entity{PartitionKey: "neighbour", RowKey: "r"}); err != nil {
			return err
		}
		big := tb.Partition("big")
		p := startProgress("tablestore partition drop: loading", "entities", n)
		var rec record
		for i := 0; i < n; i += batchSize {
			b := big.NewBatch()
			for j := i; j < min(i+batchSize, n); j++ {
				genRecordKeys(&rec, j, "", fmt.Sprintf("r%09d", j))
				b.Upsert(recordEntity(&rec), tablestore.Replace)
			}
			if err := b.Submit(e.ctx); err != nil {
				p.finish()
				return err
			}
			p.add(min(batchSize, n-i))
		}
		p.finish()
		t0 := time.Now()
		if err := big.DeleteAll(e.ctx); err != nil {
			return err
		}
		took := time.Since(t0)
		page, err := big.QueryPage(e.ctx, tablestore.Query{Top: 1})
		if err != nil {
			return err
		}
		if len(page.Entities) != 0 {
			return fmt.Errorf("the dropped partition still holds entities")
		}
		if _, err := tb.Get(e.ctx, "neighbour", "r", nil); err != nil {
			return fmt.Errorf("neighbour: %w", err)
		}
		t.Value = float64(took) / float64(time.Millisecond)
		t.Measured = fmt.Sprintf("DeleteAll took %s", took.Round(time.Microsecond))
		return nil
	}()
	if err != nil {
		t.Measured = "error: " + err.Error()
		return t
	}
	t.Pass = t.Value < t.Limit
	return t
}
