package entitycsv

import (
	"encoding/base64"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// Entity converts a record into its entity. An empty unquoted cell is no
// value. A Timestamp column sets the entity's Timestamp when its cell is
// DateTime text (stores ignore it on write), and is ignored otherwise.
// Errors (*tablestore.Error): InvalidInput for a record whose field count
// differs from the header's, a cell that is not text of its column's type,
// or a string that is not valid UTF-8; OutOfRangeInput for a DateTime
// outside years 1 to 9999; PropertiesNeedValue for no PartitionKey or
// RowKey (an empty unquoted cell: a quoted "" is the empty key, which
// Azure allows); DuplicatePropertiesSpecified for one name with values in two
// columns. Property names are left to the store to check.
func (h Header) Entity(rec Record) (*tablestore.Entity, error) {
	if len(rec.Fields) != len(h) || len(rec.Quoted) != len(rec.Fields) {
		return nil, invalid("the row has %d fields, the header %d", len(rec.Fields), len(h))
	}
	e := &tablestore.Entity{Properties: make(map[string]any, len(h))}
	var pk, rk bool
	for i, c := range h {
		s := rec.Fields[i]
		if s == "" && !rec.Quoted[i] {
			continue
		}
		switch c.Name {
		case "PartitionKey", "RowKey":
			if !utf8.ValidString(s) {
				return nil, invalid("%s holds a string that is not valid UTF-8", c.Name)
			}
			if c.Name == "PartitionKey" {
				e.PartitionKey, pk = s, true
			} else {
				e.RowKey, rk = s, true
			}
			continue
		case "Timestamp":
			if ticks, err := edm.ParseDateTime(s, edm.JSONSyntax); err == nil {
				e.Timestamp = edm.TimeFromTicks(ticks)
			}
			continue
		}
		t := c.Type
		if t == 0 { // Storage Explorer's export
			if strings.HasSuffix(c.Name, typeSuffix) {
				continue // a type, read with its value
			}
			var err error
			if t, err = h.rowType(rec, c.Name); err != nil {
				return nil, err
			}
		}
		if _, dup := e.Properties[c.Name]; dup {
			return nil, &tablestore.Error{Code: edm.CodeDuplicatePropertiesSpecified,
				Message: fmt.Sprintf("the property %q has values in two columns", c.Name)}
		}
		v, err := ParseValue(t, s)
		if err != nil {
			te := err.(*tablestore.Error)
			return nil, &tablestore.Error{Code: te.Code, Message: fmt.Sprintf("property %q: %s", c.Name, te.Message)}
		}
		e.Properties[c.Name] = v
	}
	switch {
	case !pk:
		return nil, &tablestore.Error{Code: edm.CodePropertiesNeedValue, Message: "the entity has no PartitionKey"}
	case !rk:
		return nil, &tablestore.Error{Code: edm.CodePropertiesNeedValue, Message: "the entity has no RowKey"}
	}
	return e, nil
}

// rowType is the type rec's cell of the column name@type gives the
// property name (Storage Explorer's export); an empty cell is Edm.String.
func (h Header) rowType(rec Record, name string) (edm.Type, error) {
	i := slices.IndexFunc(h, func(c Column) bool { return c.Type == 0 && c.Name == name+typeSuffix })
	if i < 0 || rec.Fields[i] == "" {
		return edm.TypeString, nil
	}
	t, ok := edm.ParseType(strings.TrimSpace(rec.Fields[i]))
	if !ok {
		return 0, invalid("property %q: unknown type %s in %s; want one of %s", name, quote(rec.Fields[i]), name+typeSuffix, typeNames)
	}
	return t, nil
}

// ParseValue reads a cell's text as a value of type t: string, int32,
// int64, float64, bool, time.Time (UTC), tablestore.GUID or []byte. The
// error is a *tablestore.Error: InvalidInput for text that is not of the
// type (or a string that is not valid UTF-8), OutOfRangeInput for a
// DateTime outside years 1 to 9999.
func ParseValue(t edm.Type, s string) (any, error) {
	if t == edm.TypeString && !utf8.ValidString(s) {
		return nil, invalid("a string that is not valid UTF-8")
	}
	v, err := entityenc.ParseValueText(t, s)
	if err != nil {
		e := err.(*entityenc.Error)
		if e.Code == edm.CodeInvalidInput && t != edm.TypeDateTime {
			return nil, invalid("%s, not %s", e.Message, quote(s))
		}
		return nil, &tablestore.Error{Code: e.Code, Message: e.Message}
	}
	return v, nil
}

// FormatValue returns a value's cell text: decimal integers, doubles in
// Go's shortest form or NaN, Infinity, -Infinity, true/false, DateTime as
// 2026-01-02T03:04:05.0000000Z, Guid in canonical form, Binary in standard
// base64. ParseValue reads it back to an equal value. Errors
// (*tablestore.Error): InvalidValueType for a value of no EDM type,
// InvalidInput for a string that is not valid UTF-8, OutOfRangeInput for
// a time outside years 1 to 9999.
func FormatValue(v any) (string, error) {
	switch v := v.(type) {
	case string:
		if !utf8.ValidString(v) {
			return "", invalid("a string that is not valid UTF-8")
		}
		return v, nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case float64:
		switch {
		case math.IsNaN(v):
			return "NaN", nil
		case math.IsInf(v, 1):
			return "Infinity", nil
		case math.IsInf(v, -1):
			return "-Infinity", nil
		}
		return strconv.FormatFloat(v, 'g', -1, 64), nil
	case bool:
		return strconv.FormatBool(v), nil
	case time.Time:
		if y := v.UTC().Year(); y < 1 || y > 9999 {
			return "", &tablestore.Error{Code: edm.CodeOutOfRangeInput,
				Message: fmt.Sprintf("the time %s is outside years 1 to 9999", v.UTC().Format(time.RFC3339Nano))}
		}
		return edm.FormatDateTimeJSON(v), nil
	case tablestore.GUID:
		return v.String(), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(v), nil
	}
	return "", &tablestore.Error{Code: edm.CodeInvalidValueType, Message: fmt.Sprintf("a value of type %T has no EDM type", v)}
}
