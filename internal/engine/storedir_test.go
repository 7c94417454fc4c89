package engine

import (
	"bytes"
	"testing"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/stretchr/testify/require"
)

// TestVerifyLogTornRecord covers verifyLog's line between a write torn by
// a crash and damage: a WAL whose last record spans three blocks and ends
// early is torn (its intact first and middle chunks are no later record),
// while a damaged record followed by a record's start is damage.
func TestVerifyLogTornRecord(t *testing.T) {
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	small := bytes.Repeat([]byte("s"), 100)
	big := bytes.Repeat([]byte("b"), 80_000) // chunks at 0, 32768 and 65536
	for _, rec := range [][]byte{small, big} {
		_, err := w.WriteRecord(rec)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	whole := buf.Bytes()
	require.Greater(t, len(whole), 2*32768)

	damaged := func(b []byte, at int) []byte {
		b = bytes.Clone(b)
		b[at] ^= 0xff
		return b
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		intact bool
	}{
		{"whole", whole, true},
		{"torn in the last block", whole[:len(whole)-100], true},
		{"torn after the first block", whole[:32768+50], true},
		{"torn at a block boundary", whole[:2*32768], true},
		{"first record damaged", damaged(whole, 7+10), false},
		{"first record damaged, second torn", damaged(whole[:2*32768+20], 7+10), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := vfs.NewMem()
			f, err := fs.Create("000007.log", vfs.WriteCategoryUnspecified)
			require.NoError(t, err)
			_, err = f.Write(tc.data)
			require.NoError(t, err)
			require.NoError(t, f.Close())
			err = verifyLog(fs, "000007.log", true)
			if tc.intact {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, "an intact record follows")
			}
		})
	}
}
