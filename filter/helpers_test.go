package filter

import (
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"math"
	"strings"
)

// prop is one named property of a test entity.
type prop struct {
	name  string
	value edm.Value
}

// entity is a slice-backed Properties, the shape a decoded row has.
type entity []prop

func (e entity) Lookup(name string) (edm.Value, bool) {
	for i := range e {
		if e[i].name == name {
			return e[i].value, true
		}
	}
	return edm.Value{}, false
}

// parseValue reads a property value written as a filter literal, plus the
// Double specials NaN, INF and -INF that have no literal form.
func parseValue(text string) (edm.Value, error) {
	switch text {
	case "NaN":
		return edm.Value{Type: edm.TypeDouble, Float: math.NaN()}, nil
	case "INF":
		return edm.Value{Type: edm.TypeDouble, Float: math.Inf(1)}, nil
	case "-INF":
		return edm.Value{Type: edm.TypeDouble, Float: math.Inf(-1)}, nil
	}
	var s Scanner
	s.Init(text)
	_, tok, lit := s.Scan()
	if tok == TokIllegal {
		return edm.Value{}, s.Err()
	}
	if _, next, _ := s.Scan(); next != TokEOF {
		return edm.Value{}, fmt.Errorf("trailing text after %q", lit)
	}
	return ParseLiteral(tok, lit)
}

// parseEntity reads lines `Name = literal`.
func parseEntity(input string) (entity, error) {
	var e entity
	for _, line := range strings.Split(input, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, text, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("want Name = literal, got %q", line)
		}
		v, err := parseValue(strings.TrimSpace(text))
		if err != nil {
			return nil, err
		}
		e = append(e, prop{strings.TrimSpace(name), v})
	}
	return e, nil
}

// equalExpr reports whether two syntax trees are equal, ignoring positions.
func equalExpr(a, b Expr) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case *BinaryExpr:
		b, ok := b.(*BinaryExpr)
		return ok && a.Op == b.Op && equalExpr(a.X, b.X) && equalExpr(a.Y, b.Y)
	case *UnaryExpr:
		b, ok := b.(*UnaryExpr)
		return ok && a.Op == b.Op && equalExpr(a.X, b.X)
	case *ParenExpr:
		b, ok := b.(*ParenExpr)
		return ok && equalExpr(a.X, b.X)
	case *ComparisonExpr:
		b, ok := b.(*ComparisonExpr)
		return ok && a.Op == b.Op && equalExpr(a.X, b.X) && equalExpr(a.Y, b.Y)
	case *Ident:
		b, ok := b.(*Ident)
		return ok && a.Name == b.Name
	case *BasicLit:
		b, ok := b.(*BasicLit)
		return ok && a.Kind == b.Kind && a.Value == b.Value
	}
	return false
}

// equalNode reports whether two checked trees are equal. Doubles compare
// by bits, so NaN equals NaN and -0 differs from +0.
func equalNode(a, b Node) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case *AndNode:
		b, ok := b.(*AndNode)
		return ok && equalNode(a.X, b.X) && equalNode(a.Y, b.Y)
	case *OrNode:
		b, ok := b.(*OrNode)
		return ok && equalNode(a.X, b.X) && equalNode(a.Y, b.Y)
	case *NotNode:
		b, ok := b.(*NotNode)
		return ok && equalNode(a.X, b.X)
	case *CompareNode:
		b, ok := b.(*CompareNode)
		return ok && a.Property == b.Property && a.Op == b.Op && equalValue(a.Value, b.Value)
	case *ConstNode:
		b, ok := b.(*ConstNode)
		return ok && a.Value == b.Value
	}
	return false
}

func equalValue(a, b edm.Value) bool {
	return a.Type == b.Type && a.Int == b.Int &&
		math.Float64bits(a.Float) == math.Float64bits(b.Float) &&
		string(a.Bytes) == string(b.Bytes)
}

// dumpExpr writes a syntax tree one node per line, indented, with
// positions as @start-end.
func dumpExpr(x Expr) string {
	var b strings.Builder
	var walk func(x Expr, depth int)
	walk = func(x Expr, depth int) {
		b.WriteString(strings.Repeat("  ", depth))
		switch x := x.(type) {
		case *BinaryExpr:
			fmt.Fprintf(&b, "%s @%d-%d (op @%d)\n", x.Op, x.Pos(), x.End(), x.OpPos)
			walk(x.X, depth+1)
			walk(x.Y, depth+1)
		case *UnaryExpr:
			fmt.Fprintf(&b, "%s @%d-%d\n", x.Op, x.Pos(), x.End())
			walk(x.X, depth+1)
		case *ParenExpr:
			fmt.Fprintf(&b, "paren @%d-%d\n", x.Pos(), x.End())
			walk(x.X, depth+1)
		case *ComparisonExpr:
			fmt.Fprintf(&b, "%s @%d-%d (op @%d)\n", x.Op, x.Pos(), x.End(), x.OpPos)
			walk(x.X, depth+1)
			walk(x.Y, depth+1)
		case *Ident:
			fmt.Fprintf(&b, "ident %s @%d-%d\n", x.Name, x.Pos(), x.End())
		case *BasicLit:
			fmt.Fprintf(&b, "%s %s @%d-%d\n", x.Kind, x.Value, x.Pos(), x.End())
		default:
			fmt.Fprintf(&b, "%T\n", x)
		}
	}
	if x == nil {
		return "<nil>\n"
	}
	walk(x, 0)
	return b.String()
}

// formatErr writes an error for datadriven output: its code and message.
func formatErr(err error) string {
	if e, ok := err.(*Error); ok {
		return string(e.Code) + ": " + e.Error() + "\n"
	}
	return "unexpected error type: " + err.Error() + "\n"
}
