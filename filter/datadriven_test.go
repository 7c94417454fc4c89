package filter

import (
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestDataDriven runs every file directly under testdata/. Commands:
//
//	scan            input: filter text; output: one token per line
//	parse [limits]  input: filter text; output: the tree with positions and
//	                its Print form, or the error
//	check [limits]  input: one filter per line; output: `=> ` and the
//	                checked tree's Format form, or the error code, position
//	                and message
//	entity          input: `Name = literal` lines; sets the entity that
//	                match evaluates against
//	match           input: one filter per line (`""` for the empty one);
//	                output: the filter and whether the entity matches it
//
// limits are max-length=N, max-depth=N, max-comparisons=N; unset ones are
// DefaultLimits'.
func TestDataDriven(t *testing.T) {
	paths, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		if fi, err := os.Stat(path); err != nil || fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			var ent entity
			datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
				switch td.Cmd {
				case "scan":
					return runScan(td.Input)
				case "parse":
					return runParse(t, td.Input, scanLimits(t, td))
				case "check":
					return runCheck(td.Input, scanLimits(t, td))
				case "entity":
					e, err := parseEntity(td.Input)
					if err != nil {
						return "error: " + err.Error() + "\n"
					}
					ent = e
					var b strings.Builder
					for _, p := range e {
						fmt.Fprintf(&b, "%s: %s %s\n", p.name, p.value.Type, formatValueForTest(p.value))
					}
					return b.String()
				case "match":
					return runMatch(td.Input, ent)
				}
				t.Fatalf("%s: unknown command %q", td.Pos, td.Cmd)
				return ""
			})
		})
	}
}

func formatValueForTest(v edm.Value) string {
	if v.Type == edm.TypeDouble {
		return formatDouble(v.Float)
	}
	return FormatLiteral(v)
}

func scanLimits(t *testing.T, td *datadriven.TestData) *Limits {
	l := DefaultLimits
	td.MaybeScanArgs(t, "max-length", &l.MaxLength)
	td.MaybeScanArgs(t, "max-depth", &l.MaxDepth)
	td.MaybeScanArgs(t, "max-comparisons", &l.MaxComparisons)
	return &l
}

func runScan(src string) string {
	var s Scanner
	s.Init(src)
	var b strings.Builder
	for {
		pos, tok, lit := s.Scan()
		fmt.Fprintf(&b, "%d %s %q\n", pos, tok, lit)
		if tok == TokIllegal {
			fmt.Fprintf(&b, "error: %s at %d\n", s.Err().Msg, s.Err().Pos)
			return b.String()
		}
		if tok == TokEOF {
			return b.String()
		}
	}
}

func runParse(t *testing.T, src string, lim *Limits) string {
	x, err := Parse(src, lim)
	if err != nil {
		return formatErr(err)
	}
	printed := Print(x)
	y, err := Parse(printed, lim)
	if err != nil || !equalExpr(x, y) {
		t.Errorf("Print gave %q, which reparses differently (err %v)", printed, err)
	}
	return dumpExpr(x) + "print: " + printed + "\n"
}

func runCheck(input string, lim *Limits) string {
	var b strings.Builder
	for _, line := range strings.Split(input, "\n") {
		b.WriteString(line)
		f, err := Compile(line, lim)
		if err != nil {
			e := err.(*Error)
			fmt.Fprintf(&b, "\n=> %s at %d: %s\n", e.Code, e.Pos, e.Msg)
			continue
		}
		fmt.Fprintf(&b, "\n=> %s\n", f)
	}
	return b.String()
}

func runMatch(input string, ent entity) string {
	var b strings.Builder
	for _, line := range strings.Split(input, "\n") {
		src := line
		if line == `""` {
			src = ""
		}
		f, err := Compile(src, nil)
		if err != nil {
			e := err.(*Error)
			fmt.Fprintf(&b, "%s => %s at %d: %s\n", line, e.Code, e.Pos, e.Msg)
			continue
		}
		fmt.Fprintf(&b, "%s => %t\n", line, f.Match(ent))
	}
	return b.String()
}
