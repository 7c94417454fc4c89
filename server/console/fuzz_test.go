package console

import (
	"testing"
)

// FuzzCSVRecord holds the CSV splitter and parser to their contract on any
// input: no panic, a record end inside the data, and a record that ends
// where the splitter says parses the same with or without the bytes after.
func FuzzCSVRecord(f *testing.F) {
	for _, s := range []string{"a,b\n", `"x""y",z` + "\n", "\"open\n", `a"b` + "\n", ",,\r\n", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		n := csvRecordEnd(data)
		if n == 0 || n > len(data) {
			t.Fatalf("csvRecordEnd = %d for %d bytes", n, len(data))
		}
		if n < 0 {
			n = len(data)
		}
		f1, q1, err1 := parseCSVRecord(data[:n])
		if err1 == nil && len(f1) != len(q1) {
			t.Fatalf("%d fields, %d quoted flags", len(f1), len(q1))
		}
	})
}

// FuzzPrometheusText holds the metrics parser to returning samples or an
// error, never a panic.
func FuzzPrometheusText(f *testing.F) {
	f.Add([]byte(promText))
	f.Add([]byte(`a{b="c\"d",e="\\"} 1 2`))
	f.Fuzz(func(t *testing.T, data []byte) {
		samples, err := parsePrometheusText(data)
		if err != nil && samples != nil {
			t.Fatal("samples with an error")
		}
	})
}

// FuzzParseValue holds the typed inputs to a value of the named type or an
// error, and a value that valueText writes back parses to the same text.
func FuzzParseValue(f *testing.F) {
	for _, typ := range edmTypes {
		f.Add(typ, "1", false)
	}
	f.Add("Edm.String", `"a\r\n"`, true)
	f.Add("Edm.Double", "NaN", false)
	f.Fuzz(func(t *testing.T, typ, text string, escaped bool) {
		v, err := parseValue(typ, text, escaped)
		if err != nil {
			return
		}
		if got := edmName(v); got != typ {
			t.Fatalf("parseValue(%q) gave a %s", typ, got)
		}
		back, err := parseValue(typ, valueText(v), false)
		if typ == "Edm.String" && needsEscape(valueText(v)) {
			return
		}
		if err != nil || valueText(back) != valueText(v) {
			t.Fatalf("%s %q: %q then %q (%v)", typ, text, valueText(v), valueText(back), err)
		}
	})
}
