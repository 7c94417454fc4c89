package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// referenceObject reads the top-level object with encoding/json's
// tokenizer, as the decoder did before it had its own scanner: values
// by key (string, json.Number, bool or nil), annotations by property
// name, and odata.etag. ok is false wherever encoding/json refuses the
// input or the object is not one of scalars with distinct keys.
func referenceObject(data []byte) (values map[string]any, types map[string]string, etag string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, "", false
	}
	values, types = map[string]any{}, map[string]string{}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, "", false
		}
		key := tok.(string)
		val, err := dec.Token()
		if _, nested := val.(json.Delim); err != nil || nested || seen[key] {
			return nil, nil, "", false
		}
		seen[key] = true
		switch {
		case strings.HasSuffix(key, typeSuffix):
			s, isStr := val.(string)
			if !isStr {
				return nil, nil, "", false
			}
			types[strings.TrimSuffix(key, typeSuffix)] = s
		case strings.HasPrefix(key, "odata.") || strings.Contains(key, "@"):
			if s, isStr := val.(string); isStr && key == etagKey {
				etag = s
			}
		default:
			values[key] = val
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, "", false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, "", false
	}
	return values, types, etag, true
}

// plain converts the scanner's values to the reference's form.
func plain(values map[string]scalar) map[string]any {
	out := make(map[string]any, len(values))
	for k, v := range values {
		switch v.kind {
		case kindString:
			out[k] = v.text
		case kindNumber:
			out[k] = json.Number(v.text)
		case kindBool:
			out[k] = v.b
		default:
			out[k] = nil
		}
	}
	return out
}

// utf8Refusal reports whether err is the scanner's refusal of invalid
// UTF-8 or of a lone surrogate escape.
func utf8Refusal(err error) bool {
	var e *entityenc.Error
	return errors.As(err, &e) && (strings.Contains(e.Message, "not valid UTF-8") || strings.Contains(e.Message, "lone UTF-16 surrogate"))
}

// FuzzScanMatchesEncodingJSON: the scanner reads exactly what
// encoding/json reads, except that it refuses invalid UTF-8 (raw, or as
// a lone surrogate escape) where encoding/json puts U+FFFD, and it
// refuses what encoding/json refuses.
func FuzzScanMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"a","RowKey":"b","N":1,"F":1.5e3,"B":true,"Z":null,"S":"x\u00e9\"\\"}`,
		` { "odata.etag" : "W/\"x\"", "A@odata.type":"Edm.Int64", "A":"5" } `,
		`{"a":1,"a":2}`, `{"a":{"b":1}}`, `{"a":[1]}`, `[1]`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
		`{"a":"\ud83d\ude00"}`, `{"a":"\ud800\u0041"}`, `{"a":"\udc00"}`, "{\"a\xed\xa0\x80\":1}",
		`{"x@odata.type":1,"x":1}`, `{"odata.id":"1","odata.id":"2"}`, `{}`, `{"a":1}{}`, `{"a":-0.0E+1}`,
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\t\"}",
		`{"a":1,}`, `{"a" 1}`, `{,"a":1}`, `{"a":1 "b":2}`, ` {} `, `{"a":nulls}`, `{"a":-}`, `{"a":1}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := scanObject(data)
		rv, rt, re, ok := referenceObject(data)
		if err != nil {
			if ok && !utf8Refusal(err) {
				t.Fatalf("%q: encoding/json reads it, the scanner refuses: %v", data, err)
			}
			require.NotEmpty(t, err.(*entityenc.Error).Code)
			return
		}
		require.True(t, ok, "%q: the scanner reads what encoding/json refuses", data)
		require.Equal(t, rv, plain(obj.values), "%q", data)
		require.Equal(t, rt, obj.types, "%q", data)
		require.Equal(t, re, obj.etag, "%q", data)
		for _, v := range obj.values {
			require.True(t, utf8.ValidString(v.text))
		}
	})
}

