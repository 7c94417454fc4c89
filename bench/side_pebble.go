package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
)

// pebbleStore is the raw Pebble comparator: hand-built keys in
// tablestore's layout and values in the raw format, written and read
// with the plain Pebble API. It is the floor tablestore is measured
// against.
type pebbleStore struct {
	db *pebble.DB
	wo *pebble.WriteOptions
	// locks serialise check-and-write steps per partition, as tablestore
	// locks (table, PartitionKey) for conditional writes.
	locks [64]sync.Mutex
}

// rawPebbleOptions returns the Pebble options the raw side uses, chosen
// to match the ones tablestore opens Pebble with: the same cache size,
// memtable size (tablestore's default, 4 MiB), format version, block
// compression (MinLZ where Pebble finds it fastest), bloom filter bits
// (tablestore's default, 10), and the block size given.
func rawPebbleOptions(s storeSettings) *pebble.Options {
	o := &pebble.Options{
		Cache:              pebble.NewCache(s.cacheSize),
		MemTableSize:       4 << 20,
		FormatMajorVersion: pebble.FormatNewest,
		Logger:             quietLogger{},
	}
	o.ApplyCompressionSettings(func() pebble.DBCompressionSettings { return pebble.DBCompressionFastest })
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		if s.blockSize > 0 {
			o.Levels[i].BlockSize = s.blockSize
		}
	}
	return o
}

func openPebble(dir string, s storeSettings) (store, error) {
	o := rawPebbleOptions(s)
	db, err := pebble.Open(filepath.Join(dir, "pebble"), o)
	o.Cache.Unref()
	if err != nil {
		return nil, err
	}
	wo := pebble.NoSync
	if s.sync {
		wo = pebble.Sync
	}
	return &pebbleStore{db: db, wo: wo}, nil
}

func (p *pebbleStore) close() error { return p.db.Close() }

func (p *pebbleStore) lockFor(pk string) *sync.Mutex {
	h := uint32(2166136261)
	for i := 0; i < len(pk); i++ {
		h = (h ^ uint32(pk[i])) * 16777619
	}
	return &p.locks[h%uint32(len(p.locks))]
}

func nowTicks() int64 { return timeToTicks(time.Now()) }

func (p *pebbleStore) upsertBatch(_ context.Context, recs []record) error {
	b := p.db.NewBatch()
	defer b.Close()
	var k, v []byte
	ts := nowTicks()
	for i := range recs {
		k = rawKey(k[:0], recs[i].PK, recs[i].RK)
		v = encodeRaw(v[:0], &recs[i], ts)
		if err := b.Set(k, v, nil); err != nil {
			return err
		}
	}
	return b.Commit(p.wo)
}

func (p *pebbleStore) insert(_ context.Context, rec *record) error {
	k := rawKey(nil, rec.PK, rec.RK)
	mu := p.lockFor(rec.PK)
	mu.Lock()
	defer mu.Unlock()
	_, closer, err := p.db.Get(k)
	if err == nil {
		closer.Close()
		return fmt.Errorf("bench: %s/%s exists", rec.PK, rec.RK)
	}
	if !errors.Is(err, pebble.ErrNotFound) {
		return err
	}
	return p.db.Set(k, encodeRaw(nil, rec, nowTicks()), p.wo)
}

func (p *pebbleStore) get(_ context.Context, pk, rk string) (int, error) {
	var kb [64]byte
	v, closer, err := p.db.Get(rawKey(kb[:0], pk, rk))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, errNotFound
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	rec := record{PK: pk, RK: rk}
	_, n, err := decodeRaw(v, &rec)
	return n, err
}

