package console

import (
	"context"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// typedEntity has one property of each EDM type, with values that need
// care: a string with a carriage return (edited escaped), a leading line
// break and one with a trailing space, extreme numbers, a DateTime at 100
// ns precision.
func typedEntity() *tablestore.Entity {
	g, _ := edm.ParseGUID("01234567-89ab-cdef-0123-456789abcdef")
	return &tablestore.Entity{PartitionKey: "p 1", RowKey: "r'1", Properties: map[string]any{
		"S":      "héllo, \"world\"",
		"CR":     "a\r\nb\x01",
		"LF":     "\nleading line break",
		"Space":  "trailing space ",
		"I32":    int32(math.MinInt32),
		"I64":    int64(math.MaxInt64),
		"D":      0.1 + 0.2,
		"Inf":    math.Inf(-1),
		"B":      false,
		"T":      time.Date(2026, 1, 2, 3, 4, 5, 123456700, time.UTC),
		"G":      g,
		"Bin":    []byte{0, 1, 2, 254, 255},
		"Empty":  "",
		"EmptyB": []byte{},
	}}
}

// formOf reads the entity form of a page back into the values a browser
// would post.
func formOf(t *testing.T, body string) url.Values {
	t.Helper()
	start := strings.Index(body, `id="entity-form"`)
	require.GreaterOrEqual(t, start, 0)
	start = strings.LastIndex(body[:start], "<form")
	end := strings.Index(body[start:], "</form>")
	form := body[start : start+end]
	v := url.Values{}
	input := regexp.MustCompile(`<input ([^>]*)>`)
	attr := func(tag, name string) (string, bool) {
		m := regexp.MustCompile(`(?:^|\s)` + name + `="([^"]*)"`).FindStringSubmatch(tag)
		if m == nil {
			return "", false
		}
		return html.UnescapeString(m[1]), true
	}
	for _, m := range input.FindAllStringSubmatch(form, -1) {
		name, ok := attr(m[1], "name")
		if !ok || name == "csrf" {
			continue
		}
		typ, _ := attr(m[1], "type")
		if (typ == "checkbox" || typ == "radio") && !strings.Contains(m[1], " checked") {
			continue
		}
		val, _ := attr(m[1], "value")
		v.Add(name, val)
	}
	for _, m := range regexp.MustCompile(`(?s)<textarea name="([^"]*)"[^>]*>(.*?)</textarea>`).FindAllStringSubmatch(form, -1) {
		// A browser drops the line break right after the start tag and
		// sends line breaks as CR LF.
		val := strings.TrimPrefix(html.UnescapeString(m[2]), "\n")
		v.Add(m[1], strings.ReplaceAll(val, "\n", "\r\n"))
	}
	for _, m := range regexp.MustCompile(`(?s)<select name="([^"]*)"[^>]*>(.*?)</select>`).FindAllStringSubmatch(form, -1) {
		sel := regexp.MustCompile(`<option selected>([^<]*)</option>`).FindStringSubmatch(m[2])
		if sel == nil {
			sel = regexp.MustCompile(`<option>([^<]*)</option>`).FindStringSubmatch(m[2])
		}
		v.Add(m[1], html.UnescapeString(sel[1]))
	}
	return v
}

func TestEntityRoundTripsThroughTheForm(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("Typed")
	want := typedEntity()
	require.NoError(t, tb.Insert(ctx, want))
	h.login()

	path := "/tables/Typed/entity?" + url.Values{"pk": {want.PartitionKey}, "rk": {want.RowKey}}.Encode()
	status, body, _ := h.get(path)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "escaped: a Go string literal")
	require.Contains(t, body, `&#34;a\r\nb\x01&#34;</textarea>`, "the string with a CR is shown as a literal")
	require.Contains(t, body, `id="entity-json"`)
	form := formOf(t, body)
	require.Equal(t, "update", form.Get("op"))
	require.Equal(t, string(want.ETag), form.Get("etag"))

	// Saving the form unchanged stores exactly the same values.
	status, _, loc := h.post("/tables/Typed/entity", form)
	require.Equal(t, http.StatusSeeOther, status)
	require.Contains(t, loc, "saved=1")
	got, err := tb.Get(ctx, want.PartitionKey, want.RowKey, nil)
	require.NoError(t, err)
	require.NotEqual(t, want.ETag, got.ETag, "it was written")
	require.Equal(t, len(want.Properties), len(got.Properties))
	for k, v := range want.Properties {
		require.Equal(t, v, got.Properties[k], k)
	}
	status, body, _ = h.get(loc)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="saved"`)
}

func TestEntityInsertTyped(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("Typed")
	h.login()
	status, body, _ := h.get("/tables/Typed/entity/new?pk=a")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `name="pk" id="pk" value="a" class="mono">`)
	require.Equal(t, blankRows, strings.Count(body, `<tr class="prop-row">`)-1, "blank rows and the template row")

	form := url.Values{"op": {"insert"}, "pk": {"a"}, "rk": {"1"}}
	rows := [][3]string{
		{"Name", "Edm.String", "Ada\r\nLovelace"},
		{"Age", "Edm.Int32", " 36 "},
		{"Big", "Edm.Int64", "-9223372036854775808"},
		{"Score", "Edm.Double", "1e-3"},
		{"Nan", "Edm.Double", "NaN"},
		{"Active", "Edm.Boolean", "true"},
		{"Born", "Edm.DateTime", "1815-12-10T00:00:00.0000001Z"},
		{"Id", "Edm.Guid", "A1A2A3A4-B1B2-C1C2-D1D2-D3D4D5D6D7D8"},
		{"Raw", "Edm.Binary", "aGk="},
		{"", "Edm.String", ""}, // a blank row
	}
	for i, r := range rows {
		form.Set(fmt.Sprintf("p.%d.name", i), r[0])
		form.Set(fmt.Sprintf("p.%d.type", i), r[1])
		form.Set(fmt.Sprintf("p.%d.value", i), r[2])
	}
	form.Set("p.20.name", "Removed")
	form.Set("p.20.value", "x")
	form.Set("p.20.del", "1")
	status, _, loc := h.post("/tables/Typed/entity", form)
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables/Typed/entity?pk=a&rk=1&saved=1", loc)
	e, err := tb.Get(ctx, "a", "1", nil)
	require.NoError(t, err)
	g, _ := edm.ParseGUID("a1a2a3a4-b1b2-c1c2-d1d2-d3d4d5d6d7d8")
	require.Equal(t, "Ada\nLovelace", e.Properties["Name"])
	require.Equal(t, int32(36), e.Properties["Age"])
	require.Equal(t, int64(math.MinInt64), e.Properties["Big"])
	require.Equal(t, 0.001, e.Properties["Score"])
	require.True(t, math.IsNaN(e.Properties["Nan"].(float64)))
	require.Equal(t, true, e.Properties["Active"])
	require.Equal(t, time.Date(1815, 12, 10, 0, 0, 0, 100, time.UTC), e.Properties["Born"])
	require.Equal(t, g, e.Properties["Id"])
	require.Equal(t, []byte("hi"), e.Properties["Raw"])
	require.NotContains(t, e.Properties, "Removed")
	require.Len(t, e.Properties, 9)

	// Inserting the same keys again is a conflict, shown with the form.
	status, body, _ = h.post("/tables/Typed/entity", form)
	require.Equal(t, http.StatusConflict, status)
	require.Contains(t, body, string(edm.CodeEntityAlreadyExists))
	require.Contains(t, body, ">\nAda\r\nLovelace</textarea>", "the user's values stay in the form")
	require.Contains(t, body, `<p class="alert" id="entity-error">entity (&#34;a&#34;, &#34;1&#34;) already exists <code class="code">EntityAlreadyExists</code>`)
}

func TestEntityBadValues(t *testing.T) {
	h := newHarness(t, nil)
	tb := h.table("Typed")
	h.login()
	cases := []struct{ name, typ, value, want string }{
		{"A", "Edm.Int32", "2147483648", "is not an Edm.Int32"},
		{"A", "Edm.Int32", "1.5", "is not an Edm.Int32"},
		{"A", "Edm.Int64", "x", "is not an Edm.Int64"},
		{"A", "Edm.Double", "inf", "is not an Edm.Double"},
		{"A", "Edm.Double", "0x10", "is not an Edm.Double"},
		{"A", "Edm.Double", "1e999", "is not an Edm.Double"},
		{"A", "Edm.Boolean", "yes", "is not an Edm.Boolean"},
		{"A", "Edm.DateTime", "yesterday", "is not an Edm.DateTime"},
		{"A", "Edm.Guid", "123", "is not an Edm.Guid"},
		{"A", "Edm.Binary", "***", "is not standard base64"},
		{"A", "Edm.Decimal", "1", "unknown type"},
		{"", "Edm.String", "orphan", "a value without a property name"},
	}
	for _, c := range cases {
		form := url.Values{"op": {"insert"}, "pk": {"a"}, "rk": {"1"},
			"p.0.name": {c.name}, "p.0.type": {c.typ}, "p.0.value": {c.value}}
		status, body, _ := h.post("/tables/Typed/entity", form)
		require.Equal(t, http.StatusBadRequest, status, c)
		require.Contains(t, html.UnescapeString(body), c.want, c)
		require.Contains(t, body, `<tr class="prop-row invalid">`, c)
	}
	// An escaped string must be a literal.
	form := url.Values{"op": {"insert"}, "pk": {"a"}, "rk": {"1"},
		"p.0.name": {"S"}, "p.0.type": {"Edm.String"}, "p.0.value": {`not "quoted`}, "p.0.esc": {"1"}}
	status, _, _ := h.post("/tables/Typed/entity", form)
	require.Equal(t, http.StatusBadRequest, status)
	// A name twice.
	form = url.Values{"op": {"insert"}, "pk": {"a"}, "rk": {"1"},
		"p.0.name": {"X"}, "p.0.value": {"1"}, "p.0.type": {"Edm.String"},
		"p.1.name": {"X"}, "p.1.value": {"2"}, "p.1.type": {"Edm.String"}}
	status, body, _ := h.post("/tables/Typed/entity", form)
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "property X is given twice")
	// The library's own validation: a bad property name, a bad key.
	form = url.Values{"op": {"insert"}, "pk": {"a"}, "rk": {"1"},
		"p.0.name": {"1abc"}, "p.0.value": {"1"}, "p.0.type": {"Edm.String"}}
	status, body, _ = h.post("/tables/Typed/entity", form)
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, string(edm.CodePropertyNameInvalid))
	status, _, _ = h.post("/tables/Typed/entity", url.Values{"op": {"insert"}, "pk": {"a/b"}, "rk": {"1"}})
	require.Equal(t, http.StatusBadRequest, status)
	status, _, _ = h.post("/tables/Typed/entity", url.Values{"op": {"frobnicate"}, "pk": {"a"}, "rk": {"1"}})
	require.Equal(t, http.StatusBadRequest, status)
	status, _, _ = h.post("/tables/Typed/entity", url.Values{"op": {"update"}, "pk": {"a"}, "rk": {"1"}})
	require.Equal(t, http.StatusBadRequest, status, "an update without an ETag")
	// Nothing was written.
	_, err := tb.Get(context.Background(), "a", "1", nil)
	require.ErrorIs(t, err, tablestore.ErrResourceNotFound)
	// Unknown entities and tables.
	status, body, _ = h.get("/tables/Typed/entity?pk=a&rk=404")
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "Insert an entity with these keys")
	status, _, _ = h.get("/tables/Nobody/entity?pk=a&rk=1")
	require.Equal(t, http.StatusNotFound, status)
}

