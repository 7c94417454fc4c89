package console

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// The CSV format of export and import, the same as the tablestore
// command's (RFC 4180 with typed columns):
//
//   - The first record is the header. Each column is NAME or NAME:TYPE,
//     TYPE one of the eight EDM names (Edm.String, Edm.Int32, ...); a bare
//     NAME is Edm.String. PartitionKey and RowKey columns are required. A
//     name may appear once per type.
//   - A cell holds the value in the text Azure's JSON uses for its type
//     (see valueText). An empty, unquoted cell means no such property; a
//     quoted empty cell ("") is the empty string.
//   - Fields are separated by commas and quoted with double quotes (""
//     inside a quoted field is one quote); a quoted field may span lines.
//     Lines end in \n or \r\n.

// csvColumn is one header column.
type csvColumn struct {
	name, typ string
}

func (c csvColumn) String() string {
	if c.name == "PartitionKey" || c.name == "RowKey" {
		return c.name
	}
	return c.name + ":" + c.typ
}

// maxCSVColumns bounds a CSV header and the columns an export collects.
const maxCSVColumns = 4096

// parseCSVHeader reads a typed header.
func parseCSVHeader(fields []string) ([]csvColumn, error) {
	if len(fields) > maxCSVColumns {
		return nil, fmt.Errorf("the header has %d columns, more than %d", len(fields), maxCSVColumns)
	}
	cols := make([]csvColumn, len(fields))
	seen := map[csvColumn]bool{}
	var pk, rk bool
	for i, f := range fields {
		name, typ, typed := strings.Cut(f, ":")
		name = strings.TrimSpace(name)
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff")
		}
		typ = strings.TrimSpace(typ)
		if !typed {
			typ = edm.TypeString.String()
		}
		if _, ok := edm.ParseType(typ); !ok {
			return nil, fmt.Errorf("header column %d (%q): unknown type %q; want one of %s", i+1, f, typ,
				strings.Join(edmTypes, ", "))
		}
		c := csvColumn{name: name, typ: typ}
		switch {
		case name == "":
			return nil, fmt.Errorf("header column %d: empty name", i+1)
		case seen[c]:
			return nil, fmt.Errorf("header column %d (%q): repeated", i+1, f)
		case (name == "PartitionKey" || name == "RowKey") && typ != edm.TypeString.String():
			return nil, fmt.Errorf("header column %d: %s must be Edm.String", i+1, name)
		}
		seen[c] = true
		pk = pk || name == "PartitionKey"
		rk = rk || name == "RowKey"
		cols[i] = c
	}
	if !pk || !rk {
		return nil, fmt.Errorf("the header needs PartitionKey and RowKey columns")
	}
	return cols, nil
}

