package wire

import (
	"bytes"
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/arena"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/limits"
)

// RecordEntity is what DecodeRecord reads of an entity besides its
// record.
type RecordEntity struct {
	PartitionKey, RowKey string
	Timestamp            time.Time // zero when absent
	ETag                 string    // "" when absent
	// Count is the number of user properties in the record, and Size
	// their share of the entity size by Azure's formula, keys aside: what
	// entityenc.AppendProperties returns, for entityenc.CheckLimits.
	Count, Size int
}

// RecordScratch is the memory DecodeRecord reuses from one call to the
// next; it keeps the largest it needed. The zero value is ready; a
// RecordScratch serves one call at a time, and nothing DecodeRecord
// returns refers to it.
type RecordScratch struct {
	members []member
	order   []int32             // indexes of members, sorted by name
	keys    []entityenc.NameKey // the members' sort keys, in document order until sorted
	buf     []byte              // unescaped strings
	bin     []byte              // a decoded Binary value
}

// Reusable reports whether s is small enough to keep for the next call:
// a body of very many members or long escaped strings grows it, and a
// pool should let such memory go.
func (s *RecordScratch) Reusable() bool {
	return cap(s.members) <= 1024 && cap(s.buf) <= 1<<20 && cap(s.bin) <= 1<<20
}

// member is one top-level member of a body, as DecodeRecord keeps it.
type member struct {
	name  []byte // the key; an annotation's without its suffix
	text  []byte // a string's value or a number's literal
	doc   int32  // the member's index in document order
	class uint8
	kind  uint8
	b     bool
}

// compareMembers orders members by name, then class, then document
// order, so that a property is followed by its annotation and repeated
// keys are adjacent.
func compareMembers(x, y *member) int {
	if c := bytes.Compare(x.name, y.name); c != 0 {
		return c
	}
	if x.class != y.class {
		return int(x.class) - int(y.class)
	}
	return int(x.doc) - int(y.doc)
}

// sortMembers sorts keys, one per member of ms, by compareMembers and
// returns order holding their indexes in that order.
func sortMembers(order []int32, keys []entityenc.NameKey, ms []member) []int32 {
	return entityenc.SortByName(order[:0], keys, func(a, b int32) int { return compareMembers(&ms[a], &ms[b]) })
}

// DecodeRecord reads an entity body as Decode does and appends to dst the
// record entityenc.AppendProperties would append for Decode's properties
// after a header with a zero Timestamp (driver.AppendHeader(dst, 0)),
// without building a property map. For every data, the result equals
// that of Decode followed by AppendProperties: the same keys, Timestamp,
// ETag, record, count and size, or the same error, the first of the two
// steps' to fail. The caller completes the checks of a write with
// entityenc.KeyUnits and entityenc.CheckLimits.
//
// Only the key and ETag strings are allocated (and dst, when it lacks
// room); s, if not nil, holds the scratch memory reused across calls. On
// error dst is returned at its original length.
func DecodeRecord(dst, data []byte, s *RecordScratch) (RecordEntity, []byte, error) {
	if s == nil {
		s = new(RecordScratch)
	}
	start := len(dst)
	e, dst, err := s.decode(dst, data)
	if err != nil {
		return RecordEntity{}, dst[:start], err
	}
	return e, dst, nil
}

// Indexes of the members DecodeRecord looks up by name, -1 when absent.
type known struct {
	pk, rk, pkType, rkType, timestamp, etag int
}