func TestEntityConflicts(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("People")
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "a", RowKey: "1",
		Properties: map[string]any{"Name": "Ada", "Age": int32(36)}}))
	h.login()
	path := "/tables/People/entity?pk=a&rk=1"
	_, body, _ := h.get(path)
	form := formOf(t, body)

	// Someone else changes the entity after the page was loaded.
	require.NoError(t, tb.Update(ctx, &tablestore.Entity{PartitionKey: "a", RowKey: "1",
		Properties: map[string]any{"Name": "Ada (theirs)"}}, tablestore.Merge, tablestore.ETagAny))
	theirs, err := tb.Get(ctx, "a", "1", nil)
	require.NoError(t, err)

	form.Set("p.0.value", "37") // Age
	status, body, _ := h.post("/tables/People/entity", form)
	require.Equal(t, http.StatusPreconditionFailed, status)
	require.Contains(t, body, "Conflict: the entity changed after you opened it")
	require.Contains(t, body, html.EscapeString(string(theirs.ETag)))
	require.Contains(t, body, "Ada (theirs)", "the stored version is shown")
	require.Contains(t, body, `value="37"`, "the user's edit is kept in the form")
	require.Contains(t, body, `<tr class="differs" title="differs from your version"><td class="mono">Name</td>`)
	require.Contains(t, body, `<tr class="differs" title="differs from your version"><td class="mono">Age</td>`)
	stored, err := tb.Get(ctx, "a", "1", nil)
	require.NoError(t, err)
	require.Equal(t, theirs.ETag, stored.ETag, "nothing was overwritten")
	require.Equal(t, int32(36), stored.Properties["Age"])

	// Saving again with the old ETag still conflicts; the explicit
	// overwrite with the ETag shown succeeds.
	again := formOf(t, body)
	require.Equal(t, form.Get("etag"), again.Get("etag"))
	status, _, _ = h.post("/tables/People/entity", again)
	require.Equal(t, http.StatusPreconditionFailed, status)
	again.Set("overwrite", string(theirs.ETag))
	status, _, _ = h.post("/tables/People/entity", again)
	require.Equal(t, http.StatusSeeOther, status)
	stored, err = tb.Get(ctx, "a", "1", nil)
	require.NoError(t, err)
	require.Equal(t, int32(37), stored.Properties["Age"])
	require.Equal(t, "Ada", stored.Properties["Name"], "replace stored the user's version")

	// An overwrite with an ETag that is stale by now conflicts too.
	again.Set("overwrite", string(theirs.ETag))
	status, _, _ = h.post("/tables/People/entity", again)
	require.Equal(t, http.StatusPreconditionFailed, status)

	// Deleted meanwhile: shown as such; inserting it again is a choice.
	_, body, _ = h.get(path)
	form = formOf(t, body)
	require.NoError(t, tb.Delete(ctx, "a", "1", tablestore.ETagAny))
	status, body, _ = h.post("/tables/People/entity", form)
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "Conflict: the entity was deleted")
	_, err = tb.Get(ctx, "a", "1", nil)
	require.ErrorIs(t, err, tablestore.ErrResourceNotFound)
	form.Set("reinsert", "1")
	status, _, _ = h.post("/tables/People/entity", form)
	require.Equal(t, http.StatusSeeOther, status)
	_, err = tb.Get(ctx, "a", "1", nil)
	require.NoError(t, err)
}

