package main

import (
	"bytes"
	"testing"
	"time"
)

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		t     time.Time
		ticks int64
	}{
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), 621355968000000000},
		{time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC), 631139040000000000},
		{time.Date(2024, 1, 1, 0, 0, 0, 100, time.UTC), 638396640000000001},
	} {
		if got := timeToTicks(c.t); got != c.ticks {
			t.Errorf("timeToTicks(%v) = %d, want %d", c.t, got, c.ticks)
		}
		if got := ticksToTime(c.ticks); !got.Equal(c.t) {
			t.Errorf("ticksToTime(%d) = %v, want %v", c.ticks, got, c.t)
		}
	}
}

func TestFilterMatchesAboutOnePercent(t *testing.T) {
	n := countMatches(100_000)
	if n < 850 || n > 1150 {
		t.Fatalf("%d of 100,000 entities match, want about 1,000", n)
	}
}

func TestRawKeysOrderAndBounds(t *testing.T) {
	// Byte order of data keys must be (PartitionKey, RowKey) order, even
	// when one PartitionKey is a prefix of another.
	keys := [][2]string{{"a", "z"}, {"ab", ""}, {"ab", "a"}, {"b", "a"}}
	for i := 1; i < len(keys); i++ {
		a := rawKey(nil, keys[i-1][0], keys[i-1][1])
		b := rawKey(nil, keys[i][0], keys[i][1])
		if bytes.Compare(a, b) >= 0 {
			t.Errorf("key %v does not sort before %v", keys[i-1], keys[i])
		}
	}
	lo, hi := rawPartitionBounds("ab")
	for _, k := range keys {
		key := rawKey(nil, k[0], k[1])
		in := bytes.Compare(key, lo) >= 0 && bytes.Compare(key, hi) < 0
		if in != (k[0] == "ab") {
			t.Errorf("key %v in partition ab: %v", k, in)
		}
		pk, rk, ok := splitRawKey(key)
		if !ok || string(pk) != k[0] || string(rk) != k[1] {
			t.Errorf("splitRawKey(%v) = %q, %q, %v", k, pk, rk, ok)
		}
	}
	tlo, thi := rawTableBounds()
	if k := rawKey(nil, "p", "r"); bytes.Compare(k, tlo) < 0 || bytes.Compare(k, thi) >= 0 {
		t.Error("data key outside its table's bounds")
	}
}
