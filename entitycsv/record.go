package entitycsv

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// MaxRecordBytes bounds one record of input read by Reader.
const MaxRecordBytes = 16 << 20

// Record is one CSV record.
type Record struct {
	// Fields are the record's cells, unquoted; Quoted[i] says whether
	// Fields[i] was quoted, so "" (the empty string) differs from an
	// empty unquoted cell (no value).
	Fields []string
	Quoted []bool
	// Line is the 1-based line the record starts on.
	Line int
}

// scanner finds the end of a record, resuming where it stopped when the
// data grows. A quote opens a quoted field only at the start of a field,
// so a stray quote cannot swallow the lines after it.
type scanner struct {
	inQuotes, midField bool
	pos                int
}

// next returns the length of the first complete record in data (through
// its line feed), or -1 when data holds none yet; data must begin with
// the bytes of the earlier calls since the last reset.
func (s *scanner) next(data []byte) int {
	for i := s.pos; i < len(data); i++ {
		ch := data[i]
		if s.inQuotes {
			if ch == '"' {
				if i+1 == len(data) {
					s.pos = i // a closing quote or the first of "": wait
					return -1
				}
				if data[i+1] == '"' {
					i++
					continue
				}
				s.inQuotes = false
			}
			continue
		}
		switch ch {
		case '"':
			if !s.midField {
				s.inQuotes = true
			}
		case ',':
			s.midField = false
			continue
		case '\n':
			*s = scanner{}
			return i + 1
		}
		s.midField = true
	}
	s.pos = len(data)
	return -1
}

// RecordEnd returns the length of the first complete record in data
// (through the line feed that ends it), or -1 when data holds no complete
// record yet. A line feed inside a quoted field does not end a record. At
// the end of the input, the bytes left over are the last record.
func RecordEnd(data []byte) int {
	var s scanner
	return s.next(data)
}

// ParseRecord splits one record (with or without its line ending, as
// RecordEnd delimits it) into fields; the Line of the result is 0. A
// malformed record (a quote inside an unquoted field, text after a
// closing quote, a quoted field not closed) is an InvalidInput error.
func ParseRecord(rec []byte) (Record, error) {
	if n := len(rec); n > 0 && rec[n-1] == '\n' {
		rec = rec[:n-1]
		if n := len(rec); n > 0 && rec[n-1] == '\r' {
			rec = rec[:n-1]
		}
	}
	var r Record
	var field strings.Builder
	inQuotes, wasQuoted := false, false
	for i := 0; i < len(rec); i++ {
		ch := rec[i]
		if inQuotes {
			if ch == '"' {
				if i+1 < len(rec) && rec[i+1] == '"' {
					field.WriteByte('"')
					i++
				} else {
					inQuotes = false
				}
				continue
			}
			field.WriteByte(ch)
			continue
		}
		switch {
		case ch == ',':
			r.Fields = append(r.Fields, field.String())
			r.Quoted = append(r.Quoted, wasQuoted)
			field.Reset()
			wasQuoted = false
		case ch == '"':
			if field.Len() > 0 || wasQuoted {
				return Record{}, malformed(fmt.Sprintf("a quote inside an unquoted field (field %d)", len(r.Fields)+1))
			}
			inQuotes, wasQuoted = true, true
		case wasQuoted:
			return Record{}, malformed(fmt.Sprintf("text after a closing quote (field %d)", len(r.Fields)+1))
		default:
			field.WriteByte(ch)
		}
	}
	if inQuotes {
		return Record{}, malformed("a quoted field is not closed")
	}
	r.Fields = append(r.Fields, field.String())
	r.Quoted = append(r.Quoted, wasQuoted)
	return r, nil
}

func malformed(what string) error { return invalid("malformed csv: %s", what) }

// Reader reads records from a stream, counting lines and bytes so that a
// reader can be started again after any record (NewReaderAt). It is not
// safe for concurrent use.
type Reader struct {
	r      *bufio.Reader
	line   int   // lines read so far
	offset int64 // bytes read so far
	raw    []byte
	sc     scanner
	header Header
}

// NewReader returns a reader of r from its start.
func NewReader(r io.Reader) *Reader { return NewReaderAt(r, 0, 0) }

