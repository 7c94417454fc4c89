package filter

import "strconv"

// Token is the kind of a lexical token of a filter.
type Token uint8

// The tokens. Keywords are lowercase only, as in Azure: `And` or `EQ` are
// property names, not operators.
const (
	TokIllegal Token = iota // a malformed token; the scanner reports why
	TokEOF                  // end of the filter

	// Operands.
	TokIdent    // Name
	TokString   // 'text'
	TokInt32    // 123, -5
	TokInt64    // 123L
	TokDouble   // 1.5, 1e10, 3D
	TokBoolean  // true, false
	TokDateTime // datetime'2008-07-10T00:00:00Z'
	TokGuid     // guid'a455c695-df98-5678-aaaa-81d3367e5a34'
	TokBinary   // X'0A0B', x'0a0b', binary'0a0b'
	TokNull     // null (recognised only to be rejected)

	// Punctuation.
	TokLParen // (
	TokRParen // )
	TokComma  // ,

	// Comparison operators.
	TokEQ // eq
	TokNE // ne
	TokGT // gt
	TokGE // ge
	TokLT // lt
	TokLE // le

	// Logical operators.
	TokAnd // and
	TokOr  // or
	TokNot // not

	// Arithmetic, recognised only to be rejected as not implemented.
	TokAdd   // add
	TokSub   // sub
	TokMul   // mul
	TokDiv   // div
	TokMod   // mod
	TokPlus  // +
	TokMinus // -
	TokStar  // *
	TokSlash // /
)

var tokenNames = [...]string{
	TokIllegal:  "illegal token",
	TokEOF:      "end of filter",
	TokIdent:    "property name",
	TokString:   "string literal",
	TokInt32:    "Edm.Int32 literal",
	TokInt64:    "Edm.Int64 literal",
	TokDouble:   "Edm.Double literal",
	TokBoolean:  "Edm.Boolean literal",
	TokDateTime: "Edm.DateTime literal",
	TokGuid:     "Edm.Guid literal",
	TokBinary:   "Edm.Binary literal",
	TokNull:     "null",
	TokLParen:   "(",
	TokRParen:   ")",
	TokComma:    ",",
	TokEQ:       "eq",
	TokNE:       "ne",
	TokGT:       "gt",
	TokGE:       "ge",
	TokLT:       "lt",
	TokLE:       "le",
	TokAnd:      "and",
	TokOr:       "or",
	TokNot:      "not",
	TokAdd:      "add",
	TokSub:      "sub",
	TokMul:      "mul",
	TokDiv:      "div",
	TokMod:      "mod",
	TokPlus:     "+",
	TokMinus:    "-",
	TokStar:     "*",
	TokSlash:    "/",
}

// String returns the spelling of an operator or punctuation token and a
// description of the others, such as "string literal".
func (t Token) String() string {
	if int(t) < len(tokenNames) {
		return tokenNames[t]
	}
	return "token(" + strconv.Itoa(int(t)) + ")"
}

// IsLiteral reports whether t is a literal token (null included).
func (t Token) IsLiteral() bool { return t >= TokString && t <= TokNull }

// IsComparison reports whether t is one of eq ne gt ge lt le.
func (t Token) IsComparison() bool { return t >= TokEQ && t <= TokLE }

// IsArithmetic reports whether t is an arithmetic operator, which Azure
// does not implement.
func (t Token) IsArithmetic() bool { return t >= TokAdd && t <= TokSlash }

// Op returns the comparison operator of a comparison token, and 0 for any
// other token.
func (t Token) Op() Op {
	if !t.IsComparison() {
		return 0
	}
	return OpEQ + Op(t-TokEQ)
}

// keywords maps the lowercase words with a meaning to their tokens.
var keywords = map[string]Token{
	"eq":    TokEQ,
	"ne":    TokNE,
	"gt":    TokGT,
	"ge":    TokGE,
	"lt":    TokLT,
	"le":    TokLE,
	"and":   TokAnd,
	"or":    TokOr,
	"not":   TokNot,
	"true":  TokBoolean,
	"false": TokBoolean,
	"null":  TokNull,
	"add":   TokAdd,
	"sub":   TokSub,
	"mul":   TokMul,
	"div":   TokDiv,
	"mod":   TokMod,
}

// Lookup returns the token of ident: a keyword token, or TokIdent.
func Lookup(ident string) Token {
	if t, ok := keywords[ident]; ok {
		return t
	}
	return TokIdent
}
