package edm

import (
	"testing"
	"time"
)

func TestParseDateTime(t *testing.T) {
	utc := func(y int, mo time.Month, d, h, mi, s, ns int) int64 {
		return TicksFromTime(time.Date(y, mo, d, h, mi, s, ns, time.UTC))
	}
	tests := []struct {
		text   string
		syntax DateTimeSyntax
		ticks  int64
		code   Code
		reason string
	}{
		{"2021-08-31T15:41:38.3027816Z", JSONSyntax, utc(2021, 8, 31, 15, 41, 38, 302781600), "", ""},
		{"2021-08-31T15:41:38.3027816Z", LiteralSyntax, utc(2021, 8, 31, 15, 41, 38, 302781600), "", ""},
		{"2021-08-31t15:41:38z", JSONSyntax, utc(2021, 8, 31, 15, 41, 38, 0), "", ""},
		{"2021-08-31t15:41:38Z", LiteralSyntax, 0, CodeInvalidInput, "want YYYY-MM-DDThh:mm:ss"},
		{"2021-08-31T15:41:38z", LiteralSyntax, 0, CodeInvalidInput, "unexpected text after the time"},
		{"2021-08-31T15:41", JSONSyntax, utc(2021, 8, 31, 15, 41, 0, 0), "", ""},
		{"2021-08-31T15:41:38.123456789Z", JSONSyntax, utc(2021, 8, 31, 15, 41, 38, 123456700), "", ""},
		{"2021-08-31T15:41:38.12345678Z", LiteralSyntax, 0, CodeInvalidInput, "more than 7 fraction digits"},
		{"2021-08-31T15:41:38.1234567891Z", JSONSyntax, 0, CodeInvalidInput, ""},
		{"2021-08-31T15:41:38.Z", LiteralSyntax, 0, CodeInvalidInput, "missing fraction digits"},
		{"2021-08-31T15:41:38+02:00", JSONSyntax, utc(2021, 8, 31, 13, 41, 38, 0), "", ""},
		{"2021-08-31T15:41:38-14:00", LiteralSyntax, utc(2021, 9, 1, 5, 41, 38, 0), "", ""},
		{"2021-08-31T15:41:38+20:00", JSONSyntax, utc(2021, 8, 30, 19, 41, 38, 0), "", ""},
		{"2021-08-31T15:41:38+20:00", LiteralSyntax, 0, CodeInvalidInput, "malformed zone offset"},
		{"2021-02-29T00:00:00Z", JSONSyntax, 0, CodeInvalidInput, ""},
		{"2024-02-29T00:00:00Z", LiteralSyntax, utc(2024, 2, 29, 0, 0, 0, 0), "", ""},
		{"2021-13-01T00:00:00Z", LiteralSyntax, 0, CodeInvalidInput, "date or time out of range"},
		{"0001-01-01T00:00:00Z", LiteralSyntax, 0, "", ""},
		{"0001-01-01T00:00:00+01:00", JSONSyntax, 0, CodeOutOfRangeInput, ""},
		{"0001-01-01T00:00:00+01:00", LiteralSyntax, 0, CodeInvalidInput, "date out of range"},
		{"0000-12-31T23:00:00-02:00", JSONSyntax, utc(1, 1, 1, 1, 0, 0, 0), "", ""},
		{"0000-12-31T23:00:00-02:00", LiteralSyntax, 0, CodeInvalidInput, "date or time out of range"},
		{"9999-12-31T23:59:59.9999999Z", LiteralSyntax, MaxTicks, "", ""},
		{"9999-12-31T23:59:59-01:00", JSONSyntax, 0, CodeOutOfRangeInput, ""},
		{"", JSONSyntax, 0, CodeInvalidInput, ""},
		{"2021-08-31", LiteralSyntax, 0, CodeInvalidInput, "want YYYY-MM-DDThh:mm:ss"},
		{"2021-08-31T15:41:3x", LiteralSyntax, 0, CodeInvalidInput, "malformed seconds"},
	}
	for _, tc := range tests {
		got, err := ParseDateTime(tc.text, tc.syntax)
		if tc.code == "" {
			if err != nil || got != tc.ticks {
				t.Errorf("ParseDateTime(%q, %d) = %d, %v; want %d", tc.text, tc.syntax, got, err, tc.ticks)
			}
			continue
		}
		de, ok := err.(*DateTimeError)
		if !ok || de.Code != tc.code || de.Reason != tc.reason {
			t.Errorf("ParseDateTime(%q, %d) = %d, %#v; want code %s reason %q", tc.text, tc.syntax, got, err, tc.code, tc.reason)
		}
	}
}

