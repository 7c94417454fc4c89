package plan

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/tablestore/tablestore/filter"
)

// TestPlan runs the planner decisions in the files of testdata:
//
//	plan [reverse] [resume=<pk>/<rk>]
//	<filter>
//	----
//	<printed plan>
//
// resume prints the ranges left when reading resumes at that position;
// reverse prints the plan of a reverse read (resuming with Upto).
func TestPlan(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		datadriven.RunTest(t, path, runPlan)
	})
}

func runPlan(t *testing.T, d *datadriven.TestData) string {
	switch d.Cmd {
	case "plan":
		f, err := filter.Compile(strings.TrimSpace(d.Input), nil)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		p := New(f.Root)
		ranges := p.Ranges
		if d.HasArg("resume") {
			var at string
			d.ScanArgs(t, "resume", &at)
			pk, rk, _ := strings.Cut(at, "/")
			if d.HasArg("reverse") {
				ranges = p.Upto(Key{PartitionKey: pk, RowKey: rk})
			} else {
				ranges = p.From(Key{PartitionKey: pk, RowKey: rk})
			}
		}
		checkWellFormed(t, p)
		if d.HasArg("reverse") {
			return p.FormatReverse(ranges)
		}
		return p.Format(ranges)
	case "choose", "order":
		return runIndexPlan(t, d)
	}
	t.Fatalf("unknown command %q", d.Cmd)
	return ""
}

// checkWellFormed fails t unless p's ranges are non-empty, sorted and
// non-overlapping, as Plan promises, and its kind agrees with them.
func checkWellFormed(t *testing.T, p *Plan) {
	t.Helper()
	if (p.Kind == Empty) != (len(p.Ranges) == 0) {
		t.Fatalf("kind %v with %d ranges", p.Kind, len(p.Ranges))
	}
	if len(p.Ranges) > MaxRanges {
		t.Fatalf("%d ranges, more than MaxRanges", len(p.Ranges))
	}
	for i, r := range p.Ranges {
		if r.Empty() {
			t.Fatalf("range %d is empty: %+v", i, r)
		}
		if i > 0 {
			prev := p.Ranges[i-1]
			if prev.Unbounded || Compare(prev.End, r.Start) >= 0 {
				t.Fatalf("ranges %d and %d overlap or touch: %+v %+v", i-1, i, prev, r)
			}
		}
	}
}
