package server

import "testing"

// TestCheckJSONText: invalid UTF-8 and lone surrogate escapes are
// refused wherever they are; everything else passes to the decoder.
func TestCheckJSONText(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{`{"a":"b"}`, true},
		{`{"a":"\u00e9\ud83d\ude00"}`, true}, // a pair
		{`{"a":"\\ud800"}`, true},            // an escaped backslash, then text
		{`{"a":"\"\ud800"}`, false},          // an escaped quote does not end the string
		{`{"\ud800":"x"}`, false},            // a lone high surrogate in a key
		{`{"a":"\udc00"}`, false},            // a lone low surrogate
		{`{"a":"\ud800\u0041"}`, false},      // a high surrogate, then no low one
		{`{"a":"\ud800"}`, false},            // at the end of the string
		{`{"a":"\ud800\udbff"}`, false},      // two high surrogates
		{`{"a":"\uD83D\uDE00"}`, true},       // upper-case hex
		{`{"a":"\u12"}`, true},               // the decoder reports a short escape
		{"{\"a\":\"\xff\"}", false},          // an invalid byte in a value
		{"{\"k\xc3\":1}", false},             // a truncated sequence in a key
		{"{\"a\":\"\xed\xa0\x80\"}", false},  // a surrogate encoded as UTF-8
		{`{"a":1,"b":[true,null,{"c":"d"}]}`, true},
		{`{"a":"x"} \ud800`, true}, // outside strings: the decoder's to refuse
	} {
		if err := checkJSONText([]byte(tc.in)); (err == nil) != tc.ok {
			t.Errorf("%q: %v", tc.in, err)
		}
	}
}
