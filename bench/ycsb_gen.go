package main

// YCSB's core workloads and key generators, written from the published
// definitions (Cooper et al., "Benchmarking Cloud Serving Systems with
// YCSB", SoCC 2010, and the CoreWorkload property reference; the
// zipfian sampler is Gray et al.'s, "Quickly Generating Billion-Record
// Synthetic Databases", SIGMOD 1994).

import (
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
)

// ycsbZipfianConstant is YCSB's default zipfian constant (theta).
const ycsbZipfianConstant = 0.99

// ycsbScrambledItems and ycsbScrambledZetan are the scrambled zipfian's
// fixed item space and its zeta(10^10, 0.99), the value YCSB publishes
// so the sampler need not sum ten billion terms.
const (
	ycsbScrambledItems = 10_000_000_000
	ycsbScrambledZetan = 26.46902820178302
)

// ycsbFieldCount and ycsbFieldLength are YCSB's record shape: ten fields
// of 100 bytes.
const (
	ycsbFieldCount  = 10
	ycsbFieldLength = 100
)

// ycsbPartition is the one PartitionKey every YCSB record has; the YCSB
// key is the RowKey, so a scan is a range of one partition.
const ycsbPartition = "ycsb"

// ycsbFieldNames are the field names, field0 to field9.
var ycsbFieldNames = func() []string {
	n := make([]string, ycsbFieldCount)
	for i := range n {
		n[i] = "field" + strconv.Itoa(i)
	}
	return n
}()

// fnv64 is YCSB's hash of a long: FNV-1 over its eight bytes, low byte
// first, made non-negative.
func fnv64(v int64) int64 {
	h := uint64(0xCBF29CE484222325)
	for range 8 {
		h ^= uint64(v & 0xff)
		h *= 1099511628211
		v >>= 8
	}
	r := int64(h)
	if r < 0 {
		r = -r
		if r < 0 { // math.MinInt64 has no positive counterpart
			r = 0
		}
	}
	return r
}

// ycsbKey is the key of record keynum: "user" and its hash (YCSB's
// default hashed insert order, no zero padding).
func ycsbKey(keynum int64) string {
	return "user" + strconv.FormatInt(fnv64(keynum), 10)
}

// zeta returns the sum of 1/i^theta for i in (from, to], added to start.
func zeta(from, to int64, theta, start float64) float64 {
	s := start
	for i := from; i < to; i++ {
		s += 1 / math.Pow(float64(i+1), theta)
	}
	return s
}

// zipfian draws integers in [0, items) with the popularity of item i
// proportional to 1/(i+1)^theta (Gray et al.'s method). Its item count
// may grow (the latest distribution grows it with every insert); zeta is
// then extended incrementally. Not safe for concurrent use.
type zipfian struct {
	theta, alpha, zeta2 float64
	items               int64
	zetan, eta          float64
}

func newZipfian(items int64, theta float64) *zipfian {
	return newZipfianZeta(items, theta, zeta(0, items, theta, 0))
}

func newZipfianZeta(items int64, theta, zetan float64) *zipfian {
	z := &zipfian{theta: theta, alpha: 1 / (1 - theta), zeta2: zeta(0, 2, theta, 0)}
	z.setItems(items, zetan)
	return z
}

func (z *zipfian) setItems(items int64, zetan float64) {
	z.items, z.zetan = items, zetan
	z.eta = (1 - math.Pow(2/float64(items), 1-z.theta)) / (1 - z.zeta2/zetan)
}

// next draws one value in [0, items); items may be larger than the
// count the sampler was made for (zeta is extended), never smaller.
func (z *zipfian) next(r *rand.Rand, items int64) int64 {
	if items > z.items {
		z.setItems(items, zeta(z.items, items, z.theta, z.zetan))
	}
	u := r.Float64()
	uz := u * z.zetan
	if uz < 1 {
		return 0
	}
	if uz < 1+math.Pow(0.5, z.theta) {
		return 1
	}
	v := int64(float64(z.items) * math.Pow(z.eta*u-z.eta+1, z.alpha))
	return min(v, z.items-1)
}

// A keyChooser picks the record a read, update, scan or
// read-modify-write goes to, given the highest record number inserted
// and acknowledged so far.
type keyChooser interface {
	next(r *rand.Rand, last int64) int64
}

// scrambledZipfian is YCSB's "zipfian" request distribution: a zipfian
// over a fixed space of 10^10 items, hashed onto [0, items), so popular
// records are spread over the key space instead of clustered at its
// start.
type scrambledZipfian struct {
	z     *zipfian
	items int64
}

func newScrambledZipfian(items int64) *scrambledZipfian {
	return &scrambledZipfian{z: newZipfianZeta(ycsbScrambledItems, ycsbZipfianConstant, ycsbScrambledZetan), items: items}
}

func (s *scrambledZipfian) next(r *rand.Rand, last int64) int64 {
	// YCSB draws again while the pick is past the last acknowledged
	// insert (the space includes the inserts a run expects).
	for {
		k := fnv64(s.z.next(r, ycsbScrambledItems)) % s.items
		if k <= last {
			return k
		}
	}
}

// uniformChooser is YCSB's "uniform": any loaded record alike.
type uniformChooser struct{ items int64 }

func (u uniformChooser) next(r *rand.Rand, last int64) int64 {
	return r.Int64N(min(u.items, last+1))
}

