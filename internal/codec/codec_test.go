package codec

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/filter"
)

// Encode is for callers whose properties are valid by construction: what
// driver.Encode refuses is a bug there, and panics.
func TestEncodePanicsOnProgrammingErrors(t *testing.T) {
	require.PanicsWithError(t, `tablestore: record property "A" has invalid type 0`, func() {
		Encode(nil, 0, []Property{{Name: "A", Value: filter.Value{}}})
	})
	require.PanicsWithError(t, `tablestore: record property "A" of type Edm.Guid holds 1 bytes, not 16`, func() {
		Encode(nil, 0, []Property{{Name: "A", Value: filter.Value{Type: filter.TypeGuid, Bytes: []byte{1}}}})
	})
	rec := Encode([]byte("x"), 5, []Property{{Name: "A", Value: filter.Value{Type: filter.TypeInt64, Int: -1}}})
	require.Equal(t, "x", string(rec[:1]))
	require.Len(t, rec, 1+EncodedLen([]Property{{Name: "A", Value: filter.Value{Type: filter.TypeInt64}}}))
	ts, err := Record(rec[1:]).Timestamp()
	require.NoError(t, err)
	require.Equal(t, int64(5), ts)
	require.NoError(t, SetTimestamp(rec[1:], 6))
	ts, _ = Record(rec[1:]).Timestamp()
	require.Equal(t, int64(6), ts)
	require.Error(t, SetTimestamp(rec[1:4], 7))
}
