package wire

import (
	"strings"
	"testing"
)

// TestTopMembers: the scan counts top-level members only, finds the keys
// (escaped spellings included), and refuses what is not a well-formed
// object, nesting deeper than 64 included.
func TestTopMembers(t *testing.T) {
	deep := strings.Repeat("[", 66) + strings.Repeat("]", 66)
	for _, tc := range []struct {
		in   string
		want Top
		ok   bool
	}{
		{`{}`, Top{}, true},
		{` { } `, Top{}, true},
		{`{"PartitionKey":"a","RowKey":"b","x":{"y":[1,2,{"z":null}]}}`, Top{Members: 3, PartitionKey: true, RowKey: true}, true},
		{`{"Partition\u004bey":"a","n":1.5}`, Top{Members: 2, PartitionKey: true}, true},
		{`{"a":"x\"y","RowKey":true}`, Top{Members: 2, RowKey: true}, true},
		{`{"in":{"PartitionKey":1}}`, Top{Members: 1}, true},
		{`[1]`, Top{}, false},
		{`{"a":1`, Top{Members: 1}, false},
		{`{"a" 1}`, Top{Members: 1}, false},
		{`{"a":}`, Top{Members: 1}, false},
		{`{"a":1,}`, Top{Members: 1}, false},
		{`{"a":` + deep + `}`, Top{Members: 1}, false},
		{`{"a":` + deep[1:len(deep)-1] + `}`, Top{Members: 1}, true},
	} {
		got, ok := TopMembers([]byte(tc.in))
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("TopMembers(%.40q) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
