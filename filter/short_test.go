package filter

import (
	"github.com/tablestore/tablestore/edm"
	"strings"
	"testing"
)

// validFilters compile without error.
var validFilters = []string{
	`Age gt 30`,
	`Age ge -30`,
	`30 lt Age`,
	`Active`,
	`not Active`,
	`not not Active`,
	`(Active)`,
	`((((A eq 1))))`,
	`A or B and C`,
	`A and B or C`,
	`not A and B or not (C or D)`,
	`PartitionKey eq 'p1' and RowKey ge 'a' and RowKey lt 'b'`,
	`Name eq 'O''Connor'`,
	`Name eq ''`,
	`Name eq ''''`,
	`Name eq 'with spaces and ) ( eq'`,
	`Name eq 'ünïcødé 你好'`,
	`Größe gt 3`,
	`_private eq 1`,
	`X1 eq 1`,
	`X eq 2147483647`,
	`X eq -2147483648`,
	`X eq 007`,
	`X eq 9223372036854775807L`,
	`X eq -9223372036854775808L`,
	`X eq 5l`,
	`X eq 1.5`,
	`X eq -1.5`,
	`X eq 2.0`,
	`X eq 1e10`,
	`X eq 1E10`,
	`X eq 1.5E-3`,
	`X eq 1e+3`,
	`X eq 3D`,
	`X eq 3d`,
	`X eq 3.0d`,
	`X eq 1e5D`,
	`X eq 3000000000D`,
	`X eq true`,
	`X eq false`,
	`true eq X`,
	`X eq datetime'2008-07-10T00:00:00Z'`,
	`X eq datetime'2008-07-10T00:00:00'`,
	`X eq datetime'2008-07-10T00:00'`,
	`X eq datetime'2013-08-02T17:37:43.9004348Z'`,
	`X eq datetime'2013-08-02T17:37:43.9Z'`,
	`X eq datetime'2013-08-02T17:37:43+05:30'`,
	`X eq guid'a455c695-df98-5678-aaaa-81d3367e5a34'`,
	`X eq guid'A455C695-DF98-5678-AAAA-81D3367E5A34'`,
	`X eq X'0A0B'`,
	`X eq x'0a0b'`,
	`X eq binary'0a0b'`,
	`X eq X''`,
	"\tX\neq\r\n1 ",
	`(A eq 1)and(B eq 2)`,
	`A eq'x'`,
	`A eq-1`,
	`not(A)`,
	`Eq eq 1`,
	`And`,
	`True`,
	`datetime eq 1`,
	`guid eq 1`,
	`X`,
	`x`,
	`binary`,
}

