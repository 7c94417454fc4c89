package tablestoretest

import (
	"sync"
	"time"

	"github.com/tablestore/tablestore/server"
)

// MaxRequests is how many requests Server.Requests keeps: the most
// recent; older ones are dropped, and RequestsDropped counts them.
const MaxRequests = 10_000

// RequestRecord is one request a Server served (or dropped).
type RequestRecord struct {
	// RequestInfo names the operation, table and, for the single-entity
	// operations, the keys (see server.RequestInfo); for a $batch
	// (EntityGroupTransaction), PartitionKey is its partition.
	server.RequestInfo
	// Batch lists a $batch's sub-operations, in order, with the keys of
	// their entities; nil for other requests and for a body the server
	// refuses as a batch.
	Batch  []server.RequestInfo
	Method string
	// Status is the HTTP status answered; 0 when the connection was
	// dropped without an answer (Dropped).
	Status int
	// Code is the x-ms-error-code answered, if any.
	Code string
	// Dropped reports a fault's Drop, or a client gone during Latency.
	Dropped bool
	// Duration is the time from arrival to the last byte written.
	Duration time.Duration
	// RequestBytes and ResponseBytes are the body bytes read and written.
	RequestBytes, ResponseBytes int64
}

// requestLog is a bounded ring of records.
type requestLog struct {
	mu      sync.Mutex
	recs    []RequestRecord
	next    int // where the next record goes once recs is full
	dropped int64
}

func (l *requestLog) add(r RequestRecord) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.recs) < MaxRequests {
		l.recs = append(l.recs, r)
		return
	}
	l.recs[l.next] = r
	l.next = (l.next + 1) % MaxRequests
	l.dropped++
}

func (l *requestLog) snapshot() []RequestRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]RequestRecord, 0, len(l.recs))
	out = append(out, l.recs[l.next:]...)
	return append(out, l.recs[:l.next]...)
}

// Requests returns the requests the kit has answered so far, oldest
// first, in the order they finished: at most the last MaxRequests.
func (k *Kit) Requests() []RequestRecord { return k.log.snapshot() }

// RequestsDropped is how many old records Requests no longer holds.
func (k *Kit) RequestsDropped() int64 {
	k.log.mu.Lock()
	defer k.log.mu.Unlock()
	return k.log.dropped
}

// ClearRequests empties the request log.
func (k *Kit) ClearRequests() { k.log.clear() }

func (l *requestLog) clear() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs, l.next, l.dropped = nil, 0, 0
}
