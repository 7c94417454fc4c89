package filter

import (
	"bytes"
	"github.com/tablestore/tablestore/edm"
	"math"
	"math/rand"
	"testing"
	"time"
)

func TestParseDateTimeTicks(t *testing.T) {
	tests := []struct {
		text  string
		ticks int64
	}{
		{"0001-01-01T00:00:00Z", 0},
		{"0001-01-01T00:00:00.0000001Z", 1},
		{"1970-01-01T00:00:00Z", 621_355_968_000_000_000},
		{"1970-01-01T00:00:00", 621_355_968_000_000_000},
		{"1970-01-01T00:00", 621_355_968_000_000_000},
		{"1970-01-01T01:00:00+01:00", 621_355_968_000_000_000},
		{"1969-12-31T19:00:00-05:00", 621_355_968_000_000_000},
		{"1970-01-01T00:00:00.5Z", 621_355_968_005_000_000},
		{"9999-12-31T23:59:59.9999999Z", edm.MaxTicks},
	}
	for _, tc := range tests {
		got, msg := parseDateTime(tc.text)
		if msg != "" || got != tc.ticks {
			t.Errorf("parseDateTime(%q) = %d, %q; want %d", tc.text, got, msg, tc.ticks)
		}
	}
	// Against the time package for a real timestamp.
	ts := time.Date(2013, 8, 2, 17, 37, 43, 900434800, time.UTC)
	want := ts.Unix()*edm.TicksPerSecond + edm.UnixEpochTicks + int64(ts.Nanosecond()/100)
	if got, _ := parseDateTime("2013-08-02T17:37:43.9004348Z"); got != want {
		t.Errorf("got %d, want %d", got, want)
	}
	for _, bad := range []string{
		"", "2013", "2013-08-02", "2013-08-02T17", "2013-08-02T17:37:4", "2013-08-02T17:37:43.", "2013-8-02T17:37:43Z",
		"2013-08-02t17:37:43Z", "2013-08-02T17:37:43 Z", "2013-08-02T17:37:43+0100", "2013-08-02T17:37:43+15:00",
		"2013-08-02T17:37:43+01:60", "0000-01-01T00:00:00Z", "2013-00-01T00:00:00Z", "2013-08-32T00:00:00Z",
		"1900-02-29T00:00:00Z", "+2013-08-02T17:37:43Z", "2013-08-02T17:37:43.12345678Z", "２０13-08-02T17:37:43Z",
	} {
		if ticks, msg := parseDateTime(bad); msg == "" {
			t.Errorf("parseDateTime(%q) = %d, want an error", bad, ticks)
		}
	}
}

func TestFormatDateTime(t *testing.T) {
	tests := map[int64]string{
		0:                           "0001-01-01T00:00:00Z",
		1:                           "0001-01-01T00:00:00.0000001Z",
		621_355_968_005_000_000:     "1970-01-01T00:00:00.5Z",
		edm.MaxTicks:                "9999-12-31T23:59:59.9999999Z",
		635_110_618_639_004_348:     "2013-08-02T17:37:43.9004348Z",
		635_110_618_639_004_348 - 8: "2013-08-02T17:37:43.900434Z",
	}
	for ticks, want := range tests {
		if got := edm.FormatDateTime(ticks); got != want {
			t.Errorf("FormatDateTime(%d) = %q, want %q", ticks, got, want)
		}
	}
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 10000; i++ {
		ticks := r.Int63n(edm.MaxTicks + 1)
		got, msg := parseDateTime(edm.FormatDateTime(ticks))
		if msg != "" || got != ticks {
			t.Fatalf("ticks %d formatted as %q parse back as %d (%s)", ticks, edm.FormatDateTime(ticks), got, msg)
		}
	}
}

