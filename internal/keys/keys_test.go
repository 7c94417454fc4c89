package keys

import (
	"bytes"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/edm"
)

func TestEntityKeyOrderMatchesKeyOrder(t *testing.T) {
	type pair struct{ pk, rk string }
	pairs := []pair{
		{"a", ""}, {"a", "b"}, {"a", "ba"}, {"ab", ""}, {"a b", "z"},
		{"", "x"}, {"b", "a"}, {"partition-1", "1"}, {"partition-10", "0"},
		{"partition-2", "0"}, {"é", "a"}, {"z", "é"},
	}
	sorted := append([]pair(nil), pairs...)
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].pk != sorted[j].pk {
			return sorted[i].pk < sorted[j].pk
		}
		return sorted[i].rk < sorted[j].rk
	})
	byKey := append([]pair(nil), pairs...)
	sort.Slice(byKey, func(i, j int) bool {
		return bytes.Compare(Entity(nil, 7, byKey[i].pk, byKey[i].rk), Entity(nil, 7, byKey[j].pk, byKey[j].rk)) < 0
	})
	require.Equal(t, sorted, byKey)
}

func TestSplitRoundTrip(t *testing.T) {
	for _, c := range []struct{ pk, rk string }{{"p", "r"}, {"", ""}, {"pk", ""}, {"", "rk"}, {"x y", "é"}} {
		id, pk, rk, err := Split(Entity(nil, 42, c.pk, c.rk))
		require.NoError(t, err)
		require.Equal(t, uint64(42), id)
		require.Equal(t, c.pk, string(pk))
		require.Equal(t, c.rk, string(rk))
	}
	for _, bad := range [][]byte{nil, {1, 2, 3}, TablePrefix(nil, 1), append(TablePrefix(nil, 1), 'a', 'b')} {
		_, _, _, err := Split(bad)
		require.ErrorIs(t, err, ErrMalformed)
	}
}

func TestSpansContainTheirKeys(t *testing.T) {
	ts, te := TableSpan(5)
	ps, pe := PartitionSpan(5, "p")
	in := func(k, s, e []byte) bool { return bytes.Compare(k, s) >= 0 && bytes.Compare(k, e) < 0 }
	for _, k := range [][]byte{Entity(nil, 5, "p", ""), Entity(nil, 5, "p", "\xff\xff"), Entity(nil, 5, "p", "zzz")} {
		require.True(t, in(k, ts, te))
		require.True(t, in(k, ps, pe))
	}
	for _, k := range [][]byte{Entity(nil, 5, "pa", ""), Entity(nil, 5, "o", "zz"), Entity(nil, 6, "p", "")} {
		require.False(t, in(k, ps, pe), "%q", k)
	}
	require.False(t, in(Entity(nil, 6, "", ""), ts, te))
	require.False(t, in(Entity(nil, 4, "zz", "zz"), ts, te))
	require.Equal(t, append(Entity(nil, 1, "a", "b"), 0), Successor(Entity(nil, 1, "a", "b")))
}

// TestEmptyKeys checks the keys of entities with empty keys: (”, ”) is
// the table's first key, the partition ” holds exactly its rows, and
// index entries of such entities split back into the same keys.
func TestEmptyKeys(t *testing.T) {
	first := Entity(nil, 3, "", "")
	require.Equal(t, append(TablePrefix(nil, 3), Sep), first)
	ts, _ := TableSpan(3)
	require.Equal(t, 1, bytes.Compare(first, ts), "after the bare table prefix")
	ps, pe := PartitionSpan(3, "")
	in := func(k []byte) bool { return bytes.Compare(k, ps) >= 0 && bytes.Compare(k, pe) < 0 }
	require.Equal(t, first, ps, "the empty partition starts at ('', '')")
	for _, k := range [][]byte{first, Entity(nil, 3, "", "r"), Entity(nil, 3, "", "\U0010ffff")} {
		require.True(t, in(k), "%q", k)
	}
	for _, k := range [][]byte{Entity(nil, 3, "a", ""), Entity(nil, 3, " ", ""), Entity(nil, 4, "", ""), IndexPrefix(nil, 3, 1)} {
		require.False(t, in(k), "%q", k)
	}
	_, ee := EntitySpan(3)
	require.Equal(t, -1, bytes.Compare(Entity(nil, 3, "", ""), ee))
	tuple := AppendValue(nil, edm.Value{Type: edm.TypeString, Bytes: []byte("")})
	for _, partitioned := range []bool{false, true} {
		for _, c := range []struct{ pk, rk string }{{"", ""}, {"", "r"}, {"p", ""}} {
			suffix := AppendIndexSuffix(nil, partitioned, tuple, c.pk, c.rk)
			tu, pk, rk, err := SplitIndexSuffix(suffix, 1, partitioned)
			require.NoError(t, err)
			require.Equal(t, tuple, tu)
			require.Equal(t, c.pk, string(pk))
			require.Equal(t, c.rk, string(rk))
		}
	}
}
