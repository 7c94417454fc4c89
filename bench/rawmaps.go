package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
	"unsafe"

	"github.com/cockroachdb/pebble/v2"
	"github.com/tablestore/tablestore"
)

// The raw-maps side is raw Pebble read into the values tablestore's map
// API returns: per entity its keys, its Timestamp as a time.Time and a
// map[string]any of its properties holding string, int32, int64,
// float64, bool, time.Time, tablestore.GUID or []byte. It is the floor of
// any API that returns property maps: the reads of the raw side plus the
// map and its values.
//
// What it does to be cheap, in safe Go but for unsafe.String:
//   - the map is made with room for every property (make(map, n));
//   - keys, property names and string values are copied into text
//     chunks and sliced from them as strings: one chunk the size of the
//     stored key and value for a point get, 16 KiB chunks for a scan (a
//     page's strings in a few allocations); Binary values get their own
//     copy;
//   - values are boxed by the Go runtime, which allocates for every
//     boxed string, int64, float64 and time.Time and for int32s from 256
//     up (smaller integers, zero values and booleans are boxed without
//     allocating).
//
// It does not build ETags (their text is an API's choice, not a map's
// cost) and does not forge interface values pointing into slabs.

// mapEntity is one entity as the raw-maps side returns it.
type mapEntity struct {
	PartitionKey, RowKey string
	Timestamp            time.Time
	Properties           map[string]any
}

// textChunkSize is the size of a text chunk.
const textChunkSize = 16 << 10

// textChunks copies byte strings into shared chunks and returns them as
// strings. A chunk is never written again where it was handed out, so the
// strings stay immutable.
type textChunks struct{ buf []byte }

// str returns a string copy of b.
func (c *textChunks) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if cap(c.buf)-len(c.buf) < len(b) {
		if len(b) > textChunkSize/4 {
			return string(b)
		}
		c.buf = make([]byte, 0, textChunkSize)
	}
	start := len(c.buf)
	c.buf = append(c.buf, b...)
	return unsafe.String(&c.buf[start], len(b))
}

// decodeRawMap decodes a data key and raw value into e.
func decodeRawMap(k, v []byte, text *textChunks, e *mapEntity) error {
	pk, rk, ok := splitRawKey(k)
	if !ok {
		return errRawCorrupt
	}
	e.PartitionKey, e.RowKey = text.str(pk), text.str(rk)
	ts, r, err := newRawReader(v)
	if err != nil {
		return err
	}
	e.Timestamp = ticksToTime(ts)
	props := make(map[string]any, r.left)
	for {
		f, more, err := r.next()
		if err != nil {
			return err
		}
		if !more {
			break
		}
		val, err := rawMapValue(f, text)
		if err != nil {
			return err
		}
		props[text.str(f.name)] = val
	}
	e.Properties = props
	return nil
}

// rawMapValue returns the property f as the map API's Go value.
func rawMapValue(f rawField, text *textChunks) (any, error) {
	switch f.typ {
	case rawString:
		return text.str(f.payload), nil
	case rawInt32:
		return int32(binary.BigEndian.Uint32(f.payload)), nil
	case rawInt64:
		return int64(binary.BigEndian.Uint64(f.payload)), nil
	case rawDouble:
		return math.Float64frombits(binary.BigEndian.Uint64(f.payload)), nil
	case rawBool:
		return f.payload[0] != 0, nil
	case rawDateTime:
		return ticksToTime(int64(binary.BigEndian.Uint64(f.payload))), nil
	case rawGUID:
		return tablestore.GUID(f.payload), nil
	case rawBinary:
		return append(make([]byte, 0, len(f.payload)), f.payload...), nil
	}
	return nil, errRawCorrupt
}

// encodeRawMap appends the raw value of props (in the map's iteration
// order), written at ts, to b. The data set is written by encodeRaw; this
// is for tests of the map decoder over every type.
func encodeRawMap(b []byte, props map[string]any, ts int64) ([]byte, error) {
	b = binary.BigEndian.AppendUint64(b, uint64(ts))
	b = append(b, byte(len(props)))
	for name, v := range props {
		switch x := v.(type) {
		case string:
			b = appendRawString(b, name, x)
		case int32:
			b = appendRawInt32(b, name, x)
		case int64:
			b = appendRawFixed64(b, name, rawInt64, uint64(x))
		case float64:
			b = appendRawFixed64(b, name, rawDouble, math.Float64bits(x))
		case bool:
			c := byte(0)
			if x {
				c = 1
			}
			b = append(appendRawName(b, name, rawBool), c)
		case time.Time:
			b = appendRawFixed64(b, name, rawDateTime, uint64(timeToTicks(x)))
		case tablestore.GUID:
			b = append(appendRawName(b, name, rawGUID), x[:]...)
		case []byte:
			b = appendRawName(b, name, rawBinary)
			b = binary.AppendUvarint(b, uint64(len(x)))
			b = append(b, x...)
		default:
			return nil, fmt.Errorf("bench: property %s of type %T", name, v)
		}
	}
	return b, nil
}

