package console

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/entitycsv"
)

// defaultTop is the query page's default page size.
const defaultTop = 50

// topChoices are the page sizes the query form offers.
var topChoices = []int{10, 20, 50, 100, 200, 500, 1000}

// cellChars bounds the text a grid cell shows; the cell's title holds up
// to titleChars.
const (
	cellChars  = 80
	titleChars = 2000
)

// queryForm is a query as the page's form and links carry it.
type queryForm struct {
	Filter  string
	Select  string // comma-separated property names
	Top     int
	Reverse bool
	Index   string // read through this index, in its order
	Next    string // the continuation token of the page shown
	Page    int    // 1-based number of the page shown
	// Before adds up the pages before this one, as the links to the next
	// page carry them.
	Before pageTotals
}

// pageTotals add up the costs of a query's pages. Known is false when a
// page's store could not tell what it examined.
type pageTotals struct {
	Examined, IndexEntries, Returned int
	Known                            bool
}

// add returns the totals with one more page.
func (t pageTotals) add(c tablestore.PageCost, returned int) pageTotals {
	if c.Examined < 0 {
		return pageTotals{}
	}
	return pageTotals{Examined: t.Examined + c.Examined, IndexEntries: t.IndexEntries + c.IndexEntries,
		Returned: t.Returned + returned, Known: t.Known}
}

// set writes the totals into a next page's parameters.
func (t pageTotals) set(v url.Values) {
	if t.Known {
		v.Set("sum", fmt.Sprintf("%d.%d.%d", t.Examined, t.IndexEntries, t.Returned))
	}
}

// parseTotals reads the totals a link carries ("EXAMINED.INDEX.RETURNED");
// unknown when absent or malformed.
func parseTotals(s string) pageTotals {
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return pageTotals{}
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return pageTotals{}
		}
		n[i] = v
	}
	return pageTotals{Examined: n[0], IndexEntries: n[1], Returned: n[2], Known: true}
}

// parseQueryForm reads a query from a request's parameters. A Top outside
// 1..1000 is kept as given, so the library rejects it with its own error.
func parseQueryForm(r *http.Request) queryForm {
	f := queryForm{Filter: r.FormValue("filter"), Select: r.FormValue("select"),
		Reverse: r.FormValue("reverse") == "1", Index: r.FormValue("index"), Next: r.FormValue("next"), Top: defaultTop,
		Page: max(atoiDefault(r.FormValue("page"), 1), 1)}
	if f.Next == "" {
		f.Before = pageTotals{Known: true} // the first page: nothing before it
	} else {
		f.Before = parseTotals(r.FormValue("sum"))
	}
	if s := strings.TrimSpace(r.FormValue("top")); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			n = -1
		}
		f.Top = n
	}
	return f
}

// query returns the library query the form describes.
func (f queryForm) query() tablestore.Query {
	return tablestore.Query{Filter: f.Filter, Select: splitSelect(f.Select), Top: f.Top,
		Reverse: f.Reverse, Index: f.Index, Continuation: f.Next}
}

// values returns the form as URL parameters, without paging.
func (f queryForm) values() url.Values {
	v := url.Values{}
	if f.Filter != "" {
		v.Set("filter", f.Filter)
	}
	if f.Select != "" {
		v.Set("select", f.Select)
	}
	if f.Top != defaultTop {
		v.Set("top", strconv.Itoa(f.Top))
	}
	if f.Reverse {
		v.Set("reverse", "1")
	}
	if f.Index != "" {
		v.Set("index", f.Index)
	}
	return v
}