// TestDaysFromCivil holds the hand calendar against package time on every
// day of several 400-year eras' worth of boundaries.
func TestDaysFromCivil(t *testing.T) {
	epoch := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, year := range []int{0, 1, 2, 99, 100, 399, 400, 401, 1600, 1601, 1899, 1900, 1970, 2000, 2024, 2100, 9999} {
		for d := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == year; d = d.AddDate(0, 0, 1) {
			want := (d.Unix() - epoch.Unix()) / 86400
			if got := daysFromCivil(d.Year(), int(d.Month()), d.Day()); got != want {
				t.Fatalf("daysFromCivil(%s) = %d, want %d", d.Format("2006-01-02"), got, want)
			}
		}
	}
}

func TestFormatDateTime(t *testing.T) {
	for _, tc := range []struct {
		ticks int64
		want  string
	}{
		{0, "0001-01-01T00:00:00Z"},
		{-5, "0001-01-01T00:00:00Z"},
		{MaxTicks, "9999-12-31T23:59:59.9999999Z"},
		{MaxTicks + 1, "9999-12-31T23:59:59.9999999Z"},
		{UnixEpochTicks + 1_000_000, "1970-01-01T00:00:00.1Z"},
		{UnixEpochTicks + 1230, "1970-01-01T00:00:00.000123Z"},
	} {
		if got := FormatDateTime(tc.ticks); got != tc.want {
			t.Errorf("FormatDateTime(%d) = %s, want %s", tc.ticks, got, tc.want)
		}
	}
	at := time.Date(2021, 8, 31, 15, 41, 38, 302781600, time.FixedZone("x", 3600))
	if got, want := FormatDateTimeJSON(at), "2021-08-31T14:41:38.3027816Z"; got != want {
		t.Errorf("FormatDateTimeJSON = %s, want %s", got, want)
	}
	if !InAzureRange(time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)) || InAzureRange(time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC)) ||
		!InAzureRange(time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)) || InAzureRange(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Error("InAzureRange's bounds are wrong")
	}
}

func TestGUID(t *testing.T) {
	const text = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
	g, ok := ParseGUID("0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")
	if !ok || g.String() != text || g[0] != 0x0f || g[15] != 0xf0 {
		t.Fatalf("ParseGUID = %v %v", g, ok)
	}
	for _, bad := range []string{"", text[:35], text + "0", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1fg", "0f1e2d3c04b5a-6978-8796-a5b4c3d2e1f0", "0f1e2d3-c4b5a-6978-8796-a5b4c3d2e1f0"} {
		if _, ok := ParseGUID(bad); ok {
			t.Errorf("ParseGUID(%q) succeeded", bad)
		}
	}
}

func TestType(t *testing.T) {
	for ty := TypeString; ty <= TypeBinary; ty++ {
		if got, ok := ParseType(ty.String()); !ok || got != ty {
			t.Errorf("ParseType(%s) = %v, %v", ty, got, ok)
		}
	}
	if _, ok := ParseType("Edm.Invalid"); ok || Type(0).String() != "Edm.Invalid" || Type(99).String() != "Edm.Invalid" {
		t.Error("invalid types are not refused")
	}
}

// FuzzParseDateTime checks that parsing never panics and that every
// accepted text formats back to text that parses to the same ticks.
func FuzzParseDateTime(f *testing.F) {
	for _, s := range []string{"2021-08-31T15:41:38.3027816Z", "0000-12-31T23:00:00-02:00", "9999-12-31T23:59:59.9999999Z", "2021-08-31t15:41z"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, json bool) {
		syntax := LiteralSyntax
		if json {
			syntax = JSONSyntax
		}
		ticks, err := ParseDateTime(s, syntax)
		if err != nil {
			if _, ok := err.(*DateTimeError); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		if ticks < 0 || ticks > MaxTicks {
			t.Fatalf("%q parsed to %d, out of range", s, ticks)
		}
		back, err := ParseDateTime(FormatDateTime(ticks), LiteralSyntax)
		if err != nil || back != ticks {
			t.Fatalf("%q: %d formats as %s, which parses to %d, %v", s, ticks, FormatDateTime(ticks), back, err)
		}
	})
}
