package wire

import (
	"net/url"
	"strings"
	"testing"
)

// pathReference is the REST server's entity path as it was first
// written, with url.PathEscape.
func pathReference(table, pk, rk string) string {
	lit := func(s string) string {
		return "'" + strings.ReplaceAll(url.PathEscape(strings.ReplaceAll(s, "'", "''")), "%27", "'") + "'"
	}
	return table + "(PartitionKey=" + lit(pk) + ",RowKey=" + lit(rk) + ")"
}

func TestEntityPath(t *testing.T) {
	var all strings.Builder
	for c := 0; c < 256; c++ {
		all.WriteByte(byte(c))
	}
	cases := [][2]string{
		{"", ""}, {"a", "b"}, {"it's", "''"}, {"a/b;c,d?e", "$&+:=@-_.~"},
		{"%27", "%"}, {"héllo wörld", "\x00\x7f\xff"}, {all.String(), "x"},
	}
	for _, c := range cases {
		want := pathReference("People", c[0], c[1])
		if got := EntityPath("People", c[0], c[1]); got != want {
			t.Errorf("EntityPath(%q, %q) = %q, want %q", c[0], c[1], got, want)
		}
	}
}

func FuzzEntityPath(f *testing.F) {
	f.Add("t", "a'b", "c/d%e")
	f.Fuzz(func(t *testing.T, table, pk, rk string) {
		want := pathReference(table, pk, rk)
		if got := EntityPath(table, pk, rk); got != want {
			t.Fatalf("EntityPath(%q, %q, %q) = %q, want %q", table, pk, rk, got, want)
		}
		// The keys' part needs no escaping in a JSON string.
		keys := string(appendKeysPath(nil, pk, rk))
		if got := string(AppendString(nil, keys)); got != `"`+keys+`"` {
			t.Fatalf("keys path %q escaped as %s", keys, got)
		}
	})
}
