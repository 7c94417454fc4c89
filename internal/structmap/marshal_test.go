package structmap

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// marshal is Marshal of a struct or a pointer to one, giving the
// property map.
func marshal(v any) (map[string]any, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	_, props, err := Marshal(rv)
	return props, err
}

// unmarshal is Unmarshal of props, without keys, into the struct v
// points to.
func unmarshal(props map[string]any, v any) error {
	return Unmarshal(Keys{}, props, reflect.ValueOf(v).Elem())
}

// requireCode checks that err is an *entityenc.Error with code.
func requireCode(t *testing.T, err error, code edm.Code) {
	t.Helper()
	var e *entityenc.Error
	require.True(t, errors.As(err, &e), "%v is no *entityenc.Error", err)
	require.Equal(t, code, e.Code, "%v", err)
}

func ptrTo[T any](v T) *T { return &v }

func TestUnmarshalConversions(t *testing.T) {
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
			err := unmarshal(tc.props, &got)
			if tc.err != "" {
				requireCode(t, err, edm.CodeInvalidValueType)
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

func TestUnmarshalLeavesMissing(t *testing.T) {
	type target struct {
		A string
		B *int32
	}
	b := int32(3)
	got := target{A: "keep", B: &b}
	require.NoError(t, unmarshal(map[string]any{}, &got))
	require.Equal(t, "keep", got.A)
	require.Same(t, &b, got.B)
	require.NoError(t, unmarshal(nil, &got), "nil properties")
}

func TestMarshalOmitEmpty(t *testing.T) {
	type opt struct {
		S string    `table:",omitempty"`
		N int32     `table:"Count,omitempty"`
		T time.Time `table:",omitempty"`
		P *string   `table:",omitempty"`
		Z *string
		K string
	}
	empty := ""
	props, err := marshal(opt{P: &empty})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"P": "", "K": ""}, props)

	props, err = marshal(opt{S: "s", N: 2})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"S": "s", "Count": int32(2), "K": ""}, props)
}

// TestMarshalTimeRange checks that Marshal refuses a time the root
// package's Insert would refuse, naming the field, and that omitempty leaves a zero
// time out.
func TestMarshalTimeRange(t *testing.T) {
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
		_, err := marshal(v)
		requireCode(t, err, edm.CodeOutOfRangeInput)
		require.ErrorContains(t, err, "field ", name)
	}

	props, err := marshal(omit{PartitionKey: "p", RowKey: "r"})
	require.NoError(t, err)
	require.Empty(t, props)

	when := time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)
	props, err = marshal(omit{PartitionKey: "p", RowKey: "r", When: when, Named: when, Ptr: &when, N: 3})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"When": when, "At": when, "Ptr": when, "N": int32(3)}, props)
}

// TestNoArticleErrors checks that a conversion error names the field's
// type without a wrong article ("a int8").
func TestNoArticleErrors(t *testing.T) {
	var v struct{ N int8 }
	err := unmarshal(map[string]any{"N": int32(1000)}, &v)
	if err == nil {
		t.Fatal("1000 fits no int8")
	}
	for _, bad := range []string{" a int", " a uint", " a Edm.Int", " a Edm.E"} {
		if strings.Contains(err.Error(), bad) {
			t.Errorf("message %q contains %q", err, bad)
		}
	}
}
