package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

// TestAccountMemory checks that what AccountMemory reserves comes out of
// the account's own request budget: while it is held, the account's
// requests are answered ServerBusy and another account's are not.
func TestAccountMemory(t *testing.T) {
	dbA, err := tablestore.OpenInMemory(nil)
	require.NoError(t, err)
	defer dbA.Close()
	dbB, err := tablestore.OpenInMemory(nil)
	require.NoError(t, err)
	defer dbB.Close()
	h, err := NewAccounts([]Account{{Name: "alpha", DB: dbA}, {Name: "beta", DB: dbB}},
		&Options{Anonymous: true, MemoryBudget: 1 << 20, QueueWait: 20 * time.Millisecond})
	require.NoError(t, err)
	require.Nil(t, AccountMemory(h, "gamma"))
	require.Nil(t, AccountMemory(http.NotFoundHandler(), "alpha"))
	m := AccountMemory(h, "alpha")
	require.NotNil(t, m)
	ts := httptest.NewServer(h)
	defer ts.Close()
	list := func(account string) int {
		req, err := http.NewRequest("GET", ts.URL+"/"+account+"/Tables", nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "application/json;odata=nometadata")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, list("alpha"))

	ctx := context.Background()
	size := int64(1<<20) / 5 * grantShare
	require.False(t, m.Reserve(ctx, size+1), "more than the budget can grant")
	require.True(t, m.Reserve(ctx, size))
	require.Equal(t, size, m.InUse())
	require.False(t, m.Reserve(ctx, 1), "the budget is full")
	require.Equal(t, http.StatusServiceUnavailable, list("alpha"), "alpha's requests find no memory")
	require.Equal(t, http.StatusOK, list("beta"), "beta's budget is its own")
	m.Release(size / 2)
	m.Release(size - size/2)
	require.Equal(t, int64(0), m.InUse())
	require.Equal(t, http.StatusOK, list("alpha"))

	// A single account's handler.
	single, err := New(dbA, &Options{Anonymous: true})
	require.NoError(t, err)
	require.NotNil(t, AccountMemory(single, DevAccount))
	require.Nil(t, AccountMemory(single, "alpha"))
}
