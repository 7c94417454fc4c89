package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/entitycsv"
)

// edmTypes are the eight EDM type names, in the order the forms offer them.
var edmTypes = func() []string {
	var out []string
	for t := edm.TypeString; t <= edm.TypeBinary; t++ {
		out = append(out, t.String())
	}
	return out
}()

// maxFormRows bounds the property rows a form may post: Azure's 252
// properties and some blank rows.
const maxFormRows = 400

// blankRows is how many empty property rows a form offers, for browsers
// without script (the script adds rows on demand).
const blankRows = 3

// propRow is one property as the entity form shows and posts it: fields
// p.N.name, p.N.type, p.N.value, p.N.esc and p.N.del for row N.
type propRow struct {
	N     int
	Name  string
	Type  string
	Value string
	// Escaped says Value is a Go string literal ("a\r\nb"), for a String
	// a text field cannot carry as it is: one with a carriage return,
	// another control character but tab and line feed, or invalid UTF-8.
	Escaped bool
	Error   string
	// Differs marks a stored property, in a conflict, whose type or value
	// is not what the user's version has (or that it lacks).
	Differs bool
}

// needsEscape reports whether a String value must be edited as a quoted
// literal, because a browser's text field would change it.
func needsEscape(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			return true
		}
	}
	return false
}

