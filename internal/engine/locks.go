package engine

import (
	"hash/maphash"
	"slices"
	"sync"
)

// partitionLockStripes is the number of mutexes writes are spread over.
// Two partitions share a mutex only when their hashes collide, which costs
// some parallelism, never correctness.
const partitionLockStripes = 1024

// partitionLocks serializes writes per (table, PartitionKey) through
// striped mutexes. Reads take no lock. Set seed before use.
//
// A write that needs several partitions (a bulk commit) locks their
// stripes in ascending stripe order, so two such writes cannot deadlock,
// and a single-partition write holds one stripe only.
type partitionLocks struct {
	seed    maphash.Seed
	stripes [partitionLockStripes]sync.Mutex
}

// stripe returns the index of the stripe of (tableID, pk).
func (l *partitionLocks) stripe(tableID uint64, pk string) int {
	h := maphash.String(l.seed, pk) ^ tableID*0x9e3779b97f4a7c15
	return int(h % partitionLockStripes)
}

// lock locks the stripe of (tableID, pk) and returns it, for the caller
// to unlock.
func (l *partitionLocks) lock(tableID uint64, pk string) *sync.Mutex {
	m := &l.stripes[l.stripe(tableID, pk)]
	m.Lock()
	return m
}

// lockMany locks the stripes of every given partition of table tableID,
// in ascending stripe order, each once, and returns the function that
// unlocks them.
func (l *partitionLocks) lockMany(tableID uint64, pks func(yield func(string) bool)) (unlock func()) {
	var seen [partitionLockStripes / 64]uint64
	var idx []int
	for pk := range pks {
		s := l.stripe(tableID, pk)
		if seen[s/64]&(1<<(s%64)) == 0 {
			seen[s/64] |= 1 << (s % 64)
			idx = append(idx, s)
		}
	}
	slices.Sort(idx)
	for _, s := range idx {
		l.stripes[s].Lock()
	}
	return func() {
		for _, s := range idx {
			l.stripes[s].Unlock()
		}
	}
}
