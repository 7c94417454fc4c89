package tablestore

import (
	"bytes"
	"context"
	"errors"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/plan"
	"github.com/tablestore/tablestore/internal/rootapi"
	"github.com/tablestore/tablestore/internal/wire"
)

// JSON wire format: Azure Table Storage's entity form, as the Azure SDKs
// (aztables, @azure/data-tables) send and read it, at the metadata level
// a client asks for. The format lives in internal/wire; these are its
// entries.

// JSONMetadata is a JSON metadata level, as Azure's clients ask for one
// with Accept or $format (odata=minimalmetadata, nometadata,
// fullmetadata).
type JSONMetadata uint8

// The metadata levels. The zero value is MinimalMetadata.
const (
	// MinimalMetadata writes odata.etag and a "Name@odata.type"
	// annotation for each property whose type the JSON value cannot
	// show (see MarshalJSON).
	MinimalMetadata JSONMetadata = iota
	// NoMetadata writes the keys, the Timestamp and the values only: no
	// odata.etag and no annotation. Types that need one come back as
	// strings (an Int64 as "5"), as Azure writes them.
	NoMetadata
	// FullMetadata writes JSONOptions' Type, ID and EditLink as
	// odata.type, odata.id and odata.editLink, the Timestamp's
	// annotation, then what MinimalMetadata writes.
	FullMetadata
)

// levels are the wire format's metadata levels, by JSONMetadata.
var levels = [...]wire.Level{MinimalMetadata: wire.Minimal, NoMetadata: wire.None, FullMetadata: wire.Full}

// JSONOptions shape AppendEntityJSON's output. The zero value writes what
// MarshalJSON writes.
type JSONOptions struct {
	Metadata JSONMetadata
	// Select, when not empty, is the $select the entity answers: only the
	// properties it names are written (the keys, Timestamp and ETag
	// always), and each one the entity lacks as null, as Azure answers a
	// projection. Its names must pass the checks of Query.Select.
	Select []string
	// Type, ID and EditLink are written as odata.type (Azure writes
	// "{account}.{table}"), odata.id (the entity's URL) and
	// odata.editLink (its path, "{table}(PartitionKey='…',RowKey='…')") at
	// FullMetadata, as given; other levels ignore them.
	Type, ID, EditLink string
	// LinkBase and LinkTable, when LinkTable is set, give each entity its
	// own links at FullMetadata where ID and EditLink are empty: EditLink
	// the entity's path in LinkTable, as EditLink above, and ID LinkBase
	// followed by it. A page of many entities (the server's) is written this way.
	LinkBase, LinkTable string
}

// AppendEntityJSON appends e to dst as one JSON object in Azure's wire
// format at the metadata level of opts (nil: minimal metadata), and
// returns the extended buffer. The values are written as MarshalJSON
// writes them. It is the one writer of entities as JSON: MarshalJSON, the
// REST server and the command use it. On error dst's contents past its
// length are undefined.
//
// Errors: those of MarshalJSON, and InvalidInput for an invalid
// opts.Select or an unknown opts.Metadata.
func AppendEntityJSON(dst []byte, e *Entity, opts *JSONOptions) ([]byte, error) {
	o, err := wireOptions(opts)
	if err != nil {
		return dst, err
	}
	w := wire.Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Timestamp: e.Timestamp, ETag: string(e.ETag), Properties: e.Properties}
	out, err := wire.AppendEntity(dst, &w, &o)
	if err != nil {
		return dst, coded(err)
	}
	return out, nil
}

// wireOptions returns the wire format's options for opts (nil: minimal
// metadata). Errors: InvalidInput for an unknown metadata level.
func wireOptions(opts *JSONOptions) (wire.Options, error) {
	if opts == nil {
		return wire.Options{}, nil
	}
	if int(opts.Metadata) >= len(levels) {
		return wire.Options{}, newError(edm.CodeInvalidInput, "unknown JSON metadata level %d", uint8(opts.Metadata))
	}
	return wire.Options{Level: levels[opts.Metadata], Select: opts.Select, Type: opts.Type, ID: opts.ID, EditLink: opts.EditLink,
		LinkBase: opts.LinkBase, LinkTable: opts.LinkTable}, nil
}