// rowsOf returns an entity's properties as form rows, by name.
func rowsOf(e *tablestore.Entity) []propRow {
	names := make([]string, 0, len(e.Properties))
	for n, v := range e.Properties {
		if v != nil {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	rows := make([]propRow, 0, len(names)+blankRows)
	for i, n := range names {
		v := e.Properties[n]
		row := propRow{N: i, Name: n, Type: edmName(v), Value: valueText(v)}
		if s, ok := v.(string); ok && needsEscape(s) {
			row.Value, row.Escaped = strconv.Quote(s), true
		}
		rows = append(rows, row)
	}
	return rows
}

// addBlankRows appends empty rows numbered after the existing ones.
func addBlankRows(rows []propRow) []propRow {
	next := 0
	for _, r := range rows {
		next = max(next, r.N+1)
	}
	for i := range blankRows {
		rows = append(rows, propRow{N: next + i, Type: edm.TypeString.String()})
	}
	return rows
}

var rowField = regexp.MustCompile(`^p\.([0-9]{1,4})\.(name|type|value|esc|del)$`)

// formError is a form that cannot become an entity: each row's error is
// in its row.
type formError struct{ rows []propRow }

func (e *formError) Error() string {
	var msgs []string
	for _, r := range e.rows {
		if r.Error != "" {
			msgs = append(msgs, r.Error)
		}
	}
	return strings.Join(msgs, "; ")
}

// parseRows reads the property rows of a posted form, in row order. Rows
// with neither name nor value, and rows marked for removal, are dropped.
func parseRows(form url.Values) []propRow {
	byN := map[int]*propRow{}
	for key, vals := range form {
		m := rowField.FindStringSubmatch(key)
		if m == nil || len(vals) == 0 {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		r := byN[n]
		if r == nil {
			if len(byN) >= maxFormRows {
				continue
			}
			r = &propRow{N: n}
			byN[n] = r
		}
		switch m[2] {
		case "name":
			r.Name = strings.TrimSpace(vals[0])
		case "type":
			r.Type = vals[0]
		case "value":
			r.Value = vals[0]
		case "esc":
			r.Escaped = vals[0] == "1"
		case "del":
			if vals[0] == "1" {
				r.Type = "del"
			}
		}
	}
	ns := make([]int, 0, len(byN))
	for n, r := range byN {
		if r.Type == "del" || r.Name == "" && r.Value == "" {
			continue
		}
		ns = append(ns, n)
	}
	slices.Sort(ns)
	rows := make([]propRow, 0, len(ns))
	for _, n := range ns {
		rows = append(rows, *byN[n])
	}
	return rows
}

// entityFromRows builds the properties of an entity from form rows. Each
// row's error names what is wrong with it; a form with any is a
// *formError.
func entityFromRows(rows []propRow) (map[string]any, error) {
	props := make(map[string]any, len(rows))
	bad := false
	for i := range rows {
		r := &rows[i]
		if r.Name == "" {
			r.Error = "a value without a property name"
			bad = true
			continue
		}
		if _, dup := props[r.Name]; dup {
			r.Error = fmt.Sprintf("property %s is given twice", r.Name)
			bad = true
			continue
		}
		v, err := parseValue(r.Type, r.Value, r.Escaped)
		if err != nil {
			r.Error = fmt.Sprintf("property %s: %v", r.Name, err)
			bad = true
			continue
		}
		props[r.Name] = v
	}
	if bad {
		return nil, &formError{rows: rows}
	}
	return props, nil
}

// parseValue reads a value of an EDM type from the text valueText writes.
// Surrounding spaces are ignored except in strings. escaped marks a String
// given as a Go string literal.
func parseValue(typ, text string, escaped bool) (any, error) {
	t, ok := edm.ParseType(typ)
	if !ok {
		return nil, fmt.Errorf("unknown type %q: want one of %s", typ, strings.Join(edmTypes, ", "))
	}
	if t == edm.TypeString {
		if escaped {
			s, err := strconv.Unquote(strings.TrimSpace(text))
			if err != nil {
				return nil, errors.New(`an escaped string must be a quoted Go string literal, such as "a\r\nb"`)
			}
			return s, nil
		}
		// Browsers send line breaks as CR LF; a string with a carriage
		// return of its own is edited escaped.
		return strings.ReplaceAll(text, "\r\n", "\n"), nil
	}
	s := strings.TrimSpace(text)
	v, err := entitycsv.ParseValue(t, s)
	if err != nil {
		if t == edm.TypeBinary {
			return nil, errors.New("the Edm.Binary value is not standard base64")
		}
		return nil, fmt.Errorf("%q is not an %s (%s)", s, t, valueHints[t])
	}
	return v, nil
}

// valueHints say what text each type takes, for the form's messages.
var valueHints = map[edm.Type]string{
	edm.TypeInt32:    "a whole number from -2147483648 to 2147483647",
	edm.TypeInt64:    "a whole number of up to 19 digits",
	edm.TypeDouble:   "a decimal number, NaN, Infinity or -Infinity",
	edm.TypeBoolean:  "true or false",
	edm.TypeDateTime: "such as 2026-01-02T03:04:05.1234567Z",
	edm.TypeGuid:     "such as 01234567-89ab-cdef-0123-456789abcdef",
}

// entityBody is the data of the entity page and its forms.
type entityBody struct {
	New          bool // the insert form: the keys are editable
	PartitionKey string
	RowKey       string
	Timestamp    string
	ETag         string
	JSON         string // the stored entity in Azure's JSON wire format
	Rows         []propRow
	Types        []string
	Mode         string // "replace" or "merge"
	Saved        bool
	Error        string
	Code         tablestore.Code
	Conflict     *conflictView
	QueryURL     string // the query of the entity's partition
}

// conflictView is the stored version an edit or a delete collided with.
type conflictView struct {
	Delete    bool // the collision was a delete
	Gone      bool // the entity no longer exists
	ETag      string
	Timestamp string
	Rows      []propRow
	// OnlyMine names the properties the user's version has and the stored
	// one lacks.
	OnlyMine []string
}

// markDifferences marks the stored rows that differ from the user's rows
// and lists the user's properties the stored version lacks.
func (cv *conflictView) markDifferences(mine []propRow) {
	byName := map[string]propRow{}
	for _, r := range mine {
		byName[r.Name] = r
	}
	stored := map[string]bool{}
	for i := range cv.Rows {
		sr := &cv.Rows[i]
		stored[sr.Name] = true
		m, ok := byName[sr.Name]
		if !ok || m.Type != sr.Type {
			sr.Differs = true
			continue
		}
		mv, err1 := parseValue(m.Type, m.Value, m.Escaped)
		sv, err2 := parseValue(sr.Type, sr.Value, sr.Escaped)
		sr.Differs = err1 != nil || err2 != nil || valueText(mv) != valueText(sv)
	}
	for _, r := range mine {
		if r.Name != "" && !stored[r.Name] {
			cv.OnlyMine = append(cv.OnlyMine, r.Name)
		}
	}
}

func (c *Console) entityBase(table string) string {
	return c.o.Prefix + "/tables/" + url.PathEscape(table)
}

// entityPage shows an entity with its edit form.
func (c *Console) entityPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	pk, rk := r.FormValue("pk"), r.FormValue("rk")
	d := &pageData{Title: "Entity", Table: name, Tab: "query"}
	e, err := c.store(r).Table(name).Get(r.Context(), pk, rk, nil)
	if err != nil {
		links := []link{{"Query the table", c.entityBase(name) + "/query"}}
		if errors.Is(err, tablestore.ErrResourceNotFound) {
			links = append(links, link{"Insert an entity with these keys",
				c.entityBase(name) + "/entity/new?" + url.Values{"pk": {pk}, "rk": {rk}}.Encode()})
		}
		c.fail(w, r, d, err, links...)
		return
	}
	b := c.entityBodyOf(name, e)
	b.Saved = r.FormValue("saved") == "1"
	d.Body = b
	c.render(w, r, http.StatusOK, "entity", d)
}

// entityBodyOf returns the edit form of a stored entity.
func (c *Console) entityBodyOf(table string, e *tablestore.Entity) entityBody {
	b := entityBody{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Timestamp: edm.FormatDateTimeJSON(e.Timestamp),
		ETag: string(e.ETag), Rows: addBlankRows(rowsOf(e)), Types: edmTypes, Mode: "replace"}
	if j, err := e.MarshalJSON(); err == nil {
		b.JSON = string(j)
	}
	filter := "PartitionKey eq '" + strings.ReplaceAll(e.PartitionKey, "'", "''") + "'"
	b.QueryURL = c.entityBase(table) + "/query?" + url.Values{"filter": {filter}}.Encode()
	return b
}

// newEntityPage shows the insert form.
func (c *Console) newEntityPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	b := entityBody{New: true, PartitionKey: r.FormValue("pk"), RowKey: r.FormValue("rk"),
		Rows: addBlankRows(nil), Types: edmTypes, Mode: "replace"}
	c.render(w, r, http.StatusOK, "entity", &pageData{Title: "New entity", Table: name, Tab: "new", Body: b})
}

// saveEntity inserts (op=insert) or updates (op=update, with the ETag the
// form was loaded with) an entity. An update whose ETag no longer matches
// is shown as a conflict and changes nothing.
func (c *Console) saveEntity(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	t := c.store(r).Table(name)
	op := r.PostFormValue("op")
	b := entityBody{New: op == "insert", PartitionKey: r.PostFormValue("pk"), RowKey: r.PostFormValue("rk"),
		ETag: r.PostFormValue("etag"), Types: edmTypes, Mode: r.PostFormValue("mode")}
	if b.Mode != "merge" {
		b.Mode = "replace"
	}
	// The conflict box's buttons: save over the stored version the user
	// was shown (its ETag), or insert again an entity deleted meanwhile.
	if ow := r.PostFormValue("overwrite"); ow != "" && op == "update" {
		b.ETag = ow
	}
	if r.PostFormValue("reinsert") == "1" && op == "update" {
		op, b.ETag, b.New = "insert", "", true
	}
	tab := "query"
	if b.New {
		tab = "new"
	}
	d := &pageData{Title: "Entity", Table: name, Tab: tab}
	b.Rows = parseRows(r.PostForm)
	show := func(status int, err error) {
		if err != nil {
			b.Error, b.Code = errorText(err), tablestore.ErrorCode(err)
		}
		b.Rows = addBlankRows(b.Rows)
		d.Body = b
		c.render(w, r, status, "entity", d)
	}
	if op != "insert" && op != "update" {
		show(http.StatusBadRequest, errors.New("the form names no operation (insert or update)"))
		return
	}
	props, err := entityFromRows(b.Rows)
	if err != nil {
		show(http.StatusBadRequest, errors.New("some properties are not valid: see the marked rows"))
		return
	}
	e := &tablestore.Entity{PartitionKey: b.PartitionKey, RowKey: b.RowKey, Properties: props}
	if op == "insert" {
		err = t.Insert(r.Context(), e)
	} else {
		mode := tablestore.Replace
		if b.Mode == "merge" {
			mode = tablestore.Merge
		}
		if b.ETag == "" {
			show(http.StatusBadRequest, errors.New("the form carries no ETag: open the entity again"))
			return
		}
		err = t.Update(r.Context(), e, mode, tablestore.ETag(b.ETag))
	}
	switch {
	case err == nil:
		c.logChange(r, op+" entity", "table", name, "pk", e.PartitionKey, "rk", e.RowKey)
		http.Redirect(w, r, c.entityBase(name)+"/entity?"+url.Values{"pk": {e.PartitionKey}, "rk": {e.RowKey},
			"saved": {"1"}}.Encode(), http.StatusSeeOther)
	case op == "update" && (errors.Is(err, tablestore.ErrUpdateConditionNotSatisfied) ||
		errors.Is(err, tablestore.ErrResourceNotFound)):
		b.Conflict = c.conflict(r, t, b.PartitionKey, b.RowKey, false)
		b.Conflict.markDifferences(b.Rows)
		show(statusOf(err), err)
	default:
		show(statusOf(err), err)
	}
}

// conflict reads the stored version an edit or delete collided with.
func (c *Console) conflict(r *http.Request, t *tablestore.Table, pk, rk string, del bool) *conflictView {
	cv := &conflictView{Delete: del}
	cur, err := t.Get(r.Context(), pk, rk, nil)
	if err != nil {
		cv.Gone = true
		return cv
	}
	cv.ETag, cv.Timestamp, cv.Rows = string(cur.ETag), edm.FormatDateTimeJSON(cur.Timestamp), rowsOf(cur)
	return cv
}

// deleteEntityBody is the data of the delete confirmation page.
type deleteEntityBody struct {
	PartitionKey, RowKey, ETag, Timestamp string
	Rows                                  []propRow
	Error                                 string
	Code                                  tablestore.Code
	Conflict                              *conflictView
	BackURL                               string
}

func (c *Console) deleteEntityPage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	d := &pageData{Title: "Delete entity", Table: name, Tab: "query"}
	e, err := c.store(r).Table(name).Get(r.Context(), r.FormValue("pk"), r.FormValue("rk"), nil)
	if err != nil {
		c.fail(w, r, d, err, link{"Query the table", c.entityBase(name) + "/query"})
		return
	}
	d.Body = deleteEntityBody{PartitionKey: e.PartitionKey, RowKey: e.RowKey, ETag: string(e.ETag),
		Timestamp: edm.FormatDateTimeJSON(e.Timestamp), Rows: rowsOf(e),
		BackURL: c.entityBase(name) + "/entity?" + url.Values{"pk": {e.PartitionKey}, "rk": {e.RowKey}}.Encode()}
	c.render(w, r, http.StatusOK, "deleteentity", d)
}

