package main

import (
	"strings"
	"testing"
)

// FuzzDocSource: any input gives records or an error, never a panic,
// each record ending past the one before; isJSONDocument never panics.
func FuzzDocSource(f *testing.F) {
	for _, s := range []string{
		`[{"PartitionKey":"p","RowKey":"1"},` + "\n" + `{"PartitionKey":"p","RowKey":"2"}]`,
		`{"odata.metadata":"m","value":[{"PartitionKey":"p","RowKey":"1"}]}`,
		`{"x":1,"value":{}}`,
		`[1, "a", null]`,
	} {
		f.Add(s, int64(0))
	}
	f.Fuzz(func(t *testing.T, in string, skip int64) {
		_ = isJSONDocument([]byte(in), true)
		s := newDocSource(strings.NewReader(in), skip)
		var last int64 = -1
		for range len(in) + 1 {
			rec, err := s.next()
			if err != nil {
				return
			}
			if rec.end <= last || rec.end <= skip {
				t.Fatalf("record ends at %d after %d (skip %d)", rec.end, last, skip)
			}
			last = rec.end
			s.parse(rec)
		}
	})
}
