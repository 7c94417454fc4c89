package tablestore

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// scanFlatJSON is the fast path of scanJSONEntity for the common input:
// one JSON object of scalar values with no repeated keys. It checks the
// JSON grammar as it goes and returns exactly what the token-by-token
// scan returns for such input, and ok == false for anything else
// (malformed JSON, nested values, repeats, a non-string annotation),
// which the token scan then reports.
func scanFlatJSON(data []byte) (values map[string]any, types map[string]string, etag ETag, ok bool) {
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, nil, "", false
	}
	i = skipJSONSpace(data, i+1)
	values = make(map[string]any, 16)
	types = make(map[string]string, 4)
	var seenOData map[string]bool
	if i < len(data) && data[i] == '}' {
		return values, types, etag, skipJSONSpace(data, i+1) == len(data)
	}
	for {
		key, next, ok := scanJSONString(data, i)
		if !ok {
			return nil, nil, "", false
		}
		i = skipJSONSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return nil, nil, "", false
		}
		i = skipJSONSpace(data, i+1)
		if i >= len(data) {
			return nil, nil, "", false
		}
		var val any
		switch c := data[i]; c {
		case '"':
			s, next, ok := scanJSONString(data, i)
			if !ok {
				return nil, nil, "", false
			}
			val, i = s, next
		case 't', 'f', 'n':
			j := i
			for j < len(data) && data[j] >= 'a' && data[j] <= 'z' {
				j++
			}
			switch string(data[i:j]) {
			case "true":
				val = true
			case "false":
				val = false
			case "null":
				val = nil
			default:
				return nil, nil, "", false
			}
			i = j
		default:
			j, ok := scanJSONNumber(data, i)
			if !ok {
				return nil, nil, "", false
			}
			val, i = json.Number(data[i:j]), j
		}
		switch {
		case strings.HasSuffix(key, jsonTypeSuffix):
			name := strings.TrimSuffix(key, jsonTypeSuffix)
			s, isStr := val.(string)
			if _, dup := types[name]; dup || !isStr {
				return nil, nil, "", false
			}
			types[name] = s
		case strings.HasPrefix(key, "odata.") || strings.Contains(key, "@"):
			if seenOData[key] {
				return nil, nil, "", false
			}
			if seenOData == nil {
				seenOData = make(map[string]bool)
			}
			seenOData[key] = true
			if s, ok := val.(string); ok && key == jsonETagKey {
				etag = ETag(s)
			}
		default:
			if _, dup := values[key]; dup {
				return nil, nil, "", false
			}
			values[key] = val
		}
		i = skipJSONSpace(data, i)
		if i >= len(data) {
			return nil, nil, "", false
		}
		switch data[i] {
		case ',':
			i = skipJSONSpace(data, i+1)
		case '}':
			return values, types, etag, skipJSONSpace(data, i+1) == len(data)
		default:
			return nil, nil, "", false
		}
	}
}

// skipJSONSpace returns the index of the first non-space byte at or after i.
func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// scanJSONNumber returns the end of the JSON number at data[i], checking
// its grammar: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func scanJSONNumber(data []byte, i int) (int, bool) {
	digits := func(i int) int {
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i
	}
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		i = digits(i)
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return i, false
		}
		i = j
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return i, false
		}
		i = j
	}
	return i, true
}

// scanJSONString decodes the JSON string starting at data[i] and returns
// the index after it, checking that it is well formed (no raw control
// characters, known escapes). Strings with escapes or invalid UTF-8 are
// decoded by encoding/json itself, so the result is always encoding/json's.
func scanJSONString(data []byte, i int) (string, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return "", i, false
	}
	escaped := false
	j := i + 1
	for ; j < len(data) && data[j] != '"'; j++ {
		switch c := data[j]; {
		case c < 0x20:
			return "", i, false
		case c == '\\':
			escaped = true
			j++
			if j >= len(data) {
				return "", i, false
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if j+k >= len(data) || !isHexDigit(data[j+k]) {
						return "", i, false
					}
				}
				j += 4
			default:
				return "", i, false
			}
		}
	}
	if j >= len(data) {
		return "", i, false
	}
	raw := data[i+1 : j]
	if !escaped && utf8.Valid(raw) {
		return string(raw), j + 1, true
	}
	var s string
	if err := json.Unmarshal(data[i:j+1], &s); err != nil {
		return "", i, false
	}
	return s, j + 1, true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
