package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// docSource reads Azure's JSON as one document: an array of entities, or
// a query's answer ({"odata.metadata":...,"value":[...]}). A resumed
// import reads it again from the start and skips the entities that end
// at or before the offset already handled.
type docSource struct {
	dec  *json.Decoder
	in   *lineCounter
	skip int64
	open bool // inside the entities' array
}

// isJSONDocument reports whether JSON input starting with head (all of
// it when whole) is a document rather than JSON lines: an array, or an
// object that does not end on its first line or holds a "value" array
// and no keys (a query's answer). A first line longer than head is taken
// for JSON lines.
func isJSONDocument(head []byte, whole bool) bool {
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	if len(head) == 0 {
		return false
	}
	if head[0] == '[' {
		return true
	}
	line, _, found := bytes.Cut(head, []byte{'\n'})
	if !found && !whole {
		return false
	}
	var v struct {
		Value        json.RawMessage `json:"value"`
		PartitionKey *string
	}
	return json.Unmarshal(line, &v) != nil || v.Value != nil && v.PartitionKey == nil
}

func newDocSource(r io.Reader, skip int64) *docSource {
	lc := &lineCounter{r: r}
	return &docSource{dec: json.NewDecoder(lc), in: lc, skip: skip}
}

// start moves the decoder into the entities' array.
func (s *docSource) start() error {
	tok, err := s.dec.Token()
	if err != nil {
		return err
	}
	if tok == json.Delim('[') {
		return nil
	}
	if tok != json.Delim('{') {
		return errors.New("a JSON document must be an array of entities or an object with a \"value\" array")
	}
	for s.dec.More() {
		key, err := s.dec.Token()
		if err != nil {
			return err
		}
		if key == "value" {
			if tok, err := s.dec.Token(); err != nil || tok != json.Delim('[') {
				return errors.New(`"value" is not an array of entities`)
			}
			return nil
		}
		var skip json.RawMessage
		if err := s.dec.Decode(&skip); err != nil {
			return err
		}
	}
	return errors.New(`the JSON document has no "value" array of entities`)
}

func (s *docSource) next() (*record, error) {
	if !s.open {
		if err := s.start(); err != nil {
			return nil, fmt.Errorf("line %d: %w", s.in.lineAt(s.dec.InputOffset()), err)
		}
		s.open = true
	}
	for s.dec.More() {
		var raw json.RawMessage
		if err := s.dec.Decode(&raw); err != nil {
			return nil, fmt.Errorf("line %d: %w", s.in.lineAt(s.dec.InputOffset()), err)
		}
		end := s.dec.InputOffset()
		begin := s.in.lineAt(end - int64(len(raw))) // raw is the value's exact bytes
		if end <= s.skip {
			continue
		}
		rec := &record{line: begin, lines: s.in.lineAt(end), end: end, raw: raw}
		if len(raw) > maxRecord {
			rec.raw = []byte("(an entity over 16 MiB)")
			rec.err = &tablestore.Error{Code: edm.CodeRequestBodyTooLarge, Message: errRecordTooLong.Error()}
		}
		return rec, nil
	}
	return nil, io.EOF
}

func (s *docSource) parse(rec *record) { (&jsonSource{}).parse(rec) }

// lineCounter counts the lines of what it reads, so that an offset the
// decoder reports maps to its line; offsets are asked in order.
type lineCounter struct {
	r     io.Reader
	read  int64
	lines []int64 // offsets of the newlines read and not yet passed
	line  int     // the line of the last offset asked
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\n' {
			c.lines = append(c.lines, c.read+int64(i))
		}
	}
	c.read += int64(n)
	return n, err
}

// lineAt is the 1-based line of offset (not below the last asked).
func (c *lineCounter) lineAt(offset int64) int {
	for len(c.lines) > 0 && c.lines[0] < offset {
		c.lines = c.lines[1:]
		c.line++
	}
	return c.line + 1
}
