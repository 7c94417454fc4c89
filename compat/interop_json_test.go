package compat

import (
	"encoding/json"
	"github.com/tablestore/tablestore/edm"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore"
)

// These tests move entities between tablestore's JSON (Entity.MarshalJSON
// and UnmarshalJSON) and aztables v1.4.1's (EDMEntity), in both
// directions, and pin down exactly what survives. The README section
// "Interoperability with aztables" states the same findings.

var testGUID = func() tablestore.GUID {
	g, ok := edm.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	if !ok {
		panic("malformed guid")
	}
	return g
}()

// toAztables encodes e with tablestore and decodes it with aztables.
func toAztables(t *testing.T, e tablestore.Entity) aztables.EDMEntity {
	t.Helper()
	body, err := json.Marshal(e)
	require.NoError(t, err)
	var az aztables.EDMEntity
	require.NoError(t, json.Unmarshal(body, &az), "aztables reads %s", body)
	return az
}

// fromAztables encodes az with aztables and decodes it with tablestore.
func fromAztables(t *testing.T, az aztables.EDMEntity) tablestore.Entity {
	t.Helper()
	body, err := json.Marshal(az)
	require.NoError(t, err)
	var e tablestore.Entity
	require.NoError(t, json.Unmarshal(body, &e), "tablestore reads %s", body)
	return e
}

// TestInteropFromTablestore: tablestore JSON -> aztables EDMEntity ->
// aztables JSON -> tablestore. Every type survives except where aztables
// v1.4.1 itself drops information: an integral Double comes back as an
// Int32 (aztables holds it as a float64 and writes 2.0 as 2), and NaN and
// the infinities come back absent (aztables reads an Edm.Double
// annotation as nil and writes null).
func TestInteropFromTablestore(t *testing.T) {
	when := time.Date(2021, 8, 31, 17, 41, 38, 302781600, time.FixedZone("cest", 2*3600))
	in := tablestore.Entity{
		PartitionKey: "pk", RowKey: "rk",
		ETag: `W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'"`,
		Properties: map[string]any{
			"S": "text 'quoted' \"and\" \\ é", "I32": int32(-7), "I32Max": int32(math.MaxInt32),
			"I64": int64(-42), "Big": int64(1<<53 + 1), "MaxI64": int64(math.MaxInt64),
			"D": 2.5, "Tiny": 1e-300, "Huge": 1e300, "Whole": 2.0, "NegZero": math.Copysign(0, -1),
			"NaN": math.NaN(), "Inf": math.Inf(1), "NInf": math.Inf(-1),
			"B": true, "T": when, "G": testGUID, "Bin": []byte{0, 1, 0xfe, 0xff}, "Empty": []byte{},
			"ETag": "a user property",
		},
	}

	az := toAztables(t, in)
	require.Equal(t, "pk", az.PartitionKey)
	require.Equal(t, "rk", az.RowKey)
	require.Equal(t, string(in.ETag), az.ETag)
	p := az.Properties
	require.Equal(t, in.Properties["S"], p["S"])
	require.Equal(t, int32(-7), p["I32"])
	require.Equal(t, int32(math.MaxInt32), p["I32Max"])
	require.Equal(t, aztables.EDMInt64(-42), p["I64"])
	require.Equal(t, aztables.EDMInt64(1<<53+1), p["Big"])
	require.Equal(t, aztables.EDMInt64(math.MaxInt64), p["MaxI64"])
	require.Equal(t, 2.5, p["D"])
	require.Equal(t, 1e-300, p["Tiny"])
	require.Equal(t, 1e300, p["Huge"])
	require.Equal(t, float64(2), p["Whole"]) // tablestore wrote 2.0, so aztables does not take it for an Int32
	require.Equal(t, true, p["B"])
	require.True(t, time.Time(p["T"].(aztables.EDMDateTime)).Equal(when))
	require.Equal(t, aztables.EDMGUID(testGUID.String()), p["G"])
	require.Equal(t, aztables.EDMBinary{0, 1, 0xfe, 0xff}, p["Bin"])
	require.Equal(t, aztables.EDMBinary{}, p["Empty"])
	require.Equal(t, "a user property", p["ETag"])
	for _, special := range []string{"NaN", "Inf", "NInf"} {
		v, ok := p[special]
		require.True(t, ok, special)
		require.Nil(t, v, "aztables v1.4.1 reads an Edm.Double-annotated %s as nil", special)
	}

	back := fromAztables(t, az)
	require.Equal(t, "pk", back.PartitionKey)
	require.Equal(t, "rk", back.RowKey)
	want := map[string]any{}
	for k, v := range in.Properties {
		want[k] = v
	}
	want["T"] = when.UTC()
	want["Whole"] = int32(2)   // aztables writes float64(2) as 2
	want["NegZero"] = int32(0) // and -0 as -0, which reads as the integer 0
	delete(want, "NaN")        // aztables wrote null for each
	delete(want, "Inf")
	delete(want, "NInf")
	require.Equal(t, want, back.Properties)
}

