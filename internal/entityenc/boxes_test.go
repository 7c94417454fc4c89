package entityenc

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

// TestBoxesLayout checks that the layout check passed, so the values are
// made in chunks on this platform (the other tests then test the chunks).
func TestBoxesLayout(t *testing.T) {
	require.True(t, boxedLayout)
}

// TestBoxesValues checks that every boxed value equals Go's own box of
// the same value, by type and value, through a collection, many chunks
// and later values made in the same chunks.
func TestBoxesValues(t *testing.T) {
	guid := edm.GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	inputs := []edm.Value{
		{Type: edm.TypeInt32, Int: 7},
		{Type: edm.TypeInt32, Int: 1 << 20},
		{Type: edm.TypeInt32, Int: -1},
		{Type: edm.TypeInt32, Int: math.MinInt32},
		{Type: edm.TypeInt64, Int: math.MaxInt64},
		{Type: edm.TypeInt64, Int: -3},
		{Type: edm.TypeDouble, Float: -2.5},
		{Type: edm.TypeDouble, Float: math.Inf(1)},
		{Type: edm.TypeBoolean, Int: 1},
		{Type: edm.TypeDateTime, Int: 638_000_000_123_456_789},
		{Type: edm.TypeDateTime, Int: 0},
		{Type: edm.TypeGuid, Bytes: guid[:]},
	}
	var b Boxes
	var got, want []any
	for round := 0; round < 300; round++ {
		b.Reserve(1, 2)
		for _, v := range inputs {
			got, want = append(got, b.Scalar(v)), append(want, scalar(v))
		}
		s := string(rune('a'+round%26)) + "-text"
		got, want = append(got, b.String(s)), append(want, any(s))
	}
	runtime.GC()
	runtime.GC()
	for i := range got {
		require.Equal(t, want[i], got[i], "value %d", i)
		require.True(t, want[i] == got[i], "value %d compares equal", i)
	}
	require.Equal(t, guid, got[11].(edm.GUID))
	require.Equal(t, time.UTC, got[9].(time.Time).Location())
}

// TestBoxesStayPut checks that a chunk's slots are never written again
// once handed out: values made earlier keep theirs while many more are
// made, and strings stay reachable through the chunk alone.
func TestBoxesStayPut(t *testing.T) {
	var b Boxes
	first := b.Scalar(edm.Value{Type: edm.TypeInt64, Int: 42})
	firstStr := b.String(string([]byte("kept only by its box")))
	for i := 0; i < 5000; i++ {
		b.Scalar(edm.Value{Type: edm.TypeInt64, Int: int64(i)})
		b.Scalar(edm.Value{Type: edm.TypeDateTime, Int: int64(i)})
		b.String("x")
	}
	runtime.GC()
	require.Equal(t, int64(42), first)
	require.Equal(t, "kept only by its box", firstStr)
}

// TestBoxesLocalTime checks that a DateTime whose Location is not UTC,
// which a pointer-free chunk cannot hold, is boxed the usual way.
func TestBoxesLocalTime(t *testing.T) {
	var b Boxes
	loc := time.FixedZone("X", 3600)
	ts := time.Date(2024, 1, 2, 3, 4, 5, 0, loc)
	v, ok := b.dateTime(ts)
	require.False(t, ok)
	require.Nil(t, v)
	require.Empty(t, b.words, "no slot is taken")
}

// TestDecoderBoxes checks that a decoded entity's values cost two
// allocations in all (string headers and words) beyond the map, however
// many strings and numbers it has.
func TestDecoderBoxes(t *testing.T) {
	props := map[string]any{
		"A": "one", "B": "two", "C": "three", "D": int64(1 << 40), "E": 2.5,
		"F": int32(1 << 20), "G": time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	rec, _, _, err := AppendProperties(driver.AppendHeader(nil, 0), props, nil)
	require.NoError(t, err)
	var plain, boxed float64
	plain = testing.AllocsPerRun(100, func() {
		m := make(map[string]any, len(props))
		for k, v := range props {
			m[k] = v
		}
		mapSink = m
	})
	boxed = testing.AllocsPerRun(100, func() {
		d := Decoder{Owned: true}
		m, err := d.Properties(rec)
		if err != nil || len(m) != len(props) {
			t.Fatal(m, err)
		}
	})
	if !raceOn {
		require.Equal(t, plain+2, boxed, "the map's own allocations and two for the values")
	}
	d := Decoder{Owned: true}
	m, err := d.Properties(rec)
	require.NoError(t, err)
	require.Equal(t, props, m)
}

// mapSink keeps TestDecoderBoxes' reference map on the heap, as a decoded
// entity's map is.
var mapSink map[string]any
