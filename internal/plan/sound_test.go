package plan

import (
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/tablestore/tablestore/filter"
)

// props is an entity for filter.Eval: its keys and one typed property.
type props struct {
	pk, rk string
	n      edm.Value
	hasN   bool
}

func (p props) Lookup(name string) (edm.Value, bool) {
	switch name {
	case partitionKeyName:
		return edm.Value{Type: edm.TypeString, Bytes: []byte(p.pk)}, true
	case rowKeyName:
		return edm.Value{Type: edm.TypeString, Bytes: []byte(p.rk)}, true
	case "N":
		return p.n, p.hasN
	}
	return edm.Value{}, false
}

// keyAlphabet yields short keys with shared prefixes, spaces and empty
// strings, where successor arithmetic and prefix order matter.
var keyAlphabet = []string{"", "a", "b", " ", "a ", "ab", "b a", "z"}

func randomKeyString(r *rand.Rand) string {
	return keyAlphabet[r.IntN(len(keyAlphabet))] + keyAlphabet[r.IntN(len(keyAlphabet))]
}

// randomLiteral is mostly a string, sometimes another type, sometimes a
// string with a control character.
func randomLiteral(r *rand.Rand) edm.Value {
	switch r.IntN(10) {
	case 0:
		return edm.Value{Type: edm.TypeInt32, Int: int64(r.IntN(3))}
	case 1:
		return edm.Value{Type: edm.TypeBoolean, Int: int64(r.IntN(2))}
	case 2:
		return edm.Value{Type: edm.TypeString, Bytes: []byte(randomKeyString(r) + "\x01" + randomKeyString(r))}
	}
	return edm.Value{Type: edm.TypeString, Bytes: []byte(randomKeyString(r))}
}

func randomNode(r *rand.Rand, depth int) filter.Node {
	if depth <= 0 || r.IntN(3) == 0 {
		c := &filter.CompareNode{Op: filter.Op(1 + r.IntN(6)), Value: randomLiteral(r)}
		switch r.IntN(5) {
		case 0, 1:
			c.Property = partitionKeyName
		case 2, 3:
			c.Property = rowKeyName
		default:
			c.Property = "N"
			c.Value = edm.Value{Type: edm.TypeInt32, Int: int64(r.IntN(3))}
		}
		return c
	}
	switch r.IntN(5) {
	case 0:
		return &filter.NotNode{X: randomNode(r, depth-1)}
	case 1, 2:
		return &filter.OrNode{X: randomNode(r, depth-1), Y: randomNode(r, depth-1)}
	}
	return &filter.AndNode{X: randomNode(r, depth-1), Y: randomNode(r, depth-1)}
}

// keyUniverse returns entities over every pair of short keys built from
// keyAlphabet, half of them with property N.
func keyUniverse(r *rand.Rand) []props {
	var entities []props
	for _, pk := range keyAlphabet {
		for _, pk2 := range []string{"", "a", " "} {
			for _, rk := range keyAlphabet {
				for _, rk2 := range []string{"", "b", " "} {
					e := props{pk: pk + pk2, rk: rk + rk2}
					if r.IntN(2) == 0 {
						e.n, e.hasN = edm.Value{Type: edm.TypeInt32, Int: int64(r.IntN(3))}, true
					}
					entities = append(entities, e)
				}
			}
		}
	}
	return entities
}

// checkSound fails t unless, for every entity, the plan accepts it
// (within a range and passing the residual) exactly when n does.
func checkSound(t *testing.T, n filter.Node, p *Plan, entities []props) {
	t.Helper()
	for _, e := range entities {
		want := filter.Eval(n, e)
		in := false
		for _, rg := range p.Ranges {
			if rg.Contains(Key{PartitionKey: e.pk, RowKey: e.rk}) {
				in = true
			}
		}
		if got := in && filter.Eval(p.Residual, e); got != want {
			t.Fatalf("filter %s\nentity (%q, %q)\nfilter says %v, plan says %v (in ranges %v)\n%s",
				filter.Format(n), e.pk, e.rk, want, got, in, p.Format(p.Ranges))
		}
	}
}

// TestPlanSound checks the planner's contract on random filters over every
// key of a small universe: an entity matches the filter exactly when its
// key lies in a range and it satisfies the residual.
func TestPlanSound(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 0))
	entities := keyUniverse(r)
	for i := 0; i < 3000; i++ {
		n := randomNode(r, 1+r.IntN(4))
		p := New(n)
		checkWellFormed(t, p)
		checkSound(t, n, p, entities)
	}
}

// FuzzPlan plans arbitrary filter text: planning never panics, plans are
// well formed and sound on a universe of short keys.
func FuzzPlan(f *testing.F) {
	for _, s := range []string{
		"PartitionKey eq 'a' and RowKey eq 'b'",
		"PartitionKey eq 'a' and (RowKey lt 'b ' or RowKey ge 'ab')",
		"(PartitionKey eq 'a' or PartitionKey gt 'b') and not (RowKey le 'a') and N eq 1",
		"RowKey gt 'a' and PartitionKey le 'b' or PartitionKey eq 1",
	} {
		f.Add(s)
	}
	entities := keyUniverse(rand.New(rand.NewPCG(1, 2)))
	f.Fuzz(func(t *testing.T, text string) {
		flt, err := filter.Compile(text, nil)
		if err != nil {
			return
		}
		p := New(flt.Root)
		checkWellFormed(t, p)
		checkSound(t, flt.Root, p, entities)
	})
}

// TestMaxRanges checks that a union too large for MaxRanges becomes one
// covering range and keeps its key constraint in the residual.
func TestMaxRanges(t *testing.T) {
	build := func(n int) filter.Node {
		var or filter.Node
		for i := range n {
			c := &filter.CompareNode{Property: rowKeyName, Op: filter.OpEQ,
				Value: edm.Value{Type: edm.TypeString, Bytes: fmt.Appendf(nil, "%04d", i)}}
			if or == nil {
				or = c
			} else {
				or = &filter.OrNode{X: or, Y: c}
			}
		}
		pk := &filter.CompareNode{Property: partitionKeyName, Op: filter.OpEQ,
			Value: edm.Value{Type: edm.TypeString, Bytes: []byte("p")}}
		return &filter.AndNode{X: pk, Y: or}
	}
	p := New(build(MaxRanges))
	if p.Kind != Point || len(p.Ranges) != MaxRanges || p.Residual != nil {
		t.Fatalf("%d points: got kind %v, %d ranges, residual %v", MaxRanges, p.Kind, len(p.Ranges), p.Residual)
	}
	p = New(build(MaxRanges + 1))
	want := "PartitionKey = 'p', '0000' <= RowKey <= '0100'"
	if p.Kind != Range || len(p.Ranges) != 1 || p.Ranges[0].String() != want {
		t.Fatalf("%d points: got kind %v, ranges %v", MaxRanges+1, p.Kind, p.Ranges)
	}
	if p.Residual == nil || !strings.HasPrefix(filter.Format(p.Residual), "RowKey eq '0000' or") {
		t.Fatalf("%d points: residual lost the key constraint: %v", MaxRanges+1, p.Residual)
	}
}
