package tablestore

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type Address struct {
	City string
	Zip  *string `table:",omitempty"`
}

type hidden struct {
	Promoted int32
}

type Customer struct {
	PartitionKey string
	RowKey       string
	Timestamp    time.Time
	ETag         ETag
	Address
	hidden

	Name      string
	Age       int
	Small     int8
	Medium    int16
	Byte      uint8
	Word      uint16
	Wide      uint32
	I32       int32
	I64       int64
	F32       float32
	F64       float64
	OK        bool
	Born      time.Time
	ID        GUID
	Blob      []byte
	Renamed   string    `table:"Other"`
	Skipped   string    `table:"-"`
	Empty     string    `table:",omitempty"`
	NoTime    time.Time `table:",omitempty"`
	PName     *string
	PAge      *int64
	PTime     *time.Time
	PNil      *float64
	NilBlob   []byte
	unexposed string
}

func sampleCustomer() Customer {
	name := "pointer"
	age := int64(-9)
	when := time.Date(2022, 3, 4, 5, 6, 7, 800, time.UTC)
	return Customer{
		PartitionKey: "p1",
		RowKey:       "r1",
		Address:      Address{City: "Oslo"},
		hidden:       hidden{Promoted: 11},
		Name:         "Ada",
		Age:          math.MaxInt64,
		Small:        -128,
		Medium:       -32768,
		Byte:         255,
		Word:         65535,
		Wide:         math.MaxUint32,
		I32:          math.MinInt32,
		I64:          math.MinInt64,
		F32:          1.5,
		F64:          math.Inf(-1),
		OK:           true,
		Born:         time.Date(1815, 12, 10, 0, 0, 0, 0, time.UTC),
		ID:           GUID{1, 2, 3},
		Blob:         []byte{9, 8},
		Renamed:      "r",
		Skipped:      "never stored",
		PName:        &name,
		PAge:         &age,
		PTime:        &when,
		unexposed:    "ignored",
	}
}

func TestMarshalEntity(t *testing.T) {
	c := sampleCustomer()
	c.Timestamp = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	c.ETag = "W/\"x\""
	e, err := MarshalEntity(&c)
	require.NoError(t, err)
	require.Equal(t, "p1", e.PartitionKey)
	require.Equal(t, "r1", e.RowKey)
	require.Equal(t, c.Timestamp, e.Timestamp)
	require.Equal(t, ETag("W/\"x\""), e.ETag)
	require.Equal(t, map[string]any{
		"City":     "Oslo",
		"Promoted": int32(11),
		"Name":     "Ada",
		"Age":      int64(math.MaxInt64),
		"Small":    int32(-128),
		"Medium":   int32(-32768),
		"Byte":     int32(255),
		"Word":     int32(65535),
		"Wide":     int64(math.MaxUint32),
		"I32":      int32(math.MinInt32),
		"I64":      int64(math.MinInt64),
		"F32":      1.5,
		"F64":      math.Inf(-1),
		"OK":       true,
		"Born":     c.Born,
		"ID":       GUID{1, 2, 3},
		"Blob":     []byte{9, 8},
		"Other":    "r",
		"PName":    "pointer",
		"PAge":     int64(-9),
		"PTime":    *c.PTime,
	}, e.Properties)

	// A value works as well as a pointer, and the entity passes validation.
	e2, err := MarshalEntity(c)
	require.NoError(t, err)
	require.Equal(t, e, e2)
	props, err := encodeProperties(e.Properties)
	require.NoError(t, err)
	require.NoError(t, checkEntityLimits(e.PartitionKey, e.RowKey, props))
}

func TestStructRoundTrip(t *testing.T) {
	in := sampleCustomer()
	e, err := MarshalEntity(&in)
	require.NoError(t, err)

	// Through the stored form, as the engine does it.
	props, err := encodeProperties(e.Properties)
	require.NoError(t, err)
	stored, err := decodeEntity(e.PartitionKey, e.RowKey, encodeRecord(t, props), nil)
	require.NoError(t, err)

	var out Customer
	require.NoError(t, UnmarshalEntity(stored, &out))
	require.Equal(t, stored.Timestamp, out.Timestamp)
	require.Equal(t, stored.ETag, out.ETag)
	// Fields that are not stored keep their zero values; fix them up and
	// compare the rest exactly.
	require.Empty(t, out.Skipped)
	require.Empty(t, out.unexposed)
	require.Nil(t, out.PNil)
	in.Skipped, in.unexposed = "", ""
	in.Timestamp, in.ETag = out.Timestamp, out.ETag
	require.Equal(t, in, out)
}

