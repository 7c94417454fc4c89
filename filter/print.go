package filter

import (
	"strconv"
	"strings"
)

// Precedence of the syntax, lowest first.
const (
	precOr      = 1
	precAnd     = 2
	precNot     = 3
	precPrimary = 4
)

// Print returns the canonical text of a syntax tree: tokens separated by
// single spaces, parentheses written as `(x)`, literals in their raw
// spelling. For a tree from Parse, Parse(Print(x)) gives the same tree
// except for positions. For a hand-built tree whose shape needs
// parentheses that it lacks (an or under an and, a right operand of the
// same operator), Print adds them, so the text keeps the tree's meaning
// and reparses with extra ParenExprs. A nil x prints as "".
func Print(x Expr) string {
	var b strings.Builder
	printExpr(&b, x, 0)
	return b.String()
}

func exprPrec(x Expr) int {
	switch x := x.(type) {
	case *BinaryExpr:
		if x.Op == TokOr {
			return precOr
		}
		return precAnd
	case *UnaryExpr:
		return precNot
	}
	return precPrimary
}

// printExpr writes x, in parentheses when its precedence is below min.
func printExpr(b *strings.Builder, x Expr, min int) {
	if isNilExpr(x) {
		return
	}
	if exprPrec(x) < min {
		b.WriteByte('(')
		printExpr(b, x, 0)
		b.WriteByte(')')
		return
	}
	switch x := x.(type) {
	case *BinaryExpr:
		p := exprPrec(x)
		printExpr(b, x.X, p)
		b.WriteByte(' ')
		b.WriteString(x.Op.String())
		b.WriteByte(' ')
		printExpr(b, x.Y, p+1)
	case *UnaryExpr:
		b.WriteString(x.Op.String())
		b.WriteByte(' ')
		printExpr(b, x.X, precNot)
	case *ParenExpr:
		b.WriteByte('(')
		printExpr(b, x.X, 0)
		b.WriteByte(')')
	case *ComparisonExpr:
		printExpr(b, x.X, precPrimary)
		b.WriteByte(' ')
		b.WriteString(x.Op.String())
		b.WriteByte(' ')
		printExpr(b, x.Y, precPrimary)
	case *Ident:
		b.WriteString(x.Name)
	case *BasicLit:
		b.WriteString(x.Value)
	}
}

// Format returns the canonical text of a checked tree, such as
// `Age ge 30 and (City eq 'Lisbon' or Active eq true)`: the property on the
// left, literals as FormatLiteral writes them, `not (…)` always
// parenthesised, and other parentheses only where the tree's shape needs
// them. Compile(Format(n)) gives a tree equal to n (for literals that have
// a text form). A nil n formats as "".
func Format(n Node) string {
	var b strings.Builder
	formatNode(&b, n, 0)
	return b.String()
}

func nodePrec(n Node) int {
	switch n.(type) {
	case *OrNode:
		return precOr
	case *AndNode:
		return precAnd
	case *NotNode:
		return precNot
	}
	return precPrimary
}

func formatNode(b *strings.Builder, n Node, min int) {
	if n != nil && nodePrec(n) < min {
		b.WriteByte('(')
		formatNode(b, n, 0)
		b.WriteByte(')')
		return
	}
	switch n := n.(type) {
	case *OrNode:
		formatNode(b, n.X, precOr)
		b.WriteString(" or ")
		formatNode(b, n.Y, precOr+1)
	case *AndNode:
		formatNode(b, n.X, precAnd)
		b.WriteString(" and ")
		formatNode(b, n.Y, precAnd+1)
	case *NotNode:
		b.WriteString("not (")
		formatNode(b, n.X, 0)
		b.WriteByte(')')
	case *CompareNode:
		b.WriteString(n.Property)
		b.WriteByte(' ')
		b.WriteString(n.Op.String())
		b.WriteByte(' ')
		b.WriteString(FormatLiteral(n.Value))
	case *ConstNode:
		b.WriteString(strconv.FormatBool(n.Value))
	}
}

// String returns Format(f.Root): the canonical text of the filter, "" for
// the empty filter.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	return Format(f.Root)
}

func (n *AndNode) String() string     { return Format(n) }
func (n *OrNode) String() string      { return Format(n) }
func (n *NotNode) String() string     { return Format(n) }
func (n *CompareNode) String() string { return Format(n) }
