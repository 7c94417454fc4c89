package modeltest

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/tablestore/tablestore/edm"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	ts "github.com/tablestore/tablestore"
)

// ParseOp reads one operation's line, as Op.String prints it. Fields may
// come in any order; an unknown kind or field, a repeated field, a
// malformed value or a missing field the kind needs is an error naming
// the byte offset.
func ParseOp(line string) (Op, error) {
	op, err := parseOp(line)
	if err != nil {
		return Op{}, fmt.Errorf("tablestore: modeltest: %w", err)
	}
	return op, nil
}

func parseOp(line string) (Op, error) {
	p := &parser{s: line}
	var op Op
	err := p.run(func() {
		op.kind = kind(p.word())
		if !slices.Contains(kinds, op.kind) {
			p.failf("unknown operation %q", op.kind)
		}
		p.fields(0, op.setField)
		if msg := op.missing(); msg != "" {
			p.failf("%s", msg)
		}
	})
	return op, err
}

// ReadLog reads a log as Log.WriteTo writes it. Blank lines and lines
// starting with "#" are comments; the first other line must be "seed N".
// An error names the line.
func ReadLog(r io.Reader) (*Log, error) {
	l, err := readLog(r)
	if err != nil {
		return nil, fmt.Errorf("tablestore: modeltest: %w", err)
	}
	return l, nil
}

// LoadLog reads the log in file path (see ReadLog).
func LoadLog(path string) (*Log, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("tablestore: modeltest: %w", err)
	}
	defer f.Close()
	l, err := readLog(f)
	if err != nil {
		return nil, fmt.Errorf("tablestore: modeltest: %s: %w", path, err)
	}
	return l, nil
}

func readLog(r io.Reader) (*Log, error) {
	br := bufio.NewReader(r)
	l := &Log{}
	seen := false
	for n := 1; ; n++ {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return nil, err
		}
		text := strings.TrimRight(line, "\r\n")
		switch {
		case strings.TrimSpace(text) == "" || strings.HasPrefix(text, "#"):
		case !seen:
			s, ok := strings.CutPrefix(text, "seed ")
			v, perr := strconv.ParseInt(s, 10, 64)
			if !ok || perr != nil {
				return nil, fmt.Errorf("line %d: want \"seed N\", got %q", n, text)
			}
			l.Seed, seen = v, true
		default:
			op, perr := parseOp(text)
			if perr != nil {
				return nil, fmt.Errorf("line %d: %w", n, perr)
			}
			l.Ops = append(l.Ops, op)
		}
		if err == io.EOF {
			break
		}
	}
	if !seen {
		return nil, errors.New("no seed line")
	}
	return l, nil
}

// missing returns what a parsed op lacks for its kind, or "".
func (op *Op) missing() string {
	if op.kind != kindReopen && op.kind != kindListTables && op.kind != kindAdvance && op.table == "" {
		return "no table"
	}
	switch {
	case (op.kind == kindCreateIndex || op.kind == kindDropIndex) && op.index == "":
		return "no index"
	case op.kind == kindCreateIndex && op.props == nil:
		return "no props"
	case op.kind == kindAdvance && op.dur <= 0:
		return "no positive dur"
	}
	switch op.kind {
	case kindInsert, kindUpdate, kindUpsert, kindPartitionInsert, kindPartitionUpsert, kindPartitionUpdate:
		if op.entity == nil {
			return "no entity"
		}
	}
	switch op.kind {
	case kindUpdate, kindUpsert, kindPartitionUpsert, kindPartitionUpdate:
		if op.mode == 0 {
			return "no mode"
		}
	}
	for _, a := range slices.Concat(op.actions, op.writes) {
		if a.entity == nil {
			return "an action has no entity"
		}
	}
	for _, a := range op.writes {
		if a.typ != ts.ActionDelete && a.typ != ts.ActionUpsertReplace {
			return "a write between pages is a delete or an upsert-replace"
		}
	}
	return ""
}