// scanDecode decodes every entity in [lo, hi) and returns them.
func (p *pebbleStore) scanDecode(lo, hi []byte) ([]record, error) {
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	var out []record
	for valid := it.First(); valid; valid = it.Next() {
		out = append(out, record{})
		if err := decodeRawEntry(it.Key(), it.Value(), &out[len(out)-1]); err != nil {
			it.Close()
			return nil, err
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return nil, err
	}
	return out, it.Close()
}

// decodeRawEntry decodes a data key and raw value into rec.
func decodeRawEntry(k, v []byte, rec *record) error {
	pk, rk, ok := splitRawKey(k)
	if !ok {
		return errRawCorrupt
	}
	rec.PK, rec.RK = string(pk), string(rk)
	_, _, err := decodeRaw(v, rec)
	return err
}

func (p *pebbleStore) rangeQuery(_ context.Context, pk, lo, hi string) (int, error) {
	recs, err := p.scanDecode(rawKey(nil, pk, lo), rawKey(nil, pk, hi))
	return len(recs), err
}

func (p *pebbleStore) partitionScan(_ context.Context, pk string) (int, error) {
	lo, hi := rawPartitionBounds(pk)
	recs, err := p.scanDecode(lo, hi)
	return len(recs), err
}

func (p *pebbleStore) filterScan(_ context.Context, bucket int32) (int, error) {
	lo, hi := rawTableBounds()
	return rawFilterScan(p.db, lo, hi, bucket)
}

// rawFilterScan decodes the entities of [lo, hi) whose Bucket is bucket
// and returns how many there are.
func rawFilterScan(db *pebble.DB, lo, hi []byte, bucket int32) (int, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, err
	}
	var out []record
	for valid := it.First(); valid; valid = it.Next() {
		v := it.Value()
		b, ok, err := rawInt32Property(v, "Bucket")
		if err != nil {
			it.Close()
			return 0, err
		}
		if !ok || b != bucket {
			continue
		}
		out = append(out, record{})
		if err := decodeRawEntry(it.Key(), v, &out[len(out)-1]); err != nil {
			it.Close()
			return 0, err
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return 0, err
	}
	return len(out), it.Close()
}

func (p *pebbleStore) page(_ context.Context, token string, top int) (int, string, error) {
	lo, hi := rawTableBounds()
	if token != "" {
		lo = []byte(token)
	}
	return p.readPage(lo, hi, top, false)
}

// reversePage is page read newest first: up to top entities below token
// (the table's end when ""), and the key the next page starts below.
func (p *pebbleStore) reversePage(_ context.Context, token string, top int) (int, string, error) {
	lo, hi := rawTableBounds()
	if token != "" {
		hi = []byte(token)
	}
	return p.readPage(lo, hi, top, true)
}

// readPage decodes up to top entities of [lo, hi), from the low end or,
// reverse, from the high end, and returns the next page's token: the
// first key not read, or for reverse the successor of the first key not
// read (the next page's exclusive upper bound).
func (p *pebbleStore) readPage(lo, hi []byte, top int, reverse bool) (int, string, error) {
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return 0, "", err
	}
	first, step := it.First, it.Next
	if reverse {
		first, step = it.Last, it.Prev
	}
	out := make([]record, 0, top)
	valid := first()
	for ; valid && len(out) < top; valid = step() {
		out = append(out, record{})
		if err := decodeRawEntry(it.Key(), it.Value(), &out[len(out)-1]); err != nil {
			it.Close()
			return 0, "", err
		}
	}
	next := ""
	if valid {
		next = string(it.Key())
		if reverse {
			next += "\x00"
		}
	}
	if err := it.Error(); err != nil {
		it.Close()
		return 0, "", err
	}
	return len(out), next, it.Close()
}

func (p *pebbleStore) readModifyWrite(_ context.Context, pk, rk string) error {
	k := rawKey(nil, pk, rk)
	var rec record
	v, closer, err := p.db.Get(k)
	if err != nil {
		return err
	}
	ts, _, err := decodeRaw(v, &rec)
	closer.Close()
	if err != nil {
		return err
	}
	rec.PK, rec.RK = pk, rk
	rec.Count++
	mu := p.lockFor(pk)
	mu.Lock()
	defer mu.Unlock()
	v, closer, err = p.db.Get(k)
	if err != nil {
		return err
	}
	cur, err := rawTimestamp(v)
	closer.Close()
	if err != nil {
		return err
	}
	if cur != ts {
		return errConflict
	}
	return p.db.Set(k, encodeRaw(nil, &rec, max(nowTicks(), ts+1)), p.wo)
}

// quietLogger drops Pebble's informational log lines so they do not mix
// with the progress output.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any) {}
func (quietLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(stderr, "pebble: "+format+"\n", args...)
}
func (quietLogger) Fatalf(format string, args ...any) {
	panic(fmt.Sprintf("pebble: "+format, args...))
}

func (p *pebbleStore) readCount(_ context.Context, pk, rk string) (int32, error) {
	v, closer, err := p.db.Get(rawKey(nil, pk, rk))
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	c, ok, err := rawInt32Property(v, "Count")
	if err == nil && !ok {
		err = errRawCorrupt
	}
	return c, err
}
