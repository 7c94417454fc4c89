package tablestore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestAccessPolicies(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(dir, nil)
	require.NoError(t, err)
	tb, err := db.CreateTable(ctx, "Acl")
	require.NoError(t, err)

	got, err := tb.AccessPolicies(ctx)
	require.NoError(t, err)
	require.Empty(t, got)

	start := time.Date(2025, 1, 2, 3, 4, 5, 123456789, time.FixedZone("x", 3600))
	in := []AccessPolicy{
		{ID: "readers", Start: start, Expiry: start.Add(time.Hour), Permission: "r"},
		{ID: "all", Permission: "raud"},
		{ID: "none"},
	}
	require.NoError(t, tb.SetAccessPolicies(ctx, in))

	// Persisted: visible after reopening, in order, UTC, 100 ns precision.
	require.NoError(t, db.Close())
	db, err = Open(dir, nil)
	require.NoError(t, err)
	defer db.Close()
	got, err = db.Table("acl").AccessPolicies(ctx)
	require.NoError(t, err)
	require.Len(t, got, 3)
	require.Equal(t, "readers", got[0].ID)
	require.True(t, got[0].Start.Equal(start.Truncate(100*time.Nanosecond)))
	require.Equal(t, time.UTC, got[0].Start.Location())
	require.Equal(t, "raud", got[1].Permission)
	require.True(t, got[2].Start.IsZero() && got[2].Expiry.IsZero() && got[2].Permission == "")

	for _, bad := range [][]AccessPolicy{
		{{ID: "1"}, {ID: "2"}, {ID: "3"}, {ID: "4"}, {ID: "5"}, {ID: "6"}},
		{{ID: ""}},
		{{ID: strings.Repeat("x", 65)}},
		{{ID: "a"}, {ID: "a"}},
		{{ID: "a", Permission: "dr"}},
		{{ID: "a", Permission: "rr"}},
		{{ID: "a", Permission: "w"}},
	} {
		err := db.Table("acl").SetAccessPolicies(ctx, bad)
		require.ErrorIs(t, err, ErrInvalidInput, "%+v", bad)
	}
	got, _ = db.Table("acl").AccessPolicies(ctx)
	require.Len(t, got, 3, "a refused set changed the policies")

	// Removing, and deletion with the table.
	require.NoError(t, db.Table("acl").SetAccessPolicies(ctx, nil))
	got, _ = db.Table("acl").AccessPolicies(ctx)
	require.Empty(t, got)
	require.NoError(t, db.Table("acl").SetAccessPolicies(ctx, in[:1]))
	require.NoError(t, db.DeleteTable(ctx, "acl"))
	_, err = db.Table("acl").AccessPolicies(ctx)
	require.ErrorIs(t, err, ErrTableNotFound)
	require.ErrorIs(t, db.Table("acl").SetAccessPolicies(ctx, in[:1]), ErrTableNotFound)
	_, err = db.CreateTable(ctx, "acl")
	require.NoError(t, err)
	got, err = db.Table("acl").AccessPolicies(ctx)
	require.NoError(t, err)
	require.Empty(t, got, "a re-created table inherited policies")
}

func TestAccessPoliciesNotImplemented(t *testing.T) {
	db, err := OpenDriver(failingConn{nil}, nil)
	require.NoError(t, err)
	_, err = db.Table("anything").AccessPolicies(context.Background())
	require.ErrorIs(t, err, ErrNotImplemented)
}
