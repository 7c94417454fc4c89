package tablestore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPlanWarnings: Plan and Explain warn of a literal of a type the
// property never has in the sampled entities and of a name seen only in
// another case; the query still runs and returns nothing; a filter that
// can match, an empty table and a partition without such entities warn of
// nothing; index properties count as seen names.
func TestPlanWarnings(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)
	tb, err := db.CreateTable(ctx, "Orders")
	require.NoError(t, err)

	q := Query{Filter: "Amount gt '5'"}
	p, err := tb.Plan(ctx, q)
	require.NoError(t, err)
	require.Empty(t, p.Warnings, "an empty table has nothing to warn of")

	for i := range 3 {
		require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "p", RowKey: fmt.Sprint(i),
			Properties: map[string]any{"Amount": int32(i * 10), "Status": "new"}}))
	}
	require.NoError(t, tb.Insert(ctx, &Entity{PartitionKey: "q", RowKey: "0", Properties: map[string]any{"Other": true}}))

	p, err = tb.Plan(ctx, q)
	require.NoError(t, err)
	require.Equal(t, []string{"Amount is compared (gt) with a literal of type Edm.String but was seen only as Edm.Int32: such a comparison matches nothing"}, p.Warnings)
	text, err := tb.Explain(q)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(text, "residual: Amount gt '5'\nwarning: "+p.Warnings[0]+"\n"), text)
	n := 0
	for _, err := range tb.Query(ctx, q) {
		require.NoError(t, err)
		n++
	}
	require.Zero(t, n, "the results stay Azure's")

	p, err = tb.Plan(ctx, Query{Filter: "status eq 'new'"})
	require.NoError(t, err)
	require.Equal(t, []string{"property status was never seen, but Status was: names are case-sensitive, so status eq ... matches nothing"}, p.Warnings)

	p, err = tb.Plan(ctx, Query{Filter: "Amount gt 5 and Status eq 'new'"})
	require.NoError(t, err)
	require.Empty(t, p.Warnings)

	// The sample is the plan's key ranges: partition q has no Amount.
	p, err = tb.Plan(ctx, Query{Filter: "PartitionKey eq 'q' and Amount gt '5'"})
	require.NoError(t, err)
	require.Empty(t, p.Warnings)
	p, err = tb.Partition("p").Plan(ctx, Query{Filter: "Amount gt '5'"})
	require.NoError(t, err)
	require.Len(t, p.Warnings, 1)

	// A name an index covers is a known name.
	require.NoError(t, tb.CreateIndex(ctx, IndexSpec{Name: "ByState", Properties: []string{"status"}}))
	p, err = tb.Plan(ctx, Query{Filter: "status eq 'new'"})
	require.NoError(t, err)
	require.Empty(t, p.Warnings)
}

// TestFilterWarnings: the same warnings from entities a caller read.
func TestFilterWarnings(t *testing.T) {
	es := []*Entity{{Properties: map[string]any{"Amount": int32(1), "Status": "x"}}, {Properties: map[string]any{"Amount": 7}}}
	w, err := FilterWarnings("Amount eq 1L or status eq 'x'", es)
	require.NoError(t, err)
	require.Equal(t, []string{
		"Amount is compared (eq) with a literal of type Edm.Int64 but was seen only as Edm.Int32: such a comparison matches nothing",
		"property status was never seen, but Status was: names are case-sensitive, so status eq ... matches nothing",
	}, w)
	w, err = FilterWarnings("Amount eq 1", es)
	require.NoError(t, err)
	require.Empty(t, w)
	_, err = FilterWarnings("Amount eq", es)
	requireCode(t, err, CodeInvalidInput)
}