// TestLiteralRoundTrip checks that FormatLiteral writes text that
// ParseLiteral reads back to the same Value, for every type.
func TestLiteralRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	randBytes := func(n int) []byte {
		b := make([]byte, n)
		r.Read(b)
		return b
	}
	var values []edm.Value
	for i := 0; i < 2000; i++ {
		values = append(values,
			edm.Value{Type: edm.TypeString, Bytes: []byte(string(randBytes(r.Intn(8))) + "'")},
			edm.Value{Type: edm.TypeInt32, Int: int64(int32(r.Uint32()))},
			edm.Value{Type: edm.TypeInt64, Int: int64(r.Uint64())},
			edm.Value{Type: edm.TypeDouble, Float: math.Float64frombits(r.Uint64())},
			edm.Value{Type: edm.TypeDouble, Float: r.NormFloat64() * 1e6},
			edm.Value{Type: edm.TypeBoolean, Int: int64(r.Intn(2))},
			edm.Value{Type: edm.TypeDateTime, Int: r.Int63n(edm.MaxTicks + 1)},
			edm.Value{Type: edm.TypeGuid, Bytes: randBytes(16)},
			edm.Value{Type: edm.TypeBinary, Bytes: randBytes(r.Intn(10))},
		)
	}
	values = append(values,
		edm.Value{Type: edm.TypeInt32, Int: math.MinInt32}, edm.Value{Type: edm.TypeInt64, Int: math.MinInt64},
		edm.Value{Type: edm.TypeDouble, Float: math.MaxFloat64}, edm.Value{Type: edm.TypeDouble, Float: -math.SmallestNonzeroFloat64},
		edm.Value{Type: edm.TypeDouble, Float: math.Copysign(0, -1)}, edm.Value{Type: edm.TypeString, Bytes: []byte{}},
	)
	for _, v := range values {
		if v.Type == edm.TypeDouble && (math.IsNaN(v.Float) || math.IsInf(v.Float, 0)) {
			continue
		}
		text := FormatLiteral(v)
		var s Scanner
		s.Init(text)
		_, tok, lit := s.Scan()
		if _, end, _ := s.Scan(); lit != text || end != TokEOF {
			t.Fatalf("%s value %v: literal %q does not scan as one token", v.Type, v, text)
		}
		got, err := ParseLiteral(tok, lit)
		if err != nil {
			t.Fatalf("%s value %v: literal %q fails: %v", v.Type, v, text, err)
		}
		if got.Type != v.Type || got.Int != v.Int || math.Float64bits(got.Float) != math.Float64bits(v.Float) || !bytes.Equal(got.Bytes, v.Bytes) {
			t.Fatalf("%s value %v: literal %q parses as %v", v.Type, v, text, got)
		}
	}
}

func TestParseLiteralValues(t *testing.T) {
	tests := []struct {
		kind Token
		raw  string
		want edm.Value
	}{
		{TokString, "'O''Connor'", edm.Value{Type: edm.TypeString, Bytes: []byte("O'Connor")}},
		{TokString, "''''", edm.Value{Type: edm.TypeString, Bytes: []byte("'")}},
		{TokInt32, "-2147483648", edm.Value{Type: edm.TypeInt32, Int: math.MinInt32}},
		{TokInt64, "5l", edm.Value{Type: edm.TypeInt64, Int: 5}},
		{TokDouble, "3D", edm.Value{Type: edm.TypeDouble, Float: 3}},
		{TokDouble, "1.5E-3d", edm.Value{Type: edm.TypeDouble, Float: 0.0015}},
		{TokBoolean, "false", edm.Value{Type: edm.TypeBoolean, Int: 0}},
		{TokGuid, "guid'00112233-4455-6677-8899-AABBCCDDEEFF'", edm.Value{Type: edm.TypeGuid, Bytes: []byte{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}}},
		{TokBinary, "binary'00fF'", edm.Value{Type: edm.TypeBinary, Bytes: []byte{0x00, 0xff}}},
	}
	for _, tc := range tests {
		got, err := ParseLiteral(tc.kind, tc.raw)
		if err != nil || !equalValue(got, tc.want) {
			t.Errorf("ParseLiteral(%s, %q) = %v, %v; want %v", tc.kind, tc.raw, got, err, tc.want)
		}
	}
	// Bytes never alias the input.
	raw := "'abc'"
	v, _ := ParseLiteral(TokString, raw)
	v.Bytes[0] = 'x'
	if raw != "'abc'" {
		t.Error("Bytes aliases the literal text")
	}
	for _, bad := range []struct {
		kind Token
		raw  string
	}{
		{TokString, "'a''"}, {TokString, "abc"}, {TokInt32, "1L"}, {TokInt64, "1"}, {TokDouble, "0x1p3"},
		{TokDouble, "inf"}, {TokDouble, "NaN"}, {TokDouble, "1_000.0"}, {TokBoolean, "True"}, {TokNull, "null"},
		{TokGuid, "guid''"}, {TokBinary, "X'0''0'"}, {TokIdent, "A"}, {TokDateTime, "guid'x'"},
	} {
		if _, err := ParseLiteral(bad.kind, bad.raw); err == nil {
			t.Errorf("ParseLiteral(%s, %q) succeeded", bad.kind, bad.raw)
		} else if err.(*Error).Code != edm.CodeInvalidInput {
			t.Errorf("ParseLiteral(%s, %q): code %s", bad.kind, bad.raw, err.(*Error).Code)
		}
	}
}