// TestInteropFromAztables: aztables JSON -> tablestore Entity ->
// tablestore JSON -> aztables. What aztables writes, tablestore keeps
// exactly, including a bare int64 beyond 2^53 (as an Int64, where Azure
// would round it to a Double); what aztables already lost on the way out
// (the zone of a non-UTC time, the type of an integral double, quotes in
// keys) stays lost.
func TestInteropFromAztables(t *testing.T) {
	paris := time.FixedZone("paris", 3600)
	local := time.Date(2024, 5, 6, 7, 8, 9, 123456700, paris)
	utc := time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC)
	az := aztables.EDMEntity{
		Entity: aztables.Entity{PartitionKey: "it's", RowKey: "rk"},
		Properties: map[string]any{
			"S": "x", "I32": int32(5), "D": 2.5, "Whole": 2.0, "Neg": -3.0,
			"BareBig": int64(1<<53 + 1), "BareExact": int64(1 << 53), "BareSmall": int64(7),
			"I64": aztables.EDMInt64(math.MinInt64), "T": aztables.EDMDateTime(utc), "Local": aztables.EDMDateTime(local),
			"G": aztables.EDMGUID(testGUID.String()), "Bin": aztables.EDMBinary{9, 8}, "B": false,
			"ETag": int32(3),
		},
	}
	e := fromAztables(t, az)
	require.Equal(t, "it''s", e.PartitionKey, "aztables v1.4.1 doubles quotes in keys in the JSON body")
	require.Equal(t, "rk", e.RowKey)
	want := map[string]any{
		"S": "x", "I32": int32(5), "D": 2.5,
		"Whole":     int32(2),  // aztables writes 2.0 as 2: an Int32, as Azure would store it
		"Neg":       int32(-3), // likewise
		"BareBig":   int64(1<<53 + 1),
		"BareExact": float64(1 << 53), // Azure's inference: beyond Int32, exact as a double
		"BareSmall": int32(7),
		"I64":       int64(math.MinInt64), "T": utc,
		"Local": time.Date(2024, 5, 6, 7, 8, 9, 123456700, time.UTC), // aztables wrote paris clock digits with a Z
		"G":     testGUID, "Bin": []byte{9, 8}, "B": false,
		"ETag": int32(3),
	}
	require.Equal(t, want, e.Properties)
	require.False(t, e.Properties["Local"].(time.Time).Equal(local), "the instant moved by the zone offset on aztables' side")

	back := toAztables(t, e)
	require.Equal(t, "it''s", back.PartitionKey)
	p := back.Properties
	require.Equal(t, "x", p["S"])
	require.Equal(t, int32(5), p["I32"])
	require.Equal(t, 2.5, p["D"])
	require.Equal(t, int32(2), p["Whole"])
	require.Equal(t, aztables.EDMInt64(1<<53+1), p["BareBig"])
	require.Equal(t, float64(1<<53), p["BareExact"])
	require.Equal(t, aztables.EDMInt64(math.MinInt64), p["I64"])
	require.True(t, time.Time(p["T"].(aztables.EDMDateTime)).Equal(utc))
	require.Equal(t, aztables.EDMGUID(testGUID.String()), p["G"])
	require.Equal(t, aztables.EDMBinary{9, 8}, p["Bin"])
	require.Equal(t, false, p["B"])
	require.Equal(t, int32(3), p["ETag"])
}

// TestInteropNaNFromAztables: aztables cannot write NaN or the infinities
// at all (encoding/json refuses them), while Azure's wire form, which
// tablestore reads and writes, carries them as annotated strings.
func TestInteropNaNFromAztables(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := json.Marshal(aztables.EDMEntity{Entity: aztables.Entity{PartitionKey: "p", RowKey: "r"},
			Properties: map[string]any{"D": f}})
		require.Error(t, err, "aztables v1.4.1 writes %v", f)

		body, err := json.Marshal(tablestore.Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"D": f}})
		require.NoError(t, err)
		var back tablestore.Entity
		require.NoError(t, json.Unmarshal(body, &back))
		got := back.Properties["D"].(float64)
		require.True(t, got == f || (math.IsNaN(got) && math.IsNaN(f)), "%v read back as %v", f, got)
	}
}

// TestInteropTimestampAndETag: an entity as Azure returns it, read by both
// sides, gives the same Timestamp and ETag.
func TestInteropTimestampAndETag(t *testing.T) {
	const wire = `{"odata.etag":"W/\"datetime'2021-08-31T15%3A41%3A38.3027816Z'\"",` +
		`"PartitionKey":"partition","RowKey":"1","Timestamp":"2021-08-31T15:41:38.3027816Z","Integer":1}`
	var az aztables.EDMEntity
	require.NoError(t, json.Unmarshal([]byte(wire), &az))
	var e tablestore.Entity
	require.NoError(t, json.Unmarshal([]byte(wire), &e))
	require.Equal(t, az.ETag, string(e.ETag))
	require.True(t, time.Time(az.Timestamp).Equal(e.Timestamp))

	// tablestore's own Timestamp and ETag, read by aztables.
	body, err := json.Marshal(e)
	require.NoError(t, err)
	var az2 aztables.EDMEntity
	require.NoError(t, json.Unmarshal(body, &az2))
	require.Equal(t, az.ETag, az2.ETag)
	require.True(t, time.Time(az2.Timestamp).Equal(e.Timestamp))
}

// TestInteropActionTypes: ActionType.String names aztables' transaction
// types.
func TestInteropActionTypes(t *testing.T) {
	want := map[tablestore.ActionType]aztables.TransactionType{
		tablestore.ActionInsert:        aztables.TransactionTypeAdd,
		tablestore.ActionUpdateMerge:   aztables.TransactionTypeUpdateMerge,
		tablestore.ActionUpdateReplace: aztables.TransactionTypeUpdateReplace,
		tablestore.ActionUpsertMerge:   aztables.TransactionTypeInsertMerge,
		tablestore.ActionUpsertReplace: aztables.TransactionTypeInsertReplace,
		tablestore.ActionDelete:        aztables.TransactionTypeDelete,
	}
	for a, tt := range want {
		require.Equal(t, tt, aztables.TransactionType(a.String()))
		require.True(t, slices.Contains(aztables.PossibleTransactionTypeValues(), tt))
	}
	require.Len(t, want, len(aztables.PossibleTransactionTypeValues()))
}
