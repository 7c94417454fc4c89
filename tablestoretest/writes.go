package tablestoretest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tablestore/tablestore"
)

// RandomWrites makes n random writes to tb through every write path the
// library has: Insert, Update (merge), Upsert of both modes, Delete, entity
// group transactions, DeleteRange and the bulk writer. The keys repeat
// across a few partitions, so single writes also meet conflicts and
// missing entities; those refusals are part of the mix and are not
// failures. A transaction, range deletion or bulk write that fails fails
// t. The same seed makes the same writes on the same table state, which
// suits tests of anything that follows a table's writes (the change feed,
// replication, backups).
func RandomWrites(t testing.TB, tb *tablestore.Table, seed uint64, n int) {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	for i := range n {
		pk := fmt.Sprintf("p%d", rng.IntN(4))
		rk := fmt.Sprintf("r%03d", rng.IntN(60))
		e := &tablestore.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"N": int64(i), "S": fmt.Sprint(rng.IntN(1000))}}
		switch rng.IntN(9) {
		case 0:
			_ = tb.Insert(ctx, e)
		case 1:
			_ = tb.Update(ctx, e, tablestore.Merge, tablestore.ETagAny)
		case 2, 3:
			_ = tb.Upsert(ctx, e, tablestore.Replace)
		case 4:
			_ = tb.Upsert(ctx, &tablestore.Entity{PartitionKey: pk, RowKey: rk, Properties: map[string]any{"M": int32(i)}}, tablestore.Merge)
		case 5:
			_ = tb.Delete(ctx, pk, rk, tablestore.ETagAny)
		case 6:
			b := tb.NewBatch()
			for j := range 1 + rng.IntN(20) {
				b.Upsert(&tablestore.Entity{PartitionKey: pk, RowKey: fmt.Sprintf("t%03d", j), Properties: map[string]any{"N": int64(i)}}, tablestore.Replace)
			}
			if err := b.Submit(ctx); err != nil {
				t.Fatalf("tablestoretest: a random transaction: %v", err)
			}
		case 7:
			if rng.IntN(5) == 0 {
				if err := tb.Partition(pk).DeleteRange(ctx, "r010", "r030"); err != nil {
					t.Fatalf("tablestoretest: a random range deletion: %v", err)
				}
			}
		case 8:
			if err := bulkWrites(ctx, tb, rng, i); err != nil {
				t.Fatalf("tablestoretest: a random bulk write: %v", err)
			}
		}
	}
}

// bulkWrites upserts up to 14 entities through a bulk writer that
// commits every 7.
func bulkWrites(ctx context.Context, tb *tablestore.Table, rng *rand.Rand, i int) error {
	w, err := tb.NewBulkWriter(&tablestore.BulkOptions{Action: tablestore.ActionUpsertReplace, BatchEntities: 7})
	if err != nil {
		return err
	}
	for j := range rng.IntN(15) {
		e := &tablestore.Entity{PartitionKey: fmt.Sprintf("p%d", j%4), RowKey: fmt.Sprintf("b%03d", rng.IntN(40)+j*40), Properties: map[string]any{"N": int64(i)}}
		if err := w.Add(ctx, e); err != nil {
			return err
		}
	}
	return w.Flush(ctx)
}
