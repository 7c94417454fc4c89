package tablestore

import (
	"bytes"
	"sync"
	"time"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/wire"
)

// RawEntity is an entity held in its stored form: its keys, and its
// properties validated and encoded as a write stores them, with no
// property map. UnmarshalJSON fills one from Azure's JSON form; a
// TransactionAction (field Raw) and BulkWriter.AddRaw write it. A service
// that receives entities as JSON and stores them as they are (a REST
// front end, an import) saves building and encoding a map per entity.
//
// The zero RawEntity holds no entity. A RawEntity may be reused for the
// next entity once the write that reads it has returned; it is not safe
// for concurrent use.
type RawEntity struct {
	PartitionKey, RowKey string
	// Timestamp and ETag are set by a successful write in a transaction;
	// UnmarshalJSON sets them from the body's Timestamp and odata.etag
	// (which writes ignore), as Entity.UnmarshalJSON does.
	Timestamp time.Time
	ETag      ETag

	record []byte // driver.Record layout, header Timestamp zero; nil: no entity
	spare  []byte // a buffer Reset kept for the next record, when record is nil
	count  int    // properties in record
	size   int    // their share of the entity size (limits.EntitySize less the keys)
	// refused is why the properties could not be encoded (a value over
	// Azure's limits): a write reports it after checking the keys, as a
	// write of the Entity would.
	refused error
}

// maxKeptRecord is the largest stored form whose buffer Reset keeps.
const maxKeptRecord = 64 << 10

// Reset makes e hold no entity, as the zero RawEntity does, and keeps
// the buffer of its stored form, when it is no larger than 64 KiB, for
// the next UnmarshalJSON to decode into. A service decoding many bodies
// reuses RawEntity values so, without keeping a large buffer alive.
func (e *RawEntity) Reset() {
	rec := e.record[:0]
	if cap(rec) > maxKeptRecord {
		rec = nil
	}
	*e = RawEntity{spare: rec}
}

// rawScratch is the reusable memory of decoding one JSON body.
var rawScratch = sync.Pool{New: func() any { return new(wire.RecordScratch) }}

// UnmarshalJSON decodes an entity from Azure's JSON form straight into
// its stored form. It reads exactly what Entity.UnmarshalJSON reads, with
// the same types inferred, and fails with the same errors; the entity it
// holds then is the one a write of Entity.UnmarshalJSON's result would
// store, byte for byte. The keys, If-Match, the values' limits and the
// entity's are checked by the write, in the order a write of that Entity
// checks them, with the same errors. On error e holds no entity; the
// literal null leaves e unchanged and is no error (a write of a zero
// RawEntity then fails with InvalidInput: it holds no entity).
func (e *RawEntity) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	s := rawScratch.Get().(*wire.RecordScratch)
	defer func() {
		if s.Reusable() {
			rawScratch.Put(s)
		}
	}()
	dst := e.record[:0]
	if dst == nil {
		dst = e.spare[:0]
	}
	w, rec, err := wire.DecodeRecord(dst, data, s)
	if err != nil {
		// The body may be an entity whose values cannot be stored: its
		// write, not its decoding, refuses it, after the keys.
		d, derr := wire.Decode(data)
		if derr != nil {
			*e = RawEntity{}
			return coded(derr)
		}
		*e = RawEntity{PartitionKey: d.PartitionKey, RowKey: d.RowKey, Timestamp: d.Timestamp, ETag: ETag(d.ETag),
			record: rec[:0], refused: coded(err)}
		return nil
	}
	*e = RawEntity{PartitionKey: w.PartitionKey, RowKey: w.RowKey, Timestamp: w.Timestamp, ETag: ETag(w.ETag),
		record: rec, count: w.Count, size: w.Size}
	return nil
}

// prepareRaw is prepareAction for a RawEntity: the If-Match rules and the
// keys, then the entity limits; it appends the record to buf.
func prepareRaw(buf []byte, typ ActionType, e *RawEntity, ifMatch ETag) (driver.Action, []byte, int, error) {
	var a driver.Action
	buf, size, err := prepareRawInto(&a, buf, typ, e, ifMatch, nil)
	return a, buf, size, err
}

// prepareRawInto is prepareRaw setting all of *a in place; keys is as
// prepareKeysInto's.
func prepareRawInto(a *driver.Action, buf []byte, typ ActionType, e *RawEntity, ifMatch ETag, keys *keyMemo) ([]byte, int, error) {
	keySize, err := prepareKeysInto(a, typ, e.PartitionKey, e.RowKey, ifMatch, keys)
	if err != nil || typ == ActionDelete {
		return buf, keySize, err
	}
	switch {
	case e.refused != nil:
		return buf, 0, e.refused
	case e.record == nil:
		return buf, 0, newError(edm.CodeInvalidInput, "the raw entity holds no entity")
	}
	size := keySize + e.size
	if err := entityenc.CheckLimits(e.count, size); err != nil {
		return buf, 0, coded(err)
	}
	return append(buf, e.record...), size, nil
}

// AppendJSON appends e to dst as AppendEntityJSON writes the entity it
// holds, with e's Timestamp and ETag (those a write set), at opts. It
// allocates nothing when dst has room. Errors: those of
// AppendEntityJSON's options, and InvalidInput when e holds no entity (or
// one whose values a write refused). On error dst is returned at its
// length.
func (e *RawEntity) AppendJSON(dst []byte, opts *JSONOptions) ([]byte, error) {
	o, err := wireOptions(opts)
	if err != nil {
		return dst, err
	}
	if e.record == nil || e.refused != nil {
		return dst, newError(edm.CodeInvalidInput, "the raw entity holds no entity to write")
	}
	// The record's header holds the Timestamp only while it is written:
	// a write takes records whose header Timestamp is zero.
	rec := driver.Record(e.record)
	var ticks int64
	if !e.Timestamp.IsZero() {
		ticks = edm.TicksFromTime(e.Timestamp)
	}
	if err := rec.SetTimestamp(ticks); err != nil {
		return dst, mapError(err, false)
	}
	out, err := wire.AppendRecord(dst, e.PartitionKey, e.RowKey, string(e.ETag), rec, &o)
	_ = rec.SetTimestamp(0)
	if err != nil {
		return dst, mapError(coded(err), false)
	}
	return out, nil
}
