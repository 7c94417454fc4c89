package filter

import (
	"github.com/tablestore/tablestore/edm"
	"unicode"
	"unicode/utf8"
)

// Scanner splits a filter into tokens. It checks the lexical form of each
// token (closing quotes, digits, suffixes, literal prefixes) but not the
// content of typed literals; ParseLiteral does that.
//
// A Scanner is not safe for concurrent use.
type Scanner struct {
	src string
	off int    // offset of the next unread byte
	err *Error // first error, if any
}

// Init prepares s to scan src from the beginning.
func (s *Scanner) Init(src string) {
	s.src = src
	s.off = 0
	s.err = nil
}

// Err returns the error of the first TokIllegal that Scan returned, and
// nil if Scan has returned none.
func (s *Scanner) Err() *Error { return s.err }

// isSpace reports whether c separates tokens. Azure filters arrive URL
// decoded; besides the space, tabs and line breaks are accepted.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// identStart and identPart follow the C# identifier rules that Azure uses
// for property names: a letter or underscore, then letters, digits and
// underscores.
func identStart(r rune) bool {
	return r == '_' || (r < utf8.RuneSelf && (r|0x20 >= 'a' && r|0x20 <= 'z')) || (r >= utf8.RuneSelf && unicode.IsLetter(r))
}

func identPart(r rune) bool {
	return identStart(r) || (r >= '0' && r <= '9') || (r >= utf8.RuneSelf && (unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Pc, r)))
}

// Scan returns the next token: its byte offset, its kind and its text
// (src[pos:end], so literals keep their raw spelling, quotes included).
// At the end it returns TokEOF forever. On a malformed token it returns
// TokIllegal, and Err describes the problem.
func (s *Scanner) Scan() (pos int, tok Token, lit string) {
	for s.off < len(s.src) && isSpace(s.src[s.off]) {
		s.off++
	}
	pos = s.off
	if s.off >= len(s.src) {
		return pos, TokEOF, ""
	}
	c := s.src[s.off]
	switch {
	case c == '\'':
		if !s.scanQuoted() {
			return s.illegal(pos, "unterminated quoted literal")
		}
		return pos, TokString, s.src[pos:s.off]
	case isDigit(c):
		tok = s.scanNumber(pos)
		return pos, tok, s.src[pos:s.off]
	case c == '-' && s.off+1 < len(s.src) && isDigit(s.src[s.off+1]):
		s.off++
		tok = s.scanNumber(pos)
		return pos, tok, s.src[pos:s.off]
	}
	r, size := utf8.DecodeRuneInString(s.src[s.off:])
	if identStart(r) {
		return s.scanWord()
	}
	s.off += size
	switch c {
	case '(':
		return pos, TokLParen, "("
	case ')':
		return pos, TokRParen, ")"
	case ',':
		return pos, TokComma, ","
	case '+':
		return pos, TokPlus, "+"
	case '-':
		return pos, TokMinus, "-"
	case '*':
		return pos, TokStar, "*"
	case '/':
		return pos, TokSlash, "/"
	}
	var msg string
	switch {
	case c == '"':
		msg = "strings are quoted with ', not \""
	case r == utf8.RuneError && size <= 1:
		msg = "invalid UTF-8 byte"
	case r < ' ' || r == 0x7f:
		msg = "unexpected control character"
	default:
		msg = "unexpected character '" + string(r) + "'"
	}
	return s.illegal(pos, msg)
}

// illegal records an error at pos and returns TokIllegal.
func (s *Scanner) illegal(pos int, msg string) (int, Token, string) {
	if s.err == nil {
		s.err = newError(edm.CodeInvalidInput, s.src, pos, msg)
	}
	end := s.off
	if end < pos {
		end = pos
	}
	return pos, TokIllegal, s.src[pos:end]
}

// scanQuoted consumes a quoted section starting at s.off, in which a
// doubled quote stands for one quote. It reports false, having consumed
// the rest of the text, when the quote is not closed.
func (s *Scanner) scanQuoted() bool {
	s.off++ // opening quote
	for s.off < len(s.src) {
		if s.src[s.off] == '\'' {
			if s.off+1 < len(s.src) && s.src[s.off+1] == '\'' {
				s.off += 2
				continue
			}
			s.off++
			return true
		}
		s.off++
	}
	return false
}

// scanNumber consumes the number that starts at start, whose optional
// sign has been consumed:
// digits, an optional fraction and exponent, and an optional L or D suffix
// (either case). A number glued to a letter or digit that is not part of
// it is illegal.
func (s *Scanner) scanNumber(start int) Token {
	for s.off < len(s.src) && isDigit(s.src[s.off]) {
		s.off++
	}
	tok := TokInt32
	if s.off < len(s.src) && s.src[s.off] == '.' {
		s.off++
		if s.off >= len(s.src) || !isDigit(s.src[s.off]) {
			_, tok, _ = s.illegal(start, "expected digits after the decimal point")
			return tok
		}
		for s.off < len(s.src) && isDigit(s.src[s.off]) {
			s.off++
		}
		tok = TokDouble
	}
	if s.off < len(s.src) && (s.src[s.off] == 'e' || s.src[s.off] == 'E') {
		s.off++
		if s.off < len(s.src) && (s.src[s.off] == '+' || s.src[s.off] == '-') {
			s.off++
		}
		if s.off >= len(s.src) || !isDigit(s.src[s.off]) {
			_, tok, _ = s.illegal(start, "expected digits in the exponent")
			return tok
		}
		for s.off < len(s.src) && isDigit(s.src[s.off]) {
			s.off++
		}
		tok = TokDouble
	}
	if s.off < len(s.src) {
		switch s.src[s.off] {
		case 'L', 'l':
			if tok == TokInt32 {
				s.off++
				tok = TokInt64
			}
		case 'D', 'd':
			s.off++
			tok = TokDouble
		}
	}
	if s.off < len(s.src) {
		r, size := utf8.DecodeRuneInString(s.src[s.off:])
		if identPart(r) || r == '.' || r == '\'' {
			s.off += size
			_, tok, _ = s.illegal(start, "malformed number")
			return tok
		}
	}
	return tok
}

// scanWord consumes an identifier, a keyword, or a typed literal: a
// lowercase prefix glued to a quoted section, as in datetime'…'.
func (s *Scanner) scanWord() (int, Token, string) {
	pos := s.off
	for s.off < len(s.src) {
		r, size := utf8.DecodeRuneInString(s.src[s.off:])
		if !identPart(r) {
			break
		}
		s.off += size
	}
	word := s.src[pos:s.off]
	if tok := Lookup(word); tok != TokIdent {
		return pos, tok, word
	}
	if s.off < len(s.src) && s.src[s.off] == '\'' {
		var tok Token
		switch word {
		case "datetime":
			tok = TokDateTime
		case "guid":
			tok = TokGuid
		case "X", "x", "binary":
			tok = TokBinary
		default:
			s.scanQuoted()
			return s.illegal(pos, "unknown literal prefix '"+word+"'")
		}
		if !s.scanQuoted() {
			return s.illegal(pos, "unterminated quoted literal")
		}
		return pos, tok, s.src[pos:s.off]
	}
	return pos, TokIdent, word
}
