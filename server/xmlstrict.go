package server

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/tablestore/tablestore/edm"
)

// The XML bodies (Set Table ACL, Set Service Properties) are read
// strictly, as Azure reads them: into a tree first, which is then checked
// against the document's schema. An unknown element, an element in the
// wrong place or repeated, text where elements belong, attributes, a
// namespace, a DOCTYPE or a bad value make the whole document
// InvalidXmlDocument, and nothing changes.

// xmlElem is one element of a parsed document: its local name, its child
// elements in document order, and, for a leaf, its text trimmed of
// surrounding white space.
type xmlElem struct {
	name     string
	children []*xmlElem
	text     string
}

// Limits on a parsed XML document.
const (
	maxXMLDepth    = 8
	maxXMLElements = 2048
)

// parseXML reads body into a tree. Errors: errBadXML for anything that is
// not one well-formed, namespace-free element with no attributes, or that
// breaks the depth and element limits.
func parseXML(body []byte) (*xmlElem, error) {
	d := xml.NewDecoder(bytes.NewReader(body))
	d.Strict = true
	var root *xmlElem
	var stack []*xmlElem
	var text []*strings.Builder
	elements, started := 0, false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, errBadXML
		}
		switch t := tok.(type) {
		case xml.ProcInst:
			if t.Target != "xml" || started {
				return nil, errBadXML
			}
		case xml.Directive: // DOCTYPE, ENTITY
			return nil, errBadXML
		case xml.Comment:
		case xml.StartElement:
			started = true
			elements++
			if t.Name.Space != "" || len(stack) >= maxXMLDepth || elements > maxXMLElements {
				return nil, errBadXML
			}
			for _, a := range t.Attr {
				if a.Name.Space != "xmlns" && !(a.Name.Space == "" && a.Name.Local == "xmlns") {
					return nil, errBadXML
				}
			}
			e := &xmlElem{name: t.Name.Local}
			switch {
			case len(stack) > 0:
				parent := stack[len(stack)-1]
				parent.children = append(parent.children, e)
			case root != nil:
				return nil, errBadXML // a second root
			default:
				root = e
			}
			stack = append(stack, e)
			text = append(text, &strings.Builder{})
		case xml.EndElement:
			e := stack[len(stack)-1]
			s := strings.TrimSpace(text[len(text)-1].String())
			if len(e.children) > 0 && s != "" {
				return nil, errBadXML // text mixed with elements
			}
			e.text = s
			stack, text = stack[:len(stack)-1], text[:len(text)-1]
		case xml.CharData:
			if len(stack) == 0 {
				if len(bytes.TrimSpace(t)) > 0 {
					return nil, errBadXML
				}
				continue
			}
			text[len(text)-1].Write(t)
		}
	}
	if root == nil {
		return nil, errBadXML
	}
	return root, nil
}

// xmlRule is the schema of one element. An element with children rules
// holds only those children, each between its min and max times, in any
// order, and no text; a leaf holds text that value (when set) accepts.
// check, when set, is a further rule on the whole element.
type xmlRule struct {
	children []xmlChild
	value    func(string) bool
	check    func(*xmlElem) bool
}

// xmlChild is a child element's rule and how many times it may appear.
type xmlChild struct {
	name     string
	rule     *xmlRule
	min, max int
}

// errBadXMLValue is a leaf whose text its rule refuses.
var errBadXMLValue = apiError(http.StatusBadRequest, edm.CodeInvalidXMLNodeValue, "The value for one of the XML nodes is not in the correct format.")

// validate checks e against r. Errors: errBadXML for elements unknown,
// misplaced, repeated or missing; errBadXMLValue for a leaf's text.
func (r *xmlRule) validate(e *xmlElem) error {
	if r.children == nil {
		if len(e.children) > 0 {
			return errBadXML
		}
		if r.value != nil && !r.value(e.text) {
			return errBadXMLValue
		}
	} else {
		if e.text != "" {
			return errBadXML // text where only elements belong
		}
		counts := make([]int, len(r.children))
		for _, c := range e.children {
			i := r.childIndex(c.name)
			if i < 0 {
				return errBadXML
			}
			if counts[i]++; counts[i] > r.children[i].max {
				return errBadXML
			}
			if err := r.children[i].rule.validate(c); err != nil {
				return err
			}
		}
		for i, c := range r.children {
			if counts[i] < c.min {
				return errBadXML
			}
		}
	}
	if r.check != nil && !r.check(e) {
		return errBadXML
	}
	return nil
}

func (r *xmlRule) childIndex(name string) int {
	for i, c := range r.children {
		if c.name == name {
			return i
		}
	}
	return -1
}

// child returns e's first child named name, or nil.
func (e *xmlElem) child(name string) *xmlElem {
	for _, c := range e.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// appendXML appends e as canonical XML: its children in the order of r's
// rules, text escaped.
func (e *xmlElem) appendXML(b *bytes.Buffer, r *xmlRule) {
	b.WriteString("<" + e.name + ">")
	if r.children == nil {
		_ = xml.EscapeText(b, []byte(e.text))
	}
	for _, c := range r.children {
		for _, x := range e.children {
			if x.name == c.name {
				x.appendXML(b, c.rule)
			}
		}
	}
	b.WriteString("</" + e.name + ">")
}

// Value checks for leaves.

func xmlBool(s string) bool { return s == "true" || s == "false" }

func xmlIntRange(lo, hi int) func(string) bool {
	return func(s string) bool {
		n, err := strconv.Atoi(s)
		return err == nil && n >= lo && n <= hi
	}
}

// leaf is a leaf rule with a value check.
func leaf(value func(string) bool) *xmlRule { return &xmlRule{value: value} }
