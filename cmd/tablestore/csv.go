package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/tablestore/tablestore"
)

// The CSV format of import and export (RFC 4180 with typed columns):
//
//   - The first record is the header. Each column is NAME or NAME:TYPE,
//     TYPE one of Azure's eight EDM names (Edm.String, Edm.Int32,
//     Edm.Int64, Edm.Double, Edm.Boolean, Edm.DateTime, Edm.Guid,
//     Edm.Binary); a bare NAME is Edm.String. PartitionKey and RowKey
//     columns are required. A name may appear once per type, so a
//     property stored with different types in different entities keeps
//     every value (an entity has a value in at most one of them).
//   - A cell holds the value in the text Azure's JSON uses for its type:
//     decimal integers, doubles in Go's shortest form or NaN, Infinity,
//     -Infinity, true/false, DateTime as 2026-01-02T03:04:05.0000000Z,
//     Guid in canonical form, Binary in standard base64.
//   - An empty, unquoted cell means the entity has no such property; a
//     quoted empty cell ("") is the empty string.
//   - Fields are separated by commas and quoted with double quotes (""
//     inside a quoted field is one quote); a quoted field may span lines.
//     Lines end in \n or \r\n.

// csvColumn is one header column.
type csvColumn struct {
	name, edm string
}

// parseCSVHeader reads the typed header.
func parseCSVHeader(fields []string) ([]csvColumn, error) {
	cols := make([]csvColumn, len(fields))
	seen := map[csvColumn]bool{}
	var pk, rk bool
	for i, f := range fields {
		name, edm, typed := strings.Cut(f, ":")
		name = strings.TrimSpace(name)
		if i == 0 {
			name = strings.TrimPrefix(name, "\ufeff") // a UTF-8 byte order mark
		}
		edm = strings.TrimSpace(edm)
		if !typed {
			edm = "Edm.String"
		}
		if !knownEdm[edm] {
			return nil, fmt.Errorf("header column %d (%q): unknown type %q; want one of %s", i+1, f, edm, edmNames)
		}
		c := csvColumn{name: name, edm: edm}
		if seen[c] {
			return nil, fmt.Errorf("header column %d (%q): repeated", i+1, f)
		}
		seen[c] = true
		switch name {
		case "PartitionKey", "RowKey":
			if edm != "Edm.String" {
				return nil, fmt.Errorf("header column %d: %s must be Edm.String", i+1, name)
			}
			pk = pk || name == "PartitionKey"
			rk = rk || name == "RowKey"
		case "":
			return nil, fmt.Errorf("header column %d: empty name", i+1)
		}
		cols[i] = c
	}
	if !pk || !rk {
		return nil, fmt.Errorf("header: PartitionKey and RowKey columns are required")
	}
	return cols, nil
}

var knownEdm = map[string]bool{"Edm.String": true, "Edm.Int32": true, "Edm.Int64": true,
	"Edm.Double": true, "Edm.Boolean": true, "Edm.DateTime": true, "Edm.Guid": true, "Edm.Binary": true}

const edmNames = "Edm.String, Edm.Int32, Edm.Int64, Edm.Double, Edm.Boolean, Edm.DateTime, Edm.Guid, Edm.Binary"

func (c csvColumn) String() string { return c.name + ":" + c.edm }

// csvRowJSON turns one CSV row into Azure's JSON form of the entity, so
// the library's own wire-format decoder applies every type rule.
func csvRowJSON(buf []byte, cols []csvColumn, fields []string, quoted []bool) ([]byte, error) {
	if len(fields) != len(cols) {
		return nil, &tablestore.Error{Code: tablestore.CodeInvalidInput,
			Message: fmt.Sprintf("the row has %d fields, the header %d", len(fields), len(cols))}
	}
	buf = append(buf[:0], '{')
	first := true
	for i, c := range cols {
		if fields[i] == "" && !quoted[i] {
			continue // no value
		}
		if !first {
			buf = append(buf, ',')
		}
		first = false
		if c.name != "PartitionKey" && c.name != "RowKey" {
			buf = tablestore.AppendJSONString(buf, c.name+"@odata.type")
			buf = append(buf, ':')
			buf = tablestore.AppendJSONString(buf, c.edm)
			buf = append(buf, ',')
		}
		buf = tablestore.AppendJSONString(buf, c.name)
		buf = append(buf, ':')
		buf = tablestore.AppendJSONString(buf, fields[i])
	}
	return append(buf, '}'), nil
}