// deleteEntity deletes an entity if it still has the ETag the confirmation
// page showed.
func (c *Console) deleteEntity(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	t := c.store(r).Table(name)
	pk, rk, etag := r.PostFormValue("pk"), r.PostFormValue("rk"), r.PostFormValue("etag")
	d := &pageData{Title: "Delete entity", Table: name, Tab: "query"}
	if etag == "" {
		c.fail(w, r, d, &tablestore.Error{Code: edm.CodeInvalidInput,
			Message: "the form carries no ETag: open the entity again"})
		return
	}
	err := t.Delete(r.Context(), pk, rk, tablestore.ETag(etag))
	if err == nil {
		c.logChange(r, "delete entity", "table", name, "pk", pk, "rk", rk)
		http.Redirect(w, r, c.entityBase(name)+"/query?deleted=1", http.StatusSeeOther)
		return
	}
	b := deleteEntityBody{PartitionKey: pk, RowKey: rk, ETag: etag, Error: errorText(err), Code: tablestore.ErrorCode(err),
		BackURL: c.entityBase(name) + "/entity?" + url.Values{"pk": {pk}, "rk": {rk}}.Encode()}
	if errors.Is(err, tablestore.ErrUpdateConditionNotSatisfied) || errors.Is(err, tablestore.ErrResourceNotFound) {
		b.Conflict = c.conflict(r, t, pk, rk, true)
	}
	d.Body = b
	c.render(w, r, statusOf(err), "deleteentity", d)
}

