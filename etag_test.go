package tablestore

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestETagProperty checks that a user property named ETag is data: it is
// stored, read, filtered and encoded beside the entity's own ETag.
func TestETagProperty(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "etags")
	require.NoError(t, err)

	e := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"ETag": "v1", "N": int32(1)}}
	require.NoError(t, tbl.Insert(ctx, e))
	got, err := tbl.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, "v1", got.Properties["ETag"])
	require.Equal(t, e.ETag, got.ETag)
	require.NotEqual(t, ETag("v1"), got.ETag)

	page, err := tbl.QueryPage(ctx, Query{Filter: "ETag eq 'v1'", Select: []string{"ETag"}})
	require.NoError(t, err)
	require.Len(t, page.Entities, 1)
	require.Equal(t, map[string]any{"ETag": "v1"}, page.Entities[0].Properties)

	// The wire form keeps the two apart: odata.etag and "ETag".
	out, err := json.Marshal(got)
	require.NoError(t, err)
	var back Entity
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, got.ETag, back.ETag)
	require.Equal(t, "v1", back.Properties["ETag"])

	// Azure's JSON with a property ETag (an Int64 here) decodes and inserts.
	const wire = `{"odata.etag":"W/\"datetime'2021-08-31T15%3A41%3A38.3027816Z'\"","PartitionKey":"p","RowKey":"azure",` +
		`"ETag@odata.type":"Edm.Int64","ETag":"42"}`
	var fromAzure Entity
	require.NoError(t, json.Unmarshal([]byte(wire), &fromAzure))
	require.Equal(t, int64(42), fromAzure.Properties["ETag"])
	require.Equal(t, ETag(`W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'"`), fromAzure.ETag)
	require.NoError(t, tbl.Insert(ctx, &fromAzure))

	// Structs: a field of type ETag holds the entity's ETag, a field named
	// ETag of another type holds the property.
	type row struct {
		PartitionKey string
		RowKey       string
		Version      ETag
		ETag         string
	}
	var r row
	require.NoError(t, UnmarshalEntity(got, &r))
	require.Equal(t, got.ETag, r.Version)
	require.Equal(t, "v1", r.ETag)
	me, err := MarshalEntity(row{PartitionKey: "p", RowKey: "s", Version: "ignored", ETag: "data"})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"ETag": "data"}, me.Properties)
	require.Equal(t, ETag("ignored"), me.ETag)
}

// TestIfMatchSyntax checks that a malformed If-Match value is InvalidInput
// and a well-formed stale one UpdateConditionNotSatisfied, for updates,
// deletes and transactions alike, and that nothing changes.
func TestIfMatchSyntax(t *testing.T) {
	ctx := context.Background()
	db := openTestDB(t, nil)
	tbl, err := db.CreateTable(ctx, "ifmatch")
	require.NoError(t, err)
	e := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"N": int32(1)}}
	require.NoError(t, tbl.Insert(ctx, e))
	current := e.ETag

	malformed := []ETag{"abc", `W/abc`, `"unterminated`, `W/"has space"`, `W/"a"b"`, `"`, `W/`, " *", "**", `""x`}
	wellFormed := []ETag{
		`W/"datetime'2001-01-01T00%3A00%3A00.0000000Z'"`, // ours, stale
		`W/"0x8D9A1B2C3D4E5F6"`,                          // Azure's older form
		`"0x8D9A1B2C3D4E5F6"`,                            // strong
		`W/""`, `""`,
	}
	try := func(tag ETag) []error {
		upd := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"N": int32(2)}}
		return []error{
			tbl.Update(ctx, upd, Merge, tag),
			tbl.Update(ctx, upd, Replace, tag),
			tbl.Delete(ctx, "p", "r", tag),
			tbl.NewBatch().Update(upd, Merge, tag).Submit(ctx),
			tbl.NewBatch().Delete("p", "r", tag).Submit(ctx),
		}
	}
	for _, tag := range malformed {
		for i, err := range try(tag) {
			require.ErrorIs(t, err, ErrInvalidInput, "%q, call %d", tag, i)
		}
	}
	for _, tag := range wellFormed {
		for i, err := range try(tag) {
			require.ErrorIs(t, err, ErrUpdateConditionNotSatisfied, "%q, call %d", tag, i)
		}
	}
	got, err := tbl.Get(ctx, "p", "r", nil)
	require.NoError(t, err)
	require.Equal(t, current, got.ETag)
	require.Equal(t, int32(1), got.Properties["N"])

	// The current ETag and the wildcard still work.
	upd := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"N": int32(3)}}
	require.NoError(t, tbl.Update(ctx, upd, Merge, current))
	require.NoError(t, tbl.Delete(ctx, "p", "r", ETagAny))
}