// csvRowJSON turns one CSV row into Azure's JSON form of the entity, so
// the library's JSON decoding applies every type rule.
func csvRowJSON(buf []byte, cols []csvColumn, fields []string, quoted []bool) ([]byte, error) {
	if len(fields) != len(cols) {
		return nil, &tablestore.Error{Code: tablestore.CodeInvalidInput,
			Message: fmt.Sprintf("the row has %d fields, the header %d", len(fields), len(cols))}
	}
	buf = append(buf[:0], '{')
	first := true
	for i, c := range cols {
		if fields[i] == "" && !quoted[i] {
			continue
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		if c.name != "PartitionKey" && c.name != "RowKey" {
			buf = tablestore.AppendJSONString(buf, c.name+"@odata.type")
			buf = append(buf, ':')
			buf = tablestore.AppendJSONString(buf, c.typ)
			buf = append(buf, ',')
		}
		buf = tablestore.AppendJSONString(buf, c.name)
		buf = append(buf, ':')
		buf = tablestore.AppendJSONString(buf, fields[i])
	}
	return append(buf, '}'), nil
}

// csvRecordEnd returns the length of the first complete record in data
// (through its line feed), or -1 when data holds none yet. A line feed
// inside a quoted field does not end a record; a quote that does not start
// a field opens none (parseCSVRecord rejects the record), so a stray quote
// cannot swallow the lines after it.
func csvRecordEnd(data []byte) int {
	inQuotes, fieldStart := false, true
	for i := 0; i < len(data); i++ {
		ch := data[i]
		if inQuotes {
			if ch == '"' {
				if i+1 == len(data) {
					return -1 // a closing quote or the first of "": wait
				}
				if data[i+1] == '"' {
					i++
					continue
				}
				inQuotes = false
			}
			continue
		}
		switch ch {
		case '"':
			if fieldStart {
				inQuotes = true
			}
		case ',':
			fieldStart = true
			continue
		case '\n':
			return i + 1
		}
		fieldStart = false
	}
	return -1
}

// parseCSVRecord splits one record (with or without its line ending) into
// fields, saying which were quoted.
func parseCSVRecord(rec []byte) (fields []string, quoted []bool, err error) {
	if n := len(rec); n > 0 && rec[n-1] == '\n' {
		rec = rec[:n-1]
		if n := len(rec); n > 0 && rec[n-1] == '\r' {
			rec = rec[:n-1]
		}
	}
	var field []byte
	inQuotes, wasQuoted := false, false
	for i := 0; i < len(rec); i++ {
		ch := rec[i]
		if inQuotes {
			if ch == '"' {
				if i+1 < len(rec) && rec[i+1] == '"' {
					field = append(field, '"')
					i++
				} else {
					inQuotes = false
				}
				continue
			}
			field = append(field, ch)
			continue
		}
		switch {
		case ch == ',':
			fields = append(fields, string(field))
			quoted = append(quoted, wasQuoted)
			field, wasQuoted = field[:0], false
		case ch == '"':
			if len(field) > 0 || wasQuoted {
				return nil, nil, fmt.Errorf("malformed csv: a quote inside an unquoted field (field %d)", len(fields)+1)
			}
			inQuotes, wasQuoted = true, true
		case wasQuoted:
			return nil, nil, fmt.Errorf("malformed csv: text after a closing quote (field %d)", len(fields)+1)
		default:
			field = append(field, ch)
		}
	}
	if inQuotes {
		return nil, nil, fmt.Errorf("malformed csv: a quoted field is not closed")
	}
	fields = append(fields, string(field))
	quoted = append(quoted, wasQuoted)
	return fields, quoted, nil
}

// appendCSVRecord appends one record; present[i] says whether fields[i] is
// a value (written even when empty) or no value. A field is quoted only
// when it must be.
func appendCSVRecord(b []byte, fields []string, present []bool) []byte {
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		if !present[i] {
			continue
		}
		if f != "" && !strings.ContainsAny(f, ",\"\r\n") && f[0] != ' ' && f[len(f)-1] != ' ' {
			b = append(b, f...)
			continue
		}
		b = append(b, '"')
		for j := 0; j < len(f); j++ {
			if f[j] == '"' {
				b = append(b, '"')
			}
			b = append(b, f[j])
		}
		b = append(b, '"')
	}
	return append(b, '\n')
}

// csvEncoder writes entities as rows under fixed columns.
type csvEncoder struct {
	cols    []csvColumn
	index   map[csvColumn]int
	fields  []string
	present []bool
}

// newCSVEncoder returns an encoder for PartitionKey, RowKey and the
// property columns given, sorted by name and type.
func newCSVEncoder(props []csvColumn) *csvEncoder {
	slices.SortFunc(props, func(a, b csvColumn) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.typ, b.typ))
	})
	str := edm.TypeString.String()
	cols := append([]csvColumn{{"PartitionKey", str}, {"RowKey", str}}, props...)
	enc := &csvEncoder{cols: cols, index: map[csvColumn]int{},
		fields: make([]string, len(cols)), present: make([]bool, len(cols))}
	for i, c := range cols {
		enc.index[c] = i
	}
	return enc
}

// header appends the header record.
func (enc *csvEncoder) header(b []byte) []byte {
	names := make([]string, len(enc.cols))
	present := make([]bool, len(enc.cols))
	for i, c := range enc.cols {
		names[i], present[i] = c.String(), true
	}
	return appendCSVRecord(b, names, present)
}

// row appends e's record. A property with no column fails.
func (enc *csvEncoder) row(b []byte, e *tablestore.Entity) ([]byte, error) {
	clear(enc.present)
	enc.fields[0], enc.present[0] = e.PartitionKey, true
	enc.fields[1], enc.present[1] = e.RowKey, true
	for name, v := range e.Properties {
		if v == nil {
			continue
		}
		c := csvColumn{name: name, typ: edmName(v)}
		i, ok := enc.index[c]
		if !ok {
			return b, fmt.Errorf("entity (%q, %q): property %s has no column %s (it was written during the export)",
				e.PartitionKey, e.RowKey, name, c)
		}
		enc.fields[i], enc.present[i] = valueText(v), true
	}
	return appendCSVRecord(b, enc.fields, enc.present), nil
}
