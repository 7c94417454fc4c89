package console

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

// fillPeople writes n entities in partitions "a" and "b" with an Int32 Age,
// a String Name and, on every tenth, an Int64 Age instead.
func fillPeople(t *testing.T, tb *tablestore.Table, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		pk := "a"
		if i%2 == 1 {
			pk = "b"
		}
		props := map[string]any{"Name": fmt.Sprintf("person %03d", i), "Age": int32(i)}
		if i%10 == 0 {
			props["Age"] = int64(i)
		}
		require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("%03d", i), Properties: props}))
	}
}

var rowLink = regexp.MustCompile(`<a class="entity-link" href="[^"]*">([^<]*)</a></td>\s*<td><a href="[^"]*">([^<]*)</a>`)

// gridKeys returns the (PK/RK) of the grid's rows in order.
func gridKeys(body string) []string {
	var out []string
	for _, m := range rowLink.FindAllStringSubmatch(body, -1) {
		out = append(out, html.UnescapeString(m[1])+"/"+html.UnescapeString(m[2]))
	}
	return out
}

func href(t *testing.T, body, id string) string {
	t.Helper()
	m := regexp.MustCompile(`id="` + id + `"[^>]*href="([^"]+)"|href="([^"]+)"[^>]*id="` + id + `"`).FindStringSubmatch(body)
	require.NotNil(t, m, "no link #%s", id)
	return html.UnescapeString(m[1] + m[2])
}

func TestQueryPlanAndGrid(t *testing.T) {
	h := newHarness(t, nil)
	tb := h.table("People")
	fillPeople(t, tb, 25)
	h.login()

	// No filter: the first page of the table, with the plan drawn.
	status, body, _ := h.get("/tables/People/query")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<span id="plan-kind" class="kind">table scan</span>`)
	require.Contains(t, body, `<li class="active" aria-current="true" title="across partitions">table scan</li>`)
	require.Contains(t, body, `examined <strong id="examined">25</strong>, returned <strong id="returned">25</strong> in `)
	require.Contains(t, body, "100% of the entities examined matched")
	require.NotContains(t, body, `id="totals"`, "one page: no totals")
	require.Len(t, gridKeys(body), 25)
	require.Contains(t, body, `id="end-of-results"`)
	// Age has two types in the page: the header names both, each cell its own.
	require.Contains(t, body, `<th data-col="Age" class="mixed">Age<span class="type">Edm.Int32 | Edm.Int64</span></th>`)
	require.Contains(t, body, `<td class="int64" title="Edm.Int64: 20">20<span class="type">Edm.Int64</span></td>`)
	require.Contains(t, body, `<th data-col="Name">Name<span class="type">Edm.String</span></th>`)

	// A range plan with a residual.
	q := url.Values{"filter": {"PartitionKey eq 'a' and RowKey ge '010' and Age gt 12"}}
	status, body, _ = h.get("/tables/People/query?" + q.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<span id="plan-kind" class="kind">range</span>`)
	require.Contains(t, body, "<code>PartitionKey = &#39;a&#39;, RowKey &gt;= &#39;010&#39;</code>")
	require.Contains(t, body, `<p id="residual"><code>Age gt 12</code></p>`)
	require.Equal(t, []string{"a/014", "a/016", "a/018", "a/020", "a/022", "a/024"}, gridKeys(body))
	require.Contains(t, body, `examined <strong id="examined">8</strong>, returned <strong id="returned">6</strong> in `, "a/010 to a/024")
	require.Contains(t, body, "75% of the entities examined matched")
	require.Contains(t, body, `<meter id="yield" min="0" max="8" value="6"`)

	// A point plan; an empty plan.
	status, body, _ = h.get("/tables/People/query?" + url.Values{"filter": {"PartitionKey eq 'b' and RowKey eq '003'"}}.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `class="kind">point</span>`)
	require.Equal(t, []string{"b/003"}, gridKeys(body))
	status, body, _ = h.get("/tables/People/query?" + url.Values{"filter": {"PartitionKey eq 'a' and PartitionKey eq 'b'"}}.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `class="kind">empty</span>`)
	require.Contains(t, body, "none: nothing is read")
	require.Contains(t, body, "No entities match.")

	// $select picks and orders the columns; reverse reads backwards.
	status, body, _ = h.get("/tables/People/query?" + url.Values{"select": {"Name"}, "reverse": {"1"}, "top": {"3"}}.Encode())
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, body, ">Age<")
	require.Equal(t, []string{"b/023", "b/021", "b/019"}, gridKeys(body))
	require.Contains(t, body, `<span class="tag">reverse</span>`)

	// Bad Top and $select come back as the library's errors.
	status, body, _ = h.get("/tables/People/query?top=5000")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `id="query-error"`)
	status, _, _ = h.get("/tables/People/query?top=x")
	require.Equal(t, http.StatusBadRequest, status)
	status, _, _ = h.get("/tables/People/query?select=" + url.QueryEscape("Bad Name"))
	require.Equal(t, http.StatusBadRequest, status)
	status, _, _ = h.get("/tables/Nobody/query")
	require.Equal(t, http.StatusNotFound, status)
}