// MarshalJSON encodes e in Azure's minimal-metadata JSON form:
// "odata.etag" (if ETag is set), PartitionKey, RowKey, Timestamp (if set,
// in UTC with 7 fraction digits) and the properties in name order. A
// property carries a "Name@odata.type" annotation only when its type
// cannot be inferred from the JSON value: Edm.Int64 (written as a decimal
// string), Edm.DateTime, Edm.Guid, Edm.Binary (base64), and Edm.Double for
// NaN, Infinity and -Infinity (written as those strings). Other doubles
// always have a '.' or an exponent (2 is written 2.0), so they read back as
// Double; Int32 values are bare integers; the other Go integers follow
// the integer rule (see Entity). nil values are left out. It is
// AppendEntityJSON at minimal metadata.
//
// Errors: InvalidValueType for a value of an unsupported Go type
// (OutOfRangeInput for a uint64 above the Int64 range),
// PropertyNameInvalid and PropertyNameTooLong for bad names, InvalidInput
// for a system name in Properties or a string that is not valid UTF-8,
// OutOfRangeInput for a time outside years 1 to 9999.
//
// The receiver is a value, so an Entity, a *Entity and a struct or slice
// holding either all encode this way with json.Marshal (which writes a nil
// *Entity as null).
func (e Entity) MarshalJSON() ([]byte, error) {
	b, err := AppendEntityJSON(make([]byte, 0, 128+64*len(e.Properties)), &e, nil)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// UnmarshalJSON decodes an entity from Azure's JSON form, inferring types
// as Azure does:
//   - without an annotation: a string is Edm.String, true/false
//     Edm.Boolean, an integer literal Edm.Int32 if it fits and Edm.Double
//     otherwise, except that an integer a double cannot hold exactly (such
//     as 2^53+1, which aztables writes bare for a Go int64) is Edm.Int64
//     where Azure would round it; a number with a fraction or exponent
//     Edm.Double;
//   - "Name@odata.type" selects any of the eight types; Int32, Double and
//     Boolean then also accept strings ("12345", "3.14", "NaN",
//     "Infinity", "-Infinity", "False"), Int64 takes a decimal string (or
//     a bare integer), DateTime an ISO 8601 string (7 fraction digits at
//     most are kept; no zone means UTC), Guid the canonical form, Binary
//     base64.
//
// null values are dropped. Keys "odata.*" and other "@"-annotations are
// ignored, except that odata.etag fills ETag and a parseable Timestamp
// fills Timestamp, so fetched entities round-trip (writes ignore both). On
// error e is unchanged. As encoding/json expects, the literal null leaves e
// unchanged and is no error (a write of that entity then fails with
// PropertiesNeedValue).
//
// The JSON must be valid UTF-8 throughout: a string holding invalid
// UTF-8, raw or as the \u escape of a lone UTF-16 surrogate, is malformed
// JSON, refused rather than repaired, wherever it stands (a key, a
// property name, a value, an ignored annotation).
//
// Errors (all *Error): InvalidInput for malformed JSON, a non-object, a
// nested object or array value, a key that is not a JSON string or is
// annotated other than Edm.String, an unknown Edm type, a value that does
// not match its annotation (bad Int64, guid, base64, datetime, ...), or an
// annotation without its property; PropertiesNeedValue for a missing
// PartitionKey or RowKey; DuplicatePropertiesSpecified for a repeated
// property or annotation; PropertyNameInvalid and PropertyNameTooLong for
// bad names; OutOfRangeInput for a DateTime outside years 1 to 9999.
func (e *Entity) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	w, err := wire.Decode(data)
	if err != nil {
		return coded(err)
	}
	*e = Entity{PartitionKey: w.PartitionKey, RowKey: w.RowKey, Timestamp: w.Timestamp, ETag: ETag(w.ETag), Properties: w.Properties}
	return nil
}

