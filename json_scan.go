package tablestore

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// scanFlatJSON is the fast path of scanJSONEntity for the common input:
// one valid JSON object of scalar values with no repeated keys. It
// returns exactly what the token-by-token scan returns for such input,
// and ok == false for anything else (malformed JSON, nested values,
// repeats, a non-string annotation), which the token scan then reports.
func scanFlatJSON(data []byte) (values map[string]any, types map[string]string, etag ETag, ok bool) {
	if !json.Valid(data) {
		return nil, nil, "", false
	}
	i := skipJSONSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, nil, "", false
	}
	i++
	values = make(map[string]any, 16)
	types = make(map[string]string, 4)
	var seenOData map[string]bool
	for {
		i = skipJSONSpace(data, i)
		switch data[i] {
		case '}':
			return values, types, etag, true
		case ',':
			i = skipJSONSpace(data, i+1)
		}
		key, next, ok := scanJSONString(data, i)
		if !ok {
			return nil, nil, "", false
		}
		i = skipJSONSpace(data, next)
		i = skipJSONSpace(data, i+1) // the ':'
		var val any
		switch c := data[i]; c {
		case '"':
			s, next, ok := scanJSONString(data, i)
			if !ok {
				return nil, nil, "", false
			}
			val, i = s, next
		case '{', '[':
			return nil, nil, "", false
		default:
			j := i
			for j < len(data) && !strings.ContainsRune(",} \t\r\n", rune(data[j])) {
				j++
			}
			switch lit := string(data[i:j]); lit {
			case "true":
				val = true
			case "false":
				val = false
			case "null":
				val = nil
			default:
				val = json.Number(lit)
			}
			i = j
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
	}
}

// skipJSONSpace returns the index of the first non-space byte at or after i.
func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// scanJSONString decodes the string starting at data[i] (a '"') in valid
// JSON and returns the index after it. Strings with escapes or invalid
// UTF-8 are decoded by encoding/json itself, so the result is always
// encoding/json's.
func scanJSONString(data []byte, i int) (string, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return "", i, false
	}
	escaped := false
	j := i + 1
	for ; data[j] != '"'; j++ {
		if data[j] == '\\' {
			escaped = true
			j++ // skip the escaped byte (valid JSON: never past the end)
		}
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
