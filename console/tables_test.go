package console

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
	"github.com/tablestore/tablestore/edm"
)

func TestTablesCreateListDelete(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	h.login()

	status, _, loc := h.post("/tables", url.Values{"name": {"People"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables/People", loc)
	ok, err := h.db.TableExists(ctx, "People")
	require.NoError(t, err)
	require.True(t, ok)

	// Bad names and repeats are refused with the library's code, the
	// name kept in the form.
	status, body, _ := h.post("/tables", url.Values{"name": {"1bad"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, string(edm.CodeInvalidResourceName))
	require.Contains(t, body, `value="1bad"`)
	status, body, _ = h.post("/tables", url.Values{"name": {"people"}})
	require.Equal(t, http.StatusConflict, status)
	require.Contains(t, body, string(edm.CodeTableAlreadyExists))
	status, _, _ = h.post("/tables", url.Values{"name": {"ab"}})
	require.Equal(t, http.StatusBadRequest, status)

	// The list shows estimates, marked as such.
	p := h.db.Table("People")
	for i := range 30 {
		require.NoError(t, p.Insert(ctx, &tablestore.Entity{PartitionKey: "p", RowKey: fmt.Sprint(i)}))
	}
	status, body, _ = h.get("/tables")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `href="/tables/People/query"`)
	require.Contains(t, body, "estimate")
	require.Contains(t, body, "≈ ")
	require.Contains(t, body, "Counts and sizes are estimates")

	// The overview shows the settings, all off.
	status, body, _ = h.get("/tables/People")
	require.Equal(t, http.StatusOK, status)
	for _, id := range []string{`id="indexes"`, `id="ttl"`, `id="changefeed"`} {
		require.Contains(t, body, id)
	}
	require.NotContains(t, body, "Not available")
	require.Contains(t, body, "Off: entities never expire.")
	require.Contains(t, body, "Off: changes are not recorded.")
	require.Contains(t, body, `id="no-indexes"`)
	require.Contains(t, body, `id="create-index"`)
	status, _, _ = h.get("/tables/Nobody")
	require.Equal(t, http.StatusNotFound, status)

	// Delete needs the name typed exactly.
	status, body, _ = h.get("/tables/People/delete")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "Type <strong>People</strong> to confirm")
	status, body, _ = h.post("/tables/People/delete", url.Values{"confirm": {"people"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "type the table&#39;s name exactly")
	ok, _ = h.db.TableExists(ctx, "People")
	require.True(t, ok)
	status, _, loc = h.post("/tables/People/delete", url.Values{"confirm": {"People"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/tables?deleted=People", loc)
	ok, _ = h.db.TableExists(ctx, "People")
	require.False(t, ok)
	status, body, _ = h.get(loc)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "Table <strong>People</strong> deleted.")
	status, _, _ = h.post("/tables/People/delete", url.Values{"confirm": {"People"}})
	require.Equal(t, http.StatusNotFound, status)
	status, _, _ = h.get("/tables/People/delete")
	require.Equal(t, http.StatusNotFound, status)
}

func TestTablesPage(t *testing.T) {
	h := newHarness(t, nil)
	for i := range tablesPerPage + 5 {
		h.table(fmt.Sprintf("T%03d", i))
	}
	h.login()
	status, body, _ := h.get("/tables")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, tablesPerPage, strings.Count(body, `class="table-link"`))
	m := regexp.MustCompile(`id="next-tables" href="([^"]+)"`).FindStringSubmatch(body)
	require.NotNil(t, m)
	status, body, _ = h.get(strings.ReplaceAll(m[1], "&amp;", "&"))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, 5, strings.Count(body, `class="table-link"`))
	require.Contains(t, body, "page 2")
	require.Contains(t, body, "T104")
	require.NotContains(t, body, `id="next-tables"`)
	status, _, _ = h.get("/tables?next=%00bad")
	require.Equal(t, http.StatusBadRequest, status)
}

func TestNotFoundAndChanges(t *testing.T) {
	h := newHarness(t, nil)
	h.login()
	h.table("Feed")
	status, body, _ := h.get("/no/such/page")
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, body, "there is no page at /no/such/page")
	status, body, _ = h.get("/tables/Feed/changes")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="changes-off"`)
	require.Contains(t, body, "Turn the change feed on")
	status, _, _ = h.get("/tables/Nobody/changes")
	require.Equal(t, http.StatusNotFound, status)
}

func TestPrefix(t *testing.T) {
	h := newHarness(t, &Options{Prefix: "/console"})
	h.table("People")
	status, _, loc := h.get("/console/tables?token=" + testToken)
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/console/tables", loc)
	u, _ := url.Parse(h.srv.URL + "/console/")
	require.Len(t, h.client.Jar.Cookies(u), 1)
	u, _ = url.Parse(h.srv.URL + "/")
	require.Empty(t, h.client.Jar.Cookies(u), "the cookie is the prefix's only")

	status, body, _ := h.get("/console/tables")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `href="/console/tables/People/query"`)
	require.Contains(t, body, `href="/console/static/console.css"`)
	status, _, loc = h.get("/console")
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/console/", loc)
	status, _, loc = h.get("/console/")
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/console/tables", loc)
	for _, p := range []string{"/tables", "/consoletables", "/static/console.css"} {
		status, _, _ = h.get(p)
		require.Equal(t, http.StatusNotFound, status, p)
	}
	status, _, loc = h.post("/console/tables", url.Values{"name": {"Made"}})
	require.Equal(t, http.StatusSeeOther, status)
	require.Equal(t, "/console/tables/Made", loc)
}
