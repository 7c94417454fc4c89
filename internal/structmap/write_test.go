package structmap

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
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