// NewReaderAt returns a reader of r whose first byte is at byte offset
// offset and line line+1 of the input, as Offset and Line reported them
// after an earlier reader's record: Record.Line, Line and Offset then go
// on counting from there. The header is not read again: set it with
// SetHeader before Read.
func NewReaderAt(r io.Reader, line int, offset int64) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 1<<16), line: line, offset: offset}
}

// Line returns the lines read through the end of the last record.
func (r *Reader) Line() int { return r.line }

// Offset returns the byte offset just after the last record.
func (r *Reader) Offset() int64 { return r.offset }

// Raw returns the last record's bytes as read, with its line ending. It
// is valid until the next read; after a RequestBodyTooLarge error it is
// empty.
func (r *Reader) Raw() []byte { return r.raw }

// Header returns the header ReadHeader read or SetHeader set, or nil.
func (r *Reader) Header() Header { return r.header }

// SetHeader sets the header Read decodes records with.
func (r *Reader) SetHeader(h Header) { r.header = h }

// errTooLong marks an over-long record inside the reader; callers get
// tooLong's error.
var errTooLong = errors.New("entitycsv: record too long")

func tooLong() error {
	return &tablestore.Error{Code: edm.CodeRequestBodyTooLarge,
		Message: fmt.Sprintf("a record longer than %d MiB", MaxRecordBytes>>20)}
}

// readLine appends the next line, with its ending, to r.raw. When the
// record passes MaxRecordBytes, it reads on to the end of the line, drops
// r.raw and returns errTooLong.
func (r *Reader) readLine() error {
	start := len(r.raw)
	for {
		chunk, err := r.r.ReadSlice('\n')
		r.raw = append(r.raw, chunk...)
		r.offset += int64(len(chunk))
		if len(r.raw) > MaxRecordBytes {
			for err == bufio.ErrBufferFull {
				chunk, err = r.r.ReadSlice('\n')
				r.offset += int64(len(chunk))
			}
			r.line++
			r.raw = r.raw[:0]
			return errTooLong
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(r.raw) > start {
			r.line++
		}
		if err == io.EOF && len(r.raw) > start {
			return nil
		}
		return err
	}
}

// ReadRecord returns the next record, or io.EOF at the end of the input.
// A malformed record is an InvalidInput error and a record longer than
// MaxRecordBytes a RequestBodyTooLarge one, each with the Record's Line
// set; reading goes on after it (an over-long record is skipped to the
// end of the line where it passed the limit). Any other error is the
// underlying reader's.
func (r *Reader) ReadRecord() (Record, error) {
	r.raw = r.raw[:0]
	r.sc = scanner{}
	if err := r.readLine(); err != nil {
		if err == errTooLong {
			return Record{Line: r.line}, tooLong()
		}
		return Record{}, err
	}
	line := r.line
	for r.sc.next(r.raw) < 0 {
		err := r.readLine()
		if err == io.EOF {
			break // the last record, complete or not
		}
		if err == errTooLong {
			return Record{Line: line}, tooLong()
		}
		if err != nil {
			return Record{Line: line}, err
		}
	}
	rec, err := ParseRecord(r.raw)
	rec.Line = line
	return rec, err
}

// ReadHeader reads the next record as the header (see ParseHeader) and
// sets it. It returns io.EOF for empty input.
func (r *Reader) ReadHeader() (Header, error) {
	rec, err := r.ReadRecord()
	if err != nil {
		return nil, err
	}
	h, err := ParseHeader(rec.Fields)
	if err != nil {
		return nil, err
	}
	r.header = h
	return h, nil
}

// Read returns the entity of the next record, reading the header first
// if none is set; io.EOF at the end. An error about a record (a
// *tablestore.Error, its message starting with the record's line) leaves
// the reader at the next record.
func (r *Reader) Read() (*tablestore.Entity, error) {
	if r.header == nil {
		if _, err := r.ReadHeader(); err != nil {
			return nil, atLine(r.line, err)
		}
	}
	rec, err := r.ReadRecord()
	if err == nil {
		var e *tablestore.Entity
		if e, err = r.header.Entity(rec); err == nil {
			return e, nil
		}
	}
	if err == io.EOF {
		return nil, err
	}
	return nil, atLine(rec.Line, err)
}

// atLine prefixes a *tablestore.Error's message with a line number.
func atLine(line int, err error) error {
	if te, ok := err.(*tablestore.Error); ok && line > 0 {
		return &tablestore.Error{Code: te.Code, Message: fmt.Sprintf("line %d: %s", line, te.Message)}
	}
	return err
}
