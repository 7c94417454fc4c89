package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/tablestore/tablestore"
)

// record is one input entity on its way into a store.
type record struct {
	line   int    // the 1-based line it starts on; 0 when not from a file
	lines  int    // the lines read through its end
	end    int64  // the byte offset just after it in its file
	size   int64  // its size in bytes, for progress
	raw    []byte // its text, kept for --skip-bad
	entity *tablestore.Entity
	err    error // why it cannot be stored (a *tablestore.Error); entity is nil
}

// where names the record in messages.
func (r *record) where() string {
	if r.line > 0 {
		return fmt.Sprintf("line %d", r.line)
	}
	if r.entity != nil {
		return fmt.Sprintf("entity (%q, %q)", r.entity.PartitionKey, r.entity.RowKey)
	}
	return "entity"
}

// source yields records in input order. next returns io.EOF at the end;
// any other error is fatal (a bad record is a record with err set).
type source interface {
	next() (*record, error)
}

// jsonSource reads JSON lines, one entity per line in Azure's JSON wire
// format. Blank lines are skipped.
type jsonSource struct {
	r       *bufio.Reader
	line    int
	offset  int64
	keepRaw bool
	buf     []byte
}

func newJSONSource(r io.Reader, line int, offset int64, keepRaw bool) *jsonSource {
	return &jsonSource{r: bufio.NewReaderSize(r, 1<<16), line: line, offset: offset, keepRaw: keepRaw}
}

func (s *jsonSource) next() (*record, error) {
	for {
		s.buf = s.buf[:0]
		tooLong := false
		var err error
		for {
			var chunk []byte
			chunk, err = s.r.ReadSlice('\n')
			s.offset += int64(len(chunk))
			if !tooLong {
				s.buf = append(s.buf, chunk...)
			}
			if err == bufio.ErrBufferFull {
				if len(s.buf) > maxRecord {
					tooLong, s.buf = true, s.buf[:0]
				}
				continue
			}
			break
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(s.buf) == 0 && !tooLong {
			return nil, io.EOF
		}
		s.line++
		rec := &record{line: s.line, lines: s.line, end: s.offset, size: int64(len(s.buf))}
		if tooLong {
			rec.err = &tablestore.Error{Code: tablestore.CodeRequestBodyTooLarge, Message: errRecordTooLong.Error()}
			return rec, nil
		}
		text := trimLineEnd(s.buf)
		if len(bytes.TrimSpace(text)) == 0 {
			if err == io.EOF {
				return nil, io.EOF
			}
			continue
		}
		if s.keepRaw {
			rec.raw = bytes.Clone(text)
		}
		e := new(tablestore.Entity)
		if err := e.UnmarshalJSON(text); err != nil {
			rec.err = err
		} else {
			rec.entity = e
		}
		return rec, nil
	}
}

// csvSource reads CSV rows under a typed header (see csv.go).
type csvSource struct {
	r       *csvReader
	cols    []csvColumn
	keepRaw bool
	buf     []byte
}

func (s *csvSource) next() (*record, error) {
	fields, quoted, line, err := s.r.read()
	if err != nil && (line == 0 || !isCodeError(err)) {
		return nil, err
	}
	rec := &record{line: line, lines: s.r.line, end: s.r.offset, size: int64(len(s.r.raw))}
	if s.keepRaw {
		rec.raw = bytes.Clone(trimLineEnd(s.r.raw))
	}
	if err != nil {
		rec.err = err
		return rec, nil
	}
	s.buf, err = csvRowJSON(s.buf, s.cols, fields, quoted)
	if err == nil {
		e := new(tablestore.Entity)
		if err = e.UnmarshalJSON(s.buf); err == nil {
			rec.entity = e
		}
	}
	rec.err = err
	return rec, nil
}

// isCodeError reports whether err carries an Azure error code.
func isCodeError(err error) bool { return tablestore.ErrorCode(err) != "" }