func (s *RecordScratch) decode(dst, data []byte) (RecordEntity, []byte, error) {
	s.members, s.keys = s.members[:0], s.keys[:0]
	at := known{-1, -1, -1, -1, -1, -1}
	sc := scanner{data: data, buf: s.buf[:0]}
	scanErr := sc.object(func(key []byte, v token) error {
		class, name := classify(key)
		k := len(s.members)
		s.members = append(s.members, member{name: name, text: v.text, doc: int32(k), class: class, kind: v.kind, b: v.b})
		s.keys = append(s.keys, entityenc.NameKey{Prefix: entityenc.NamePrefix(name), Index: int32(k)})
		switch class {
		case classAnnotation:
			if v.kind != kindString {
				return notString(string(key))
			}
			switch string(name) {
			case entityenc.NamePartitionKey:
				at.pkType = k
			case entityenc.NameRowKey:
				at.rkType = k
			}
		case classOther:
			if v.kind == kindString && string(key) == etagKey {
				at.etag = k
			}
		default:
			switch string(name) {
			case entityenc.NamePartitionKey:
				at.pk = k
			case entityenc.NameRowKey:
				at.rk = k
			case entityenc.NameTimestamp:
				at.timestamp = k
			}
		}
		return nil
	})
	s.buf = sc.buf[:0]

	ms := s.members
	order := sortMembers(s.order, s.keys, ms)
	s.order = order

	// Decode reports a repeated key when it meets its second occurrence,
	// before any later error of the scan; the scan stopped at its first
	// error, after the members kept.
	dup := -1
	for k := 1; k < len(order); k++ {
		x, y := &ms[order[k-1]], &ms[order[k]]
		if x.class == y.class && bytes.Equal(x.name, y.name) && (dup < 0 || y.doc < ms[order[dup]].doc) {
			dup = k
		}
	}
	if dup >= 0 {
		m := &ms[order[dup]]
		key := string(m.name)
		if m.class == classAnnotation {
			key += typeSuffix
		}
		return RecordEntity{}, dst, duplicate(m.class, key)
	}
	if scanErr != nil {
		return RecordEntity{}, dst, scanErr
	}

	pkText, err := s.key(entityenc.NamePartitionKey, at.pk, at.pkType)
	if err != nil {
		return RecordEntity{}, dst, err
	}
	rkText, err := s.key(entityenc.NameRowKey, at.rk, at.rkType)
	if err != nil {
		return RecordEntity{}, dst, err
	}
	// Both keys in one string: one allocation for the two.
	var both strings.Builder
	both.Grow(len(pkText) + len(rkText))
	both.Write(pkText)
	both.Write(rkText)
	keys := both.String()
	pk, rk := keys[:len(pkText)], keys[len(pkText):]
	for k, i := range order {
		m := &ms[i]
		if m.class != classAnnotation {
			continue
		}
		if k == 0 || ms[order[k-1]].class != classProperty || !bytes.Equal(ms[order[k-1]].name, m.name) {
			return RecordEntity{}, dst, noProperty(string(m.name))
		}
	}

	// Grow dst once to a bound of what follows (a property's name, its
	// value no longer than its text, and a few bytes of framing), so the
	// record is not copied from one smaller buffer to the next.
	bound := 16
	for i := range ms {
		if ms[i].class == classProperty {
			bound += len(ms[i].name) + len(ms[i].text) + 16
		}
	}
	dst = slices.Grow(dst, bound)
	dst = driver.AppendHeader(dst, 0)
	count, size := 0, 0
	var encodeErr error // AppendProperties' first error, reported if Decode has none
	for k, i := range order {
		m := &ms[i]
		if m.class != classProperty || m.kind == kindNull {
			continue
		}
		name := arena.String(m.name)
		if entityenc.IsSystemName(name) {
			continue
		}
		units, err := entityenc.PropertyNameUnits(name)
		if err != nil {
			return RecordEntity{}, dst, err
		}
		var annotation []byte
		if k+1 < len(order) {
			if next := &ms[order[k+1]]; next.class == classAnnotation && bytes.Equal(next.name, m.name) {
				annotation = next.text
			}
		}
		out, n, ok := s.appendValue(dst, name, m, annotation)
		if !ok {
			// Let Decode's conversion, then AppendProperties' encoding,
			// say why.
			v := scalar{kind: m.kind, b: m.b, text: string(m.text)}
			x, err := convert(name, v, string(annotation))
			if err != nil {
				return RecordEntity{}, dst, err
			}
			if encodeErr == nil {
				if _, _, encodeErr = entityenc.EncodeValue(name, x); encodeErr == nil {
					encodeErr = entityenc.Errorf(edm.CodeInvalidInput, "property %q: the value cannot be encoded", name)
				}
			}
			continue
		}
		dst = out
		count++
		size += limits.NameSize(units) + n
	}
	if encodeErr != nil {
		return RecordEntity{}, dst, encodeErr
	}

	e := RecordEntity{PartitionKey: pk, RowKey: rk, Count: count, Size: size}
	if at.timestamp >= 0 && ms[at.timestamp].kind == kindString {
		if t, err := entityenc.ParseDateTime(arena.String(ms[at.timestamp].text)); err == nil {
			e.Timestamp = t
		}
	}
	if at.etag >= 0 {
		e.ETag = string(ms[at.etag].text)
	}
	return e, dst, nil
}

// key returns the text of PartitionKey or RowKey (which), the member at
// index k, annotated by the member at index typ; either is -1 when
// absent. The text aliases the scratch.
func (s *RecordScratch) key(which string, k, typ int) ([]byte, error) {
	var kind uint8
	if k >= 0 {
		kind = s.members[k].kind
	}
	var annotation string
	if typ >= 0 {
		annotation = arena.String(s.members[typ].text)
	}
	if err := keyError(which, k >= 0, kind, annotation, typ >= 0); err != nil {
		return nil, err
	}
	return s.members[k].text, nil
}

