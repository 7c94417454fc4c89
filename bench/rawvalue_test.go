package main

import (
	"bytes"
	"testing"
)

func TestRawValueRoundTrip(t *testing.T) {
	for _, i := range []int{0, 1, 999, 1000, 123_456, 9_999_999} {
		var in, out record
		genRecord(&in, i)
		v := encodeRaw(nil, &in, 638_000_000_000_000_000+int64(i))
		ts, n, err := decodeRaw(v, &out)
		if err != nil {
			t.Fatalf("entity %d: %v", i, err)
		}
		out.PK, out.RK = in.PK, in.RK
		if ts != 638_000_000_000_000_000+int64(i) || n != propertyCount || !sameRecord(&in, &out) {
			t.Fatalf("entity %d: got ts %d, %d props, %+v; want %+v", i, ts, n, out, in)
		}
		b, ok, err := rawInt32Property(v, "Bucket")
		if err != nil || !ok || b != in.Bucket || b != bucketOf(i) {
			t.Fatalf("entity %d: Bucket = %d, %v, %v; want %d", i, b, ok, err, in.Bucket)
		}
		if _, ok, err := rawInt32Property(v, "Score"); ok || err != nil {
			t.Fatalf("entity %d: Score is Int64, found as Int32 (ok=%v err=%v)", i, ok, err)
		}
		if _, ok, err := rawInt32Property(v, "Missing"); ok || err != nil {
			t.Fatalf("entity %d: missing property found (ok=%v err=%v)", i, ok, err)
		}
	}
}

func TestRawValueTruncatedIsCorrupt(t *testing.T) {
	var rec record
	genRecord(&rec, 42)
	v := encodeRaw(nil, &rec, 1)
	for n := 0; n < len(v); n++ {
		var out record
		if _, _, err := decodeRaw(v[:n], &out); err == nil {
			t.Fatalf("decoding %d of %d bytes succeeded", n, len(v))
		}
	}
	if _, _, err := decodeRaw(append(bytes.Clone(v), 0), &rec); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func TestRawValueWrongType(t *testing.T) {
	// A value whose Count is a string must not decode into the record.
	v := encodeRaw(nil, &record{}, 1)[:8]
	v = append(v, 1)
	v = appendRawString(v, "Count", "seven")
	var out record
	if _, _, err := decodeRaw(v, &out); err == nil {
		t.Fatal("string Count accepted")
	}
}

func FuzzDecodeRaw(f *testing.F) {
	var rec record
	genRecord(&rec, 7)
	f.Add(encodeRaw(nil, &rec, 5))
	f.Add([]byte{})
	f.Add(make([]byte, 9))
	f.Fuzz(func(t *testing.T, v []byte) {
		var out record
		_, n, err := decodeRaw(v, &out)
		if err == nil && n != int(v[8]) {
			t.Fatalf("decoded %d properties, header says %d", n, v[8])
		}
		rawInt32Property(v, "Bucket")
		if _, err2 := rawTimestamp(v); err == nil && err2 != nil {
			t.Fatalf("value decodes but its timestamp does not: %v", err2)
		}
	})
}