// maxDeleteSelection bounds the entities one multiple delete names: a
// page of results at most.
const maxDeleteSelection = 1000

// deleteEntities deletes the entities selected in the results grid
// (fields "e", each the row's urlencoded pk, rk and etag), each only if it
// still has the ETag the grid showed, one after another: they may lie in
// different partitions, so no transaction spans them. When every delete
// succeeds it returns to the query (field "back", its parameters) with
// the count; otherwise it lists what failed, deleted or not.
func (c *Console) deleteEntities(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("table")
	t := c.store(r).Table(name)
	d := &pageData{Title: "Delete entities", Table: name, Tab: "query"}
	_ = r.PostFormValue("e") // parses the form
	picked := r.PostForm["e"]
	back, _ := url.ParseQuery(r.PostFormValue("back"))
	backLink := link{"Back to the query", c.entityBase(name) + "/query" + encodeQuery(back)}
	switch {
	case len(picked) == 0:
		c.fail(w, r, d, &tablestore.Error{Code: edm.CodeInvalidInput, Message: "no entity is selected"}, backLink)
		return
	case len(picked) > maxDeleteSelection:
		c.fail(w, r, d, &tablestore.Error{Code: edm.CodeInvalidInput,
			Message: fmt.Sprintf("%d entities are selected; one delete takes at most %d", len(picked), maxDeleteSelection)}, backLink)
		return
	}
	type key struct{ pk, rk, etag string }
	keys := make([]key, 0, len(picked))
	for _, p := range picked {
		v, err := url.ParseQuery(p)
		if err != nil || v.Get("etag") == "" || !v.Has("pk") || !v.Has("rk") {
			c.fail(w, r, d, &tablestore.Error{Code: edm.CodeInvalidInput,
				Message: "a selection is not one of the grid's rows: reload the query"}, backLink)
			return
		}
		keys = append(keys, key{v.Get("pk"), v.Get("rk"), v.Get("etag")})
	}
	deleted := 0
	var failed []string
	var firstErr error
	for _, k := range keys {
		err := t.Delete(r.Context(), k.pk, k.rk, tablestore.ETag(k.etag))
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			failed = append(failed, fmt.Sprintf("(%q, %q): %s", k.pk, k.rk, errorText(err)))
			if r.Context().Err() != nil {
				break
			}
			continue
		}
		deleted++
		c.logChange(r, "delete entity", "table", name, "pk", k.pk, "rk", k.rk)
	}
	if len(failed) == 0 {
		back.Set("deleted", strconv.Itoa(deleted))
		http.Redirect(w, r, c.entityBase(name)+"/query"+encodeQuery(back), http.StatusSeeOther)
		return
	}
	d.Body = messageBody{Heading: "Some entities were not deleted",
		Text: fmt.Sprintf("%d deleted, %d not: %s", deleted, len(failed), strings.Join(failed, "; ")),
		Code: tablestore.ErrorCode(firstErr), Links: []link{backLink}}
	c.render(w, r, statusOf(firstErr), "message", d)
}