// The server's reads, as internal/rootapi describes them; no exports of
// the root, since only the server (and its measures in the bench module)
// use them.
func init() {
	rootapi.Set(&rootapi.API[*DB, *Table, Query, *Page, JSONOptions, TransactionAction]{
		GetJSON: func(t *Table, ctx context.Context, dst []byte, pk, rk string, opts JSONOptions) ([]byte, string, error) {
			out, etag, err := t.getJSON(ctx, dst, pk, rk, &opts)
			return out, string(etag), err
		},
		AppendPageJSON: func(t *Table, ctx context.Context, dst []byte, q Query, opts JSONOptions, keep func([]byte, int) bool) ([]byte, *Page, error) {
			return t.appendPageJSON(ctx, dst, q, &opts, keep)
		},
		ServiceProperties:    (*DB).serviceProperties,
		SetServiceProperties: (*DB).setServiceProperties,
		AccessPolicies:       (*Table).accessPolicies,
		SetAccessPolicies:    (*Table).setAccessPolicies,
		SubmitTransaction:    (*Table).submitTransaction,
	})
}

// appendPageJSON is rootapi.API's AppendPageJSON.
func (t *Table) appendPageJSON(ctx context.Context, dst []byte, q Query, opts *JSONOptions, keep func(b []byte, n int) bool) ([]byte, *Page, error) {
	o, err := wireOptions(opts)
	if err != nil {
		return dst, nil, err
	}
	o.Select = q.Select
	pq, err := t.prepareIn(ctx, q, nil)
	if err != nil {
		return dst, nil, err
	}
	if keep != nil && pq.index != nil && pq.index.req.Scan.Order {
		return dst, nil, newError(edm.CodeInvalidInput, "a page read in index order cannot end before an entity")
	}
	start, n := len(dst), 0
	var stop *plan.Key
	cont, cost, err := t.readRows(ctx, pq, func(r driver.Row) error {
		mark := len(dst)
		if n > 0 {
			dst = append(dst, ',')
		}
		out, err := wire.AppendRecord(dst, r.PartitionKey, r.RowKey, r.ETag, r.Record, &o)
		if err != nil {
			return mapError(coded(err), false) // a corrupt record's error names the entity
		}
		dst = out
		n++
		if keep != nil && !keep(dst[start:], n) {
			dst = dst[:mark]
			stop = &plan.Key{PartitionKey: r.PartitionKey, RowKey: r.RowKey}
			return errEndPage
		}
		return nil
	})
	switch {
	case stop != nil: // the error is errEndPage
		return dst, &Page{Continuation: encodeContinuation(*stop, q.Reverse, pq.req.Table),
			PageCost: PageCost{Examined: -1, IndexEntries: -1}}, nil
	case err != nil:
		return dst, nil, err
	}
	return dst, &Page{Continuation: cont, PageCost: cost}, nil
}

// errEndPage is how appendPageJSON's keep ends a page.
var errEndPage = errors.New("tablestore: page ended by its caller")

// getJSON is rootapi.API's GetJSON.
func (t *Table) getJSON(ctx context.Context, dst []byte, partitionKey, rowKey string, opts *JSONOptions) ([]byte, ETag, error) {
	o, err := wireOptions(opts)
	if err != nil {
		return dst, "", err
	}
	r, _, err := t.get(ctx, partitionKey, rowKey, &GetOptions{Select: o.Select})
	if err != nil {
		return dst, "", err
	}
	etag := r.ETag
	if etag == "" {
		ticks, err := r.Record.Timestamp()
		if err != nil {
			return dst, "", corruptEntity(partitionKey, rowKey, err)
		}
		etag = string(etagFor(edm.TimeFromTicks(ticks)))
	}
	out, err := wire.AppendRecord(dst, r.PartitionKey, r.RowKey, etag, r.Record, &o)
	if err != nil {
		return dst, "", mapError(coded(err), false)
	}
	return out, ETag(etag), nil
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
