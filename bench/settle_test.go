package main

import (
	"context"
	"testing"
)

// TestSettleCompactsEverySide loads small main stores, settles them and
// checks every side's store ends in one level, still holding its data.
func TestSettleCompactsEverySide(t *testing.T) {
	sc := scale{Name: "test", Entities: storeTestEntities, Gets: 10}
	e := newEnv(context.Background(), sc, t.TempDir(), 8<<20, 0)
	defer e.closeAll()
	sides := []string{sideTablestore, sideTyped, sidePebble, sidePebbleMaps, sideSQLite}
	for _, side := range sides {
		if _, err := runLoadNoSync(e, side, 0); err != nil {
			t.Fatalf("load %s: %v", side, err)
		}
	}
	res := &results{}
	if err := settleStores(e, config{sides: sides, settle: true}, res); err != nil {
		t.Fatal(err)
	}
	for _, side := range sides {
		if side == sideSQLite {
			if _, ok := res.SettleSeconds[side]; !ok {
				t.Errorf("sqlite not settled")
			}
			continue
		}
		sh, ok := res.Shapes[side]
		if !ok {
			t.Fatalf("%s: no shape", side)
		}
		levels := 0
		for _, n := range sh.Files {
			if n > 0 {
				levels++
			}
		}
		if sh.L0Files != 0 || levels != 1 || sh.ReadAmp != 1 {
			t.Errorf("%s compacted: %s", side, sh)
		}
		s, err := e.mainStore(side)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := s.get(e.ctx, partitionKey(2), rowKey(5)); err != nil || n != propertyCount {
			t.Errorf("%s: get after settling: %d, %v", side, n, err)
		}
	}
}
