package engine

import (
	"hash/maphash"
	"sync"
)

// partitionLockStripes is the number of mutexes writes are spread over.
// Two partitions share a mutex only when their hashes collide, which costs
// some parallelism, never correctness.
const partitionLockStripes = 1024

// partitionLocks serializes writes per (table, PartitionKey) through
// striped mutexes. Reads take no lock. Set seed before use.
type partitionLocks struct {
	seed    maphash.Seed
	stripes [partitionLockStripes]sync.Mutex
}

// lock locks the stripe of (tableID, pk) and returns it, for the caller
// to unlock.
func (l *partitionLocks) lock(tableID uint64, pk string) *sync.Mutex {
	m := &l.stripes[l.stripe(tableID, pk)]
	m.Lock()
	return m
}

// stripe returns the index of the stripe of (tableID, pk).
func (l *partitionLocks) stripe(tableID uint64, pk string) int {
	h := maphash.String(l.seed, pk) ^ tableID*0x9e3779b97f4a7c15
	return int(h % partitionLockStripes)
}