// splitSelect splits a comma-separated $select; nil for none.
func splitSelect(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// planView is a QueryPlan as the page draws it.
type planView struct {
	Kind     string
	Steps    []planStep // the plan kinds from cheapest to costliest
	Ranges   []string
	Residual string
	Reverse  bool
	// Index names the secondary index the plan reads through; "" when it
	// reads the table itself.
	Index string
	Text  string // QueryPlan.String
	// Warnings are QueryPlan.Warnings: comparisons that cannot tell the
	// sampled entities apart.
	Warnings []string
}

// planStep is one plan kind on the cost scale.
type planStep struct {
	Name, Hint string
	Active     bool
}

var planKinds = []struct {
	kind tablestore.PlanKind
	hint string
}{
	{tablestore.PlanEmpty, "reads nothing"},
	{tablestore.PlanPoint, "single entities by both keys"},
	{tablestore.PlanRange, "RowKey ranges of known partitions"},
	{planIndex, "entries of a secondary index, then the entities they name"},
	{tablestore.PlanPartitionScan, "whole partitions"},
	{tablestore.PlanTableScan, "across partitions"},
}

// planIndex stands for a read through a secondary index on the cost
// scale; the library's PlanKind of such a plan is that of the key ranges
// alone.
const planIndex tablestore.PlanKind = 255

func newPlanView(p *tablestore.QueryPlan) *planView {
	v := &planView{Kind: p.Kind.String(), Ranges: p.Ranges, Residual: p.Residual, Reverse: p.Reverse,
		Index: p.Index, Text: p.String(), Warnings: p.Warnings}
	active := p.Kind
	if p.Index != "" {
		active, v.Kind = planIndex, "index "+p.Index
	}
	for _, k := range planKinds {
		name := "index"
		if k.kind != planIndex {
			name = k.kind.String()
		}
		v.Steps = append(v.Steps, planStep{Name: name, Hint: k.hint, Active: k.kind == active})
	}
	return v
}

// queryBody is the data of the query page.
type queryBody struct {
	Form       queryForm
	TopChoices []int
	// Indexes are the table's ready indexes, for the order choice.
	Indexes     []string
	Notice      string
	Plan        *planView
	FilterError *filterErrorView
	Error       string
	Code        tablestore.Code
	Grid        *grid
	Returned    int
	Elapsed     string
	// Cost is what this page examined; Totals add up the pages from the
	// first to this one (Pages of them). Cost.Examined is -1 when the
	// store cannot tell.
	Cost       tablestore.PageCost
	Totals     pageTotals
	Pages      int
	More       bool   // the query goes on past this page
	NextURL    string // the next page
	FirstURL   string // the first page, when this is not it
	ExportJSON string
	ExportCSV  string
	// Back is this page's query parameters, for returning after a
	// multiple delete.
	Back string
}

// queryPage runs one page of a query and shows its plan and results.
func (c *Console) queryPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	t := c.store(r).Table(name)
	f := parseQueryForm(r)
	b := queryBody{Form: f, TopChoices: topChoices}
	if f.Top > 0 && f.Top <= 1000 && !slices.Contains(topChoices, f.Top) {
		b.TopChoices = append([]int{f.Top}, topChoices...)
		slices.Sort(b.TopChoices)
	}
	if infos, err := t.Indexes(r.Context()); err == nil {
		for _, in := range infos {
			if in.State == tablestore.IndexReady {
				b.Indexes = append(b.Indexes, in.Name)
			}
		}
	}
	switch n, _ := strconv.Atoi(r.FormValue("deleted")); {
	case n == 1:
		b.Notice = "Entity deleted."
	case n > 1:
		b.Notice = strconv.Itoa(n) + " entities deleted."
	}
	d := &pageData{Title: "Query " + name, Table: name, Tab: "query"}
	base := c.o.Prefix + "/tables/" + url.PathEscape(name)
	q := f.query()
	p, err := t.Plan(r.Context(), q)
	if err == nil {
		b.Plan = newPlanView(p)
		start := time.Now()
		var page *tablestore.Page
		page, err = t.QueryPage(r.Context(), q)
		if err == nil {
			b.Elapsed = time.Since(start).Round(100 * time.Microsecond).String()
			b.Returned = len(page.Entities)
			b.Cost = page.PageCost
			b.Totals = f.Before.add(page.PageCost, b.Returned)
			b.Pages = f.Page
			b.Grid = newGrid(page.Entities, splitSelect(f.Select), base)
			params := f.values()
			b.Back = params.Encode()
			if f.Next != "" {
				b.FirstURL = base + "/query" + encodeQuery(params)
			}
			if page.Continuation != "" {
				b.More = true
				next := f.values()
				next.Set("next", page.Continuation)
				next.Set("page", strconv.Itoa(f.Page+1))
				b.Totals.set(next)
				b.NextURL = base + "/query" + encodeQuery(next)
			}
			exp := f.values()
			exp.Del("top")
			exp.Set("format", "jsonl")
			b.ExportJSON = base + "/export" + encodeQuery(exp)
			exp.Set("format", "csv")
			b.ExportCSV = base + "/export" + encodeQuery(exp)
		}
	}
	status := http.StatusOK
	if err != nil {
		status = statusOf(err)
		b.FilterError = newFilterErrorView(err)
		b.Error, b.Code = errorText(err), tablestore.ErrorCode(err)
	}
	d.Body = b
	c.render(w, r, status, "query", d)
}