func TestEntityMerge(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("People")
	e := &tablestore.Entity{PartitionKey: "a", RowKey: "1", Properties: map[string]any{"Keep": "k", "Change": int32(1)}}
	require.NoError(t, tb.Insert(ctx, e))
	h.login()
	form := url.Values{"op": {"update"}, "pk": {"a"}, "rk": {"1"}, "etag": {string(e.ETag)}, "mode": {"merge"},
		"p.0.name": {"Change"}, "p.0.type": {"Edm.Int64"}, "p.0.value": {"2"}}
	status, _, _ := h.post("/tables/People/entity", form)
	require.Equal(t, http.StatusSeeOther, status)
	got, err := tb.Get(ctx, "a", "1", nil)
	require.NoError(t, err)
	require.Equal(t, map[string]any{"Keep": "k", "Change": int64(2)}, got.Properties)
}

func TestEntityDelete(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("People")
	e := &tablestore.Entity{PartitionKey: "a", RowKey: "1", Properties: map[string]any{"N": int32(1)}}
	require.NoError(t, tb.Insert(ctx, e))
	h.login()
	status, body, _ := h.get("/tables/People/entity/delete?pk=a&rk=1")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "The delete succeeds only if nobody changed it since.")
	staleETag := e.ETag

	require.NoError(t, tb.Update(ctx, &tablestore.Entity{PartitionKey: "a", RowKey: "1",
		Properties: map[string]any{"N": int32(2)}}, tablestore.Replace, tablestore.ETagAny))
	status, body, _ = h.post("/tables/People/entity/delete", url.Values{"pk": {"a"}, "rk": {"1"}, "etag": {string(staleETag)}})
	require.Equal(t, http.StatusPreconditionFailed, status)
	require.Contains(t, body, "Conflict: the entity changed after you opened it")
	cur, err := tb.Get(ctx, "a", "1", nil)
	require.NoError(t, err, "not deleted")
	status, _, _ = h.post("/tables/People/entity/delete", url.Values{"pk": {"a"}, "rk": {"1"}})
	require.Equal(t, http.StatusBadRequest, status, "no ETag")

	status, _, loc := h.post("/tables/People/entity/delete", url.Values{"pk": {"a"}, "rk": {"1"}, "etag": {string(cur.ETag)}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables/People/query?deleted=1", loc)
	_, err = tb.Get(ctx, "a", "1", nil)
	require.ErrorIs(t, err, tablestore.ErrResourceNotFound)
	status, body, _ = h.get(loc)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "Entity deleted.")

	status, body, _ = h.post("/tables/People/entity/delete", url.Values{"pk": {"a"}, "rk": {"1"}, "etag": {string(cur.ETag)}})
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "It is gone already")
	status, _, _ = h.get("/tables/People/entity/delete?pk=a&rk=1")
	require.Equal(t, http.StatusNotFound, status)
}

