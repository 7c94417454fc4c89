package tablestore

import (
	"sync"

	"github.com/tablestore/tablestore/driver"
)

// txnScratch is the reusable memory of one write or transaction: the
// actions handed to the driver, one buffer holding every record, and the
// bookkeeping of validation. It is pooled; nothing of it outlives the
// call to the driver's Commit.
type txnScratch struct {
	acts  []driver.Action
	buf   []byte
	ends  []int // end offset in buf of each action's record
	refs  []actionRef
	order []int32
	names nameCache
	plan  lastPlan
}

// maxPooledBuf is the largest record buffer kept for reuse.
const maxPooledBuf = 1 << 20

var scratchPool = sync.Pool{New: func() any { return new(txnScratch) }}

func getScratch() *txnScratch { return scratchPool.Get().(*txnScratch) }

// putScratch returns s to the pool, dropping its references to the
// caller's memory.
func putScratch(s *txnScratch) {
	clear(s.acts)
	clear(s.refs)
	s.names = nameCache{}
	s.plan = lastPlan{}
	if cap(s.buf) > maxPooledBuf {
		s.buf = nil
	}
	scratchPool.Put(s)
}
