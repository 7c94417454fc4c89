package filter

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tablestore/tablestore/edm"
)

// Seen records the property names and EDM types met in entities read, to
// warn of filters that can never match them (see Warnings). The zero
// value records nothing yet.
type Seen struct {
	types map[string]map[edm.Type]bool // name -> types; empty set: name only
}

// Add records that a property name held a value of type t.
func (s *Seen) Add(name string, t edm.Type) {
	s.name(name)[t] = true
}

// AddValue records that a property name held the Go value v, typed as
// Literal types it; a value Literal refuses records nothing.
func (s *Seen) AddValue(name string, v any) {
	if val, err := valueOf(v); err == nil {
		s.Add(name, val.Type)
	}
}

// AddName records a property name whose types are unknown (a property
// of an index spec): it silences the name warning, never the type one.
func (s *Seen) AddName(name string) { s.name(name) }

func (s *Seen) name(name string) map[edm.Type]bool {
	if s.types == nil {
		s.types = map[string]map[edm.Type]bool{}
	}
	m := s.types[name]
	if m == nil {
		m = map[edm.Type]bool{}
		s.types[name] = m
	}
	return m
}

// Empty reports whether nothing was recorded.
func (s *Seen) Empty() bool { return len(s.types) == 0 }

// comparableTypes reports whether a property of type prop can compare with a
// literal of type lit at all (Eval's rules: an Int64 property
// takes Int32 and Int64 literals, a Double any number, every other type
// only its own).
func comparableTypes(prop, lit edm.Type) bool {
	switch prop {
	case edm.TypeInt64:
		return lit == edm.TypeInt64 || lit == edm.TypeInt32
	case edm.TypeDouble:
		return lit == edm.TypeDouble || lit == edm.TypeInt32 || lit == edm.TypeInt64
	}
	return prop == lit
}

// Warnings lists, once each and in the filter's order, the comparisons
// of root that cannot tell apart the entities s recorded:
//
//   - a property compared with a literal of a type it never held
//     (`Amount gt '5'` where Amount was always Edm.Int32): eq, gt and ge
//     are then false and ne, lt and le true, whatever the values;
//   - a property name never seen that was seen in another case
//     (`status eq 'new'` where the entities have Status).
//
// Names never seen in any case and the system properties raise nothing.
// Such filters are valid and, as on Azure, match nothing; the warnings
// are advice for a person reading a plan or a result.
func Warnings(root Node, s *Seen) []string {
	if root == nil || s == nil || s.Empty() {
		return nil
	}
	var out []string
	done := map[string]bool{}
	add := func(w string) {
		if !done[w] {
			done[w] = true
			out = append(out, w)
		}
	}
	var walk func(n Node)
	walk = func(n Node) {
		switch n := n.(type) {
		case *AndNode:
			walk(n.X)
			walk(n.Y)
		case *OrNode:
			walk(n.X)
			walk(n.Y)
		case *NotNode:
			walk(n.X)
		case *CompareNode:
			if w := compareWarning(n, s); w != "" {
				add(w)
			}
		}
	}
	walk(root)
	return out
}

func compareWarning(n *CompareNode, s *Seen) string {
	switch n.Property {
	case "PartitionKey", "RowKey", "Timestamp":
		return ""
	}
	types, ok := s.types[n.Property]
	if !ok {
		var others []string
		for name := range s.types {
			if strings.EqualFold(name, n.Property) {
				others = append(others, name)
			}
		}
		if len(others) == 0 {
			return ""
		}
		sort.Strings(others)
		return fmt.Sprintf("property %s was never seen, but %s was: names are case-sensitive, so %s %s ... matches nothing",
			n.Property, strings.Join(others, " and "), n.Property, n.Op)
	}
	if len(types) == 0 {
		return "" // a name from an index spec: types unknown
	}
	var had []string
	for t := range types {
		if comparableTypes(t, n.Value.Type) {
			return ""
		}
		had = append(had, t.String())
	}
	sort.Strings(had)
	outcome := "matches nothing" // eq, gt, ge: false on a type mismatch
	if n.Op == OpNE || n.Op == OpLT || n.Op == OpLE {
		outcome = "holds for every entity that has it" // true on a mismatch
	}
	return fmt.Sprintf("%s is compared (%s) with a literal of type %s but was seen only as %s: such a comparison %s",
		n.Property, n.Op, n.Value.Type, strings.Join(had, ", "), outcome)
}