// TestDecodeRefusesInvalidUTF8 checks every place a string can stand:
// raw invalid bytes and lone surrogate escapes are InvalidInput, never
// U+FFFD.
func TestDecodeRefusesInvalidUTF8(t *testing.T) {
	const keys = `"PartitionKey":"p","RowKey":"r"`
	for name, body := range map[string]string{
		"raw byte in a value":          `{` + keys + ",\"A\":\"a\xffb\"}",
		"raw byte in PartitionKey":     "{\"PartitionKey\":\"p\xff\",\"RowKey\":\"r\"}",
		"raw byte in RowKey":           "{\"PartitionKey\":\"p\",\"RowKey\":\"\xfe\"}",
		"raw byte in a name":           `{` + keys + ",\"A\xff\":1}",
		"raw byte in an annotation":    `{` + keys + ",\"A@odata.type\":\"Edm.String\xff\",\"A\":\"x\"}",
		"raw byte in odata.etag":       "{\"odata.etag\":\"W/\\\"\xff\\\"\"," + keys + "}",
		"raw byte in an ignored key":   "{\"odata.\xff\":1," + keys + "}",
		"truncated sequence":           `{` + keys + ",\"A\":\"\xe6\x97\"}",
		"overlong encoding":            `{` + keys + ",\"A\":\"\xc0\xaf\"}",
		"encoded surrogate":            `{` + keys + ",\"A\":\"\xed\xa0\x80\"}",
		"above U+10FFFF":               `{` + keys + ",\"A\":\"\xf4\x90\x80\x80\"}",
		"lone high surrogate":          `{` + keys + `,"A":"\ud800"}`,
		"lone low surrogate":           `{` + keys + `,"A":"\udc00x"}`,
		"high then letter":             `{` + keys + `,"A":"\ud800\u0041"}`,
		"two highs":                    `{` + keys + `,"A":"\ud800\ud800"}`,
		"reversed pair":                `{` + keys + `,"A":"\ude00\ud83d"}`,
		"lone surrogate in a key":      `{"PartitionKey":"\ud800","RowKey":"r"}`,
		"lone surrogate in a name":     `{` + keys + `,"A\udfff":1}`,
		"lone surrogate in annotation": `{` + keys + `,"A@odata.type":"\ud800","A":1}`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Decode([]byte(body))
			require.Error(t, err)
			require.Equal(t, edm.CodeInvalidInput, err.(*entityenc.Error).Code, err.Error())
			require.True(t, utf8Refusal(err), err.Error())
		})
	}
	// Valid UTF-8 and escapes of valid characters, pairs included, read
	// exactly.
	e, err := Decode([]byte(`{` + keys + `,"A":"\ud83d\ude00 é\u00e9 \u0000","B":"日本"}`))
	require.NoError(t, err)
	require.Equal(t, "😀 éé \x00", e.Properties["A"])
	require.Equal(t, "日本", e.Properties["B"])
}

// TestMalformedJSONMessages pins the syntax errors' words, which follow
// encoding/json's.
func TestMalformedJSONMessages(t *testing.T) {
	for body, want := range map[string]string{
		``:               "malformed JSON: unexpected end of input",
		`{"a":1`:         "malformed JSON: unexpected end of input",
		`{"a":"x`:        "malformed JSON: unexpected end of input",
		`x`:              "malformed JSON: invalid character 'x' looking for beginning of value",
		`{"a" 1}`:        "malformed JSON: invalid character '1' after object key",
		`{"a":1 "b":2}`:  `malformed JSON: invalid character '"' after object key:value pair`,
		`{"a":1,}`:       "malformed JSON: invalid character '}' looking for beginning of object key string",
		`{"a":-}`:        "malformed JSON: invalid character '}' in numeric literal",
		`{"a":01}`:       "malformed JSON: invalid character '1' after object key:value pair",
		`{"a":"\x"}`:     "malformed JSON: invalid character 'x' in string escape code",
		`{"a":"\u12x"}`:  `malformed JSON: invalid character 'x' in \u hexadecimal character escape`,
		"{\"a\":\"\t\"}": `malformed JSON: invalid character '\t' in string literal`,
		`{"a":tru}`:      "malformed JSON: invalid character '}' in literal true (expecting 'e')",
		`{"a":1}x`:       "malformed JSON: data after the entity object",
		`[1]`:            "an entity must be a JSON object",
		`{"a":[1]}`:      `the value of "a" is an object or array; entity values are scalars`,
	} {
		_, err := scanObject([]byte(body))
		require.Error(t, err, body)
		require.Equal(t, want, err.(*entityenc.Error).Message, body)
	}
}
