package filter

import (
	"sort"
)

// Filter is a checked filter, ready to evaluate. It is immutable and safe
// for concurrent use.
type Filter struct {
	// Root is the checked tree; nil matches every entity (the empty filter).
	Root Node
	// Names lists the property names the filter reads, sorted, each once.
	Names []string
}

// Compile parses and checks src: Parse followed by Check. An empty or
// all-whitespace src gives a Filter with a nil Root, which matches every
// entity. Every error is an *Error.
func Compile(src string, lim *Limits) (*Filter, error) {
	x, err := Parse(src, lim)
	if err != nil {
		return nil, err
	}
	f, err := Check(x)
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Src = src
		}
		return nil, err
	}
	return f, nil
}

// Check resolves a syntax tree into a Filter: it drops parentheses, puts
// the property on the left of every comparison (flipping the operator when
// the literal was on the left), turns a bare property name X into
// `X eq true`, and converts every literal to a Value once. A nil x gives a
// Filter with a nil Root.
//
// Comparing two properties or two constants, and a constant standing alone
// as a condition, are CodeNotImplemented errors, as in Azure. A malformed
// literal or a malformed hand-built tree is CodeInvalidInput. The Src of
// the returned *Error is empty; Compile fills it in.
func Check(x Expr) (*Filter, error) {
	if x == nil {
		return &Filter{}, nil
	}
	c := checker{names: map[string]struct{}{}}
	root, err := c.check(x, 0)
	if err != nil {
		return nil, err
	}
	f := &Filter{Root: root, Names: make([]string, 0, len(c.names))}
	for name := range c.names {
		f.Names = append(f.Names, name)
	}
	sort.Strings(f.Names)
	return f, nil
}

type checker struct {
	names map[string]struct{}
}

func checkError(code string, pos int, msg string) error {
	return newError(code, "", pos, msg)
}

// check converts one boolean expression. depth guards hand-built trees
// deeper than any the parser would produce.
func (c *checker) check(x Expr, depth int) (Node, error) {
	if depth > 2*hardMaxDepth {
		return nil, checkError(CodeInvalidInput, x.Pos(), "expression nested too deeply")
	}
	switch x := x.(type) {
	case *BinaryExpr:
		if x.X == nil || x.Y == nil {
			return nil, checkError(CodeInvalidInput, x.OpPos, "missing operand of "+x.Op.String())
		}
		l, err := c.check(x.X, depth+1)
		if err != nil {
			return nil, err
		}
		r, err := c.check(x.Y, depth+1)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case TokAnd:
			return &AndNode{X: l, Y: r}, nil
		case TokOr:
			return &OrNode{X: l, Y: r}, nil
		}
		return nil, checkError(CodeInvalidInput, x.OpPos, "expected and or or, found "+x.Op.String())
	case *UnaryExpr:
		if x.Op != TokNot {
			return nil, checkError(CodeInvalidInput, x.OpPos, "expected not, found "+x.Op.String())
		}
		if x.X == nil {
			return nil, checkError(CodeInvalidInput, x.OpPos, "missing operand of not")
		}
		n, err := c.check(x.X, depth+1)
		if err != nil {
			return nil, err
		}
		return &NotNode{X: n}, nil
	case *ParenExpr:
		if x.X == nil {
			return nil, checkError(CodeInvalidInput, x.Lparen, "empty parentheses")
		}
		return c.check(x.X, depth+1)
	case *Ident:
		c.names[x.Name] = struct{}{}
		return &CompareNode{Property: x.Name, Op: OpEQ, Value: Value{Type: TypeBoolean, Int: 1}}, nil
	case *BasicLit:
		return nil, checkError(CodeNotImplemented, x.ValuePos, "a constant alone is not a condition")
	case *ComparisonExpr:
		return c.checkComparison(x)
	case nil:
		return nil, checkError(CodeInvalidInput, 0, "missing expression")
	}
	return nil, checkError(CodeInvalidInput, x.Pos(), "unknown expression")
}

func (c *checker) checkComparison(x *ComparisonExpr) (Node, error) {
	if x.Op < OpEQ || x.Op > OpLE {
		return nil, checkError(CodeInvalidInput, x.OpPos, "unknown comparison operator")
	}
	if x.X == nil || x.Y == nil {
		return nil, checkError(CodeInvalidInput, x.OpPos, "missing operand of "+x.Op.String())
	}
	xi, xIdent := x.X.(*Ident)
	yi, yIdent := x.Y.(*Ident)
	xl, xLit := x.X.(*BasicLit)
	yl, yLit := x.Y.(*BasicLit)
	var (
		name string
		lit  *BasicLit
		op   = x.Op
	)
	switch {
	case xIdent && yIdent:
		return nil, checkError(CodeNotImplemented, x.Pos(), "comparing two properties is not supported")
	case xLit && yLit:
		return nil, checkError(CodeNotImplemented, x.Pos(), "comparing two constants is not supported")
	case xIdent && yLit:
		name, lit = xi.Name, yl
	case xLit && yIdent:
		name, lit, op = yi.Name, xl, op.Flip()
	default:
		return nil, checkError(CodeInvalidInput, x.Pos(), "comparison operands must be a property name and a literal")
	}
	v, msg := parseLiteral(lit.Kind, lit.Value)
	if msg != "" {
		return nil, checkError(CodeInvalidInput, lit.ValuePos, msg)
	}
	c.names[name] = struct{}{}
	return &CompareNode{Property: name, Op: op, Value: v}, nil
}
