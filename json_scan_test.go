package tablestore

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzScanFlatJSON: wherever the fast path answers, it answers exactly
// what the token-by-token scan does (which also means it accepts no
// malformed JSON, since the token scan rejects that).
func FuzzScanFlatJSON(f *testing.F) {
	for _, s := range []string{
		`{"PartitionKey":"a","RowKey":"b","N":1,"F":1.5e3,"B":true,"Z":null,"S":"x\u00e9\"\\"}`,
		` { "odata.etag" : "W/\"x\"", "A@odata.type":"Edm.Int64", "A":"5" } `,
		`{"a":1,"a":2}`, `{"a":{"b":1}}`, `{"a":[1]}`, `[1]`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}",
		`{"x@odata.type":1,"x":1}`, `{"odata.id":"1","odata.id":"2"}`, `{}`, `{"a":1}{}`, `{"a":-0.0E+1}`,
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":tru}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\t\"}",
		`{"a":1,}`, `{"a" 1}`, `{,"a":1}`, `{"a":1 "b":2}`, ` {} `, `{"a":nulls}`, `{"a":-}`, `{"a":1}x`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v1, t1, e1, ok := scanFlatJSON(data)
		if !ok {
			return
		}
		v2, t2, e2, err := scanJSONTokens(data)
		require.NoError(t, err, "%q", data)
		require.Equal(t, v2, v1, "%q", data)
		require.Equal(t, t2, t1, "%q", data)
		require.Equal(t, e2, e1, "%q", data)
	})
}

// TestScanFlatJSONTakesCommonInput checks that ordinary entities take
// the fast path.
func TestScanFlatJSONTakesCommonInput(t *testing.T) {
	for _, s := range []string{
		`{"PartitionKey":"a","RowKey":"b","N":-1.5e-3,"B":false,"Z":null,"S":"x\u00e9\"\\\/\b\f\n\r\t"}`,
		` { "odata.etag" : "W/\"x\"", "A@odata.type":"Edm.Int64", "A":"5" } ` + "\n",
		`{}`,
	} {
		_, _, _, ok := scanFlatJSON([]byte(s))
		require.True(t, ok, s)
	}
}