// invalidFilters fail with the given code at the given position, with a
// message containing msg.
var invalidFilters = []struct {
	src  string
	code edm.Code
	pos  int
	msg  string
}{
	{`Age gt and X`, edm.CodeInvalidInput, 7, "expected property name or literal, found 'and'"},
	{`Age gt`, edm.CodeInvalidInput, 6, "found end of filter"},
	{`Age`, "", 0, ""}, // valid: a bare name
	{`Age 30`, edm.CodeInvalidInput, 4, "expected comparison operator"},
	{`Age gt 30 40`, edm.CodeInvalidInput, 10, "expected 'and', 'or' or end of filter"},
	{`(Age gt 30`, edm.CodeInvalidInput, 10, "expected 'and', 'or' or ')'"},
	{`Age gt 30)`, edm.CodeInvalidInput, 9, "unmatched ')'"},
	{`()`, edm.CodeInvalidInput, 1, "found ')'"},
	{`not`, edm.CodeInvalidInput, 3, "found end of filter"},
	{`A and`, edm.CodeInvalidInput, 5, "found end of filter"},
	{`or A`, edm.CodeInvalidInput, 0, "found 'or'"},
	{`A eq 1 eq 2`, edm.CodeInvalidInput, 7, "found 'eq'"},
	{`A EQ 1`, edm.CodeInvalidInput, 2, "expected comparison operator, found property name EQ"},
	{`A eq 1 AND B`, edm.CodeInvalidInput, 7, "found property name AND"},
	{`A eq 1 Or B`, edm.CodeInvalidInput, 7, "found property name Or"},
	{`Not A`, edm.CodeInvalidInput, 4, "expected comparison operator"},
	{`A eq True`, edm.CodeNotImplemented, 0, "comparing two properties"}, // True is a property name
	{`A eq TRUE`, edm.CodeNotImplemented, 0, "comparing two properties"},
	{`A eq null`, edm.CodeInvalidInput, 5, "null literals are not allowed"},
	{`null`, edm.CodeInvalidInput, 0, "null literals are not allowed"},
	{`A eq 'x`, edm.CodeInvalidInput, 5, "unterminated quoted literal"},
	{`A eq 'x''`, edm.CodeInvalidInput, 5, "unterminated quoted literal"},
	{`A eq "x"`, edm.CodeInvalidInput, 5, "quoted with '"},
	{`A eq 2147483648`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.Int32' literal '2147483648'"},
	{`A eq -2147483649`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.Int32' literal"},
	{`A eq 99999999999999999999`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.Int32' literal"},
	{`A eq 9223372036854775808L`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.Int64' literal"},
	{`A eq 1e309`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.Double' literal"},
	{`A eq 1.`, edm.CodeInvalidInput, 5, "expected digits after the decimal point"},
	{`A eq .5`, edm.CodeInvalidInput, 5, "unexpected character '.'"},
	{`A eq 1e`, edm.CodeInvalidInput, 5, "expected digits in the exponent"},
	{`A eq 1.5L`, edm.CodeInvalidInput, 5, "malformed number"},
	{`A eq 5M`, edm.CodeInvalidInput, 5, "malformed number"},
	{`A eq 5f`, edm.CodeInvalidInput, 5, "malformed number"},
	{`A eq 5LL`, edm.CodeInvalidInput, 5, "malformed number"},
	{`A eq 5'x'`, edm.CodeInvalidInput, 5, "malformed number"},
	{`A eq 5and B`, edm.CodeInvalidInput, 5, "malformed number"},
	{`A eq 1or B`, edm.CodeInvalidInput, 5, "malformed number"},
	{`A eq datetime'2008-07-10'`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.DateTime' literal"},
	{`A eq datetime'0000-01-01T00:00:00Z'`, edm.CodeInvalidInput, 5, "out of range"},
	{`A eq datetime'2008-07-10T00:00:00.12345678Z'`, edm.CodeInvalidInput, 5, "more than 7 fraction digits"},
	{`A eq datetime'2008-07-10T00:00:00Zjunk'`, edm.CodeInvalidInput, 5, "unexpected text"},
	{`A eq DateTime'2008-07-10T00:00:00Z'`, edm.CodeInvalidInput, 5, "unknown literal prefix 'DateTime'"},
	{`A eq datetimeoffset'2008-07-10T00:00:00Z'`, edm.CodeInvalidInput, 5, "unknown literal prefix"},
	{`A eq GUID'a455c695-df98-5678-aaaa-81d3367e5a34'`, edm.CodeInvalidInput, 5, "unknown literal prefix"},
	{`A eq guid'a455c695-df98-5678-aaaa-81d3367e5a3'`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.Guid' literal"},
	{`A eq guid'a455c695-df98-5678-aaaa-81d3367e5a3x'`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.Guid' literal"},
	{`A eq guid'00000000-0000-0000-0000-0000-0000000'`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.Guid' literal"},
	{`A eq guid'00000000-0000-0000-0000-00000000000-'`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.Guid' literal"},
	{`A eq guid'-0000000-0000-0000-0000-000000000000'`, edm.CodeInvalidInput, 5, "unrecognized 'Edm.Guid' literal"},
	{`A eq X'0'`, edm.CodeInvalidInput, 5, "odd number of hex digits"},
	{`A eq X'0g'`, edm.CodeInvalidInput, 5, "not hex"},
	{`A eq Binary'00'`, edm.CodeInvalidInput, 5, "unknown literal prefix"},
	{`A eq guid'a455c695-df98-5678-aaaa-81d3367e5a34''`, edm.CodeInvalidInput, 5, "unterminated"},
	{`A eq X'00''00'`, edm.CodeInvalidInput, 5, "malformed Edm.Binary literal"},
	{`A # 1`, edm.CodeInvalidInput, 2, "unexpected character '#'"},
	{"A eq \x00", edm.CodeInvalidInput, 5, "unexpected control character"},
	{"A eq \xff", edm.CodeInvalidInput, 5, "invalid UTF-8"},
	{`a eq b`, edm.CodeNotImplemented, 0, "comparing two properties is not supported"},
	{`X gt 1 and a eq b`, edm.CodeNotImplemented, 11, "comparing two properties"},
	{`1 eq 2`, edm.CodeNotImplemented, 0, "comparing two constants is not supported"},
	{`'a' lt 'b'`, edm.CodeNotImplemented, 0, "comparing two constants"},
	{`5`, edm.CodeNotImplemented, 0, "a constant other than true or false is not a condition"},
	{`A and 'x'`, edm.CodeNotImplemented, 6, "a constant other than true or false"},
	{`true`, "", 0, ""},
	{`A and false`, "", 0, ""},
	{`startswith(Name,'a')`, edm.CodeNotImplemented, 0, "function startswith is not supported"},
	{`startswith (Name,'a') eq true`, edm.CodeNotImplemented, 0, "function startswith"},
	{`X eq tolower(Name)`, edm.CodeNotImplemented, 5, "function tolower"},
	{`not endswith(Name,'a')`, edm.CodeNotImplemented, 4, "function endswith"},
	{`Age add 1 gt 30`, edm.CodeNotImplemented, 4, "arithmetic operator 'add'"},
	{`Age sub 1 gt 30`, edm.CodeNotImplemented, 4, "arithmetic operator 'sub'"},
	{`Age mul 1 gt 30`, edm.CodeNotImplemented, 4, "arithmetic operator 'mul'"},
	{`Age div 1 gt 30`, edm.CodeNotImplemented, 4, "arithmetic operator 'div'"},
	{`Age mod 2 eq 0`, edm.CodeNotImplemented, 4, "arithmetic operator 'mod'"},
	{`Age gt 1 add 2`, edm.CodeNotImplemented, 9, "arithmetic operator 'add'"},
	{`Age + 1 gt 30`, edm.CodeNotImplemented, 4, "arithmetic operator '+'"},
	{`Age - 1 gt 30`, edm.CodeNotImplemented, 4, "arithmetic operator '-'"},
	{`Age * 2 gt 30`, edm.CodeNotImplemented, 4, "arithmetic operator '*'"},
	{`Age gt -Other`, edm.CodeNotImplemented, 7, "arithmetic operator '-'"},
	{`add eq 1`, edm.CodeNotImplemented, 0, "arithmetic operator 'add'"},
	{`A/B eq 1`, edm.CodeNotImplemented, 1, "property paths"},
}

func TestShortValid(t *testing.T) {
	for _, src := range validFilters {
		f, err := Compile(src, nil)
		if err != nil {
			t.Errorf("%q: unexpected error: %v", src, err)
			continue
		}
		if f.Root == nil {
			t.Errorf("%q: nil Root", src)
		}
	}
}

func TestShortInvalid(t *testing.T) {
	for _, tc := range invalidFilters {
		_, err := Compile(tc.src, nil)
		if tc.code == "" {
			if err != nil {
				t.Errorf("%q: unexpected error: %v", tc.src, err)
			}
			continue
		}
		e, ok := err.(*Error)
		if !ok {
			t.Errorf("%q: want *Error %s, got %v", tc.src, tc.code, err)
			continue
		}
		if e.Code != tc.code || e.Pos != tc.pos || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("%q: got %s at %d: %s\nwant %s at %d: ...%s...", tc.src, e.Code, e.Pos, e.Msg, tc.code, tc.pos, tc.msg)
		}
		if e.Src != tc.src {
			t.Errorf("%q: error Src is %q", tc.src, e.Src)
		}
		if e.Msg != strings.ToLower(e.Msg[:1])+e.Msg[1:] {
			t.Errorf("%q: message %q is not lowercase", tc.src, e.Msg)
		}
	}
}

func TestEmptyFilter(t *testing.T) {
	for _, src := range []string{"", " ", "\t\r\n  "} {
		x, err := Parse(src, nil)
		if x != nil || err != nil {
			t.Errorf("Parse(%q) = %v, %v; want nil, nil", src, x, err)
		}
		f, err := Compile(src, nil)
		if err != nil || f == nil || f.Root != nil || len(f.Names) != 0 {
			t.Fatalf("Compile(%q) = %+v, %v; want an empty Filter", src, f, err)
		}
		if !f.Match(entity{}) || f.String() != "" {
			t.Errorf("Compile(%q): empty filter must match everything and print as \"\"", src)
		}
	}
	if e := NewFilter(nil); e.Root != nil || len(e.Names) != 0 || !e.Match(entity{}) {
		t.Error("NewFilter(nil) must be the empty filter")
	}
	var nilFilter *Filter
	if !nilFilter.Match(entity{}) {
		t.Error("a nil *Filter must match everything")
	}
	if !Eval(nil, entity{}) {
		t.Error("Eval(nil) must match everything")
	}
}

func TestLimits(t *testing.T) {
	long := strings.Repeat("A and ", 10) + "A"
	tests := []struct {
		src  string
		lim  *Limits
		pos  int // -1: valid
		want string
	}{
		{long, &Limits{}, -1, ""},
		{long, &Limits{MaxComparisons: 11}, -1, ""},
		{long, &Limits{MaxComparisons: 10}, 60, "more than 10 comparisons"},
		{long, &Limits{MaxLength: len(long)}, -1, ""},
		{long, &Limits{MaxLength: len(long) - 1}, len(long) - 1, "more than the limit"},
		{"((A))", &Limits{MaxDepth: 2}, -1, ""},
		{"((A))", &Limits{MaxDepth: 1}, 1, "nesting deeper than the limit of 1"},
		{"not (A)", &Limits{MaxDepth: 1}, 4, "nesting deeper"},
		{"(A) and (B) and not C", &Limits{MaxDepth: 1}, -1, ""},
		{strings.Repeat("(", 65) + "A" + strings.Repeat(")", 65), nil, 64, "nesting deeper than the limit of 64"},
		{strings.Repeat("not ", 64) + "A", nil, -1, ""},
		{strings.Repeat("(", hardMaxDepth+1) + "A" + strings.Repeat(")", hardMaxDepth+1), &Limits{}, hardMaxDepth, "nesting deeper"},
		{strings.Repeat("A or ", 200) + "A", nil, 1000, "more than 200 comparisons"},
		{strings.Repeat("A or ", 199) + "A", nil, -1, ""},
		{strings.Repeat("X", 32<<10+1), nil, 32 << 10, "more than the limit of 32768"},
	}
	for _, tc := range tests {
		_, err := Compile(tc.src, tc.lim)
		name := tc.src
		if len(name) > 40 {
			name = name[:40] + "..."
		}
		if tc.pos < 0 {
			if err != nil {
				t.Errorf("%q %+v: unexpected error %v", name, tc.lim, err)
			}
			continue
		}
		e, ok := err.(*Error)
		if !ok || e.Code != edm.CodeInvalidInput || e.Pos != tc.pos || !strings.Contains(e.Msg, tc.want) {
			t.Errorf("%q %+v: got %v; want InvalidInput at %d: %s", name, tc.lim, err, tc.pos, tc.want)
		}
	}
}

func TestErrorString(t *testing.T) {
	_, err := Parse("Age gt and X", nil)
	want := "filter: syntax error at position 7: expected property name or literal, found 'and'\n" +
		"  Age gt and X\n" +
		"         ^"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	// The caret counts runes, not bytes.
	_, err = Parse("Größe gt 'ä' eq 1", nil)
	want = "filter: syntax error at position 16: expected 'and', 'or' or end of filter, found 'eq'\n" +
		"  Größe gt 'ä' eq 1\n" +
		"               ^"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	// A long filter is cut around the position.
	src := strings.Repeat("A eq 1 and ", 20) + "B eq and C eq 1" + strings.Repeat(" and A eq 1", 20)
	_, err = Parse(src, nil)
	e := err.(*Error)
	lines := strings.Split(e.Error(), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "  ...") || !strings.HasSuffix(lines[1], "...") {
		t.Fatalf("unexpected excerpt:\n%v", e)
	}
	caret := strings.Index(lines[2], "^")
	if got := []rune(lines[1])[caret:]; !strings.HasPrefix(string(got), "and C eq 1") {
		t.Errorf("caret points at %q", string(got))
	}
	// Control characters do not break the excerpt.
	_, err = Parse("A eq\n\t2 eq", nil)
	want = "filter: syntax error at position 8: expected 'and', 'or' or end of filter, found 'eq'\n" +
		"  A eq  2 eq\n" +
		"          ^"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
	// Not implemented, and a hand-built tree without source.
	_, err = Check(&ComparisonExpr{X: &Ident{Name: "a"}, Op: OpEQ, Y: &Ident{Name: "b"}})
	if err == nil || err.Error() != "filter: not implemented at position 0: comparing two properties is not supported" {
		t.Errorf("got %v", err)
	}
}

// TestCheckHandBuilt checks that malformed hand-built trees give errors,
// not panics.
func TestCheckHandBuilt(t *testing.T) {
	one := &BasicLit{Kind: TokInt32, Value: "1"}
	tests := []struct {
		x    Expr
		code edm.Code
		msg  string
	}{
		{&BinaryExpr{Op: TokAnd, Y: &Ident{Name: "A"}}, edm.CodeInvalidInput, "missing operand of and"},
		{&BinaryExpr{X: &Ident{Name: "A"}, Op: TokOr, Y: (*Ident)(nil)}, edm.CodeInvalidInput, "missing operand of or"},
		{&BinaryExpr{X: &Ident{Name: "A"}, Op: TokEQ, Y: &Ident{Name: "B"}}, edm.CodeInvalidInput, "expected and or or"},
		{&UnaryExpr{Op: TokNot}, edm.CodeInvalidInput, "missing operand of not"},
		{&UnaryExpr{Op: TokAnd, X: &Ident{Name: "A"}}, edm.CodeInvalidInput, "expected not"},
		{&ParenExpr{}, edm.CodeInvalidInput, "empty parentheses"},
		{(*ParenExpr)(nil), edm.CodeInvalidInput, "missing expression"},
		{&ComparisonExpr{X: &Ident{Name: "A"}, Op: 0, Y: one}, edm.CodeInvalidInput, "unknown comparison operator"},
		{&ComparisonExpr{X: &Ident{Name: "A"}, Op: OpEQ}, edm.CodeInvalidInput, "missing operand of eq"},
		{&ComparisonExpr{X: &ParenExpr{X: &Ident{Name: "A"}}, Op: OpEQ, Y: one}, edm.CodeInvalidInput, "must be a property name and a literal"},
		{&ComparisonExpr{X: &Ident{Name: "A"}, Op: OpEQ, Y: &BasicLit{Kind: TokInt32, Value: "x"}}, edm.CodeInvalidInput, "unrecognized 'Edm.Int32' literal"},
		{&ComparisonExpr{X: &Ident{Name: "A"}, Op: OpEQ, Y: &BasicLit{Kind: TokNull, Value: "null"}}, edm.CodeInvalidInput, "null literals"},
		{&ComparisonExpr{X: &Ident{Name: "A"}, Op: OpEQ, Y: &BasicLit{Kind: TokIdent, Value: "B"}}, edm.CodeInvalidInput, "expected literal"},
	}
	for i, tc := range tests {
		_, err := Check(tc.x)
		e, ok := err.(*Error)
		if !ok || e.Code != tc.code || !strings.Contains(e.Msg, tc.msg) {
			t.Errorf("case %d: got %v, want %s: %s", i, err, tc.code, tc.msg)
		}
		_ = Print(tc.x) // must not panic
	}
	// A hand-built tree deeper than the parser allows is refused.
	var deep Expr = &Ident{Name: "A"}
	for i := 0; i <= hardMaxDepth+1; i++ {
		deep = &UnaryExpr{Op: TokNot, X: deep}
	}
	if _, err := Check(deep); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Errorf("deep tree: got %v", err)
	}
}
