package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// An entity that has expired but is not yet swept holds no unique index
// value: another entity may take it, as Get already answers
// ResourceNotFound for the expired one.
func TestTTLExpiredReleasesUniqueValue(t *testing.T) {
	ctx := context.Background()
	db, clk := newTTLEngine(t, 0)
	defer db.Close()
	db.stopExpirySweeper() // sweeps happen when the test says
	require.NoError(t, db.CreateTable(ctx, "tt"))
	tb := db.Table("tt")
	require.NoError(t, tb.(*table).CreateIndex(ctx, driver.IndexSpec{Name: "ByV", Properties: []string{"V"}, Unique: true}))
	require.NoError(t, tb.(driver.TTLTable).SetTTL(ctx, driver.TTL{Default: time.Minute}))
	insert := func(pk, rk string) error {
		_, err := tb.Commit(ctx, []driver.Action{{Type: driver.ActionInsert, PartitionKey: pk, RowKey: rk, Record: ttlRec(7)}})
		return err
	}
	require.NoError(t, insert("e", "1"))
	var de *driver.Error
	require.ErrorAs(t, insert("f", "2"), &de, "a live entity holds the value")
	require.Equal(t, edm.CodeEntityAlreadyExists, de.Code)

	clk.ns.Add(int64(2 * time.Minute))
	_, err := tb.Get(ctx, "e", "1", nil)
	require.ErrorAs(t, err, &de)
	require.Equal(t, edm.CodeResourceNotFound, de.Code)
	require.NoError(t, insert("f", "2"), "the expired entity no longer holds the value")
	require.ErrorAs(t, insert("g", "3"), &de, "the new holder does")
	require.Equal(t, edm.CodeEntityAlreadyExists, de.Code)

	// The sweep removes the expired entity and its entry; the index stays
	// exact.
	_, err = db.SweepExpired(100)
	require.NoError(t, err)
	rep, err := db.Check(ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Damaged)
}
