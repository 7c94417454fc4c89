package driver

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKeyCompare(t *testing.T) {
	keys := []Key{{}, {"", "a"}, {"a", ""}, {"a", "a"}, {"a", "a "}, {"a", "b"}, {"a ", ""}, {"b", ""}, {"é", ""}}
	for i, a := range keys {
		for j, b := range keys {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			require.Equal(t, want, a.Compare(b), "%v vs %v", a, b)
		}
	}
}

func TestKeyRangeShapes(t *testing.T) {
	point := KeyRange{Start: Key{"p", "r"}, End: Key{"p", Successor("r")}}
	k, ok := point.Point()
	require.True(t, ok)
	require.Equal(t, Key{"p", "r"}, k)
	require.Equal(t, "PartitionKey = 'p', RowKey = 'r'", point.String())

	part := KeyRange{Start: Key{PartitionKey: "p"}, End: PartitionEnd("p")}
	_, ok = part.Point()
	require.False(t, ok)
	pk, ok := part.Partition()
	require.True(t, ok)
	require.Equal(t, "p", pk)
	require.Equal(t, "PartitionKey = 'p'", part.String())

	inside := KeyRange{Start: Key{"p", "a"}, End: Key{"p", "b"}}
	pk, ok = inside.Partition()
	require.True(t, ok)
	require.Equal(t, "p", pk)
	require.Equal(t, "PartitionKey = 'p', 'a' <= RowKey < 'b'", inside.String())

	across := KeyRange{Start: Key{"a", "m"}, End: Key{PartitionKey: "c"}}
	_, ok = across.Partition()
	require.False(t, ok)
	require.Equal(t, "(PartitionKey, RowKey) >= ('a', 'm'), PartitionKey < 'c'", across.String())

	all := KeyRange{Unbounded: true}
	_, ok = all.Partition()
	require.False(t, ok)
	require.Equal(t, "all", all.String())
	require.False(t, all.Empty())
	require.True(t, all.Contains(Key{"\U0010ffff", "z"}))

	require.True(t, inside.Contains(Key{"p", "a"}))
	require.True(t, inside.Contains(Key{"p", "az"}))
	require.False(t, inside.Contains(Key{"p", "b"}))
	require.False(t, inside.Contains(Key{"o", "z"}))
	require.True(t, KeyRange{Start: Key{"p", "b"}, End: Key{"p", "b"}}.Empty())
	require.True(t, KeyRange{Start: Key{"q", ""}, End: Key{"p", "z"}}.Empty())
	require.False(t, inside.Empty())
}

func TestRangesFromAndUpto(t *testing.T) {
	ranges := []KeyRange{
		{Start: Key{"a", ""}, End: PartitionEnd("a")},
		{Start: Key{"c", "m"}, End: Key{"c", "p"}},
		{Start: Key{"e", ""}, Unbounded: true},
	}
	orig := append([]KeyRange(nil), ranges...)

	// Forward: the range holding the resume point starts there.
	require.Equal(t, []KeyRange{
		{Start: Key{"c", "n"}, End: Key{"c", "p"}},
		{Start: Key{"e", ""}, Unbounded: true},
	}, RangesFrom(ranges, Key{"c", "n"}))
	// A point between ranges drops the earlier ones whole.
	require.Equal(t, ranges[2:], RangesFrom(ranges, Key{"d", ""}))
	require.Equal(t, []KeyRange{{Start: Key{"z", "z"}, Unbounded: true}}, RangesFrom(ranges, Key{"z", "z"}))
	require.Equal(t, ranges, RangesFrom(ranges, Key{}))

	// Reverse: the range holding the resume point ends just after it.
	require.Equal(t, []KeyRange{
		{Start: Key{"a", ""}, End: PartitionEnd("a")},
		{Start: Key{"c", "m"}, End: Key{"c", Successor("n")}},
	}, RangesUpto(ranges, Key{"c", "n"}))
	require.Equal(t, ranges[:2], RangesUpto(ranges, Key{"d", ""}))
	require.Equal(t, []KeyRange{{Start: Key{"a", ""}, End: Key{"a", Successor("")}}}, RangesUpto(ranges, Key{"a", ""}))
	require.Empty(t, RangesUpto(ranges, Key{}))

	require.Equal(t, orig, ranges, "the input is not modified")
}
