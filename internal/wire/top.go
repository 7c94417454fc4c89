package wire

import "encoding/json"

// Top is what TopMembers finds at the top level of a JSON object.
type Top struct {
	Members              int  // how many members it has
	PartitionKey, RowKey bool // it has the members PartitionKey and RowKey
}

// TopMembers reads the top level of the JSON object b without decoding
// it. ok is false when b is not a well-formed object as far as this scan
// reads it (Decode then says why).
func TopMembers(b []byte) (info Top, ok bool) {
	s := jsonScanner{b: b}
	if s.space(); !s.byte('{') {
		return info, false
	}
	if s.space(); s.byte('}') {
		return info, true
	}
	for {
		s.space()
		key, ok := s.str()
		if !ok {
			return info, false
		}
		info.Members++
		switch string(key) {
		case "PartitionKey":
			info.PartitionKey = true
		case "RowKey":
			info.RowKey = true
		}
		if s.space(); !s.byte(':') {
			return info, false
		}
		if s.space(); !s.value(0) {
			return info, false
		}
		s.space()
		if s.byte('}') {
			return info, true
		}
		if !s.byte(',') {
			return info, false
		}
	}
}

// jsonScanner skips over JSON text without decoding it.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

func (s *jsonScanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a string. Its value aliases b unless it has escapes, when it
// is decoded into a copy.
func (s *jsonScanner) str() ([]byte, bool) {
	start := s.i
	if !s.byte('"') {
		return nil, false
	}
	escaped := false
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i += 2
			continue
		case '"':
			s.i++
			raw := s.b[start:s.i]
			if !escaped {
				return raw[1 : len(raw)-1], true
			}
			var v string
			if json.Unmarshal(raw, &v) != nil {
				return nil, false
			}
			return []byte(v), true
		}
		s.i++
	}
	return nil, false
}

// value skips one value: a string, an object or array (depth-bounded),
// or a literal.
func (s *jsonScanner) value(depth int) bool {
	if s.i >= len(s.b) || depth > 64 {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		_, ok := s.str()
		return ok
	case '{', '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		s.i++
		for first := true; ; first = false {
			if s.space(); s.byte(end) {
				return true
			}
			if !first && !s.byte(',') {
				return false
			}
			s.space()
			if c == '{' {
				if _, ok := s.str(); !ok {
					return false
				}
				if s.space(); !s.byte(':') {
					return false
				}
				s.space()
			}
			if !s.value(depth + 1) {
				return false
			}
		}
	}
	start := s.i
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			return s.i > start
		}
		s.i++
	}
	return s.i > start
}
