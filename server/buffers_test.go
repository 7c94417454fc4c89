package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

// TestPooledBuffersAcrossSizes sends, one after another, entity bodies
// and batches whose sizes go up and down, so each is read into a pooled
// buffer that served a larger or smaller request before; every entity
// must be stored as sent.
func TestPooledBuffersAcrossSizes(t *testing.T) {
	h, db := fuzzHandler(t)
	defer db.Close()
	ctx := context.Background()
	_, err := db.CreateTable(ctx, "things")
	require.NoError(t, err)
	for round, size := range []int{20_000, 30, 6_000, 30_000, 10, 25_000} {
		note := strings.Repeat(string(rune('a'+round)), size)
		body := fmt.Sprintf(`{"PartitionKey":"single","RowKey":"%d","Note":%q}`, round, note)
		r := httptest.NewRequest("POST", "/devstoreaccount1/fzz", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusCreated, w.Code, w.Body.String())
		e, err := db.Table("fzz").Get(ctx, "single", fmt.Sprint(round), nil)
		require.NoError(t, err)
		require.Equal(t, note, e.Properties["Note"])

		pk := fmt.Sprintf("batch%d", round)
		batch := buildBatch(t, pk, 1+size%7, 2_000+size)
		r = httptest.NewRequest("POST", "/devstoreaccount1/$batch", strings.NewReader(string(batch)))
		r.Header.Set("Content-Type", "multipart/mixed; boundary="+batchBoundary)
		w = httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusAccepted, w.Code)
		require.NotContains(t, w.Body.String(), "odata.error")
		n := 0
		for e, err := range db.Table("things").Query(ctx, tablestore.Query{Filter: fmt.Sprintf("PartitionKey eq '%s'", pk)}) {
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("%03d", n), e.RowKey)
			a, b := e.Properties["A"].(string), e.Properties["B"].(string)
			require.Equal(t, strings.Repeat("x", len(a)), a)
			require.Equal(t, strings.Repeat("x", len(b)), b)
			n++
		}
		require.Equal(t, 1+size%7, n)
	}
}

// TestBatchScratchClear: a batch's scratch holds nothing of the request
// once cleared, with or without the entities' buffers kept, so the pool
// keeps no body or entity alive.
func TestBatchScratchClear(t *testing.T) {
	h, db := fuzzHandler(t)
	defer db.Close()
	tb := db.Table("fzz")
	insert := func(raw *tablestore.RawEntity) error {
		return tb.SubmitTransaction(context.Background(), []tablestore.TransactionAction{{Type: tablestore.ActionInsert, Entity: raw}})
	}
	zeroErr := insert(&tablestore.RawEntity{})
	require.Error(t, zeroErr)
	for _, keep := range []bool{false, true} {
		var sc batchScratch
		subs, err := h.(*handler).parseBatch("multipart/mixed; boundary="+batchBoundary, buildBatch(t, "p", 5, 3_000), &sc)
		require.NoError(t, err)
		require.Len(t, subs, 5)
		sc.actions = make([]tablestore.TransactionAction, 5, 8)
		sc.raws = make([]tablestore.RawEntity, 5)
		for i := range subs {
			_, _, err := subs[i].action(&sc.raws[i], false)
			require.NoError(t, err)
			sc.actions[i] = tablestore.TransactionAction{Type: tablestore.ActionInsert, Entity: &sc.raws[i]}
		}
		sc.clear(keep)
		for name, s := range map[string]any{"parts": sc.parts, "subs": sc.subs, "actions": sc.actions, "raws": sc.raws} {
			v := reflect.ValueOf(s)
			require.Zero(t, v.Len(), name)
			require.Positive(t, v.Cap(), name)
			for i := range v.Cap() {
				if name == "raws" && keep {
					// A reset entity holds no entity: it is written as the
					// zero RawEntity is, refused.
					raw := &sc.raws[:cap(sc.raws)][i]
					require.True(t, raw.PartitionKey == "" && raw.RowKey == "" && raw.Timestamp.IsZero() && raw.ETag == "", "raws[%d] holds %v", i, raw)
					require.Equal(t, zeroErr.Error(), fmt.Sprint(insert(raw)), "raws[%d]", i)
					continue
				}
				require.True(t, v.Slice(0, v.Cap()).Index(i).IsZero(), "%s[%d] is not zero (keep %v)", name, i, keep)
			}
		}
	}
}