// encodeQuery returns "?"+v.Encode(), or "" for no parameters.
func encodeQuery(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}

// planAnswer is the JSON the filter editor checks a query with.
type planAnswer struct {
	OK    bool         `json:"ok"`
	Error *planError   `json:"error,omitempty"`
	Plan  *planSummary `json:"plan,omitempty"`
}

type planError struct {
	Message string          `json:"message"`
	Code    tablestore.Code `json:"code,omitempty"`
	// Pos is the 0-based byte offset of a filter error and Column its
	// 1-based character column; both absent for other errors.
	Pos    *int `json:"pos,omitempty"`
	Column int  `json:"column,omitempty"`
	// Offset is Pos in UTF-16 code units, as a browser's text field
	// counts.
	Offset int `json:"offset,omitempty"`
}

type planSummary struct {
	Kind     string   `json:"kind"`
	Ranges   []string `json:"ranges"`
	Residual string   `json:"residual"`
	Reverse  bool     `json:"reverse"`
	Index    string   `json:"index,omitempty"`
	// Warnings are the plan's (QueryPlan.Warnings): the filter is valid
	// but some comparison cannot tell the sampled entities apart.
	Warnings []string `json:"warnings,omitempty"`
}

// planAPI answers the filter editor: the plan of the query in the
// parameters, or the error with its position, and the plan's warnings.
// It reads only Plan's sample of entities.
func (c *Console) planAPI(w http.ResponseWriter, r *http.Request) {
	t := c.store(r).Table(r.PathValue("table"))
	f := parseQueryForm(r)
	q := f.query()
	q.Continuation = ""
	p, err := t.Plan(r.Context(), q)
	if err != nil {
		pe := &planError{Message: errorText(err), Code: tablestore.ErrorCode(err)}
		if v := newFilterErrorView(err); v != nil {
			pos := v.Pos
			pe.Pos, pe.Column, pe.Message = &pos, v.Column, v.Msg
			pe.Offset = utf16Len(v.Before)
		}
		writeJSON(w, http.StatusOK, planAnswer{Error: pe})
		return
	}
	v := newPlanView(p)
	writeJSON(w, http.StatusOK, planAnswer{OK: true, Plan: &planSummary{Kind: v.Kind, Ranges: nonNil(v.Ranges),
		Residual: v.Residual, Reverse: v.Reverse, Index: v.Index, Warnings: p.Warnings}})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// utf16Len counts s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// grid is one page of entities as the results table shows them.
type grid struct {
	Columns []gridColumn
	Rows    []gridRow
}

// gridColumn is one property's column: its name and the EDM types its
// values have in this page.
type gridColumn struct {
	Name  string
	Types []string
	Mixed bool // the values have more than one type
}

type gridRow struct {
	PartitionKey, RowKey, Timestamp string
	Link                            string
	// Select is the row's value for the multiple delete: its keys and
	// ETag, urlencoded (see deleteEntities).
	Select string
	Cells  []gridCell
}

type gridCell struct {
	Present  bool
	ShowType bool   // the column's values have several types
	Class    string // a CSS class for the type: "int32", "string"...
	Text     string // shortened to cellChars
	Title    string // the whole value, up to titleChars
	Type     string // the EDM type
}

// newGrid lays out entities: the keys and Timestamp, then one column per
// property name, in $select's order when there is one, else by name.
func newGrid(entities []*tablestore.Entity, sel []string, base string) *grid {
	types := map[string][]string{}
	var names []string
	for _, e := range entities {
		for name, v := range e.Properties {
			if v == nil {
				continue
			}
			tn := edmName(v)
			ts, seen := types[name]
			if !seen {
				names = append(names, name)
			}
			if !slices.Contains(ts, tn) {
				types[name] = append(ts, tn)
			}
		}
	}
	if len(sel) > 0 {
		var ordered []string
		for _, s := range sel {
			if _, ok := types[s]; ok && !slices.Contains(ordered, s) {
				ordered = append(ordered, s)
			}
		}
		names = ordered
	} else {
		slices.Sort(names)
	}
	g := &grid{}
	for _, n := range names {
		ts := types[n]
		slices.Sort(ts)
		g.Columns = append(g.Columns, gridColumn{Name: n, Types: ts, Mixed: len(ts) > 1})
	}
	for _, e := range entities {
		row := gridRow{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Timestamp: edm.FormatDateTimeJSON(e.Timestamp),
			Link:   base + "/entity?" + url.Values{"pk": {e.PartitionKey}, "rk": {e.RowKey}}.Encode(),
			Select: url.Values{"pk": {e.PartitionKey}, "rk": {e.RowKey}, "etag": {string(e.ETag)}}.Encode()}
		for _, col := range g.Columns {
			v, ok := e.Properties[col.Name]
			if !ok || v == nil {
				row.Cells = append(row.Cells, gridCell{})
				continue
			}
			text := valueText(v)
			tn := edmName(v)
			cell := gridCell{Present: true, ShowType: col.Mixed, Type: tn, Class: strings.ToLower(strings.TrimPrefix(tn, "Edm.")),
				Text: shorten(text, cellChars), Title: shorten(text, titleChars)}
			if b, ok := v.([]byte); ok {
				cell.Text = shorten(text, cellChars) + " (" + strconv.Itoa(len(b)) + " bytes)"
			}
			row.Cells = append(row.Cells, cell)
		}
		g.Rows = append(g.Rows, row)
	}
	return g
}

// shorten cuts s to at most n characters, marking the cut with "…".
func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n-1 {
			return s[:k] + "…"
		}
		i++
	}
	return s
}

// valueText writes a value in the text Azure's JSON uses for its type:
// decimal integers, doubles in Go's shortest form or NaN, Infinity,
// -Infinity, true/false, DateTime as 2026-01-02T03:04:05.0000000Z, Guid in
// canonical form, Binary in standard base64. parseValue reads it back.
func valueText(v any) string {
	if s, err := entitycsv.FormatValue(v); err == nil {
		return s
	}
	return fmt.Sprint(v)
}

// edmName returns the EDM type name of a property value.
func edmName(v any) string {
	switch v.(type) {
	case string:
		return edm.TypeString.String()
	case int32:
		return edm.TypeInt32.String()
	case int64:
		return edm.TypeInt64.String()
	case float64:
		return edm.TypeDouble.String()
	case bool:
		return edm.TypeBoolean.String()
	case time.Time:
		return edm.TypeDateTime.String()
	case tablestore.GUID:
		return edm.TypeGuid.String()
	case []byte:
		return edm.TypeBinary.String()
	}
	return ""
}

// atoiDefault parses a decimal int, or returns def.
func atoiDefault(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return def
	}
	return n
}