// setField reads the field name's value (if it has one) into op.
func (op *Op) setField(p *parser, name string) {
	switch name {
	case "table":
		op.table = p.quotedValue()
	case "pk":
		op.pk = p.quotedValue()
	case "rk":
		op.rk = p.quotedValue()
	case "prefix":
		op.prefix = p.quotedValue()
	case "from":
		op.from = p.quotedValue()
	case "to":
		op.to = p.quotedValue()
	case "filter":
		op.filter = p.quotedValue()
	case "kept":
		op.kept = true
	case "all":
		op.all = true
	case "empty-pk":
		op.emptyPK = true
	case "iterate":
		op.iterate = true
	case "reverse":
		op.reverse = true
	case "mode":
		p.expect('=')
		op.mode = p.mode()
	case "if-match":
		p.expect('=')
		op.ifMatch = p.ifMatch()
	case "select":
		p.expect('=')
		op.sel = p.stringList()
	case "top":
		p.expect('=')
		op.top = p.int()
	case "n":
		p.expect('=')
		op.n = p.int()
	case "want":
		p.expect('=')
		op.want = ts.Code(p.word())
	case "fault":
		p.expect('=')
		op.fault = p.word()
	case "entity":
		p.expect('=')
		op.entity = p.entity()
	case "actions":
		p.expect('=')
		op.actions = p.actions()
	case "writes":
		p.expect('=')
		op.writes = p.actions()
	case "index":
		op.index = p.quotedValue()
	case "props":
		p.expect('=')
		op.props = p.stringList()
	case "partitioned":
		op.partitioned = true
	case "prop":
		op.prop = p.quotedValue()
	case "dur":
		p.expect('=')
		d, err := time.ParseDuration(p.word())
		if err != nil {
			p.failf("bad dur: %v", err)
		}
		op.dur = d
	case "images":
		p.expect('=')
		if w := p.word(); w != "new" {
			p.failf("images=%q: want images=new (keys only is the default)", w)
		}
		op.images = ts.ImagesNew
	default:
		p.failf("unknown field %q", name)
	}
}

// parser reads one line. Its methods stop at the first error with a
// panic that run recovers: they never return a partial value.
type parser struct {
	s   string
	pos int
}

// parseError carries a parse failure from the point of failure to run.
type parseError struct{ err error }

// run calls f and returns the error of the first failf in it.
func (p *parser) run(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			pe, ok := r.(parseError)
			if !ok {
				panic(r)
			}
			err = pe.err
		}
	}()
	f()
	return nil
}

func (p *parser) failf(format string, args ...any) {
	panic(parseError{fmt.Errorf("offset %d: %s", p.pos, fmt.Sprintf(format, args...))})
}

func (p *parser) skipSpace() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// peek returns the next byte after spaces, or 0 at the end.
func (p *parser) peek() byte {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return 0
	}
	return p.s[p.pos]
}

func (p *parser) expect(c byte) {
	if p.peek() != c {
		p.failf("want %q", c)
	}
	p.pos++
}

// wordByte reports whether c can be part of a word: a kind, a field name,
// a code or an unquoted value.
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '+' || c == '*'
}

// word reads a non-empty run of word bytes.
func (p *parser) word() string {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.s) && wordByte(p.s[p.pos]) {
		p.pos++
	}
	if p.pos == start {
		p.failf("want a word")
	}
	return p.s[start:p.pos]
}

// fields reads name[=value] fields until end (0: the end of the line),
// calling set after each name; set reads the value. A repeated name is
// an error.
func (p *parser) fields(end byte, set func(*parser, string)) {
	seen := map[string]bool{}
	for {
		c := p.peek()
		if c == end {
			return
		}
		if c == 0 {
			p.failf("want %q", end)
		}
		name := p.word()
		if seen[name] {
			p.failf("field %q repeated", name)
		}
		seen[name] = true
		set(p, name)
	}
}

// quoted reads a Go-quoted string.
func (p *parser) quoted() string {
	if p.peek() != '"' {
		p.failf("want a quoted string")
	}
	start := p.pos
	for i := start + 1; i < len(p.s); i++ {
		switch p.s[i] {
		case '\\':
			i++
		case '"':
			s, err := strconv.Unquote(p.s[start : i+1])
			if err != nil {
				p.failf("bad string %s", p.s[start:i+1])
			}
			p.pos = i + 1
			return s
		}
	}
	p.failf("unterminated string")
	return ""
}

// quotedValue reads ="...".
func (p *parser) quotedValue() string {
	p.expect('=')
	return p.quoted()
}

func (p *parser) int() int {
	w := p.word()
	v, err := strconv.Atoi(w)
	if err != nil {
		p.failf("bad integer %q", w)
	}
	return v
}

func (p *parser) mode() ts.UpdateMode {
	w := p.word()
	for _, m := range []ts.UpdateMode{ts.Merge, ts.Replace} {
		if m.String() == w {
			return m
		}
	}
	p.failf("bad mode %q", w)
	return 0
}

func (p *parser) ifMatch() ifMatch {
	w := p.word()
	switch w {
	case "*", "current", "stale", "garbage":
		return ifMatch(w)
	}
	if n, ok := strings.CutPrefix(w, "v"); ok {
		if _, err := strconv.ParseUint(n, 10, 31); err == nil {
			return ifMatch(w)
		}
	}
	p.failf("bad if-match %q", w)
	return ""
}

