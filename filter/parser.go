package filter

import (
	"strconv"

	"github.com/tablestore/tablestore/edm"
)

// hardMaxDepth bounds nesting even when Limits.MaxDepth is zero or larger,
// so that parsing, checking and evaluating never exhaust the stack.
const hardMaxDepth = 10_000

// Parse parses a filter into a syntax tree. lim bounds its size; nil means
// DefaultLimits. An empty or all-whitespace filter means "no filter":
// Parse returns a nil Expr and a nil error.
//
// Every error is an *Error. Syntax errors, malformed or out-of-range
// literals, null and exceeded limits have CodeInvalidInput; function calls
// and arithmetic have CodeNotImplemented. Comparisons of two properties or
// two constants parse; Check rejects them.
func Parse(src string, lim *Limits) (x Expr, err error) {
	l := DefaultLimits
	if lim != nil {
		l = *lim
	}
	if l.MaxLength > 0 && len(src) > l.MaxLength {
		return nil, newError(edm.CodeInvalidInput, src, l.MaxLength,
			"filter is "+strconv.Itoa(len(src))+" bytes, more than the limit of "+strconv.Itoa(l.MaxLength))
	}
	p := parser{src: src, lim: l}
	if p.lim.MaxDepth <= 0 || p.lim.MaxDepth > hardMaxDepth {
		p.lim.MaxDepth = hardMaxDepth
	}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			x, err = nil, b.err
		}
	}()
	p.sc.Init(src)
	p.next()
	if p.tok == TokEOF {
		return nil, nil
	}
	x = p.parseOr()
	if p.tok != TokEOF {
		if p.tok == TokRParen {
			p.fail(edm.CodeInvalidInput, p.pos, "unmatched ')'")
		}
		p.failExpected("'and', 'or' or end of filter")
	}
	return x, nil
}

// bailout carries an error out of the recursive descent.
type bailout struct{ err *Error }

// parser is a recursive-descent parser with one token of lookahead.
type parser struct {
	src string
	lim Limits
	sc  Scanner

	pos int    // position of the current token
	tok Token  // current token
	lit string // its text

	depth       int // open parentheses and nots
	comparisons int // comparisons and bare names so far
}

func (p *parser) next() {
	p.pos, p.tok, p.lit = p.sc.Scan()
	if p.tok == TokIllegal {
		panic(bailout{p.sc.Err()})
	}
}

func (p *parser) fail(code edm.Code, pos int, msg string) {
	panic(bailout{newError(code, p.src, pos, msg)})
}

// failExpected reports that the current token is not what the grammar
// allows here.
func (p *parser) failExpected(what string) {
	p.fail(edm.CodeInvalidInput, p.pos, "expected "+what+", found "+p.describe())
}

// describe names the current token for error messages.
func (p *parser) describe() string {
	switch {
	case p.tok == TokEOF:
		return "end of filter"
	case p.tok == TokIdent:
		return "property name " + p.lit
	case p.tok.IsLiteral():
		return p.tok.String() + " " + p.lit
	}
	return "'" + p.tok.String() + "'"
}

// failArithmetic reports the current arithmetic token, which Azure does
// not implement.
func (p *parser) failArithmetic() {
	if p.tok == TokSlash {
		p.fail(edm.CodeNotImplemented, p.pos, "property paths ('/') are not supported")
	}
	p.fail(edm.CodeNotImplemented, p.pos, "arithmetic operator '"+p.tok.String()+"' is not supported")
}

// enter records one more level of nesting at pos.
func (p *parser) enter(pos int) {
	p.depth++
	if p.depth > p.lim.MaxDepth {
		p.fail(edm.CodeInvalidInput, pos, "nesting deeper than the limit of "+strconv.Itoa(p.lim.MaxDepth))
	}
}

// count records one more comparison starting at pos.
func (p *parser) count(pos int) {
	p.comparisons++
	if p.lim.MaxComparisons > 0 && p.comparisons > p.lim.MaxComparisons {
		p.fail(edm.CodeInvalidInput, pos, "more than "+strconv.Itoa(p.lim.MaxComparisons)+" comparisons")
	}
}

// parseOr parses  and { "or" and }.
func (p *parser) parseOr() Expr {
	x := p.parseAnd()
	for p.tok == TokOr {
		pos := p.pos
		p.next()
		y := p.parseAnd()
		x = &BinaryExpr{X: x, OpPos: pos, Op: TokOr, Y: y}
	}
	return x
}

// parseAnd parses  unary { "and" unary }.
func (p *parser) parseAnd() Expr {
	x := p.parseUnary()
	for p.tok == TokAnd {
		pos := p.pos
		p.next()
		y := p.parseUnary()
		x = &BinaryExpr{X: x, OpPos: pos, Op: TokAnd, Y: y}
	}
	return x
}

// parseUnary parses  "not" unary | primary.
func (p *parser) parseUnary() Expr {
	if p.tok != TokNot {
		return p.parsePrimary()
	}
	pos := p.pos
	p.enter(pos)
	p.next()
	x := p.parseUnary()
	p.depth--
	return &UnaryExpr{OpPos: pos, Op: TokNot, X: x}
}

// parsePrimary parses  "(" or ")" | operand [ compare operand ].
func (p *parser) parsePrimary() Expr {
	if p.tok == TokLParen {
		lparen := p.pos
		p.enter(lparen)
		p.next()
		x := p.parseOr()
		if p.tok != TokRParen {
			p.failExpected("'and', 'or' or ')'")
		}
		rparen := p.pos
		p.depth--
		p.next()
		return &ParenExpr{Lparen: lparen, X: x, Rparen: rparen}
	}
	if p.tok != TokIdent && !p.tok.IsLiteral() && !p.tok.IsArithmetic() {
		p.failExpected("property name, literal, 'not' or '('")
	}
	start := p.pos
	x := p.parseOperand()
	p.count(start)
	if p.tok.IsArithmetic() {
		p.failArithmetic()
	}
	if p.tok == TokIdent || p.tok.IsLiteral() {
		p.failExpected("comparison operator")
	}
	if !p.tok.IsComparison() {
		return x
	}
	opPos, op := p.pos, p.tok.Op()
	p.next()
	y := p.parseOperand()
	if p.tok.IsArithmetic() {
		p.failArithmetic()
	}
	return &ComparisonExpr{X: x, OpPos: opPos, Op: op, Y: y}
}

// parseOperand parses a property name or a literal.
func (p *parser) parseOperand() Expr {
	pos, tok, lit := p.pos, p.tok, p.lit
	switch {
	case tok == TokIdent:
		p.next()
		if p.tok == TokLParen {
			p.fail(edm.CodeNotImplemented, pos, "function "+lit+" is not supported")
		}
		return &Ident{NamePos: pos, Name: lit}
	case tok.IsLiteral():
		if _, msg := parseLiteral(tok, lit); msg != "" {
			p.fail(edm.CodeInvalidInput, pos, msg)
		}
		p.next()
		return &BasicLit{ValuePos: pos, Kind: tok, Value: lit}
	case tok.IsArithmetic():
		p.failArithmetic()
	}
	p.failExpected("property name or literal")
	return nil
}
