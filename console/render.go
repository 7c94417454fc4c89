package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/filter"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// pageSet holds one parsed template per page, each with the layout.
type pageSet struct {
	pages map[string]*template.Template
}

// pageData is what every page's template gets.
type pageData struct {
	Title     string
	Prefix    string
	CSRF      string
	Account   string
	SignedIn  bool
	StoreName string
	Table     string // the table the page is about, for the table tabs
	Tab       string // the active tab
	Body      any    // the page's own data
}

// messageBody is the data of the message page.
type messageBody struct {
	Heading string
	Text    string
	Code    tablestore.Code
	Links   []link
}

type link struct{ Text, Href string }

var templateFuncs = template.FuncMap{
	"group":    groupDigits,
	"group64":  func(n int) string { return groupDigits(int64(n)) },
	"bytes":    formatBytes,
	"inc":      func(i int) int { return i + 1 },
	"pathesc":  url.PathEscape,
	"queryesc": url.QueryEscape,
	"edmtypes": func() []string { return edmTypes },
	"typehint": typeHint,
	"blankrow": func() propRow { return propRow{N: 0, Type: edm.TypeString.String()} },
	"feedform": newFeedFormView,
	"percent":  percent,
}

// feedFormView is the data of the change feed form (partial "feedform").
type feedFormView struct {
	Prefix, Path, Name, CSRF string
	Back                     string // "changes" to come back to the Changes page
	On                       bool
	Retention, Images        string
}

// newFeedFormView fills the change feed form of table name from the
// feed's settings, or from the form sent (after an error).
func newFeedFormView(prefix, name, csrf string, feed *feedView, sent *feedForm, back string) feedFormView {
	v := feedFormView{Prefix: prefix, Path: url.PathEscape(name), Name: name, CSRF: csrf, Back: back,
		Retention: formatDuration(tablestore.DefaultChangeRetention), Images: tablestore.ImagesKeysOnly.String()}
	if feed != nil {
		v.On, v.Retention, v.Images = feed.On, feed.Retention, feed.Images
	}
	if sent != nil {
		v.Retention, v.Images = sent.Retention, sent.Images
	}
	return v
}

// percent writes part/whole as a whole percentage, "<1%" for a small
// nonzero part.
func percent(part, whole int) string {
	if whole <= 0 {
		return "0%"
	}
	p := part * 100 / whole
	if p == 0 && part > 0 {
		return "<1%"
	}
	return strconv.Itoa(p) + "%"
}

// typeHint is an example value of an EDM type, for empty inputs.
func typeHint(typ string) string {
	switch typ {
	case "Edm.String":
		return "text"
	case "Edm.Int32":
		return "-2147483648 to 2147483647"
	case "Edm.Int64":
		return "whole number, 64-bit"
	case "Edm.Double":
		return "1.5, 2e10, NaN, Infinity"
	case "Edm.Boolean":
		return "true or false"
	case "Edm.DateTime":
		return "2026-01-02T03:04:05.1234567Z"
	case "Edm.Guid":
		return "01234567-89ab-cdef-0123-456789abcdef"
	case "Edm.Binary":
		return "base64"
	}
	return ""
}

// loadPages parses every page template with the layout.
func loadPages() (*pageSet, error) {
	layout, err := templateFS.ReadFile("templates/layout.html")
	if err != nil {
		return nil, err
	}
	partials, err := templateFS.ReadFile("templates/partials.html")
	if err != nil {
		return nil, err
	}
	entries, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	ps := &pageSet{pages: map[string]*template.Template{}}
	for _, path := range entries {
		name := strings.TrimSuffix(strings.TrimPrefix(path, "templates/"), ".html")
		if name == "layout" || name == "partials" {
			continue
		}
		src, err := templateFS.ReadFile(path)
		if err != nil {
			return nil, err
		}
		t, err := template.New("layout").Funcs(templateFuncs).Parse(string(layout))
		if err == nil {
			_, err = t.New("partials").Parse(string(partials))
		}
		if err == nil {
			_, err = t.New(name).Parse(string(src))
		}
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", name, err)
		}
		ps.pages[name] = t
	}
	return ps, nil
}

