package azure

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	ts "github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// The JSON this driver sends and reads is Azure's minimal-metadata entity
// form. Two details of aztables shape it:
//
//   - aztables decodes every entity it is given into a map[string]any and
//     encodes it again, so a whole Double such as 2.0 leaves as 2 and would
//     be stored as Int32. Every Double is therefore sent with its
//     Edm.Double annotation.
//   - aztables hands back entities it decoded the same way, losing the
//     same distinction on the way in. The driver reads the raw response
//     bodies instead (azcore's policy.WithCaptureResponse) and decodes them with the root
//     package's JSON decoder, which infers types as Azure does.

// entityJSON returns the JSON body of an entity with the given keys and
// properties: every type whose JSON form is ambiguous carries its
// "@odata.type" annotation.
func entityJSON(pk, rk string, props []driver.Property) ([]byte, error) {
	m := make(map[string]any, 2+2*len(props))
	m["PartitionKey"] = pk
	m["RowKey"] = rk
	for _, p := range props {
		v := p.Value
		var val any
		switch v.Type {
		case edm.TypeString:
			val = string(v.Bytes)
		case edm.TypeInt32:
			val = int32(v.Int)
		case edm.TypeBoolean:
			val = v.Int != 0
		case edm.TypeInt64:
			val = strconv.FormatInt(v.Int, 10)
		case edm.TypeDouble:
			switch f := v.Float; {
			case math.IsNaN(f):
				val = "NaN"
			case math.IsInf(f, 1):
				val = "Infinity"
			case math.IsInf(f, -1):
				val = "-Infinity"
			default:
				val = f
			}
		case edm.TypeDateTime:
			val = edm.FormatDateTimeJSON(edm.TimeFromTicks(v.Int))
		case edm.TypeGuid:
			var g ts.GUID
			copy(g[:], v.Bytes)
			val = g.String()
		case edm.TypeBinary:
			val = base64.StdEncoding.EncodeToString(v.Bytes)
		default:
			return nil, fmt.Errorf("tablestore: azure: property %q has invalid type %d", p.Name, v.Type)
		}
		m[p.Name] = val
		switch v.Type {
		case edm.TypeInt64, edm.TypeDouble, edm.TypeDateTime, edm.TypeGuid, edm.TypeBinary:
			m[p.Name+"@odata.type"] = v.Type.String()
		}
	}
	return json.Marshal(m)
}

// decodeEntity turns one entity of a response body into a driver row. The
// ETag is the entity's odata.etag, else etag (a response header).
func decodeEntity(raw []byte, etag string) (driver.Row, error) {
	var e ts.Entity
	if err := e.UnmarshalJSON(raw); err != nil {
		return driver.Row{}, fmt.Errorf("%w: azure: entity in response: %v", driver.ErrCorrupt, err)
	}
	props := make([]driver.Property, 0, len(e.Properties))
	for name, v := range e.Properties {
		fv, ok := filterValue(v)
		if !ok {
			return driver.Row{}, fmt.Errorf("%w: azure: property %q has Go type %T", driver.ErrCorrupt, name, v)
		}
		props = append(props, driver.Property{Name: name, Value: fv})
	}
	slices.SortFunc(props, func(a, b driver.Property) int { return strings.Compare(a.Name, b.Name) })
	if e.ETag != "" {
		etag = string(e.ETag)
	}
	stamp := e.Timestamp
	if stamp.IsZero() {
		// Without a Timestamp (a $select that left it out), the ETag
		// still names the version's time.
		stamp, _ = timeOfETag(etag)
	}
	rec, err := driver.Encode(make([]byte, 0, driver.EncodedLen(props)), edm.TicksFromTime(stamp), props)
	if err != nil {
		return driver.Row{}, fmt.Errorf("%w: azure: entity in response: %v", driver.ErrCorrupt, err)
	}
	return driver.Row{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Record: rec, ETag: etag}, nil
}

// filterValue converts a property value of the root package's JSON
// decoder to its record form.
func filterValue(v any) (edm.Value, bool) {
	switch v := v.(type) {
	case string:
		return edm.Value{Type: edm.TypeString, Bytes: []byte(v)}, true
	case int32:
		return edm.Value{Type: edm.TypeInt32, Int: int64(v)}, true
	case int64:
		return edm.Value{Type: edm.TypeInt64, Int: v}, true
	case float64:
		return edm.Value{Type: edm.TypeDouble, Float: v}, true
	case bool:
		b := int64(0)
		if v {
			b = 1
		}
		return edm.Value{Type: edm.TypeBoolean, Int: b}, true
	case time.Time:
		return edm.Value{Type: edm.TypeDateTime, Int: edm.TicksFromTime(v)}, true
	case ts.GUID:
		return edm.Value{Type: edm.TypeGuid, Bytes: v[:]}, true
	case []byte:
		return edm.Value{Type: edm.TypeBinary, Bytes: v}, true
	}
	return edm.Value{}, false
}

// timeOfETag reads the time in an ETag of Azure's form
// W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'".
func timeOfETag(etag string) (time.Time, bool) {
	s, ok := strings.CutPrefix(etag, `W/"datetime'`)
	if !ok {
		return time.Time{}, false
	}
	s, ok = strings.CutSuffix(s, `'"`)
	if !ok {
		return time.Time{}, false
	}
	s = strings.ReplaceAll(s, "%3A", ":")
	ticks, err := edm.ParseDateTime(s, edm.LiteralSyntax)
	if err != nil {
		return time.Time{}, false
	}
	return edm.TimeFromTicks(ticks), true
}

// queryValues splits a query response body, {"value":[...], ...}, into
// its entities.
func queryValues(body []byte) ([]json.RawMessage, error) {
	var page struct {
		Value []json.RawMessage `json:"value"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&page); err != nil {
		return nil, fmt.Errorf("%w: azure: query response: %v", driver.ErrCorrupt, err)
	}
	return page.Value, nil
}
