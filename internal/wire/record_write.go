package wire

import (
	"slices"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/arena"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// AppendRecord appends the entity whose keys are pk and rk, whose ETag is
// etag ("" for none) and whose Timestamp and properties are rec's, as
// AppendEntity writes it, without decoding rec into a property map: the
// output, and the error of an entity AppendEntity refuses, are those of
// AppendEntity given the Entity that decoding rec makes (Timestamp
// edm.TimeFromTicks of the header's ticks, so zero ticks mean no
// Timestamp; each property's value as entityenc.DecodeValue gives it). It
// reads rec only during the call and allocates nothing when dst has room.
// On error it returns dst as it was.
//
// Errors: a *driver.CorruptError (matching driver.ErrCorrupt, wrapping
// the record reader's error) when rec does not decode, whatever else is
// wrong; else AppendEntity's: InvalidInput for a bad Select or a key,
// ETag or String value that is not valid UTF-8, OutOfRangeInput for a
// Timestamp or DateTime outside years 1 to 9999, PropertyNameInvalid,
// PropertyNameTooLong or InvalidInput for a stored name no property may
// have.
func AppendRecord(dst []byte, pk, rk, etag string, rec driver.Record, o *Options) ([]byte, error) {
	n := len(dst)
	out, err := appendRecord(dst, pk, rk, etag, rec, o)
	if err == nil {
		return out, nil
	}
	if _, corrupt := err.(*driver.CorruptError); !corrupt {
		// Decoding comes before writing, so damage anywhere in the record
		// is what a caller of AppendEntity would have met first.
		it := rec.Iter()
		for it.Next() {
		}
		if it.Err() != nil {
			err = corruptRecord(pk, rk, it.Err())
		}
	}
	return dst[:n], err
}

func appendRecord(dst []byte, pk, rk, etag string, rec driver.Record, o *Options) ([]byte, error) {
	ticks, err := rec.Timestamp()
	if err != nil {
		return dst, corruptRecord(pk, rk, err)
	}
	if dst, err = appendHead(dst, pk, rk, etag, edm.TimeFromTicks(ticks), o); err != nil {
		return dst, err
	}
	annotate := o.Level != None
	it := rec.Iter()
	for it.Next() {
		// The name aliases rec, which nothing writes during the call.
		name := arena.String(it.Name())
		if len(o.Select) > 0 && !slices.Contains(o.Select, name) {
			continue
		}
		if _, err := entityenc.CheckPropertyName(name); err != nil {
			return dst, err
		}
		if dst, err = appendValue(dst, name, it.Value(), annotate); err != nil {
			return dst, err
		}
	}
	if err := it.Err(); err != nil {
		return dst, corruptRecord(pk, rk, err)
	}
	for _, name := range o.Select {
		if isSystem(name) {
			continue
		}
		if _, ok := rec.Lookup(name); !ok {
			dst = appendNull(dst, name)
		}
	}
	return append(dst, '}'), nil
}

// corruptRecord reports a record that does not decode, naming its entity
// as the root package's decoder does.
func corruptRecord(pk, rk string, err error) error {
	return &driver.CorruptError{Op: "decode of entity (" + entityenc.QuoteShort(pk) + ", " + entityenc.QuoteShort(rk) + ")", Err: err}
}