// render writes a page. Templates are executed into a buffer first, so a
// failing template never leaves half a page.
func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, page string, d *pageData) {
	t := c.pages.pages[page]
	d.Prefix = c.o.Prefix
	if s := sessionFrom(r.Context()); s != nil {
		d.CSRF = s.csrf
		d.SignedIn = true
		a := s.account()
		if a != nil {
			d.Account = a.Name
		}
		// The store is named only to those who may use it: a session
		// signed in, or any session when there is no sign-in.
		if a != nil || len(c.accounts) == 0 {
			d.StoreName = c.o.StoreName
		}
	}
	var buf bytes.Buffer
	var err error
	if t == nil {
		err = fmt.Errorf("no page %q", page)
	} else {
		err = t.ExecuteTemplate(&buf, "layout", d)
	}
	if err != nil {
		c.plainError(w, http.StatusInternalServerError, "rendering the page failed: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail renders an error from the library as a message page with the status
// its code calls for.
func (c *Console) fail(w http.ResponseWriter, r *http.Request, d *pageData, err error, links ...link) {
	if d == nil {
		d = &pageData{}
	}
	d.Title = "Error"
	d.Body = messageBody{Heading: "It did not work", Text: errorText(err), Code: tablestore.ErrorCode(err), Links: links}
	c.render(w, r, statusOf(err), "message", d)
}

// statusOf maps an error to an HTTP status by its code.
func statusOf(err error) int {
	switch tablestore.ErrorCode(err) {
	case edm.CodeTableNotFound, edm.CodeResourceNotFound:
		return http.StatusNotFound
	case edm.CodeEntityAlreadyExists, edm.CodeTableAlreadyExists, edm.CodeTableBeingDeleted:
		return http.StatusConflict
	case edm.CodeUpdateConditionNotSatisfied:
		return http.StatusPreconditionFailed
	case edm.CodeNotImplemented:
		return http.StatusNotImplemented
	case edm.CodeServerBusy:
		return http.StatusServiceUnavailable
	case edm.CodeOperationTimedOut:
		return http.StatusGatewayTimeout
	case edm.CodeInternalError, "":
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest
}

// errorText is err's message for a page: an *Error's Message (its code
// is shown beside it), else the text without the library's "tablestore: "
// prefix.
func errorText(err error) string {
	if te, ok := err.(*tablestore.Error); ok && te.Message != "" {
		return te.Message
	}
	return strings.ReplaceAll(err.Error(), "tablestore: ", "")
}

// filterErrorView shows a filter error at its position.
type filterErrorView struct {
	Msg    string
	Code   tablestore.Code
	Pos    int // 0-based byte offset
	Column int // 1-based character column
	Before string
	At     string // the character at Pos; "" at the end of the text
	After  string
}

// newFilterErrorView returns the view of err's *filter.Error, or nil when
// err holds none.
func newFilterErrorView(err error) *filterErrorView {
	var fe *filter.Error
	if !errors.As(err, &fe) || fe.Src == "" {
		return nil
	}
	pos := min(max(fe.Pos, 0), len(fe.Src))
	v := &filterErrorView{Msg: fe.Msg, Code: fe.Code, Pos: pos, Before: fe.Src[:pos],
		Column: utf8.RuneCountInString(fe.Src[:pos]) + 1}
	if pos < len(fe.Src) {
		_, size := utf8.DecodeRuneInString(fe.Src[pos:])
		v.At, v.After = fe.Src[pos:pos+size], fe.Src[pos+size:]
	}
	return v
}

// wantsJSON reports whether a request asks for a JSON answer.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json")
}

// writeJSON answers with v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// groupDigits writes n with thousands separators: 1,234,567.
func groupDigits(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

// formatBytes writes a size in binary units: 512 B, 1.5 KiB, 3.2 GiB.
func formatBytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	for _, unit := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= 1024
		if f < 1024 || unit == "TiB" {
			return strconv.FormatFloat(f, 'f', 1, 64) + " " + unit
		}
	}
	return ""
}