// csvReader reads CSV records, keeping what encoding/csv does not tell:
// whether each field was quoted (so "" differs from no value), the line
// each record starts on, its raw bytes and the byte offset after it.
type csvReader struct {
	r      *bufio.Reader
	line   int   // lines read so far
	offset int64 // bytes read so far
	raw    []byte
}

func newCSVReader(r io.Reader, line int, offset int64) *csvReader {
	return &csvReader{r: bufio.NewReaderSize(r, 1<<16), line: line, offset: offset}
}

// maxRecord bounds one record (line) of import input.
const maxRecord = 16 << 20

// readLine appends the next line, with its ending, to c.raw.
func (c *csvReader) readLine() error {
	start := len(c.raw)
	for {
		chunk, err := c.r.ReadSlice('\n')
		c.raw = append(c.raw, chunk...)
		c.offset += int64(len(chunk))
		if err == bufio.ErrBufferFull {
			if len(c.raw)-start > maxRecord {
				return errRecordTooLong
			}
			continue
		}
		if len(c.raw) > start {
			c.line++
		}
		if err == io.EOF && len(c.raw) > start {
			return nil
		}
		return err
	}
}

var errRecordTooLong = fmt.Errorf("a record longer than %d MiB", maxRecord>>20)

// read returns the next record: its fields, whether each was quoted, and
// the 1-based line it starts on. io.EOF at the end. c.raw holds the
// record's bytes until the next read. A malformed record is a
// *tablestore.Error (InvalidInput); reading goes on at the next record.
func (c *csvReader) read() (fields []string, quoted []bool, line int, err error) {
	c.raw = c.raw[:0]
	if err := c.readLine(); err != nil {
		if err == errRecordTooLong {
			return nil, nil, c.line + 1, c.skipRest(err)
		}
		return nil, nil, 0, err
	}
	line = c.line
	var field []byte
	inQuotes, wasQuoted := false, false
	var bad string
	for i := 0; ; i++ {
		if i == len(c.raw) {
			if !inQuotes {
				break
			}
			// A quoted field goes on on the next line.
			if err := c.readLine(); err != nil {
				if err == io.EOF {
					if bad == "" {
						bad = "a quoted field is not closed"
					}
					break
				}
				if err == errRecordTooLong {
					return nil, nil, line, c.skipRest(err)
				}
				return nil, nil, line, err
			}
		}
		ch := c.raw[i]
		if inQuotes {
			if ch == '"' {
				if i+1 < len(c.raw) && c.raw[i+1] == '"' {
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
		switch ch {
		case ',':
			fields = append(fields, string(field))
			quoted = append(quoted, wasQuoted)
			field, wasQuoted = field[:0], false
		case '"':
			if len(field) > 0 || wasQuoted {
				// A stray quote is kept as text, so it cannot swallow the
				// lines after it.
				if bad == "" {
					bad = fmt.Sprintf("a quote inside an unquoted field (field %d)", len(fields)+1)
				}
				field = append(field, ch)
				continue
			}
			inQuotes, wasQuoted = true, true
		case '\r':
			if i+1 < len(c.raw) && c.raw[i+1] == '\n' {
				continue
			}
			field = append(field, ch)
		case '\n':
			// the end of the record
		default:
			if wasQuoted && bad == "" {
				bad = fmt.Sprintf("text after a closing quote (field %d)", len(fields)+1)
			}
			field = append(field, ch)
		}
	}
	fields = append(fields, string(field))
	quoted = append(quoted, wasQuoted)
	if bad != "" {
		return nil, nil, line, &tablestore.Error{Code: tablestore.CodeInvalidInput, Message: "malformed csv: " + bad}
	}
	return fields, quoted, line, nil
}

// skipRest reads past the end of an over-long line and reports it.
func (c *csvReader) skipRest(cause error) error {
	for {
		_, err := c.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			continue
		}
		break
	}
	c.raw = c.raw[:0]
	return &tablestore.Error{Code: tablestore.CodeRequestBodyTooLarge, Message: cause.Error()}
}

// appendCSVRecord appends one record; present[i] says whether fields[i]
// is a value (written even when empty) or no value. A field is quoted
// only when it must be: when it holds a comma, quote or line break, has
// surrounding spaces, or is an empty value (an empty unquoted field means
// no value).
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

// trimLineEnd drops a trailing \n or \r\n.
func trimLineEnd(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}