// pebbleMapsStore is the raw-maps side: a raw Pebble store of its own
// (its own files and cache, like every side), loaded as raw Pebble's is,
// read into mapEntity values. It takes part in the read workloads only:
// its bulk load fills its store and is not reported, its other writes
// fail.
type pebbleMapsStore struct {
	*pebbleStore
}

// errReadsOnly is returned by the raw-maps side's single writes.
var errReadsOnly = errors.New("bench: the raw-maps side only reads")

func (p pebbleMapsStore) insert(context.Context, *record) error { return errReadsOnly }
func (p pebbleMapsStore) readModifyWrite(context.Context, string, string) error {
	return errReadsOnly
}

func (p pebbleMapsStore) get(_ context.Context, pk, rk string) (int, error) {
	var kb [64]byte
	k := rawKey(kb[:0], pk, rk)
	v, closer, err := p.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, errNotFound
	}
	if err != nil {
		return 0, err
	}
	defer closer.Close()
	// One chunk sized for the key and value holds all the entity's text.
	text := textChunks{buf: make([]byte, 0, len(k)+len(v))}
	e := new(mapEntity)
	if err := decodeRawMap(k, v, &text, e); err != nil {
		return 0, err
	}
	return len(e.Properties), nil
}

// scanMaps decodes up to limit entities of [lo, hi) (limit < 0: all), or
// with keep only those keep accepts by their raw value, and returns
// them and whether the range holds more (its next key then in next).
func (p pebbleMapsStore) scanMaps(lo, hi []byte, limit int, keep func(v []byte) (bool, error)) (out []mapEntity, next []byte, err error) {
	it, err := p.db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
	if err != nil {
		return nil, nil, err
	}
	if limit > 0 {
		out = make([]mapEntity, 0, limit)
	}
	var text textChunks
	valid := it.First()
	for ; valid && (limit < 0 || len(out) < limit); valid = it.Next() {
		v := it.Value()
		if keep != nil {
			ok, err := keep(v)
			if err != nil {
				it.Close()
				return nil, nil, err
			}
			if !ok {
				continue
			}
		}
		out = append(out, mapEntity{})
		if err := decodeRawMap(it.Key(), v, &text, &out[len(out)-1]); err != nil {
			it.Close()
			return nil, nil, err
		}
	}
	if valid {
		next = append([]byte(nil), it.Key()...)
	}
	if err := it.Error(); err != nil {
		it.Close()
		return nil, nil, err
	}
	return out, next, it.Close()
}

// counted returns len(es), or an error when an entity lacks properties.
func counted(es []mapEntity, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	for i := range es {
		if len(es[i].Properties) != propertyCount {
			return 0, fmt.Errorf("bench: %s/%s has %d properties, want %d",
				es[i].PartitionKey, es[i].RowKey, len(es[i].Properties), propertyCount)
		}
	}
	return len(es), nil
}

func (p pebbleMapsStore) rangeQuery(_ context.Context, pk, lo, hi string) (int, error) {
	es, _, err := p.scanMaps(rawKey(nil, pk, lo), rawKey(nil, pk, hi), -1, nil)
	return counted(es, err)
}

func (p pebbleMapsStore) partitionScan(_ context.Context, pk string) (int, error) {
	lo, hi := rawPartitionBounds(pk)
	es, _, err := p.scanMaps(lo, hi, -1, nil)
	return counted(es, err)
}

func (p pebbleMapsStore) filterScan(_ context.Context, bucket int32) (int, error) {
	lo, hi := rawTableBounds()
	es, _, err := p.scanMaps(lo, hi, -1, func(v []byte) (bool, error) {
		b, ok, err := rawInt32Property(v, "Bucket")
		return ok && b == bucket, err
	})
	return counted(es, err)
}

func (p pebbleMapsStore) page(_ context.Context, token string, top int) (int, string, error) {
	lo, hi := rawTableBounds()
	if token != "" {
		lo = []byte(token)
	}
	es, next, err := p.scanMaps(lo, hi, top, nil)
	n, err := counted(es, err)
	return n, string(next), err
}
