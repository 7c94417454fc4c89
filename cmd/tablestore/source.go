package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/entitycsv"
)

// record is one input entity on its way into a store.
type record struct {
	line  int    // the 1-based line it starts on; 0 when not from a file
	lines int    // the lines read through its end
	end   int64  // the byte offset just after it in its file
	raw   []byte // its text, without the line ending
	// row is a CSV record's cells, until parsed.
	row entitycsv.Record

	// entity or encoded is the entity to store (a JSON line is decoded
	// straight into encoded, without a property map).
	entity  *tablestore.Entity
	encoded *tablestore.RawEntity
	err     error // why it cannot be stored (a *tablestore.Error); entity and encoded are nil
}

// keys returns the keys of the record's entity, "" when it has none.
func (r *record) keys() (pk, rk string) {
	switch {
	case r.entity != nil:
		return r.entity.PartitionKey, r.entity.RowKey
	case r.encoded != nil:
		return r.encoded.PartitionKey, r.encoded.RowKey
	}
	return "", ""
}

// partitionKey returns the PartitionKey of the record's entity.
func (r *record) partitionKey() string {
	pk, _ := r.keys()
	return pk
}

// action is the transaction action of typ writing the record's entity.
func (r *record) action(typ tablestore.ActionType) tablestore.TransactionAction {
	a := tablestore.TransactionAction{Type: typ}
	switch {
	case r.entity != nil:
		a.Entity = r.entity
	case r.encoded != nil:
		a.Entity = r.encoded
	}
	return a
}

// where names the record in messages.
func (r *record) where() string {
	if r.line > 0 {
		return fmt.Sprintf("line %d", r.line)
	}
	if r.entity != nil || r.encoded != nil {
		pk, rk := r.keys()
		return fmt.Sprintf("entity (%q, %q)", pk, rk)
	}
	return "entity"
}

// source reads records in input order. next returns io.EOF at the end;
// any other error is fatal (a bad record is a record with err set).
// parse turns a record's text into its entity (or err); it is safe to
// call concurrently on different records, so parsing runs in parallel
// while reading stays sequential.
type source interface {
	next() (*record, error)
	parse(rec *record)
}

// jsonSource reads JSON lines, one entity per line in Azure's JSON wire
// format. Blank lines are skipped.
type jsonSource struct {
	r      *bufio.Reader
	line   int
	offset int64
	buf    []byte
	// block holds the text of recent lines and recs their records, so
	// that reading a line allocates neither; both are replaced, never
	// reused, when full.
	block []byte
	recs  []record
}

// Sizes of a jsonSource's blocks of line text and of records.
const (
	textBlock   = 64 << 10
	recordBlock = 128
)

// newRecord returns a zeroed record from the current block of records.
func (s *jsonSource) newRecord() *record {
	if len(s.recs) == cap(s.recs) {
		s.recs = make([]record, 0, recordBlock)
	}
	s.recs = s.recs[:len(s.recs)+1]
	return &s.recs[len(s.recs)-1]
}

// keep returns a copy of text in the current block of text (its capacity
// its length, so appending to it copies).
func (s *jsonSource) keep(text []byte) []byte {
	if len(text) > cap(s.block)-len(s.block) {
		if len(text) > textBlock/4 {
			return bytes.Clone(text)
		}
		s.block = make([]byte, 0, textBlock)
	}
	n := len(s.block)
	s.block = append(s.block, text...)
	return s.block[n:len(s.block):len(s.block)]
}

// rawEntities holds RawEntity values the bulk loader is done with, for
// parse to decode the next lines into (their record buffers with them).
var rawEntities = sync.Pool{New: func() any { return new(tablestore.RawEntity) }}

// recycleRaw returns e, which nothing refers to any more, to rawEntities.
func recycleRaw(e *tablestore.RawEntity) {
	e.Reset()
	rawEntities.Put(e)
}

func newJSONSource(r io.Reader, line int, offset int64) *jsonSource {
	return &jsonSource{r: bufio.NewReaderSize(r, 1<<16), line: line, offset: offset}
}

func (s *jsonSource) next() (*record, error) {
	for {
		s.buf = s.buf[:0]
		tooLong := false
		// line is the line read: in the reader's buffer (valid until the
		// next read) when it fits there, else gathered in s.buf.
		line, err := s.r.ReadSlice('\n')
		s.offset += int64(len(line))
		if err == bufio.ErrBufferFull {
			s.buf = append(s.buf, line...)
			for err == bufio.ErrBufferFull {
				var chunk []byte
				chunk, err = s.r.ReadSlice('\n')
				s.offset += int64(len(chunk))
				if !tooLong {
					s.buf = append(s.buf, chunk...)
				}
				if err == bufio.ErrBufferFull && len(s.buf) > maxRecord {
					tooLong, s.buf = true, s.buf[:0]
				}
			}
			line = s.buf
		}
		if err != nil && err != io.EOF {
			return nil, err
		}
		if len(line) == 0 && !tooLong {
			return nil, io.EOF
		}
		s.line++
		rec := s.newRecord()
		*rec = record{line: s.line, lines: s.line, end: s.offset}
		if tooLong {
			rec.raw = []byte("(a line over 16 MiB)")
			rec.err = &tablestore.Error{Code: edm.CodeRequestBodyTooLarge, Message: errRecordTooLong.Error()}
			return rec, nil
		}
		text := trimLineEnd(line)
		if len(bytes.TrimSpace(text)) == 0 {
			if err == io.EOF {
				return nil, io.EOF
			}
			continue
		}
		rec.raw = s.keep(text)
		return rec, nil
	}
}

func (s *jsonSource) parse(rec *record) {
	if rec.err != nil {
		return
	}
	e := rawEntities.Get().(*tablestore.RawEntity)
	if err := e.UnmarshalJSON(rec.raw); err != nil {
		rec.err = err
		recycleRaw(e)
		return
	}
	rec.encoded = e
}

// csvSource reads CSV rows under a typed header, in the format of
// package entitycsv.
type csvSource struct {
	r    *entitycsv.Reader
	cols entitycsv.Header
}

func (s *csvSource) next() (*record, error) {
	row, err := s.r.ReadRecord()
	if err != nil && (row.Line == 0 || !isCodeError(err)) {
		return nil, err
	}
	rec := &record{line: row.Line, lines: s.r.Line(), end: s.r.Offset(), raw: bytes.Clone(trimLineEnd(s.r.Raw())),
		row: row, err: err}
	return rec, nil
}

func (s *csvSource) parse(rec *record) {
	if rec.err != nil {
		return
	}
	rec.entity, rec.err = s.cols.Entity(rec.row)
	rec.row = entitycsv.Record{}
}

// maxRecord bounds one line of JSON input, as entitycsv bounds a CSV
// record.
const maxRecord = entitycsv.MaxRecordBytes

var errRecordTooLong = fmt.Errorf("a record longer than %d MiB", maxRecord>>20)

// trimLineEnd drops a trailing \n or \r\n.
func trimLineEnd(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// isCodeError reports whether err carries an Azure error code.
func isCodeError(err error) bool { return tablestore.ErrorCode(err) != "" }
