package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

func TestCSVReader(t *testing.T) {
	for _, tc := range []struct {
		in     string
		fields [][]string
		quoted [][]bool
		lines  []int
		err    string
	}{
		{in: "a,b\n", fields: [][]string{{"a", "b"}}, quoted: [][]bool{{false, false}}, lines: []int{1}},
		{in: "a,\"\"\r\n,x", fields: [][]string{{"a", ""}, {"", "x"}}, quoted: [][]bool{{false, true}, {false, false}}, lines: []int{1, 2}},
		{in: "\"a\nb\",\"c\"\"d\"\ne\n", fields: [][]string{{"a\nb", "c\"d"}, {"e"}}, quoted: [][]bool{{true, true}, {false}}, lines: []int{1, 3}},
		{in: "a\"b\n", err: "a quote inside an unquoted field (field 1)"},
		{in: "\"a\"b\n", err: "text after a closing quote (field 1)"},
		{in: "\"a\n", err: "a quoted field is not closed"},
	} {
		r := newCSVReader(strings.NewReader(tc.in), 0, 0)
		for i := 0; ; i++ {
			f, q, line, err := r.read()
			if err == io.EOF {
				require.Len(t, tc.fields, i, tc.in)
				require.Equal(t, int64(len(tc.in)), r.offset)
				break
			}
			if tc.err != "" {
				require.Equal(t, tablestore.CodeInvalidInput, tablestore.ErrorCode(err), tc.in)
				require.Contains(t, err.Error(), tc.err)
				break
			}
			require.NoError(t, err, tc.in)
			require.Equal(t, tc.fields[i], f, tc.in)
			require.Equal(t, tc.quoted[i], q, tc.in)
			require.Equal(t, tc.lines[i], line, tc.in)
		}
	}
}

// FuzzCSVReader: any input reads without panicking, offsets only grow
// and reach the input's length, and records start on increasing lines.
func FuzzCSVReader(f *testing.F) {
	for _, s := range []string{"a,b\n", "\"a\nb\",c\r\n", "\"\"\"\",\n\n", "a\"b", "\"x\"y,z\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := newCSVReader(strings.NewReader(in), 0, 0)
		var off int64
		last := 0
		for {
			_, _, line, err := r.read()
			if err == io.EOF {
				break
			}
			if err != nil && tablestore.ErrorCode(err) == "" {
				t.Fatalf("untyped error %v", err)
			}
			if r.offset <= off || line <= last {
				t.Fatalf("no progress: offset %d after %d, line %d after %d", r.offset, off, line, last)
			}
			off, last = r.offset, line
		}
		if r.offset != int64(len(in)) {
			t.Fatalf("read %d of %d bytes", r.offset, len(in))
		}
	})
}

// FuzzCSVRoundTrip: a record written by appendCSVRecord reads back as
// the same fields, with values and no-values told apart.
func FuzzCSVRoundTrip(f *testing.F) {
	f.Add("a", "", "x,\"y\"\n", true, false)
	f.Add(" ", "\r", "", false, true)
	f.Fuzz(func(t *testing.T, a, b, c string, pa, pb bool) {
		fields := []string{a, b, c}
		present := []bool{pa, pb, true}
		for i := range fields {
			if !present[i] {
				fields[i] = ""
			}
		}
		rec := appendCSVRecord(nil, fields, present)
		r := newCSVReader(strings.NewReader(string(rec)), 0, 0)
		got, quoted, line, err := r.read()
		require.NoError(t, err)
		require.Equal(t, 1, line)
		require.Equal(t, fields, got)
		for i := range fields {
			require.Equal(t, present[i], got[i] != "" || quoted[i], "field %d", i)
		}
		_, _, _, err = r.read()
		require.Equal(t, io.EOF, err)
	})
}