// stringList reads ["a","b"] (commas optional); [] is an empty, non-nil
// list.
func (p *parser) stringList() []string {
	p.expect('[')
	list := []string{}
	for {
		switch p.peek() {
		case ']':
			p.pos++
			return list
		case ',':
			p.pos++
		default:
			list = append(list, p.quoted())
		}
	}
}

// actions reads [{type=... if-match=... struct entity=...} ...].
func (p *parser) actions() []action {
	p.expect('[')
	list := []action{}
	for p.peek() != ']' {
		p.expect('{')
		var a action
		p.fields('}', func(p *parser, name string) {
			switch name {
			case "type":
				p.expect('=')
				w := p.word()
				for t, n := range actionNames {
					if n == w {
						a.typ = t
					}
				}
				if a.typ == 0 {
					p.failf("bad action type %q", w)
				}
			case "if-match":
				p.expect('=')
				a.ifMatch = p.ifMatch()
			case "struct":
				a.asStruct = true
			case "entity":
				p.expect('=')
				a.entity = p.entity()
			default:
				p.failf("unknown action field %q", name)
			}
		})
		p.pos++ // '}'
		if a.typ == 0 {
			p.failf("action without a type")
		}
		list = append(list, a)
	}
	p.pos++ // ']'
	return list
}

// entity reads ("pk","rk"){"Name":value ...}.
func (p *parser) entity() *ts.Entity {
	e := &ts.Entity{Properties: map[string]any{}}
	p.expect('(')
	e.PartitionKey = p.quoted()
	p.expect(',')
	e.RowKey = p.quoted()
	p.expect(')')
	p.expect('{')
	for p.peek() != '}' {
		name := p.quoted()
		if _, dup := e.Properties[name]; dup {
			p.failf("property %q repeated", name)
		}
		p.expect(':')
		e.Properties[name] = p.value()
	}
	p.pos++
	return e
}

// args reads the text between the parentheses that follow a value's type
// name.
func (p *parser) args() string {
	p.expect('(')
	end := strings.IndexByte(p.s[p.pos:], ')')
	if end < 0 {
		p.failf("want ')'")
	}
	s := p.s[p.pos : p.pos+end]
	p.pos += end + 1
	return s
}

// value reads one property value as formatValue prints it.
func (p *parser) value() any {
	if p.peek() == '"' {
		return p.quoted()
	}
	w := p.word()
	switch w {
	case "null":
		return nil
	case "true":
		return true
	case "false":
		return false
	case "repeat":
		p.expect('(')
		s := p.quoted()
		p.expect(',')
		n := p.int()
		p.expect(')')
		if len(s) != 1 || n < 0 {
			p.failf("bad repeat")
		}
		return strings.Repeat(s, n)
	}
	at := p.pos
	arg := p.args()
	bad := func(err error) {
		p.pos = at
		p.failf("bad %s(%s): %v", w, arg, err)
	}
	switch w {
	case "int32":
		v, err := strconv.ParseInt(arg, 10, 32)
		if err != nil {
			bad(err)
		}
		return int32(v)
	case "int64":
		v, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			bad(err)
		}
		return v
	case "double":
		v, err := strconv.ParseFloat(arg, 64)
		if err != nil {
			bad(err)
		}
		return v
	case "datetime":
		instant, zone, zoned := strings.Cut(arg, ", ")
		v, err := time.Parse(time.RFC3339Nano, instant)
		if err != nil || !strings.HasSuffix(instant, "Z") {
			bad(fmt.Errorf("want an instant in UTC (%v)", err))
		}
		if zoned {
			z, err := time.Parse("-07:00", zone)
			if err != nil {
				bad(err)
			}
			_, off := z.Zone()
			v = v.In(time.FixedZone("", off))
		}
		return v
	case "guid":
		v, ok := edm.ParseGUID(arg)
		if !ok {
			bad(fmt.Errorf("malformed guid %q", arg))
		}
		return v
	case "binary":
		v, err := hex.DecodeString(arg)
		if err != nil {
			bad(err)
		}
		return append([]byte{}, v...)
	case "zeros":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			bad(fmt.Errorf("not a length"))
		}
		return make([]byte, n)
	case "invalid":
		if f, ok := invalidValues[arg]; ok {
			return f()
		}
		bad(fmt.Errorf("no such value"))
	}
	p.pos = at
	p.failf("unknown value type %q", w)
	return nil
}
