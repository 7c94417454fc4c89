package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

func TestIndexes(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("People")
	fillPeople(t, tb, 40)
	h.login()

	// Create: the build finishes within the wait, and the page says so.
	status, _, loc := h.post("/tables/People/indexes", url.Values{"name": {"ByName"}, "properties": {"Name"}, "unique": {"1"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables/People#indexes", loc)
	infos, err := tb.Indexes(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 1)
	require.Equal(t, tablestore.IndexSpec{Name: "ByName", Properties: []string{"Name"}, Unique: true}, infos[0].IndexSpec)
	status, body, _ := h.get("/tables/People")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<p class="notice" id="index-notice">Index ByName is ready.</p>`)
	require.Contains(t, body, `<td class="mono">ByName</td>`)
	require.Contains(t, body, `<span class="ok-text">ready</span>`)
	require.Regexp(t, `<td class="index-size">~[0-9,]+ entries, ~[0-9.]+ ?[A-Za-z]*</td>`, body)
	status, body, _ = h.get("/tables/People")
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, body, "index-notice", "the notice shows once")
	status, body, _ = h.get("/tables")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, ">1 index</a>")

	// The planner uses it for an equality, and the plan names it.
	status, body, _ = h.get("/tables/People/query?" + url.Values{"filter": {"Name eq 'person 007'"}}.Encode())
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `<code id="plan-index">ByName</code>, chosen by the planner`)
	// The cost scale marks the index read, not the key plan's table scan.
	require.Contains(t, body, `<span id="plan-kind" class="kind">index ByName</span>`)
	require.Contains(t, body, `<li class="active" aria-current="true" title="entries of a secondary index, then the entities they name">index</li>`)
	require.NotContains(t, body, `<li class="active" aria-current="true" title="across partitions">`)
	require.Equal(t, []string{"b/007"}, gridKeys(body))
	status, body, _ = h.do("GET", "/tables/People/plan?"+url.Values{"filter": {"Name eq 'x'"}}.Encode(), nil,
		http.Header{"Accept": {"application/json"}})
	require.Equal(t, http.StatusOK, status)
	var a planAnswer
	require.NoError(t, json.Unmarshal([]byte(body), &a))
	require.Equal(t, "ByName", a.Plan.Index)
	require.Equal(t, "index ByName", a.Plan.Kind)

	// A query in the index's order; the order is offered in the form.
	status, body, _ = h.get("/tables/People/query?" + url.Values{"index": {"ByName"}, "top": {"3"}, "reverse": {""}}.Encode())
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `<option value="ByName" selected>index ByName</option>`)
	require.Contains(t, body, "read in its order")
	require.Equal(t, []string{"a/000", "b/001", "a/002"}, gridKeys(body))
	next := href(t, body, "next-page")
	require.Contains(t, next, "index=ByName")
	status, body, _ = h.get(next)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, []string{"b/003", "a/004", "b/005"}, gridKeys(body))
	status, _, _ = h.get("/tables/People/query?index=Nope")
	require.Equal(t, http.StatusNotFound, status)

	// A unique index refuses a repeated value, which the entity form shows.
	status, body, _ = h.post("/tables/People/entity", url.Values{"op": {"insert"}, "pk": {"z"}, "rk": {"1"},
		"p.0.name": {"Name"}, "p.0.type": {"Edm.String"}, "p.0.value": {"person 007"}})
	require.Equal(t, http.StatusConflict, status)
	require.Contains(t, body, string(edm.CodeEntityAlreadyExists))

	// Bad specs come back with the form filled in.
	status, body, _ = h.post("/tables/People/indexes", url.Values{"name": {"ByName"}, "properties": {"Age"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `id="index-error"`)
	require.Contains(t, body, `value="Age"`)
	status, body, _ = h.post("/tables/People/indexes", url.Values{"name": {"Bad Name"}, "properties": {"Age"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `value="Bad Name"`)
	status, _, _ = h.post("/tables/People/indexes", url.Values{"name": {"NoProps"}})
	require.Equal(t, http.StatusBadRequest, status)
	// A unique index over values that repeat fails its build.
	status, body, _ = h.post("/tables/People/indexes", url.Values{"name": {"ByAgeType"}, "properties": {"Missing"}, "unique": {"1"}})
	require.Equal(t, http.StatusSeeOther, status, "entities lacking the property are exempt: %s", body)
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "c", RowKey: "1", Properties: map[string]any{"Dup": int32(1)}}))
	require.NoError(t, tb.Insert(ctx, &tablestore.Entity{PartitionKey: "c", RowKey: "2", Properties: map[string]any{"Dup": int32(1)}}))
	status, body, _ = h.post("/tables/People/indexes", url.Values{"name": {"ByDup"}, "properties": {"Dup"}, "unique": {"1"}})
	require.Equal(t, http.StatusConflict, status)
	require.Contains(t, body, string(edm.CodeEntityAlreadyExists))
	infos, err = tb.Indexes(ctx)
	require.NoError(t, err)
	require.Len(t, infos, 2, "the failed build left nothing")

	// Drop.
	status, _, _ = h.post("/tables/People/indexes/ByName/drop", nil)
	require.Equal(t, http.StatusSeeOther, status)
	status, body, _ = h.get("/tables/People")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "Index ByName dropped.")
	require.NotContains(t, body, `<td class="mono">ByName</td>`)
	status, body, _ = h.post("/tables/People/indexes/ByName/drop", nil)
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, string(edm.CodeResourceNotFound))
	status, _, _ = h.post("/tables/Nobody/indexes", url.Values{"name": {"X"}, "properties": {"A"}})
	require.Equal(t, http.StatusNotFound, status)
	require.False(t, strings.Contains(body, "ByName</td>"))
}
