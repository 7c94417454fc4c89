package tablestore

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestDeleteLargeTable loads a table on disk, drops it and re-creates the
// name at once. It logs how long the drop took; it asserts behaviour, not
// time. TABLESTORE_DELETE_ENTITIES sets the size (default 20,000; the
// one-million figure in the README comes from
// TABLESTORE_DELETE_ENTITIES=1000000 go test -run DeleteLarge -v .).
func TestDeleteLargeTable(t *testing.T) {
	n := 20_000
	if s := os.Getenv("TABLESTORE_DELETE_ENTITIES"); s != "" {
		var err error
		n, err = strconv.Atoi(s)
		require.NoError(t, err)
	}
	db, err := Open(t.TempDir(), &Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "Big")
	require.NoError(t, err)
	_, err = db.CreateTable(ctx, "Neighbour")
	require.NoError(t, err)
	require.NoError(t, db.Table("Neighbour").Insert(ctx, &Entity{PartitionKey: "p", RowKey: "r"}))
	for i := 0; i < n; i += 100 {
		b := tbl.NewBatch()
		pk := fmt.Sprintf("p%05d", i/1000)
		for j := i; j < i+100 && j < n; j++ {
			b.Upsert(&Entity{PartitionKey: pk, RowKey: fmt.Sprintf("r%08d", j), Properties: map[string]any{"V": int64(j), "S": "some text of moderate length"}}, Replace)
		}
		require.NoError(t, b.Submit(ctx))
	}
	require.NoError(t, flush(db))

	start := time.Now()
	require.NoError(t, db.DeleteTable(ctx, "Big"))
	took := time.Since(start)
	t.Logf("DeleteTable of %d entities took %v", n, took)

	again, err := db.CreateTable(ctx, "Big")
	require.NoError(t, err)
	_, err = again.Get(ctx, "p00000", "r00000000", nil)
	requireCode(t, err, CodeResourceNotFound)
	_, err = db.Table("Neighbour").Get(ctx, "p", "r", nil)
	require.NoError(t, err, "the drop must not touch other tables")
}