// skewedLatest is YCSB's "latest": a zipfian over the records counted
// back from the newest, so the newest are the most popular.
type skewedLatest struct{ z *zipfian }

func newSkewedLatest(records int64) *skewedLatest {
	return &skewedLatest{z: newZipfian(records, ycsbZipfianConstant)}
}

func (s *skewedLatest) next(r *rand.Rand, last int64) int64 {
	return last - s.z.next(r, last+1)
}

// ackCounter hands out the record numbers of inserts and tracks the
// highest one below which every insert has completed (YCSB's
// acknowledged counter), so no read picks a record still being written.
// Safe for concurrent use.
type ackCounter struct {
	mu      sync.Mutex
	next    int64 // the next record number to hand out
	limit   int64 // every record below it is acknowledged
	pending map[int64]bool
}

func newAckCounter(records int64) *ackCounter {
	return &ackCounter{next: records, limit: records, pending: map[int64]bool{}}
}

func (c *ackCounter) take() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.next++
	return c.next - 1
}

func (c *ackCounter) ack(k int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending[k] = true
	for c.pending[c.limit] {
		delete(c.pending, c.limit)
		c.limit++
	}
}

// last is the highest record number that is acknowledged with all below it.
func (c *ackCounter) last() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limit - 1
}

// ycsbOp is one operation type of a workload.
type ycsbOp int

const (
	opRead ycsbOp = iota
	opUpdate
	opInsert
	opScan
	opRMW
	ycsbOpCount
)

var ycsbOpNames = [ycsbOpCount]string{"read", "update", "insert", "scan", "rmw"}

// ycsbWorkload is one core workload: its operation mix and request
// distribution. Every workload reads all fields and updates one.
type ycsbWorkload struct {
	name         string
	about        string
	mix          [ycsbOpCount]float64
	distribution string // "zipfian", "latest" or "uniform"
	maxScan      int    // E: scan lengths uniform in [1, maxScan]
}

// ycsbWorkloads are YCSB's six core workloads, in their documented run
// order (A, B, C, F, D, then E, which YCSB runs on a reloaded store; here
// E follows D on the same store, whose inserts it may then scan).
var ycsbWorkloads = []ycsbWorkload{
	{name: "A", about: "update heavy: 50% read, 50% update, zipfian", mix: [ycsbOpCount]float64{opRead: 0.5, opUpdate: 0.5}, distribution: "zipfian"},
	{name: "B", about: "read mostly: 95% read, 5% update, zipfian", mix: [ycsbOpCount]float64{opRead: 0.95, opUpdate: 0.05}, distribution: "zipfian"},
	{name: "C", about: "read only: 100% read, zipfian", mix: [ycsbOpCount]float64{opRead: 1}, distribution: "zipfian"},
	{name: "F", about: "read-modify-write: 50% read, 50% RMW, zipfian", mix: [ycsbOpCount]float64{opRead: 0.5, opRMW: 0.5}, distribution: "zipfian"},
	{name: "D", about: "read latest: 95% read, 5% insert, latest", mix: [ycsbOpCount]float64{opRead: 0.95, opInsert: 0.05}, distribution: "latest"},
	{name: "E", about: "short ranges: 95% scan (1 to 100 records, uniform), 5% insert, zipfian", mix: [ycsbOpCount]float64{opScan: 0.95, opInsert: 0.05}, distribution: "zipfian", maxScan: 100},
}

func ycsbWorkloadNamed(name string) (ycsbWorkload, bool) {
	for _, w := range ycsbWorkloads {
		if w.name == name {
			return w, true
		}
	}
	return ycsbWorkload{}, false
}

// chooser returns w's key chooser for a store of records records and a
// run of ops operations: the zipfian's space covers the inserts the run
// expects (YCSB: twice the insert proportion of the operations).
func (w ycsbWorkload) chooser(records, ops int64) keyChooser {
	switch w.distribution {
	case "latest":
		return newSkewedLatest(records)
	case "uniform":
		return uniformChooser{records}
	}
	return newScrambledZipfian(records + int64(float64(ops)*w.mix[opInsert]*2))
}

// pick draws an operation type by w's proportions.
func (w ycsbWorkload) pick(r *rand.Rand) ycsbOp {
	u := r.Float64()
	for op, p := range w.mix {
		if u < p {
			return ycsbOp(op)
		}
		u -= p
	}
	for op := ycsbOpCount - 1; op >= 0; op-- {
		if w.mix[op] > 0 {
			return op
		}
	}
	return opRead
}

// ycsbValue fills dst (ycsbFieldLength bytes) with printable random
// characters, 64 symbols as YCSB's random values use.
func ycsbValue(r *rand.Rand, dst []byte) {
	for i := 0; i < len(dst); i += 8 {
		x := r.Uint64()
		for j := i; j < min(i+8, len(dst)); j++ {
			dst[j] = ' ' + byte(x&63)
			x >>= 8
		}
	}
}

// ycsbRecord makes the ten field values of a new record.
func ycsbRecord(r *rand.Rand) [][]byte {
	buf := make([]byte, ycsbFieldCount*ycsbFieldLength)
	ycsbValue(r, buf)
	f := make([][]byte, ycsbFieldCount)
	for i := range f {
		f[i] = buf[i*ycsbFieldLength : (i+1)*ycsbFieldLength : (i+1)*ycsbFieldLength]
	}
	return f
}
