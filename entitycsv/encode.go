package entitycsv

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// Encoder writes a header and entities as CSV records under fixed
// columns. It is not safe for concurrent use.
type Encoder struct {
	h       Header
	index   map[Column]int
	pk, rk  int
	fields  []string
	present []bool
	// spreadsheet neutralizes formulas (SpreadsheetSafe).
	spreadsheet bool
}

// Option changes how an Encoder or a Writer writes.
type Option func(*Encoder)

// SpreadsheetSafe makes the output safe to open in a spreadsheet: a cell
// (header included) that starts with =, +, -, @, a tab or a carriage
// return, which a spreadsheet would take as a formula, is written with a
// single quote (') before it, so it is shown as text and never run. Cells
// of Edm.Int32, Edm.Int64 and Edm.Double columns (-5, -1.5e-07,
// -Infinity) are left as they are: they hold numbers, never a formula.
// Such output no longer reads back exactly: a neutralized string reads back
// with its quote. Without this option, the default, every value is written
// as it is and reads back as itself.
func SpreadsheetSafe() Option { return func(enc *Encoder) { enc.spreadsheet = true } }

// NewEncoder returns an encoder for h, changed by opts. Errors
// (InvalidInput): a header that would not read back as itself (see
// ParseHeader: a repeated column, no PartitionKey or RowKey, an empty
// name, a name with a colon or surrounding spaces, a type that is not one
// of the eight).
func NewEncoder(h Header, opts ...Option) (*Encoder, error) {
	names := make([]string, len(h))
	for i, c := range h {
		if strings.Contains(c.Name, ":") && !isKey(c.Name) {
			return nil, invalid("column %d: the name %s holds a colon", i+1, quote(c.Name))
		}
		names[i] = c.String()
	}
	back, err := ParseHeader(names)
	if err != nil {
		return nil, err
	}
	if !slices.Equal(back, h) {
		return nil, invalid("the columns %s do not read back as themselves", quote(strings.Join(names, ",")))
	}
	enc := &Encoder{h: slices.Clone(h), index: make(map[Column]int, len(h)),
		fields: make([]string, len(h)), present: make([]bool, len(h))}
	for i, c := range h {
		enc.index[c] = i
		switch c.Name {
		case "PartitionKey":
			enc.pk = i
		case "RowKey":
			enc.rk = i
		}
	}
	for _, o := range opts {
		o(enc)
	}
	return enc, nil
}

// neutralize puts a quote before the present cells a spreadsheet would
// take as formulas, when the encoder is SpreadsheetSafe; header says the
// fields are the header's.
func (enc *Encoder) neutralize(header bool) {
	if !enc.spreadsheet {
		return
	}
	for i, f := range enc.fields {
		if !enc.present[i] || f == "" || !strings.ContainsRune("=+-@\t\r", rune(f[0])) {
			continue
		}
		if !header && isNumber(enc.h[i].Type) {
			continue
		}
		enc.fields[i] = "'" + f
	}
}

// isNumber reports whether t is a numeric type, whose cells hold only a
// number, NaN, Infinity or -Infinity: nothing a spreadsheet could run.
func isNumber(t edm.Type) bool {
	return t == edm.TypeInt32 || t == edm.TypeInt64 || t == edm.TypeDouble
}

// Header returns the encoder's columns.
func (enc *Encoder) Header() Header { return slices.Clone(enc.h) }

// AppendHeader appends the header record, with its line feed.
func (enc *Encoder) AppendHeader(b []byte) []byte {
	for i, c := range enc.h {
		enc.fields[i], enc.present[i] = c.String(), true
	}
	enc.neutralize(true)
	return appendRecord(b, enc.fields, enc.present)
}

// AppendEntity appends e's record, with its line feed. Nil properties are
// no value; the Timestamp and ETag are not written. Errors
// (*tablestore.Error; b is returned unchanged): InvalidInput for a
// property with no column of its name and type or a string that is not
// valid UTF-8, InvalidValueType and OutOfRangeInput as FormatValue
// returns them.
func (enc *Encoder) AppendEntity(b []byte, e *tablestore.Entity) ([]byte, error) {
	clear(enc.present)
	clear(enc.fields)
	for _, k := range []struct {
		i    int
		name string
		v    string
	}{{enc.pk, "PartitionKey", e.PartitionKey}, {enc.rk, "RowKey", e.RowKey}} {
		if _, err := FormatValue(k.v); err != nil {
			return b, invalid("%s holds a string that is not valid UTF-8", k.name)
		}
		enc.fields[k.i], enc.present[k.i] = k.v, true
	}
	for name, v := range e.Properties {
		if v == nil {
			continue
		}
		text, err := FormatValue(v)
		if err != nil {
			te := err.(*tablestore.Error)
			return b, &tablestore.Error{Code: te.Code, Message: fmt.Sprintf("entity (%q, %q): property %q: %s",
				e.PartitionKey, e.RowKey, name, te.Message)}
		}
		c := Column{Name: name, Type: TypeOf(v)}
		i, ok := enc.index[c]
		if !ok || isKey(name) {
			return b, invalid("entity (%q, %q): property %s has no column %s:%s", e.PartitionKey, e.RowKey, name, name, c.Type)
		}
		enc.fields[i], enc.present[i] = text, true
	}
	enc.neutralize(false)
	return appendRecord(b, enc.fields, enc.present), nil
}

// appendRecord appends one record; present[i] says whether fields[i] is a
// value (written even when empty) or no value. A field is quoted only
// when it must be: when it holds a comma, quote or line break, has
// surrounding spaces, or is an empty value (an empty unquoted field means
// no value).
func appendRecord(b []byte, fields []string, present []bool) []byte {
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

// Writer writes CSV to an io.Writer: the header, then one record per
// entity. Each call writes whole records; buffer w for speed.
type Writer struct {
	w      io.Writer
	enc    *Encoder
	buf    []byte
	header bool
}

// NewWriter returns a writer of the columns h to w, changed by opts (such
// as SpreadsheetSafe); it writes nothing yet. Errors: NewEncoder's.
func NewWriter(w io.Writer, h Header, opts ...Option) (*Writer, error) {
	enc, err := NewEncoder(h, opts...)
	if err != nil {
		return nil, err
	}
	return &Writer{w: w, enc: enc}, nil
}

// WriteHeader writes the header record, once; later calls do nothing.
func (w *Writer) WriteHeader() error {
	if w.header {
		return nil
	}
	w.header = true
	w.buf = w.enc.AppendHeader(w.buf[:0])
	_, err := w.w.Write(w.buf)
	return err
}

// Write writes e's record, after the header if it is not written yet.
// Errors: AppendEntity's (nothing is written), or w's.
func (w *Writer) Write(e *tablestore.Entity) error {
	if err := w.WriteHeader(); err != nil {
		return err
	}
	var err error
	if w.buf, err = w.enc.AppendEntity(w.buf[:0], e); err != nil {
		return err
	}
	_, err = w.w.Write(w.buf)
	return err
}
