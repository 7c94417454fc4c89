package tablestore

import (
	"bytes"
	"fmt"
	"sync"
	"time"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/wire"
)

// Entity is one row of a table: its key, the system properties the engine
// sets, and up to 252 user properties.
//
// Property values have one of eight Go types, one per EDM type:
//
//	string     Edm.String
//	int32      Edm.Int32
//	int64      Edm.Int64
//	float64    Edm.Double
//	bool       Edm.Boolean
//	time.Time  Edm.DateTime (stored in UTC at 100 ns precision)
//	GUID       Edm.Guid
//	[]byte     Edm.Binary
//
// and these are the types reads return. Int32 and Int64 stay distinct, as
// they do in Azure, because filters compare them differently.
//
// Writes also take the other Go integer types (int, int8, int16, uint,
// uint8, uint16, uint32, uint64) by the integer rule: such a value is
// stored as an Edm.Int32 when it fits one, else as an Edm.Int64, as Azure
// infers the type of a bare JSON integer. So int(5) is read back as
// int32(5) and int(1<<40) as int64(1<<40); a uint or uint64 above
// math.MaxInt64 is refused with OutOfRangeInput. Use int32 or int64 to fix
// a property's type whatever its value.
//
// Any other type is rejected with InvalidValueType; a nil value means "no
// value": Insert and Replace drop it, Merge ignores it, as Azure does with
// JSON null.
type Entity struct {
	PartitionKey string
	RowKey       string
	// Timestamp is set by the engine on every write and strictly increases
	// per entity. Any value the caller sets is ignored.
	Timestamp time.Time
	// ETag identifies this version of the entity, for If-Match. The engine
	// sets it together with Timestamp.
	ETag ETag
	// Properties maps property names to values. It never holds
	// PartitionKey, RowKey or Timestamp. It may hold a user property named
	// ETag, as Azure allows: that is data, unrelated to the ETag field.
	Properties map[string]any
}

// ETag is an entity version in Azure's form,
// W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'". Compare ETags as opaque
// strings.
//
// As an If-Match value an ETag must be well-formed: ETagAny, or an HTTP
// entity-tag (an optional W/ and a double-quoted string of visible ASCII
// characters other than '"'). A well-formed ETag that is not the entity's
// current one fails with UpdateConditionNotSatisfied; anything else (no
// quotes, spaces, "abc") fails with InvalidInput before the entity is
// read. Azure's older ETags, W/"0x8D...", are well-formed.
type ETag string

// ETagAny is the If-Match wildcard: it matches any existing entity.
const ETagAny ETag = "*"

// etagFor returns the ETag of an entity written at ts:
// W/"datetime'2006-01-02T15%3A04%3A05.0000000Z'".
func etagFor(ts time.Time) ETag { return ETag(driver.FormatETag(ts)) }

// UpdateMode says how an update or upsert treats the stored entity.
type UpdateMode uint8

const (
	// Merge changes or adds the properties given and keeps the others.
	Merge UpdateMode = iota + 1
	// Replace stores exactly the properties given.
	Replace
)

func (m UpdateMode) String() string {
	switch m {
	case Merge:
		return "merge"
	case Replace:
		return "replace"
	}
	return fmt.Sprintf("UpdateMode(%d)", uint8(m))
}

// The action types: the kind of one write, or of one action of a
// transaction (see ActionType).
const (
	ActionInsert        = driver.ActionInsert        // Azure's Add
	ActionUpdateMerge   = driver.ActionUpdateMerge   // update (merge) with IfMatch
	ActionUpdateReplace = driver.ActionUpdateReplace // update (replace) with IfMatch
	ActionUpsertMerge   = driver.ActionUpsertMerge   // Azure's InsertMerge
	ActionUpsertReplace = driver.ActionUpsertReplace // Azure's InsertReplace
	ActionDelete        = driver.ActionDelete        // delete with IfMatch
)

// decodeEntity builds an Entity from a stored key and record. A nil sel
// decodes every property; otherwise only the properties named in sel
// (a projection; names of absent properties and system names in sel are
// ignored). PartitionKey, RowKey, Timestamp and ETag are always set, and
// Properties is never nil. A corrupt record gives an error matching
// ErrCorrupt (no Azure code describes corruption) naming the entity.
func decodeEntity(pk, rk string, rec driver.Record, sel []string) (*Entity, error) {
	return decodeRow(driver.Row{PartitionKey: pk, RowKey: rk, Record: rec}, sel, false)
}

// decodeRow is decodeEntity for a driver's row; the ETag is the row's, or
// derived from the Timestamp when the row has none. owned says the record
// is the caller's and never written again, so the entity's strings may
// alias it instead of a copy.
func decodeRow(r driver.Row, sel []string, owned bool) (*Entity, error) {
	d := entityDecoder{props: entityenc.Decoder{Select: sel, Owned: owned}}
	if owned {
		var one [1]Entity
		d.ents = one[:0]
	}
	return d.entity(r)
}

// entityDecoder turns the rows of one page (or one Get) into entities:
// the properties through entityenc.Decoder, the entities themselves from
// slabs, so a page costs an allocation per slab of entities rather than
// one per entity (an entity kept from a page keeps its slab, at most 256
// entities, alive). It is used by one goroutine.
type entityDecoder struct {
	props entityenc.Decoder
	ents  []Entity
}

// entity decodes one row; see decodeRow.
func (d *entityDecoder) entity(r driver.Row) (*Entity, error) {
	ticks, err := r.Record.Timestamp()
	if err != nil {
		return nil, corruptEntity(r.PartitionKey, r.RowKey, err)
	}
	ts := edm.TimeFromTicks(ticks)
	etag := ETag(r.ETag)
	if etag == "" {
		etag = etagFor(ts)
	}
	props, err := d.props.Properties(r.Record)
	if err != nil {
		return nil, corruptEntity(r.PartitionKey, r.RowKey, err)
	}
	if len(d.ents) == cap(d.ents) {
		d.ents = make([]Entity, 0, slabSize(cap(d.ents)))
	}
	d.ents = append(d.ents, Entity{PartitionKey: r.PartitionKey, RowKey: r.RowKey, Timestamp: ts, ETag: etag, Properties: props})
	return &d.ents[len(d.ents)-1], nil
}

// slabSize is the length of the next slab after one of length prev:
// small at first, so one Get stays cheap, growing for long pages.
func slabSize(prev int) int {
	switch {
	case prev < 4:
		return 4
	case prev >= maxSlab:
		return maxSlab
	}
	return 2 * prev
}

// maxSlab is the longest slab.
const maxSlab = 256

// RawEntity is an entity held in its stored form: its keys, and its
// properties validated and encoded as a write stores them, with no
// property map. UnmarshalJSON fills one from Azure's JSON form; a
// TransactionAction, a Batch, a Partition or BulkWriter.Add writes it. A service
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
