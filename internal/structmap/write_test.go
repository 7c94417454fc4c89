package structmap

import (
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// TestResolve checks what Resolve gives for each kind of value: the
// caller's struct behind a pointer (Owned, so writes set it), a copy of a
// struct passed by value, nothing for a nil pointer or a non-struct; and
// that Last's shortcut gives the same plan as the cache.
func TestResolve(t *testing.T) {
	type row struct {
		PartitionKey, RowKey string
		N                    int32
	}
	v := &row{RowKey: "r", N: 1}
	var last Last
	r, ok, err := Resolve(v, &last)
	require.NoError(t, err)
	require.True(t, ok)
	require.True(t, r.Owned)
	require.True(t, r.SetPartitionKey("p"))
	require.Equal(t, "p", v.PartitionKey, "an owned struct is the caller's")
	pk, rk := r.Keys()
	require.Equal(t, [2]string{"p", "r"}, [2]string{pk, rk})
	require.Same(t, v, r.Pointer())

	again, ok, err := Resolve(&row{}, &last)
	require.NoError(t, err)
	require.True(t, ok)
	require.Same(t, r.Plan, again.Plan, "the type met last reuses its plan")

	byValue := row{PartitionKey: "", RowKey: "v"}
	r, ok, err = Resolve(byValue, &last)
	require.NoError(t, err)
	require.True(t, ok)
	require.False(t, r.Owned)
	require.True(t, r.SetPartitionKey("q"))
	require.Empty(t, byValue.PartitionKey, "a struct passed by value is copied")
	require.Equal(t, "q", r.Pointer().(*row).PartitionKey)

	for _, bad := range []any{(*row)(nil), 5, map[string]any{}, nil} {
		_, ok, err := Resolve(bad, &last)
		require.NoError(t, err, "%T", bad)
		require.False(t, ok, "%T", bad)
	}

	type noKeys struct{ N int32 }
	r, ok, err = Resolve(noKeys{}, nil)
	require.NoError(t, err)
	require.True(t, ok)
	require.False(t, r.SetPartitionKey("p"), "no PartitionKey field")

	type badField struct{ M map[string]string }
	_, ok, err = Resolve(badField{}, nil)
	require.False(t, ok)
	requireCode(t, err, edm.CodeInvalidValueType)
}

// TestAppendFieldsHeads checks AppendFields against the map encoding for
// property heads (name length, name, type) shorter and longer than the
// 16 bytes stored as words, into a buffer without spare capacity and
// into one whose spare capacity holds other bytes, which it may
// overwrite but never leaves in the record.
func TestAppendFieldsHeads(t *testing.T) {
	type row struct {
		PartitionKey, RowKey    string
		A                       string
		Exactly14Bytes          int32 // a 16-byte head: length, 14 bytes, type
		Exactly15BytesX         int64 // a 17-byte head: copied whole
		ARatherLongPropertyName string
		Bin                     []byte
		Nil                     []byte
		Ptr                     *float64
		When                    time.Time
		Z                       bool
	}
	f := 2.5
	v := &row{PartitionKey: "p", RowKey: "r", A: "a", Exactly14Bytes: -3, Exactly15BytesX: 1 << 40,
		ARatherLongPropertyName: "long", Bin: []byte{1, 2}, Ptr: &f, When: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), Z: true}
	_, props, err := Marshal(reflect.ValueOf(v).Elem())
	require.NoError(t, err)
	want, wantCount, wantSize, err := entityenc.AppendProperties([]byte("hdr"), props, nil)
	require.NoError(t, err)
	r, ok, err := Resolve(v, nil)
	require.NoError(t, err)
	require.True(t, ok)
	dirty := make([]byte, 3, 4096)
	for i := range dirty[:cap(dirty)] {
		dirty[:cap(dirty)][i] = 0xee
	}
	copy(dirty, "hdr")
	for _, dst := range [][]byte{[]byte("hdr")[:3:3], dirty} {
		got, size, count, ok := r.AppendFields(dst)
		require.True(t, ok)
		require.Equal(t, want, got)
		require.Equal(t, wantCount, count)
		require.Equal(t, wantSize, size)
	}
}