func TestUnmarshalEntityConversions(t *testing.T) {
	type target struct {
		I8  int8
		U8  uint8
		U32 uint32
		I   int
		F32 float32
		F64 float64
		P   *int16
	}
	tests := []struct {
		name  string
		props map[string]any
		want  target
		err   string
	}{
		{"int64 into int8", map[string]any{"I8": int64(-5)}, target{I8: -5}, ""},
		{"whole double into int", map[string]any{"I": 4.0}, target{I: 4}, ""},
		{"int32 into uint32", map[string]any{"U32": int32(7)}, target{U32: 7}, ""},
		{"int64 into float32", map[string]any{"F32": int64(1 << 24)}, target{F32: 1 << 24}, ""},
		{"int32 into float64", map[string]any{"F64": int32(-3)}, target{F64: -3}, ""},
		{"NaN into float32", map[string]any{"F32": math.NaN()}, target{F32: float32(math.NaN())}, ""},
		{"into pointer", map[string]any{"P": int32(300)}, target{P: ptrTo(int16(300))}, ""},
		{"null leaves field", map[string]any{"I8": nil}, target{}, ""},
		{"overflow int8", map[string]any{"I8": int32(128)}, target{}, "field I8: property \"I8\" holds Edm.Int32 128, which does not fit the field's type int8"},
		{"negative into uint8", map[string]any{"U8": int32(-1)}, target{}, "field U8"},
		{"fraction into int", map[string]any{"I": 2.5}, target{}, "field I"},
		{"NaN into int", map[string]any{"I": math.NaN()}, target{}, "field I"},
		{"huge double into int", map[string]any{"I": 1e19}, target{}, "field I"},
		{"inexact int64 into float64", map[string]any{"F64": int64(1<<53 + 1)}, target{}, "field F64"},
		{"max int64 into float64", map[string]any{"F64": int64(math.MaxInt64)}, target{}, "field F64"},
		{"inexact double into float32", map[string]any{"F32": 0.1}, target{}, "field F32"},
		{"inexact int32 into float32", map[string]any{"F32": int32(1<<24 + 1)}, target{}, "field F32"},
		{"string into int8", map[string]any{"I8": "5"}, target{}, "field I8: property \"I8\" holds Edm.String 5"},
		{"bool into pointer", map[string]any{"P": true}, target{}, "field P"},
		{"unsupported value type", map[string]any{"I": float32(5)}, target{}, "holds float32 5"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got target
			err := UnmarshalEntity(&Entity{Properties: tc.props}, &got)
			if tc.err != "" {
				require.ErrorIs(t, err, ErrInvalidValueType)
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			if math.IsNaN(float64(tc.want.F32)) {
				require.True(t, math.IsNaN(float64(got.F32)))
				return
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestUnmarshalEntityLeavesMissing(t *testing.T) {
	type target struct {
		A string
		B *int32
	}
	b := int32(3)
	got := target{A: "keep", B: &b}
	require.NoError(t, UnmarshalEntity(&Entity{Properties: map[string]any{}}, &got))
	require.Equal(t, "keep", got.A)
	require.Same(t, &b, got.B)
	require.NoError(t, UnmarshalEntity(&Entity{}, &got), "nil Properties")
}

func TestStructErrors(t *testing.T) {
	type badUint struct{ N uint }
	type badUint64 struct{ N uint64 }
	type badMap struct{ M map[string]string }
	type badNested struct{ A Address }
	type badPK struct{ PartitionKey int }
	type badTS struct{ Timestamp string }
	type twoETags struct {
		V ETag
		W ETag
	}
	type badTag struct {
		N int `table:"1abc"`
	}
	type dup struct {
		A string
		B string `table:"A"`
	}
	type embeddedPtr struct{ *Address }

	tests := []struct {
		name string
		v    any
		code Code
		msg  string
	}{
		{"uint", badUint{}, CodeInvalidValueType, "field N has type uint"},
		{"uint64", &badUint64{}, CodeInvalidValueType, "field N has type uint64"},
		{"map", badMap{}, CodeInvalidValueType, "field M"},
		{"nested struct", badNested{}, CodeInvalidValueType, "field A has type tablestore.Address"},
		{"int partition key", badPK{}, CodeInvalidValueType, "field PartitionKey maps to PartitionKey and must be a string"},
		{"string timestamp", badTS{}, CodeInvalidValueType, "must be a time.Time"},
		{"two etag fields", twoETags{}, CodeDuplicatePropertiesSpecified, "fields V and W of tablestore.twoETags are both of type ETag"},
		{"bad tag", badTag{}, CodePropertyNameInvalid, "field N: the property name \"1abc\" is invalid"},
		{"duplicate", dup{}, CodeDuplicatePropertiesSpecified, "fields A and B"},
		{"embedded pointer", embeddedPtr{}, CodeInvalidValueType, "field Address has type *tablestore.Address"},
		{"not a struct", 5, CodeInvalidValueType, "cannot marshal int into an entity: it is not a struct"},
		{"nil pointer", (*Customer)(nil), CodeInvalidInput, "nil *tablestore.Customer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MarshalEntity(tc.v)
			require.Equal(t, tc.code, ErrorCode(err), "%v", err)
			require.ErrorContains(t, err, tc.msg)
			// Cached plans give the same error the second time.
			_, err2 := MarshalEntity(tc.v)
			require.Equal(t, err.Error(), err2.Error())
		})
	}

	var c Customer
	for _, target := range []any{c, nil, new(int), (*Customer)(nil)} {
		err := UnmarshalEntity(&Entity{}, target)
		require.ErrorIs(t, err, ErrInvalidInput, "%T", target)
	}
	require.ErrorIs(t, UnmarshalEntity(nil, &c), ErrInvalidInput)
	var bad badUint
	require.ErrorIs(t, UnmarshalEntity(&Entity{}, &bad), ErrInvalidValueType)
}

func TestMarshalEntityOmitEmpty(t *testing.T) {
	type opt struct {
		S string    `table:",omitempty"`
		N int32     `table:"Count,omitempty"`
		T time.Time `table:",omitempty"`
		P *string   `table:",omitempty"`
		Z *string
		K string
	}
	empty := ""
	e, err := MarshalEntity(opt{P: &empty})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"P": "", "K": ""}, e.Properties)

	e, err = MarshalEntity(opt{S: "s", N: 2})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"S": "s", "Count": int32(2), "K": ""}, e.Properties)
}

func BenchmarkMarshalEntity(b *testing.B) {
	c := sampleCustomer()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MarshalEntity(&c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalEntity(b *testing.B) {
	c := sampleCustomer()
	e, err := MarshalEntity(&c)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var out Customer
		if err := UnmarshalEntity(e, &out); err != nil {
			b.Fatal(err)
		}
	}
}
