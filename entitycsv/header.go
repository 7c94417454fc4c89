package entitycsv

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// MaxColumns bounds the columns of a header.
const MaxColumns = 4096

// Column is one header column: a property name and its EDM type. In
// Storage Explorer's export (see ParseHeader) a value column's Type is 0,
// its type being each row's cell of the column NAME@type, whose own Type
// is 0 too.
type Column struct {
	Name string
	Type edm.Type
}

// String returns the column as a header writes it: PartitionKey and
// RowKey bare, any other column NAME:TYPE.
func (c Column) String() string {
	if isKey(c.Name) {
		return c.Name
	}
	return c.Name + ":" + c.Type.String()
}

func isKey(name string) bool { return name == "PartitionKey" || name == "RowKey" }

// ColumnOf returns the column that holds the property name with value v;
// ok is false when v is not one of the eight EDM Go types (string, int32,
// int64, float64, bool, time.Time, tablestore.GUID, []byte).
func ColumnOf(name string, v any) (c Column, ok bool) {
	t := TypeOf(v)
	return Column{Name: name, Type: t}, t != 0
}

// TypeOf returns the EDM type of a property value, or 0 for any other
// value.
func TypeOf(v any) edm.Type {
	switch v.(type) {
	case string:
		return edm.TypeString
	case int32:
		return edm.TypeInt32
	case int64:
		return edm.TypeInt64
	case float64:
		return edm.TypeDouble
	case bool:
		return edm.TypeBoolean
	case time.Time:
		return edm.TypeDateTime
	case tablestore.GUID:
		return edm.TypeGuid
	case []byte:
		return edm.TypeBinary
	}
	return 0
}

// Header is a parsed header: one column per field of every record.
type Header []Column

// Columns returns the header of an export: PartitionKey, RowKey, then
// props sorted by name and type, without repeats. props may hold the key
// columns or not; props is not modified.
func Columns(props []Column) Header {
	h := Header{{"PartitionKey", edm.TypeString}, {"RowKey", edm.TypeString}}
	rest := make([]Column, 0, len(props))
	for _, c := range props {
		if !isKey(c.Name) {
			rest = append(rest, c)
		}
	}
	slices.SortFunc(rest, func(a, b Column) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Type.String(), b.Type.String()))
	})
	return append(h, slices.Compact(rest)...)
}

// typeSuffix ends the name of a column of Storage Explorer's export that
// holds the type of the column named by the rest.
const typeSuffix = "@type"

// ParseHeader reads the header record's fields. Names and types are
// trimmed of surrounding spaces, and a byte order mark before the first
// name is dropped. It also reads the header of Storage Explorer's CSV
// export, where a column NAME@type holds, row by row, the EDM type of
// the column NAME (Edm.Int32 and so on; an empty cell is Edm.String):
// NAME and NAME@type then get Type 0. Errors (*tablestore.Error,
// InvalidInput): more than MaxColumns columns, an unknown type, an empty
// name, a repeated column, a typed key other than Edm.String, a NAME@type
// without its NAME, or no PartitionKey or RowKey.
func ParseHeader(fields []string) (Header, error) {
	if len(fields) > MaxColumns {
		return nil, invalid("header: %d columns, more than %d", len(fields), MaxColumns)
	}
	h := make(Header, len(fields))
	seen := make(map[Column]bool, len(fields))
	var pk, rk bool
	for i, f := range fields {
		name, typ, typed := strings.Cut(f, ":")
		name = strings.TrimSpace(name)
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff")
		}
		t := edm.TypeString
		if typed {
			var ok bool
			if t, ok = edm.ParseType(strings.TrimSpace(typ)); !ok {
				return nil, invalid("header column %d (%s): unknown type %s; want one of %s",
					i+1, quote(f), quote(strings.TrimSpace(typ)), typeNames)
			}
		}
		c := Column{Name: name, Type: t}
		switch {
		case name == "":
			return nil, invalid("header column %d: empty name", i+1)
		case seen[c]:
			return nil, invalid("header column %d (%s): repeated", i+1, quote(f))
		case isKey(name) && t != edm.TypeString:
			return nil, invalid("header column %d: %s must be Edm.String", i+1, name)
		}
		seen[c] = true
		pk = pk || name == "PartitionKey"
		rk = rk || name == "RowKey"
		h[i] = c
	}
	if !pk || !rk {
		return nil, invalid("header: PartitionKey and RowKey columns are required")
	}
	return h, explorerTypes(h)
}

// explorerTypes gives the columns NAME and NAME@type of Storage
// Explorer's export Type 0 (keys keep Edm.String).
func explorerTypes(h Header) error {
	for i, c := range h {
		name, ok := strings.CutSuffix(c.Name, typeSuffix)
		if !ok || c.Type != edm.TypeString || name == "" {
			continue
		}
		j := slices.IndexFunc(h, func(v Column) bool { return v.Name == name && v.Type == edm.TypeString })
		if j < 0 {
			return invalid("header column %d (%s): no column %s to give the type of", i+1, quote(c.Name), quote(name))
		}
		h[i].Type = 0
		if !isKey(name) {
			h[j].Type = 0
		}
	}
	return nil
}

const typeNames = "Edm.String, Edm.Int32, Edm.Int64, Edm.Double, Edm.Boolean, Edm.DateTime, Edm.Guid, Edm.Binary"

// invalid returns an InvalidInput error.
func invalid(format string, args ...any) error {
	return &tablestore.Error{Code: edm.CodeInvalidInput, Message: fmt.Sprintf(format, args...)}
}

// quote quotes s for a message, cut to 64 bytes.
func quote(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q…", s[:64])
	}
	return fmt.Sprintf("%q", s)
}
