package tablestore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEncodePropertiesSortsAndSizes checks the fast encoding path against
// the plain definitions: names sorted, and the size equal to entitySize.
func TestEncodePropertiesSortsAndSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	prefixes := []string{"", "A", "Abcdefgh", "Abcdefg", "abcdefghij", "Z_", "é", "Ab"}
	values := []any{"text", "ünï😀", int32(-3), int64(1 << 40), 2.5, true, time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC), GUID{1, 2}, []byte{1, 2, 3}}
	for round := 0; round < 300; round++ {
		n := rng.IntN(70)
		props := map[string]any{}
		for len(props) < n {
			name := prefixes[rng.IntN(len(prefixes))] + fmt.Sprintf("x%d", rng.IntN(500))
			props[name] = values[rng.IntN(len(values))]
		}
		props["Nil"] = nil
		got, size, err := encodePropertiesSized(props)
		require.NoError(t, err)
		require.Len(t, got, n)
		names := make([]string, len(got))
		for i, p := range got {
			names[i] = p.Name
		}
		require.True(t, slices.IsSorted(names), "names not sorted: %q", names)
		require.Equal(t, entitySize("", "", got)-4, size)
	}
}

// TestEncodePropertiesErrorIsDeterministic checks that with several bad
// properties the first in name order is reported, whatever the map order.
func TestEncodePropertiesErrorIsDeterministic(t *testing.T) {
	props := map[string]any{"B": 1, "A": int32(1), "C9": make([]byte, 70000), "0bad": int32(1), "Z": uint(3)}
	for i := 0; i < 50; i++ {
		_, err := encodeProperties(props)
		requireCode(t, err, CodePropertyNameInvalid) // "0bad" sorts first
	}
	delete(props, "0bad")
	for i := 0; i < 50; i++ {
		_, err := encodeProperties(props)
		requireCode(t, err, CodeInvalidValueType) // then "B"
	}
}
