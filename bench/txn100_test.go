package main

import (
	"context"
	"math"
	"strings"
	"testing"
)

// TestTxnOnlyFlag checks that -txn is parsed and that a run without the
// raw Pebble side, whose figures are the ratios' base, is refused before
// any store is opened.
func TestTxnOnlyFlag(t *testing.T) {
	c, err := parseFlags([]string{"-txn", "-sides=typed,tablestore", "-rounds=2"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.txnOnly || c.rounds != 2 {
		t.Fatalf("parsed %+v", c)
	}
	dir := t.TempDir()
	err = runTxnOnly(context.Background(), c, dir)
	if err == nil || !strings.Contains(err.Error(), "needs the pebble side") {
		t.Fatalf("got %v, want the pebble side required", err)
	}
}

// TestTxnTargetSidesThatRan: a -txn run without the map side reports
// the typed and raw figures and no map figure or ratio.
func TestTxnTargetSidesThatRan(t *testing.T) {
	sc := scale{Name: "test", Entities: storeTestEntities, TxnBatches: 4}
	e := newEnv(context.Background(), sc, t.TempDir(), 8<<20, 0)
	defer e.closeAll()
	got := txnTargetOf(e, false, []string{sideTyped, sidePebble}, 1)
	if !strings.HasPrefix(got.Measured, "raw pebble ") || !strings.Contains(got.Measured, "; typed ") ||
		strings.Contains(got.Measured, "tablestore") || !math.IsNaN(got.Value) || got.Pass {
		t.Fatalf("typed and pebble only: %+v", got)
	}
	got = txnTargetOf(e, false, []string{sideTablestore, sidePebble}, 1)
	if !strings.HasPrefix(got.Measured, "tablestore ") || math.IsNaN(got.Value) || got.Value <= 0 {
		t.Fatalf("tablestore and pebble: %+v", got)
	}
}
