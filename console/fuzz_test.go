package console

import (
	"testing"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

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

// FuzzParseDuration holds the settings forms' durations to a duration
// or an InvalidInput error, never a panic or a negative duration, and
// what formatDuration writes to reading back the same duration.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"7d", "1.5d", "36h", "1h30m", "0", "", "-1d", "1e9d", "90m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration("x", s)
		if err != nil {
			if tablestore.ErrorCode(err) != edm.CodeInvalidInput {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if d < 0 {
			t.Fatalf("%q: %v", s, d)
		}
		back, err := parseDuration("x", formatDuration(d))
		if err != nil || back != d {
			t.Fatalf("%q: %v written %q read %v (%v)", s, d, formatDuration(d), back, err)
		}
	})
}
