package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/tablestore/tablestore"
)

// A batchPreparer makes a batch of upserts ready to commit before the
// clock starts, so that committing it is all that is timed: tablestore
// gets built entities (the typed side, built structs) and submits one
// transaction; raw Pebble gets the encoded keys and values and commits
// one batch of Sets of those bytes.
type batchPreparer interface {
	prepareBatch(ctx context.Context, recs []record) func() error
}

func (s *tablestoreStore) prepareBatch(ctx context.Context, recs []record) func() error {
	actions := make([]tablestore.TransactionAction, len(recs))
	for i := range recs {
		actions[i] = tablestore.TransactionAction{Type: tablestore.ActionUpsertReplace, Entity: recordEntity(&recs[i])}
	}
	return func() error { return s.t.SubmitTransaction(ctx, actions) }
}

func (p *pebbleStore) prepareBatch(_ context.Context, recs []record) func() error {
	ks, vs := make([][]byte, len(recs)), make([][]byte, len(recs))
	ts := nowTicks()
	for i := range recs {
		ks[i] = rawKey(nil, recs[i].PK, recs[i].RK)
		vs[i] = encodeRaw(nil, &recs[i], ts)
	}
	return func() error {
		b := p.db.NewBatch()
		defer b.Close()
		for i := range ks {
			if err := b.Set(ks[i], vs[i], nil); err != nil {
				return err
			}
		}
		return b.Commit(p.wo)
	}
}

// txnChunk is how many batches are prepared at a time.
const txnChunk = 50

// measureTxn100 commits batches batches of batchSize upserts, entities
// firstEntity onwards, and returns entities per second over the commit
// time alone.
func measureTxn100(ctx context.Context, s store, label string, firstEntity, batches int) (float64, error) {
	bp, ok := s.(batchPreparer)
	if !ok {
		return 0, fmt.Errorf("%T cannot prepare batches", s)
	}
	p := startProgress(label, "entities", batches*batchSize)
	defer p.finish()
	var spent time.Duration
	commits := make([]func() error, 0, txnChunk)
	recs := make([]record, batchSize)
	for done := 0; done < batches; {
		commits = commits[:0]
		for k := 0; k < txnChunk && done+k < batches; k++ {
			for j := range recs {
				genRecord(&recs[j], firstEntity+(done+k)*batchSize+j)
			}
			commits = append(commits, bp.prepareBatch(ctx, recs))
		}
		t0 := time.Now()
		for _, commit := range commits {
			if err := commit(); err != nil {
				return 0, err
			}
		}
		spent += time.Since(t0)
		done += len(commits)
		p.add(len(commits) * batchSize)
	}
	return rate(batches*batchSize, spent), nil
}

// runTxnOnly is -txn: the unsynced transactions of 100 upserts on the
// chosen sides among tablestore, typed and raw Pebble (which is
// required: the figures are ratios to it), each side on a fresh store,
// rounds interleaved, the best round of each side printed.
func runTxnOnly(ctx context.Context, c config, dataDir string) error {
	var sides []string
	for _, side := range c.sides {
		switch side {
		case sideTablestore, sideTyped, sidePebble:
			sides = append(sides, side)
		}
	}
	if !slices.Contains(sides, sidePebble) {
		return fmt.Errorf("-txn needs the pebble side: its figures are ratios to raw Pebble")
	}
	e := newEnv(ctx, c.scale, dataDir, c.cacheSize, c.blockSize)
	defer e.closeAll()
	stopProfile, err := startCPUProfile(c.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	t := txnTargetOf(e, false, sides, c.rounds)
	fmt.Printf("%s, best of %d rounds: %s", t.Name, c.rounds, t.Measured)
	if slices.Contains(sides, sideTablestore) {
		fmt.Printf("; tablestore/pebble %.3fx", t.Value)
	}
	fmt.Println()
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at the end: %s", load)
	}
	return nil
}
