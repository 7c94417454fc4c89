package main

import (
	"context"
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