// TestQueryScanned checks the counts of what each page examined against
// what it returned, and their totals over the pages the links walk.
func TestQueryScanned(t *testing.T) {
	h := newHarness(t, nil)
	tb := h.table("People")
	fillPeople(t, tb, 100)
	h.login()

	// Age gt 59 matches 40 entities of 100, read across partitions:
	// pages of 15 returned examine more than they return.
	q := url.Values{"filter": {"Age gt 59"}, "top": {"15"}}
	path := "/tables/People/query?" + q.Encode()
	var examined, returned int
	for page := 1; ; page++ {
		status, body, _ := h.get(path)
		require.Equal(t, http.StatusOK, status, body)
		m := regexp.MustCompile(`examined <strong id="examined">(\d+)</strong>, returned <strong id="returned">(\d+)</strong>`).FindStringSubmatch(body)
		require.NotNil(t, m, "page %d shows no counts", page)
		e, r := atoiDefault(m[1], -1), atoiDefault(m[2], -1)
		require.Equal(t, len(gridKeys(body)), r)
		require.GreaterOrEqual(t, e, r)
		examined += e
		returned += r
		if page > 1 {
			require.Contains(t, body, fmt.Sprintf(`Pages 1 to %d: examined <strong id="total-examined">%d</strong>, returned <strong id="total-returned">%d</strong>`,
				page, examined, returned))
		}
		if !strings.Contains(body, `id="next-page"`) {
			break
		}
		path = href(t, body, "next-page")
		require.Contains(t, path, "sum=")
	}
	require.Equal(t, 40, returned)
	require.Equal(t, 100, examined, "a table scan examines every entity once over its pages")

	// Through an index: the index entries read are shown too.
	require.NoError(t, tb.CreateIndex(context.Background(), tablestore.IndexSpec{Name: "ByName", Properties: []string{"Name"}}))
	status, body, _ := h.get("/tables/People/query?" + url.Values{"filter": {"Name eq 'person 042' and Age gt 100"}}.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `examined <strong id="examined">1</strong>, returned <strong id="returned">0</strong> in `)
	require.Contains(t, body, `; <span id="index-entries">1</span> index entries read`)

	// A page reached without the totals (a link from elsewhere) says so.
	u, err := url.Parse(path)
	require.NoError(t, err)
	v := u.Query()
	v.Set("sum", "bad")
	status, body, _ = h.get(u.Path + "?" + v.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "Totals over the pages: unknown")
}

func TestQueryFilterErrorPosition(t *testing.T) {
	h := newHarness(t, nil)
	fillPeople(t, h.table("People"), 3)
	h.login()
	status, body, _ := h.get("/tables/People/query?" + url.Values{"filter": {"Age gt 3 and and Name eq 'x'"}}.Encode())
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "The filter is not valid</strong> at column 14:")
	require.Contains(t, body, `<pre class="caret" id="error-caret">Age gt 3 and <mark>a</mark>nd Name eq &#39;x&#39;</pre>`)
	require.Contains(t, body, string(edm.CodeInvalidInput))
	require.NotContains(t, body, `id="grid"`)
	// The filter stays in the editor to be fixed.
	require.Contains(t, body, "\nAge gt 3 and and Name eq &#39;x&#39;</textarea>")

	// An error at the end marks the end.
	status, body, _ = h.get("/tables/People/query?" + url.Values{"filter": {"Age gt"}}.Encode())
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `<pre class="caret" id="error-caret">Age gt<mark> </mark></pre>`)
}

