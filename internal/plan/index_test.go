package plan

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/tablestore/tablestore/filter"
	"github.com/tablestore/tablestore/internal/keys"
)

// runIndexPlan runs the index commands of TestPlan's files:
//
//	choose indexes=(<index>, ...)
//	<filter>
//	----
//	<printed index scan, or "no index" and the plain plan>
//
//	order index=<index> [resume=<hex suffix>]
//	<filter>
//	----
//	<printed index-order scan>
//
// An index is name:Prop1+Prop2[:unique][:partitioned].
func runIndexPlan(t *testing.T, d *datadriven.TestData) string {
	f, err := filter.Compile(strings.TrimSpace(d.Input), nil)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	p := New(f.Root)
	switch d.Cmd {
	case "choose":
		var ixs []Index
		for _, a := range d.CmdArgs {
			if a.Key == "indexes" {
				for _, v := range a.Vals {
					ixs = append(ixs, parseTestIndex(t, v))
				}
			}
		}
		s := ChooseIndex(f.Root, p, ixs)
		if s == nil {
			return "no index\n" + p.String()
		}
		checkScan(t, s)
		return s.Format(s.Ranges, nil)
	case "order":
		var spec string
		d.ScanArgs(t, "index", &spec)
		s := IndexOrder(f.Root, p, parseTestIndex(t, spec))
		checkScan(t, s)
		var pos []byte
		if d.HasArg("resume") {
			var h string
			d.ScanArgs(t, "resume", &h)
			if pos, err = hex.DecodeString(h); err != nil {
				t.Fatal(err)
			}
		}
		out := s.Format(nil, pos)
		if d.HasArg("spans") {
			for _, sp := range s.Spans {
				out += hex.EncodeToString(sp.Start) + " .. " + hex.EncodeToString(sp.End) + "\n"
			}
		}
		return out
	}
	t.Fatalf("unknown command %q", d.Cmd)
	return ""
}

func parseTestIndex(t *testing.T, spec string) Index {
	parts := strings.Split(spec, ":")
	if len(parts) < 2 {
		t.Fatalf("bad index %q", spec)
	}
	ix := Index{Name: parts[0], Properties: strings.Split(parts[1], "+")}
	for _, o := range parts[2:] {
		switch o {
		case "unique":
			ix.Unique = true
		case "partitioned":
			ix.Partitioned = true
		default:
			t.Fatalf("bad index option %q", o)
		}
	}
	return ix
}

// checkScan fails t unless s's tuples or spans are sorted and distinct,
// and each tuple holds one value per property.
func checkScan(t *testing.T, s *IndexScan) {
	t.Helper()
	for i, tu := range s.Tuples {
		if n, ok := keys.TupleLen(tu, len(s.Index.Properties)); !ok || n != len(tu) {
			t.Fatalf("tuple %d %x is not %d values", i, tu, len(s.Index.Properties))
		}
		if i > 0 && string(s.Tuples[i-1]) >= string(tu) {
			t.Fatalf("tuples %d and %d out of order", i-1, i)
		}
	}
	for i, sp := range s.Spans {
		if sp.End != nil && string(sp.Start) >= string(sp.End) {
			t.Fatalf("span %d is empty: %x..%x", i, sp.Start, sp.End)
		}
		if i > 0 {
			prev := s.Spans[i-1]
			if prev.End == nil || string(prev.End) > string(sp.Start) {
				t.Fatalf("spans %d and %d overlap", i-1, i)
			}
		}
	}
}
