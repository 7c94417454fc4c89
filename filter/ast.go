package filter

// This file holds the syntax tree that Parse produces. It mirrors the
// text: parentheses are kept, a literal may sit on either side of a
// comparison, and literals keep their raw spelling. Check turns it into the
// checked tree of node.go.

// Expr is a node of the syntax tree: *BinaryExpr, *UnaryExpr, *ParenExpr,
// *ComparisonExpr, *Ident or *BasicLit. Positions are 0-based byte
// offsets into the filter text; End is the offset just past the node.
type Expr interface {
	Pos() int
	End() int
	exprNode()
}

// BinaryExpr is `X and Y` or `X or Y`.
type BinaryExpr struct {
	X     Expr
	OpPos int   // position of the operator
	Op    Token // TokAnd or TokOr
	Y     Expr
}

// UnaryExpr is `not X`.
type UnaryExpr struct {
	OpPos int   // position of not
	Op    Token // TokNot
	X     Expr
}

// ParenExpr is `(X)`.
type ParenExpr struct {
	Lparen int // position of (
	X      Expr
	Rparen int // position of )
}

// ComparisonExpr is `X op Y`. Each side is an *Ident or a *BasicLit in a
// tree from Parse; Check rejects every pairing except property with
// literal.
type ComparisonExpr struct {
	X     Expr
	OpPos int // position of the operator
	Op    Op
	Y     Expr
}

// Ident is a property name. Standing alone as a condition it means
// `Name eq true`.
type Ident struct {
	NamePos int
	Name    string
}

// BasicLit is a literal with its raw spelling: 'text', -5, 5L, 1.5,
// 3D, true, datetime'…', guid'…', X'…'.
type BasicLit struct {
	ValuePos int
	Kind     Token // TokString .. TokBinary (TokNull only in hand-built trees)
	Value    string
}

func (x *BinaryExpr) Pos() int     { return x.X.Pos() }
func (x *UnaryExpr) Pos() int      { return x.OpPos }
func (x *ParenExpr) Pos() int      { return x.Lparen }
func (x *ComparisonExpr) Pos() int { return x.X.Pos() }
func (x *Ident) Pos() int          { return x.NamePos }
func (x *BasicLit) Pos() int       { return x.ValuePos }

func (x *BinaryExpr) End() int     { return x.Y.End() }
func (x *UnaryExpr) End() int      { return x.X.End() }
func (x *ParenExpr) End() int      { return x.Rparen + 1 }
func (x *ComparisonExpr) End() int { return x.Y.End() }
func (x *Ident) End() int          { return x.NamePos + len(x.Name) }
func (x *BasicLit) End() int       { return x.ValuePos + len(x.Value) }

func (*BinaryExpr) exprNode()     {}
func (*UnaryExpr) exprNode()      {}
func (*ParenExpr) exprNode()      {}
func (*ComparisonExpr) exprNode() {}
func (*Ident) exprNode()          {}
func (*BasicLit) exprNode()       {}