func TestParseValueRoundTrip(t *testing.T) {
	for name, v := range typedEntity().Properties {
		row := rowsOf(&tablestore.Entity{Properties: map[string]any{name: v}})[0]
		got, err := parseValue(row.Type, row.Value, row.Escaped)
		require.NoError(t, err, name)
		require.Equal(t, v, got, name)
	}
	for _, f := range []float64{math.Inf(1), math.SmallestNonzeroFloat64, math.MaxFloat64, math.Copysign(0, -1)} {
		got, err := parseValue("Edm.Double", valueText(f), false)
		require.NoError(t, err)
		require.Equal(t, math.Float64bits(f), math.Float64bits(got.(float64)))
	}
	require.True(t, needsEscape("\xff"))
	require.True(t, needsEscape("a\rb"))
	require.True(t, needsEscape("\x7f"))
	require.False(t, needsEscape("tab\tand\nline"))
}

// TestDeleteSelected: the grid offers a checkbox per row (its keys and
// ETag) and a column chooser; deleting the selection removes each
// unchanged entity and returns to the query with the count; a stale
// ETag is reported and that entity kept; the endpoint refuses a request
// without the session's CSRF token or from another origin, an empty
// selection, a forged one and one larger than a page.
func TestDeleteSelected(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("People")
	fillPeople(t, tb, 6)
	h.login()
	q := url.Values{"filter": {"PartitionKey eq 'a'"}}
	status, body, _ := h.get("/tables/People/query?" + q.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<form method="post" action="/tables/People/entities/delete" id="grid-form">`)
	backField := regexp.MustCompile(`<input type="hidden" name="back" value="([^"]*)">`).FindStringSubmatch(body)
	require.NotNil(t, backField)
	require.Equal(t, q.Encode(), html.UnescapeString(backField[1]))
	require.Contains(t, body, `<details id="column-chooser" class="column-chooser"><summary>Columns</summary><label class="check"><input type="checkbox" class="col-toggle" data-col="Age" checked> Age</label><label class="check"><input type="checkbox" class="col-toggle" data-col="Name" checked> Name</label>`)
	require.Contains(t, body, `<th data-col="Age"`)
	boxes := regexp.MustCompile(`<input type="checkbox" name="e" value="([^"]+)"`).FindAllStringSubmatch(body, -1)
	require.Len(t, boxes, 3) // a/000, a/002, a/004
	sel := func(i int) string { return html.UnescapeString(boxes[i][1]) }
	v, err := url.ParseQuery(sel(0))
	require.NoError(t, err)
	require.Equal(t, "a", v.Get("pk"))
	require.Equal(t, "000", v.Get("rk"))
	require.NotEmpty(t, v.Get("etag"))

	form := url.Values{"e": {sel(0), sel(1)}, "back": {q.Encode()}}
	// Refused without the token, from another origin or site: nothing deleted.
	status, _, _ = h.do("POST", "/tables/People/entities/delete", strings.NewReader(form.Encode()), h.sameOrigin("application/x-www-form-urlencoded"))
	require.Equal(t, http.StatusForbidden, status)
	withToken := url.Values{"e": form["e"], "back": form["back"], "csrf": {h.csrf}}
	hdr := h.sameOrigin("application/x-www-form-urlencoded")
	hdr.Set("Origin", "http://evil.example")
	status, _, _ = h.do("POST", "/tables/People/entities/delete", strings.NewReader(withToken.Encode()), hdr)
	require.Equal(t, http.StatusForbidden, status)
	hdr = h.sameOrigin("application/x-www-form-urlencoded")
	hdr.Set("Sec-Fetch-Site", "cross-site")
	status, _, _ = h.do("POST", "/tables/People/entities/delete", strings.NewReader(withToken.Encode()), hdr)
	require.Equal(t, http.StatusForbidden, status)
	for _, rk := range []string{"000", "002"} {
		_, err := tb.Get(ctx, "a", rk, nil)
		require.NoError(t, err, "refused requests delete nothing")
	}

	// Two unchanged entities: both go, back to the query with the count.
	status, _, loc := h.post("/tables/People/entities/delete", form)
	require.Equal(t, http.StatusSeeOther, status)
	back := url.Values{"filter": q["filter"], "deleted": {"2"}}
	require.Equal(t, "/tables/People/query?"+back.Encode(), loc)
	status, body, _ = h.get(loc)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "2 entities deleted.")
	require.Equal(t, []string{"a/004"}, gridKeys(body))

	// A stale ETag: reported, that entity kept, the others deleted.
	require.NoError(t, tb.Update(ctx, &tablestore.Entity{PartitionKey: "a", RowKey: "004", Properties: map[string]any{"N": int32(1)}}, tablestore.Replace, tablestore.ETagAny))
	cur, err := tb.Get(ctx, "b", "001", nil)
	require.NoError(t, err)
	fresh := url.Values{"pk": {"b"}, "rk": {"001"}, "etag": {string(cur.ETag)}}.Encode()
	status, body, _ = h.post("/tables/People/entities/delete", url.Values{"e": {sel(2), fresh}})
	require.Equal(t, http.StatusPreconditionFailed, status)
	require.Contains(t, body, "1 deleted, 1 not: (&#34;a&#34;, &#34;004&#34;)")
	_, err = tb.Get(ctx, "a", "004", nil)
	require.NoError(t, err)
	_, err = tb.Get(ctx, "b", "001", nil)
	require.ErrorIs(t, err, tablestore.ErrResourceNotFound)

	// Bad selections.
	status, _, _ = h.post("/tables/People/entities/delete", url.Values{})
	require.Equal(t, http.StatusBadRequest, status)
	status, _, _ = h.post("/tables/People/entities/delete", url.Values{"e": {"pk=a&rk=004"}})
	require.Equal(t, http.StatusBadRequest, status, "no ETag")
	status, _, _ = h.post("/tables/People/entities/delete", url.Values{"e": {"%zz"}})
	require.Equal(t, http.StatusBadRequest, status)
	many := make([]string, maxDeleteSelection+1)
	for i := range many {
		many[i] = url.Values{"pk": {"a"}, "rk": {"004"}, "etag": {"*"}}.Encode()
	}
	status, _, _ = h.post("/tables/People/entities/delete", url.Values{"e": many})
	require.Equal(t, http.StatusBadRequest, status)
	_, err = tb.Get(ctx, "a", "004", nil)
	require.NoError(t, err, "a refused selection deletes nothing")
}
