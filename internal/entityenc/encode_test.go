package entityenc

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// TestNameCache checks that the name cache hits on exactly the cached
// names, by content, and that a hit encodes as a miss does.
func TestNameCache(t *testing.T) {
	var c NameCache
	props := map[string]any{"Name": "a", "Count": int32(1), "Created": time.Unix(5, 0), "Active": true, "Nil": nil}
	rec := func() []byte {
		out, _, _, err := AppendProperties(driver.AppendHeader(nil, 0), props, &c)
		require.NoError(t, err)
		return out
	}
	hit := func(props map[string]any) bool {
		_, _, ok := c.appendCached(nil, props)
		return ok
	}
	first := rec()
	require.Equal(t, 4, c.n)
	for k := range c.n {
		require.GreaterOrEqual(t, c.length[k], int32(0), "checked names are remembered")
	}
	require.False(t, hit(props), "a nil value counts as a name, so the count differs")
	delete(props, "Nil")
	require.True(t, hit(props), "the same names hit")
	out, size, _ := c.appendCached([]byte("x"), props)
	_, _, wantSize, err := AppendProperties(nil, props, nil)
	require.NoError(t, err)
	require.Equal(t, first[len(driver.AppendHeader(nil, 0)):], out[1:], "a hit encodes in name order as a miss does")
	require.Equal(t, wantSize, size)
	require.Equal(t, first, rec())
	cloned := map[string]any{}
	for name, v := range props {
		cloned[strings.Clone(name)] = v
	}
	require.True(t, hit(cloned), "equal strings elsewhere in memory hit")
	props = cloned
	require.Equal(t, first, rec())
	props["Active"] = nil
	require.False(t, hit(props), "a nil value misses")
	require.Equal(t, []string{"Count", "Created", "Name"}, decodeRecordNames(t, rec()))
	delete(props, "Active")
	require.True(t, hit(props), "the names of the entity before hit")
	props["Other"] = false
	require.False(t, hit(props), "another name count misses")
	delete(props, "Name")
	require.False(t, hit(props), "another name misses")
	require.Equal(t, []string{"Count", "Created", "Other"}, decodeRecordNames(t, rec()))
	props["Count"] = "\xff" // invalid UTF-8: the cache misses, the full path reports it
	require.False(t, hit(props))
	_, _, _, err = AppendProperties(nil, props, &c)
	require.Equal(t, edm.CodeInvalidInput, err.(*Error).Code)
	var none *NameCache
	_, _, ok := none.appendCached(nil, props)
	require.False(t, ok)
}

// decodeRecordNames returns the property names of an encoded record.
func decodeRecordNames(t *testing.T, rec []byte) []string {
	props, err := driver.Record(rec).Properties()
	require.NoError(t, err)
	names := make([]string, len(props))
	for i, p := range props {
		names[i] = p.Name
	}
	return names
}

// TestSortedOrder checks sortedOrder against a plain sort of the names,
// on names that share prefixes, hold zero bytes and run past the 8 bytes
// of the prefix, for counts sorted by insertion and beyond.
func TestSortedOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte{0, 'a', 'b', 0xff}
	for _, n := range []int{0, 1, 2, 7, 32, 33, 90} {
		for range 50 {
			names := make([]string, n)
			for k := range names {
				name := make([]byte, rng.IntN(11))
				for i := range name {
					name[i] = alphabet[rng.IntN(len(alphabet))]
				}
				names[k] = string(name)
			}
			got := sortedOrder(names, nil)
			require.Len(t, got, n)
			sorted := make([]string, n)
			for k, i := range got {
				sorted[k] = names[i]
			}
			want := slices.Clone(names)
			slices.Sort(want)
			require.Equal(t, want, sorted, "n=%d", n)
		}
	}
}
