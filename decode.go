package tablestore

import (
	"fmt"
	"unsafe"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/codec"
)

// decodeValue converts a codec value back to the Go type encodeValue took
// it from. Bytes are copied; time.Time is in UTC. An invalid type gives
// nil.
func decodeValue(v filter.Value) any {
	switch v.Type {
	case filter.TypeString:
		return string(v.Bytes)
	case filter.TypeInt32:
		return int32(v.Int)
	case filter.TypeInt64:
		return v.Int
	case filter.TypeDouble:
		return v.Float
	case filter.TypeBoolean:
		return v.Int != 0
	case filter.TypeDateTime:
		return timeFromTicks(v.Int)
	case filter.TypeGuid:
		var g GUID
		copy(g[:], v.Bytes)
		return g
	case filter.TypeBinary:
		return append(make([]byte, 0, len(v.Bytes)), v.Bytes...)
	}
	return nil
}

// decodeEntity builds an Entity from a stored key and record. A nil sel
// decodes every property; otherwise only the properties named in sel
// (a projection; names of absent properties and system names in sel are
// ignored). PartitionKey, RowKey, Timestamp and ETag are always set, and
// Properties is never nil. A corrupt record gives an error matching
// ErrCorrupt (no Azure code describes corruption) naming the entity.
func decodeEntity(pk, rk string, rec codec.Record, sel []string) (*Entity, error) {
	return decodeRow(driver.Row{PartitionKey: pk, RowKey: rk, Record: rec}, sel, false)
}

// decodeRow is decodeEntity for a driver's row; the ETag is the row's, or
// derived from the Timestamp when the row has none. owned says the record
// is the caller's and never written again, so the entity's strings may
// alias it instead of a copy.
func decodeRow(r driver.Row, sel []string, owned bool) (*Entity, error) {
	pk, rk, rec := r.PartitionKey, r.RowKey, r.Record
	ticks, err := rec.Timestamp()
	if err != nil {
		return nil, corruptEntity(pk, rk, err)
	}
	ts := timeFromTicks(ticks)
	etag := ETag(r.ETag)
	if etag == "" {
		etag = etagFor(ts)
	}
	e := &Entity{PartitionKey: pk, RowKey: rk, Timestamp: ts, ETag: etag}
	count := 0
	it := rec.Iter()
	for it.Next() {
		if sel == nil || selected(sel, it.Name()) {
			count++
		}
	}
	if err := it.Err(); err != nil {
		return nil, corruptEntity(pk, rk, err)
	}
	e.Properties = make(map[string]any, count)
	if count == 0 {
		return e, nil
	}
	// Copy the record into one string and take every name and string value
	// as a substring of it: one allocation for all the text instead of one
	// per name and per string. A projection copies only what it keeps.
	var all string
	switch {
	case sel != nil:
	case owned:
		all = unsafe.String(unsafe.SliceData(rec), len(rec))
	default:
		all = string(rec)
	}
	text := func(b []byte) string {
		if sel != nil {
			return string(b)
		}
		// b lies inside rec: its offset there is its offset in all.
		off := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))) - uintptr(unsafe.Pointer(unsafe.SliceData(rec))))
		return all[off : off+len(b)]
	}
	for it = rec.Iter(); it.Next(); {
		if sel != nil && !selected(sel, it.Name()) {
			continue
		}
		name := text(it.Name())
		if v := it.Value(); v.Type == filter.TypeString {
			e.Properties[name] = text(v.Bytes)
		} else {
			e.Properties[name] = decodeValue(v)
		}
	}
	return e, nil
}

func selected(sel []string, name []byte) bool {
	for _, s := range sel {
		if s == string(name) {
			return true
		}
	}
	return false
}

func corruptEntity(pk, rk string, err error) error {
	return mapError(&driver.CorruptError{Op: fmt.Sprintf("decode of entity (%s, %s)", quoteShort(pk), quoteShort(rk)), Err: err}, false)
}
