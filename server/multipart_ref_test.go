package server

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// splitMultipartByLines is splitMultipart as it was before it searched
// for the delimiter, reading every line in turn; FuzzSplitMultipart
// holds the two equal.
func splitMultipartByLines(body []byte, boundary string, maxParts int, parts []mimePart) ([]mimePart, error) {
	delim := []byte("--" + boundary)
	parts = parts[:0]
	l := lines{b: body}
	partStart := -1 // where the current part's first line starts
	prevEnd := 0    // where the line before the current one ends, its newline excluded
	end := func(at int) {
		if partStart >= 0 {
			parts = append(parts, newPart(body[partStart:max(partStart, at)]))
		}
	}
	for {
		line, start, ok := l.next()
		if !ok {
			return nil, errBadBatch("the multipart body is not closed by its boundary")
		}
		t := line
		if bytes.HasPrefix(line, delim) { // only a delimiter line needs trimming
			t = bytes.TrimRight(line, " \t")
		}
		switch {
		case len(t) == len(delim)+2 && bytes.HasPrefix(t, delim) && bytes.HasSuffix(t, []byte("--")):
			end(prevEnd)
			return parts, nil
		case bytes.Equal(t, delim):
			end(prevEnd)
			if len(parts) > maxParts {
				return parts, nil
			}
			partStart = l.off
		}
		prevEnd = start + len(line)
	}
}

// FuzzSplitMultipart: splitMultipart finds the parts, the errors and the
// early stop that reading every line finds, for any body, boundary and
// part limit.
func FuzzSplitMultipart(f *testing.F) {
	body, _ := typicalBatch("p", 3)
	f.Add(body, batchBoundary, uint8(1))
	f.Add(body, "changeset_c0", uint8(100))
	f.Add([]byte("pre\n--b\nA: 1\n\nx\n--b \t\r\n\r\n--bb\n--b--x\n--b--\t\nafter"), "b", uint8(5))
	f.Add([]byte("--b\r\n\r\n--b\r\r\n--b\n--b--"), "b", uint8(0))
	f.Add([]byte("x--b\n--b\n\n--b--"), "b", uint8(2))
	f.Add([]byte("--b"), "b", uint8(1))
	f.Add([]byte("a_b\n--a_b\n_--a_b\n\n--a_bc\nx_y\r\n--a_b \r\n--a_b--"), "a_b", uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, boundary string, limit uint8) {
		if boundary == "" {
			return // boundaryOf gives none
		}
		got, gotErr := splitMultipart(body, boundary, int(limit), nil)
		want, wantErr := splitMultipartByLines(body, boundary, int(limit), nil)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("errors: %v, by lines %v", gotErr, wantErr)
		}
		if len(got) != len(want) {
			t.Fatalf("%d parts, by lines %d", len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if !bytes.Equal(g.header, w.header) || !bytes.Equal(g.body, w.body) || g.bad != w.bad {
				t.Fatalf("part %d: %q %q %v, by lines %q %q %v", i, g.header, g.body, g.bad, w.header, w.body, w.bad)
			}
		}
	})
}

// FuzzDelimSearch: delimSearch finds the delimiter bytes.Index finds,
// whichever byte of the boundary it searches for, after any number of
// false hits.
func FuzzDelimSearch(f *testing.F) {
	body, _ := typicalBatch("p", 3)
	f.Add(body, batchBoundary)
	f.Add(body, "changeset_c0")
	f.Add([]byte(strings.Repeat("_", 300)+"\n--a_b"), "a_b")
	f.Add([]byte(strings.Repeat("a_\n--a_", 50)+"\n--a_b"), "a_b")
	f.Add([]byte("\n--x_"), "x_")
	f.Add([]byte("--x_\n--x"), "x_")
	f.Add([]byte("q\n--b.c+d\n--b.c+"), "b.c+")
	f.Fuzz(func(t *testing.T, s []byte, boundary string) {
		pat := []byte("\n--" + boundary)
		d := newDelimSearch(pat)
		if got, want := d.index(s), bytes.Index(s, pat); got != want {
			t.Fatalf("%q in %q: at %d (searching for byte %d), bytes.Index %d", pat, s, got, d.anchor, want)
		}
	})
}

// TestDelimSearchFalseHits: a body full of the searched byte, where the
// search hands over to bytes.Index, finds the delimiter where it is.
func TestDelimSearchFalseHits(t *testing.T) {
	pat := []byte("\n--changeset_1")
	d := newDelimSearch(pat)
	if d.anchor != len("\n--changeset") {
		t.Fatalf("searches for pat[%d], want the underscore", d.anchor)
	}
	for _, n := range []int{0, 1, 7, 100, 5000} {
		s := []byte(strings.Repeat("_", n) + "\n--changeset_0" + strings.Repeat("_\n", n) + string(pat) + "x")
		if got, want := d.index(s), bytes.Index(s, pat); got != want || want < 0 {
			t.Fatalf("%d false hits: at %d, bytes.Index %d", n, got, want)
		}
	}
}
