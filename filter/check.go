package filter

import (
	"github.com/tablestore/tablestore/edm"
	"sort"
	"strconv"
)

// Filter is a checked filter, ready to evaluate. It is immutable and safe
// for concurrent use.
type Filter struct {
	// Root is the checked tree; nil matches every entity (the empty filter).
	Root Node
	// Names lists the property names the filter reads, sorted, each once.
	Names []string

	prog []step // Root compiled for Match; nil when Root is nil
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
// The boolean constants true and false are conditions, as in Azure, and
// are folded: `false and X` is false, `true and X` is X, `not true` is
// false. A filter that folds to true has a nil Root (no condition); one
// that folds to false has the Root &ConstNode{false} (no entity), and
// every other Root holds no ConstNode. Comparing two properties or two
// constants, and another constant standing alone as a condition, are
// CodeNotImplemented errors, as in Azure. A malformed
// literal or a malformed hand-built tree is CodeInvalidInput. The Src of
// the returned *Error is empty; Compile fills it in.
func Check(x Expr) (*Filter, error) {
	if x == nil {
		return &Filter{}, nil
	}
	var c checker
	root, err := c.check(x, 0)
	if err != nil {
		return nil, err
	}
	if k, ok := root.(*ConstNode); ok && k.Value {
		root = nil
	}
	return NewFilter(root), nil
}

// NewFilter returns a Filter for a checked tree built or rewritten outside
// Check, such as a planner's residual predicate: it fills in Names and
// compiles root for Match, which then runs faster than Eval(root, p). A nil
// root gives the empty filter. root must not be changed afterwards.
func NewFilter(root Node) *Filter {
	names := map[string]struct{}{}
	collectNames(root, names)
	f := &Filter{Root: root, Names: make([]string, 0, len(names))}
	for name := range names {
		f.Names = append(f.Names, name)
	}
	sort.Strings(f.Names)
	f.prog = compileProgram(root)
	return f
}

func collectNames(n Node, names map[string]struct{}) {
	switch n := n.(type) {
	case *CompareNode:
		if n != nil {
			names[n.Property] = struct{}{}
		}
	case *AndNode:
		if n != nil {
			collectNames(n.X, names)
			collectNames(n.Y, names)
		}
	case *OrNode:
		if n != nil {
			collectNames(n.X, names)
			collectNames(n.Y, names)
		}
	case *NotNode:
		if n != nil {
			collectNames(n.X, names)
		}
	}
}

// checker converts syntax trees to checked trees.
type checker struct{}

func checkError(code edm.Code, pos int, msg string) error {
	return newError(code, "", pos, msg)
}

// check converts one boolean expression. depth guards hand-built trees
// deeper than any the parser would produce.
func (c *checker) check(x Expr, depth int) (Node, error) {
	if isNilExpr(x) {
		return nil, checkError(edm.CodeInvalidInput, 0, "missing expression")
	}
	if depth > hardMaxDepth {
		return nil, checkError(edm.CodeInvalidInput, posOf(x), "nesting deeper than the limit of "+strconv.Itoa(hardMaxDepth))
	}
	switch x := x.(type) {
	case *BinaryExpr:
		if isNilExpr(x.X) || isNilExpr(x.Y) {
			return nil, checkError(edm.CodeInvalidInput, x.OpPos, "missing operand of "+x.Op.String())
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
			return fold(l, r, false, joinAnd), nil
		case TokOr:
			return fold(l, r, true, joinOr), nil
		}
		return nil, checkError(edm.CodeInvalidInput, x.OpPos, "expected and or or, found "+x.Op.String())
	case *UnaryExpr:
		if x.Op != TokNot {
			return nil, checkError(edm.CodeInvalidInput, x.OpPos, "expected not, found "+x.Op.String())
		}
		if isNilExpr(x.X) {
			return nil, checkError(edm.CodeInvalidInput, x.OpPos, "missing operand of not")
		}
		n, err := c.check(x.X, depth+1)
		if err != nil {
			return nil, err
		}
		if k, ok := n.(*ConstNode); ok {
			return &ConstNode{Value: !k.Value}, nil
		}
		return &NotNode{X: n}, nil
	case *ParenExpr:
		if isNilExpr(x.X) {
			return nil, checkError(edm.CodeInvalidInput, x.Lparen, "empty parentheses")
		}
		return c.check(x.X, depth+1)
	case *Ident:
		return &CompareNode{Property: x.Name, Op: OpEQ, Value: edm.Value{Type: edm.TypeBoolean, Int: 1}}, nil
	case *BasicLit:
		if x.Kind == TokBoolean {
			v, msg := parseLiteral(x.Kind, x.Value)
			if msg != "" {
				return nil, checkError(edm.CodeInvalidInput, x.ValuePos, msg)
			}
			return &ConstNode{Value: v.Int == 1}, nil
		}
		return nil, checkError(edm.CodeNotImplemented, x.ValuePos, "a constant other than true or false is not a condition")
	case *ComparisonExpr:
		return c.checkComparison(x)
	}
	return nil, checkError(edm.CodeInvalidInput, 0, "unknown expression")
}

// fold returns `l op r` built by join, folding a constant operand away:
// the operator's absorbing constant (false for and, true for or) is the
// result, the other constant is dropped.
func fold(l, r Node, absorbing bool, join func(x, y Node) Node) Node {
	for _, p := range [2][2]Node{{l, r}, {r, l}} {
		if k, ok := p[0].(*ConstNode); ok {
			if k.Value == absorbing {
				return k
			}
			return p[1]
		}
	}
	return join(l, r)
}

func joinAnd(x, y Node) Node { return &AndNode{X: x, Y: y} }
func joinOr(x, y Node) Node  { return &OrNode{X: x, Y: y} }

// isNilExpr reports whether x is nil or a nil pointer, which only a
// hand-built tree can hold.
func isNilExpr(x Expr) bool {
	switch x := x.(type) {
	case nil:
		return true
	case *BinaryExpr:
		return x == nil
	case *UnaryExpr:
		return x == nil
	case *ParenExpr:
		return x == nil
	case *ComparisonExpr:
		return x == nil
	case *Ident:
		return x == nil
	case *BasicLit:
		return x == nil
	}
	return false
}

// posOf returns the position of x without trusting its children.
func posOf(x Expr) int {
	switch x := x.(type) {
	case *BinaryExpr:
		if isNilExpr(x.X) {
			return x.OpPos
		}
		return posOf(x.X)
	case *ComparisonExpr:
		if isNilExpr(x.X) {
			return x.OpPos
		}
		return posOf(x.X)
	}
	if isNilExpr(x) {
		return 0
	}
	return x.Pos()
}

func (c *checker) checkComparison(x *ComparisonExpr) (Node, error) {
	if x.Op < OpEQ || x.Op > OpLE {
		return nil, checkError(edm.CodeInvalidInput, x.OpPos, "unknown comparison operator")
	}
	if isNilExpr(x.X) || isNilExpr(x.Y) {
		return nil, checkError(edm.CodeInvalidInput, x.OpPos, "missing operand of "+x.Op.String())
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
		return nil, checkError(edm.CodeNotImplemented, x.Pos(), "comparing two properties is not supported")
	case xLit && yLit:
		return nil, checkError(edm.CodeNotImplemented, x.Pos(), "comparing two constants is not supported")
	case xIdent && yLit:
		name, lit = xi.Name, yl
	case xLit && yIdent:
		name, lit, op = yi.Name, xl, op.Flip()
	default:
		return nil, checkError(edm.CodeInvalidInput, x.Pos(), "comparison operands must be a property name and a literal")
	}
	v, msg := parseLiteral(lit.Kind, lit.Value)
	if msg != "" {
		return nil, checkError(edm.CodeInvalidInput, lit.ValuePos, msg)
	}
	return &CompareNode{Property: name, Op: op, Value: v}, nil
}
