package filter

import (
	"github.com/tablestore/tablestore/edm"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Error describes why a filter was rejected. Every error returned by Parse,
// Check and Compile is an *Error.
type Error struct {
	Code edm.Code // edm.CodeInvalidInput or edm.CodeNotImplemented
	Pos  int      // 0-based byte offset into Src where the problem starts
	Msg  string   // lowercase description, without position
	Src  string   // the filter text; "" when the tree was built by hand
}

// excerptWidth is the number of runes of Src that Error shows on each side
// of the position.
const excerptWidth = 40

// Error returns a one-line message with the position, followed, when the
// source is known, by a second line holding an excerpt of the source and a
// third line with a caret under the position:
//
//	filter: syntax error at position 7: expected literal
//	  Age gt and X
//	         ^
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("filter: ")
	if e.Code == edm.CodeNotImplemented {
		b.WriteString("not implemented")
	} else {
		b.WriteString("syntax error")
	}
	b.WriteString(" at position ")
	b.WriteString(strconv.Itoa(e.Pos))
	b.WriteString(": ")
	b.WriteString(e.Msg)
	if e.Src != "" {
		line, col := excerpt(e.Src, e.Pos)
		b.WriteString("\n  ")
		b.WriteString(line)
		b.WriteString("\n  ")
		b.WriteString(strings.Repeat(" ", col))
		b.WriteByte('^')
	}
	return b.String()
}

// excerpt returns a one-line window of src around byte offset pos and the
// rune column of pos within it. Control characters become spaces so that
// the caret lines up.
func excerpt(src string, pos int) (line string, col int) {
	if pos < 0 {
		pos = 0
	}
	if pos > len(src) {
		pos = len(src)
	}
	for pos > 0 && pos < len(src) && !utf8.RuneStart(src[pos]) {
		pos--
	}
	start := pos
	for n := 0; start > 0 && n < excerptWidth; n++ {
		_, size := utf8.DecodeLastRuneInString(src[:start])
		start -= size
	}
	end := pos
	for n := 0; end < len(src) && n < excerptWidth; n++ {
		_, size := utf8.DecodeRuneInString(src[end:])
		end += size
	}
	var b strings.Builder
	if start > 0 {
		b.WriteString("...")
		col = 3
	}
	for i, r := range src[start:end] {
		if r < ' ' || r == utf8.RuneError || (r >= 0x7f && r < 0xa0) {
			r = ' '
		}
		b.WriteRune(r)
		if start+i < pos {
			col++
		}
	}
	if end < len(src) {
		b.WriteString("...")
	}
	return b.String(), col
}

// newError builds an *Error.
func newError(code edm.Code, src string, pos int, msg string) *Error {
	return &Error{Code: code, Pos: pos, Msg: msg, Src: src}
}
