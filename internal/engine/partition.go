package engine

import (
	"sync"

	"github.com/tablestore/tablestore/internal/keys"
)

// partition is one PartitionKey of one table: the unit of locking, of
// transactions and of key prefix. Every write to a partition goes through
// its methods, under its lock.
type partition struct {
	db      *Engine
	tableID uint64
	pk      string
}

// partition returns the partition pk of table id.
func (db *Engine) partition(tableID uint64, pk string) partition {
	return partition{db: db, tableID: tableID, pk: pk}
}

// lock serializes writes to the partition: it locks the partition's
// mutex and returns it for the caller to unlock. Reads take no lock.
func (p partition) lock() *sync.Mutex { return p.db.locks.lock(p.tableID, p.pk) }

// key appends the stored key of the partition's entity rk to dst.
func (p partition) key(dst []byte, rk string) []byte {
	return keys.Entity(dst, p.tableID, p.pk, rk)
}

// keyLen returns the length of the stored key of the partition's entity
// rk (see keys.Entity).
func (p partition) keyLen(rk string) int { return 8 + len(p.pk) + 1 + len(rk) }
