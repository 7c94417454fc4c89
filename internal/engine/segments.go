package engine

import (
	"bytes"
	"context"
	"math/big"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/keys"
	"github.com/tablestore/tablestore/internal/plan"
)

// countSplitBytes is the estimated size below which Segments splits a
// table by counting its entities instead of by Pebble's size estimates,
// which do not see the memtable.
var countSplitBytes uint64 = 16 << 20

// splitKeyWidth is the width in bytes of the keys the volume split
// bisects over: the table ID and enough of the keys to tell sstable
// blocks apart.
const splitKeyWidth = 48

var _ driver.Segmenter = (*table)(nil)

// Segments implements driver.Segmenter. A table whose estimated size is
// small is split by entity count (one pass over its keys); a larger one
// by Pebble's disk usage estimates (EstimateDiskUsage over sstable index
// blocks), bisecting the key space for each split and moving the split to
// the first stored key at or after it. Both read one consistent view of
// the table.
func (t *table) Segments(ctx context.Context, n int) ([]plan.Key, error) {
	release, err := t.db.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	info, err := t.resolve()
	if err != nil {
		return nil, err
	}
	lo, hi := keys.EntitySpan(info.id)
	snap := t.db.pdb.NewSnapshot()
	defer snap.Close()
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	total, err := t.db.pdb.EstimateDiskUsage(lo, hi)
	if err != nil {
		return nil, err
	}
	var splits [][]byte
	if total < countSplitBytes {
		splits, err = splitByCount(ctx, it, n)
	} else {
		splits, err = t.splitByVolume(ctx, it, lo, hi, total, n)
	}
	if err != nil {
		return nil, err
	}
	out := make([]plan.Key, len(splits))
	for i, k := range splits {
		if k == nil {
			continue // the table's first position
		}
		_, pk, rk, err := keys.Split(k)
		if err != nil {
			return nil, corruptRecord(k, err)
		}
		out[i] = plan.Key{PartitionKey: string(pk), RowKey: string(rk)}
	}
	return out, nil
}

// splitByCount returns the keys of the entities at positions i*count/n,
// for i from 1 to n-1, counting the table's entities first.
func splitByCount(ctx context.Context, it *pebble.Iterator, n int) ([][]byte, error) {
	count := 0
	for valid := it.First(); valid; valid = it.Next() {
		if count++; count%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	if err := it.Error(); err != nil {
		return nil, err
	}
	splits := make([][]byte, 0, n-1)
	pos := 0
	valid := it.First()
	for i := 1; i < n; i++ {
		for want := i * count / n; valid && pos < want; pos++ {
			valid = it.Next()
		}
		if !valid {
			break
		}
		splits = append(splits, bytes.Clone(it.Key()))
	}
	return fill(splits, n, it)
}

// fill pads splits to n-1 keys with the table's last key, so every
// segment past the data is empty, or returns none when the table is
// empty (the single segment then covers it).
func fill(splits [][]byte, n int, it *pebble.Iterator) ([][]byte, error) {
	if len(splits) == n-1 {
		return splits, nil
	}
	var last []byte
	if len(splits) > 0 {
		last = splits[len(splits)-1]
	} else if it.Last() {
		last = bytes.Clone(it.Key())
	} else if err := it.Error(); err != nil {
		return nil, err
	}
	for len(splits) < n-1 {
		if last == nil {
			// An empty table: all splits at the first position of the
			// table, so the last segment covers it all.
			splits = append(splits, nil)
			continue
		}
		splits = append(splits, last)
	}
	return splits, nil
}

// splitByVolume finds, for i from 1 to n-1, the first stored key at or
// after the key k where the estimated disk usage of [lo, k) reaches
// i/n of total.
func (t *table) splitByVolume(ctx context.Context, it *pebble.Iterator, lo, hi []byte, total uint64, n int) ([][]byte, error) {
	loN, hiN := keyNum(lo), keyNum(hi)
	splits := make([][]byte, 0, n-1)
	from := new(big.Int).Set(loN)
	for i := 1; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		target := total * uint64(i) / uint64(n)
		a, b := new(big.Int).Set(from), new(big.Int).Set(hiN)
		for range 64 {
			if new(big.Int).Sub(b, a).Cmp(big.NewInt(1)) <= 0 {
				break
			}
			mid := new(big.Int).Add(a, b)
			mid.Rsh(mid, 1)
			used, err := t.db.pdb.EstimateDiskUsage(lo, numKey(mid))
			if err != nil {
				return nil, err
			}
			if used < target {
				a = mid
			} else {
				b = mid
			}
		}
		from = b
		if !it.SeekGE(numKey(b)) {
			if err := it.Error(); err != nil {
				return nil, err
			}
			break
		}
		k := bytes.Clone(it.Key())
		if len(splits) > 0 && bytes.Compare(k, splits[len(splits)-1]) < 0 {
			k = splits[len(splits)-1]
		}
		splits = append(splits, k)
	}
	return fill(splits, n, it)
}

// keyNum reads the first splitKeyWidth bytes of k, zero-padded, as a
// big-endian number.
func keyNum(k []byte) *big.Int {
	b := make([]byte, splitKeyWidth)
	copy(b, k)
	return new(big.Int).SetBytes(b)
}

// numKey is keyNum's inverse, without trailing zero bytes.
func numKey(x *big.Int) []byte {
	b := x.FillBytes(make([]byte, splitKeyWidth))
	return bytes.TrimRight(b, "\x00")
}
