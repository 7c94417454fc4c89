package tablestore

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMarshalEntityTimeRange checks that MarshalEntity refuses a time
// Insert would refuse, naming the field, and that omitempty leaves a zero
// time out.
func TestMarshalEntityTimeRange(t *testing.T) {
	type plain struct {
		PartitionKey, RowKey string
		When                 time.Time
	}
	type omit struct {
		PartitionKey, RowKey string
		When                 time.Time  `table:",omitempty"`
		Named                time.Time  `table:"At,omitempty"`
		Ptr                  *time.Time `table:",omitempty"`
		N                    int32      `table:",omitempty"`
	}
	for name, v := range map[string]any{
		"zero":      plain{PartitionKey: "p", RowKey: "r"},
		"1600":      plain{PartitionKey: "p", RowKey: "r", When: time.Date(1600, 12, 31, 23, 59, 59, 0, time.UTC)},
		"10000":     plain{PartitionKey: "p", RowKey: "r", When: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},
		"zero ptr":  &omit{PartitionKey: "p", RowKey: "r", Ptr: new(time.Time)},
		"old named": omit{PartitionKey: "p", RowKey: "r", Named: time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		_, err := MarshalEntity(v)
		requireCode(t, err, CodeOutOfRangeInput)
		require.ErrorContains(t, err, "field ", name)
	}

	e, err := MarshalEntity(omit{PartitionKey: "p", RowKey: "r"})
	require.NoError(t, err)
	require.Empty(t, e.Properties)

	when := time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	e, err = MarshalEntity(omit{PartitionKey: "p", RowKey: "r", When: when, Named: when, Ptr: &when, N: 3})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"When": when, "At": when, "Ptr": when, "N": int32(3)}, e.Properties)
}

// TestUnmarshalEntityStrings checks that Azure's no-metadata JSON, where
// Int64, DateTime, Guid, Binary and special Doubles are strings, fills
// fields whose types say what the strings are, strictly.
func TestUnmarshalEntityStrings(t *testing.T) {
	type row struct {
		PartitionKey, RowKey string
		Big                  int64
		Int                  int
		U32                  uint32
		When                 time.Time
		WhenPtr              *time.Time
		ID                   GUID
		Data                 []byte
		F                    float64
		S                    string
	}
	const noMetadata = `{"PartitionKey":"p","RowKey":"r","Big":"9007199254740993","Int":"-5","U32":"4000000000",` +
		`"When":"2021-08-31T15:41:38.3027816Z","WhenPtr":"2020-01-04T00:00:00Z",` +
		`"ID":"c9da6455-213d-42c9-9a79-3e9149a57833","Data":"AQL/","F":"-Infinity","S":"12"}`
	var e Entity
	require.NoError(t, json.Unmarshal([]byte(noMetadata), &e))
	var r row
	require.NoError(t, UnmarshalEntity(&e, &r))
	g, _ := ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	require.Equal(t, int64(9007199254740993), r.Big)
	require.Equal(t, -5, r.Int)
	require.Equal(t, uint32(4000000000), r.U32)
	require.Equal(t, time.Date(2021, 8, 31, 15, 41, 38, 302781600, time.UTC), r.When)
	require.Equal(t, time.Date(2020, 1, 4, 0, 0, 0, 0, time.UTC), *r.WhenPtr)
	require.Equal(t, g, r.ID)
	require.Equal(t, []byte{1, 2, 0xff}, r.Data)
	require.True(t, math.IsInf(r.F, -1))
	require.Equal(t, "12", r.S)

	for name, tc := range map[string]struct {
		prop any
		code Code
	}{
		"Big":     {"12.5", CodeInvalidInput},
		"Int":     {"1e3", CodeInvalidInput},
		"U32":     {"-1", CodeInvalidValueType}, // a valid Int64 that does not fit
		"When":    {"yesterday", CodeInvalidInput},
		"WhenPtr": {"2021-02-30T00:00:00Z", CodeInvalidInput},
		"ID":      {"c9da6455213d42c99a793e9149a57833", CodeInvalidInput},
		"Data":    {"not base64!", CodeInvalidInput},
		"F":       {"inf", CodeInvalidInput},
	} {
		var r row
		err := UnmarshalEntity(&Entity{Properties: map[string]any{name: tc.prop}}, &r)
		requireCode(t, err, tc.code)
		require.ErrorContains(t, err, "field "+name, name)
	}
	// Kinds whose JSON form is never a string still refuse strings.
	var small struct{ N int32 }
	requireCode(t, UnmarshalEntity(&Entity{Properties: map[string]any{"N": "5"}}, &small), CodeInvalidValueType)
}