func TestPlanAPI(t *testing.T) {
	h := newHarness(t, nil)
	h.table("People")
	h.login()
	ask := func(v url.Values) planAnswer {
		t.Helper()
		status, body, _ := h.do("GET", "/tables/People/plan?"+v.Encode(), nil, http.Header{"Accept": {"application/json"}})
		require.Equal(t, http.StatusOK, status, body)
		var a planAnswer
		require.NoError(t, json.Unmarshal([]byte(body), &a))
		return a
	}
	a := ask(url.Values{"filter": {"PartitionKey eq 'x' and Age gt 3"}, "reverse": {"1"}})
	require.True(t, a.OK)
	require.Equal(t, &planSummary{Kind: "partition scan", Ranges: []string{"PartitionKey = 'x'"}, Residual: "Age gt 3", Reverse: true}, a.Plan)
	a = ask(url.Values{})
	require.True(t, a.OK)
	require.Equal(t, []string{"all"}, a.Plan.Ranges)

	// Positions in bytes, characters and UTF-16 units: "é" is 2 bytes,
	// 1 character and 1 unit; "𝄞" 4 bytes, 1 character and 2 units.
	a = ask(url.Values{"filter": {"Name eq 'é𝄞' and or"}})
	require.False(t, a.OK)
	require.NotNil(t, a.Error.Pos)
	require.Equal(t, 21, *a.Error.Pos)   // "or"
	require.Equal(t, 18, a.Error.Column) // 17 characters before it
	require.Equal(t, 18, a.Error.Offset) // 18 UTF-16 units before it
	require.Equal(t, edm.CodeInvalidInput, a.Error.Code)
	require.NotContains(t, a.Error.Message, "tablestore:")

	// Features Azure lacks are NotImplemented, with a position.
	a = ask(url.Values{"filter": {"Age add 1 eq 2"}})
	require.False(t, a.OK)
	require.Equal(t, edm.CodeNotImplemented, a.Error.Code)

	// Other errors carry no position.
	a = ask(url.Values{"select": {"Bad Name"}})
	require.False(t, a.OK)
	require.Nil(t, a.Error.Pos)
	require.NotEmpty(t, a.Error.Message)
}

func TestQueryPaging(t *testing.T) {
	h := newHarness(t, nil)
	fillPeople(t, h.table("People"), 45)
	h.login()
	var all []string
	path := "/tables/People/query?" + url.Values{"top": {"20"}, "filter": {"Age ge 0"}}.Encode()
	for page := 1; ; page++ {
		status, body, _ := h.get(path)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, fmt.Sprintf(`<span id="page-info">Page %d · `, page))
		keys := gridKeys(body)
		all = append(all, keys...)
		if page > 1 {
			require.Contains(t, href(t, body, "first-page"), "top=20")
		}
		if !strings.Contains(body, `id="next-page"`) {
			require.Len(t, keys, 5)
			break
		}
		require.Len(t, keys, 20)
		path = href(t, body, "next-page")
		require.Contains(t, path, "filter=Age+ge+0")
	}
	require.Len(t, all, 45)
	require.Equal(t, "a/000", all[0])
	require.Equal(t, "b/043", all[44])
	// A token from elsewhere is refused.
	status, _, _ := h.get("/tables/People/query?next=garbage")
	require.Equal(t, http.StatusBadRequest, status)
}

// TestQueryWarnings: a filter that cannot match warns in the plan panel
// and in the filter check's answer, and the results stay empty; a good
// filter warns of nothing.
func TestQueryWarnings(t *testing.T) {
	h := newHarness(t, nil)
	fillPeople(t, h.table("People"), 5)
	h.login()
	warning := "Name is compared (gt) with a literal of type Edm.Int32 but was seen only as Edm.String: such a comparison matches nothing"
	status, body, _ := h.get("/tables/People/query?" + url.Values{"filter": {"Name gt 5"}}.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<ul id="plan-warnings" class="warnings"><li>⚠ `+html.EscapeString(warning)+`</li></ul>`)
	require.Contains(t, body, "No entities match.")
	ask := func(f string) planAnswer {
		t.Helper()
		status, body, _ := h.do("GET", "/tables/People/plan?"+url.Values{"filter": {f}}.Encode(), nil, http.Header{"Accept": {"application/json"}})
		require.Equal(t, http.StatusOK, status, body)
		var a planAnswer
		require.NoError(t, json.Unmarshal([]byte(body), &a))
		return a
	}
	a := ask("Name gt 5")
	require.True(t, a.OK)
	require.Equal(t, []string{warning}, a.Plan.Warnings)
	a = ask("name eq 'x'")
	require.Equal(t, []string{"property name was never seen, but Name was: names are case-sensitive, so name eq ... matches nothing"}, a.Plan.Warnings)
	a = ask("Name gt 'a'")
	require.Empty(t, a.Plan.Warnings)
	_, body, _ = h.get("/tables/People/query?" + url.Values{"filter": {"Name gt 'a'"}}.Encode())
	require.NotContains(t, body, `id="plan-warnings"`)
}
