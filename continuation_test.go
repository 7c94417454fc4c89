package tablestore

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/tablestore/tablestore/internal/plan"
)

func TestContinuationRoundTrip(t *testing.T) {
	for _, k := range []plan.Key{
		{PartitionKey: "", RowKey: "x"},
		{PartitionKey: "p", RowKey: ""},
		{PartitionKey: "Sales", RowKey: "2024-01-01"},
		{PartitionKey: "ünïcødé 日本", RowKey: "🙂 with spaces "},
		{PartitionKey: strings.Repeat("p", 1024), RowKey: strings.Repeat("r", 1024)},
	} {
		for _, reverse := range []bool{false, true} {
			got, rev, table, err := decodeContinuation(encodeContinuation(k, reverse, "42"))
			if err != nil || got != k || rev != reverse || table != "42" {
				t.Fatalf("round trip of %q (reverse %v): got %q, %v, %v", k, reverse, got, rev, err)
			}
		}
		tok := encodeContinuation(k, false, "")
		p := &Page{Continuation: tok}
		if p.NextPartitionKey() != k.PartitionKey || p.NextRowKey() != k.RowKey {
			t.Fatalf("Next pair of %q: got (%q, %q)", k, p.NextPartitionKey(), p.NextRowKey())
		}
		fromPair, err := ContinuationFromNext(k.PartitionKey, k.RowKey)
		if err != nil || fromPair != tok {
			t.Fatalf("ContinuationFromNext(%q): got %q, %v; want %q", k, fromPair, err, tok)
		}
	}
}

func TestContinuationFromNext(t *testing.T) {
	tok, err := ContinuationFromNext("", "")
	if tok != "" || err != nil {
		t.Fatalf("empty pair: got %q, %v", tok, err)
	}
	for _, pair := range [][2]string{
		{"a\x00b", "r"},
		{"p", "r\n"},
		{"p/q", "r"},
		{"p", "r#"},
		{"p", "\xff"},
		{"p", strings.Repeat("r", maxContinuationKeyBytes+1)},
	} {
		_, err := ContinuationFromNext(pair[0], pair[1])
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("ContinuationFromNext(%q, %q): got %v, want InvalidInput", pair[0], pair[1], err)
		}
	}
	if p := (&Page{}); p.NextPartitionKey() != "" || p.NextRowKey() != "" {
		t.Fatalf("complete page has a next position")
	}
}

// forge builds a token with a valid checksum around any body.
func forge(body []byte) string {
	b := append([]byte(nil), body...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, crc32c))
	return base64.RawURLEncoding.EncodeToString(b)
}

func TestBadContinuation(t *testing.T) {
	good := encodeContinuation(plan.Key{PartitionKey: "p", RowKey: "r"}, false, "")
	flipped := []byte(good)
	flipped[3] ^= 1
	for name, tok := range map[string]string{
		"not base64":          "!!!",
		"padding":             good + "==",
		"too short":           base64.RawURLEncoding.EncodeToString([]byte{1, 0}),
		"flipped bit":         string(flipped),
		"truncated":           good[:len(good)-2],
		"wrong version":       forge([]byte{9, 1, 'p', 'r'}),
		"length past end":     forge([]byte{1, 9, 'p', 'r'}),
		"overlong varint":     forge([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}),
		"control in key":      forge([]byte{1, 2, 'p', 0, 'r'}),
		"table escape":        forge([]byte{1, 1, 0xff, 0x00, 0x00, 0x00, 0x01}),
		"invalid utf-8":       forge([]byte{1, 1, 0xc3, 'r'}),
		"forbidden character": forge([]byte{1, 1, '?', 'r'}),
		"huge":                strings.Repeat("A", 1<<16),
	} {
		_, _, _, err := decodeContinuation(tok)
		if !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: got %v, want InvalidInput", name, err)
		}
	}
}

// FuzzContinuation checks that decoding never panics, accepts only
// positions that obey the key rules, and that accepted tokens re-encode to
// a token decoding to the same position.
func FuzzContinuation(f *testing.F) {
	f.Add(encodeContinuation(plan.Key{PartitionKey: "p", RowKey: "r"}, false, ""))
	f.Add(encodeContinuation(plan.Key{PartitionKey: "", RowKey: "x"}, true, "7"))
	f.Add("")
	f.Add("AQ")
	f.Add(forge([]byte{1, 1, 'p', 0, 'r'}))
	f.Fuzz(func(t *testing.T, tok string) {
		k, reverse, table, err := decodeContinuation(tok)
		if err != nil {
			if !errors.Is(err, ErrInvalidInput) {
				t.Fatalf("error %v is not InvalidInput", err)
			}
			return
		}
		if checkContinuationKey(k.PartitionKey) != "" || checkContinuationKey(k.RowKey) != "" {
			t.Fatalf("accepted a position that breaks the key rules: %q", k)
		}
		again, rev, againTable, err := decodeContinuation(encodeContinuation(k, reverse, table))
		if err != nil || again != k || rev != reverse || againTable != table {
			t.Fatalf("re-encoding %q gives %q, %v", k, again, err)
		}
	})
}
