package main

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/tablestore/tablestore"
)

// TestRawMapsMatchTablestore checks that the raw-maps side returns what
// tablestore's map API returns for the same entities: the same keys,
// property names, Go types and values.
func TestRawMapsMatchTablestore(t *testing.T) {
	ts := openTestStore(t, sideTablestore, false).(*tablestoreStore)
	raw := openTestStore(t, sidePebbleMaps, false).(pebbleMapsStore)
	ctx := context.Background()
	for _, i := range []int{0, 1, 255, 256, 1234, storeTestEntities - 1} {
		var rec record
		genRecord(&rec, i)
		want, err := ts.t.Get(ctx, rec.PK, rec.RK, nil)
		if err != nil {
			t.Fatal(err)
		}
		lo := rawKey(nil, rec.PK, rec.RK)
		got, _, err := raw.scanMaps(lo, append(lo, 0), -1, nil)
		if err != nil || len(got) != 1 {
			t.Fatalf("entity %d: %d entities, %v", i, len(got), err)
		}
		if got[0].PartitionKey != want.PartitionKey || got[0].RowKey != want.RowKey {
			t.Fatalf("entity %d: keys %s/%s, want %s/%s", i, got[0].PartitionKey, got[0].RowKey, want.PartitionKey, want.RowKey)
		}
		if !reflect.DeepEqual(got[0].Properties, want.Properties) {
			t.Fatalf("entity %d:\n got %#v\nwant %#v", i, got[0].Properties, want.Properties)
		}
	}
}

// TestRawMapEveryType round-trips a map holding each of the map API's
// eight value types through the raw format.
func TestRawMapEveryType(t *testing.T) {
	in := map[string]any{
		"S": "text", "Empty": "", "I32": int32(-7), "Big32": int32(70000), "I64": int64(1 << 40),
		"F": 2.5, "B": true, "T": time.Date(2024, 2, 3, 4, 5, 6, 700, time.UTC),
		"G": tablestore.GUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, "Bin": []byte{0, 1, 2},
	}
	v, err := encodeRawMap(nil, in, 42)
	if err != nil {
		t.Fatal(err)
	}
	var text textChunks
	var e mapEntity
	if err := decodeRawMap(rawKey(nil, "pk", "rk"), v, &text, &e); err != nil {
		t.Fatal(err)
	}
	if e.PartitionKey != "pk" || e.RowKey != "rk" || !e.Timestamp.Equal(ticksToTime(42)) {
		t.Fatalf("keys %q %q, timestamp %v", e.PartitionKey, e.RowKey, e.Timestamp)
	}
	if !reflect.DeepEqual(e.Properties, in) {
		t.Fatalf("got %#v\nwant %#v", e.Properties, in)
	}
	// A decoded Binary value is a copy of its own.
	bin := e.Properties["Bin"].([]byte)
	if i := bytes.Index(v, []byte{0, 1, 2}); i >= 0 {
		v[i] = 9
	}
	if bin[0] != 0 || cap(bin) != 3 {
		t.Fatalf("binary value aliases the stored bytes: %v (cap %d)", bin, cap(bin))
	}
	if _, err := encodeRawMap(nil, map[string]any{"X": 1}, 0); err == nil {
		t.Fatal("an int property was encoded")
	}
}

// TestTextChunks checks strings taken from chunks keep their values
// when the chunk fills up and a new one starts.
func TestTextChunks(t *testing.T) {
	var c textChunks
	var got []string
	for i := range 3000 {
		got = append(got, c.str([]byte(fmt.Sprintf("value-%06d", i))))
	}
	got = append(got, c.str(bytes.Repeat([]byte("x"), textChunkSize)))
	for i := range 3000 {
		if want := fmt.Sprintf("value-%06d", i); got[i] != want {
			t.Fatalf("string %d = %q, want %q", i, got[i], want)
		}
	}
	if len(got[3000]) != textChunkSize || c.str(nil) != "" {
		t.Fatal("long or empty string")
	}
}
