package console

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

// TestEntityEmptyKeys: the entity pages open, show and delete an entity
// whose keys are both empty, as Azure allows.
func TestEntityEmptyKeys(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, nil)
	tb := h.table("People")
	e := &tablestore.Entity{Properties: map[string]any{"Name": "nobody"}}
	require.NoError(t, tb.Insert(ctx, e))
	h.login()
	status, body, _ := h.get("/tables/People/entity?pk=&rk=")
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "nobody")
	status, body, _ = h.get("/tables/People/query?filter=" + url.QueryEscape("PartitionKey eq ''"))
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "nobody")
	status, _, _ = h.post("/tables/People/entity/delete", url.Values{"pk": {""}, "rk": {""}, "etag": {string(e.ETag)}})
	require.Equal(t, http.StatusSeeOther, status)
	_, err := tb.Get(ctx, "", "", nil)
	require.ErrorIs(t, err, tablestore.ErrResourceNotFound)
}