// appendValue appends the encoding of property name holding m's value,
// annotated with annotation (empty for none), and returns the value's
// size by Azure's formula. ok is false when Decode would refuse the value
// or AppendProperties what Decode makes of it; dst's extension is then
// undefined.
func (s *RecordScratch) appendValue(dst []byte, name string, m *member, annotation []byte) ([]byte, int, bool) {
	text := arena.String(m.text)
	if len(annotation) == 0 {
		switch m.kind {
		case kindString:
			return appendText(dst, name, edm.TypeString, m.text, s)
		case kindBool:
			return appendBool(dst, name, m.b), 1, true
		}
		return appendNumber(dst, name, text)
	}
	t, ok := edm.ParseType(arena.String(annotation))
	switch {
	case !ok:
		return dst, 0, false
	case m.kind == kindString:
		return appendText(dst, name, t, m.text, s)
	case m.kind == kindBool && t == edm.TypeBoolean:
		return appendBool(dst, name, m.b), 1, true
	case m.kind == kindNumber && (t == edm.TypeInt32 || t == edm.TypeInt64):
		return appendText(dst, name, t, m.text, s)
	case m.kind == kindNumber && t == edm.TypeDouble:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return dst, 0, false
		}
		return driver.AppendDoublePayload(driver.AppendName(dst, name, edm.TypeDouble), f), 8, true
	}
	return dst, 0, false
}

// appendNumber is appendValue for a bare JSON number, typed as
// inferNumber types it.
func appendNumber(dst []byte, name, s string) ([]byte, int, bool) {
	if !strings.ContainsAny(s, ".eE") {
		// One ParseInt for both of inferNumber's: an int64 that fits
		// 32 bits is what ParseInt(s, 10, 32) accepts.
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			if n >= math.MinInt32 && n <= math.MaxInt32 {
				return driver.AppendIntPayload(driver.AppendName(dst, name, edm.TypeInt32), edm.TypeInt32, n), 4, true
			}
			if _, exact := entityenc.ExactFloat(n); !exact {
				return driver.AppendIntPayload(driver.AppendName(dst, name, edm.TypeInt64), edm.TypeInt64, n), 8, true
			}
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return dst, 0, false
	}
	return driver.AppendDoublePayload(driver.AppendName(dst, name, edm.TypeDouble), f), 8, true
}

// appendText is appendValue for text read as entityenc.ParseValueText
// reads a value of type t.
func appendText(dst []byte, name string, t edm.Type, b []byte, s *RecordScratch) ([]byte, int, bool) {
	text := arena.String(b)
	switch t {
	case edm.TypeString:
		units := limits.UTF16LenBytes(b)
		if 2*units > limits.MaxValueBytes {
			return dst, 0, false
		}
		return driver.AppendBytesPayload(driver.AppendName(dst, name, edm.TypeString), b), 4 + 2*units, true
	case edm.TypeBoolean:
		switch {
		case strings.EqualFold(text, "true"):
			return appendBool(dst, name, true), 1, true
		case strings.EqualFold(text, "false"):
			return appendBool(dst, name, false), 1, true
		}
	case edm.TypeInt32:
		if n, err := strconv.ParseInt(text, 10, 32); err == nil {
			return driver.AppendIntPayload(driver.AppendName(dst, name, t), t, n), 4, true
		}
	case edm.TypeInt64:
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return driver.AppendIntPayload(driver.AppendName(dst, name, t), t, n), 8, true
		}
	case edm.TypeDouble:
		var f float64
		switch text {
		case "NaN":
			f = math.NaN()
		case "Infinity":
			f = math.Inf(1)
		case "-Infinity":
			f = math.Inf(-1)
		default:
			end, ok := entityenc.NumberEnd(b, 0)
			if !ok || end != len(b) {
				return dst, 0, false
			}
			var err error
			if f, err = strconv.ParseFloat(text, 64); err != nil {
				return dst, 0, false
			}
		}
		return driver.AppendDoublePayload(driver.AppendName(dst, name, t), f), 8, true
	case edm.TypeDateTime:
		// entityenc.ParseDateTime's time, checked and encoded as
		// AppendProperties does, is these ticks from 1601 on.
		ticks, err := edm.ParseDateTime(text, edm.JSONSyntax)
		if err == nil && ticks >= edm.MinAzureTicks {
			return driver.AppendIntPayload(driver.AppendName(dst, name, t), t, ticks), 8, true
		}
	case edm.TypeGuid:
		if g, ok := edm.ParseGUID(text); ok {
			return append(driver.AppendName(dst, name, t), g[:]...), 16, true
		}
	case edm.TypeBinary:
		enc := base64.StdEncoding
		bin := slices.Grow(s.bin[:0], enc.DecodedLen(len(b)))[:enc.DecodedLen(len(b))]
		s.bin = bin[:0]
		n, err := enc.Decode(bin, b)
		if err == nil && n <= limits.MaxValueBytes {
			return driver.AppendBytesPayload(driver.AppendName(dst, name, t), bin[:n]), 4 + n, true
		}
	}
	return dst, 0, false
}

// appendBool appends the encoding of a Boolean property.
func appendBool(dst []byte, name string, b bool) []byte {
	return entityenc.AppendBoolPayload(driver.AppendName(dst, name, edm.TypeBoolean), b)
}
