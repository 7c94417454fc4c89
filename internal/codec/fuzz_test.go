package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/tablestore/tablestore/filter"
)

// FuzzRecord feeds arbitrary bytes to every reader: none may panic, and
// the readers must agree with each other on what they find.
func FuzzRecord(f *testing.F) {
	f.Add(Encode(nil, 1, sampleProps()))
	f.Add(Encode(nil, -1, nil))
	f.Add(Encode(nil, 0, benchProps()))
	f.Add([]byte{Version, 0, 0, 0, 0, 0, 0, 0, 0, 0x80})
	f.Add([]byte{Version, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'A', byte(filter.TypeBoolean), 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		rec := Record(data)
		_, tsErr := rec.Timestamp()
		checkErr := rec.Check()
		props, propsErr := rec.Properties()
		if checkErr == nil && propsErr != nil {
			t.Fatalf("Check accepts what Properties rejects: %v", propsErr)
		}
		if tsErr != nil && propsErr == nil {
			t.Fatalf("Properties accepts a record with a bad header: %v", tsErr)
		}
		v := View{PartitionKey: []byte("pk"), RowKey: []byte("rk"), Record: rec}
		for _, name := range []string{"", "A", "B", "Str", "Timestamp", "PartitionKey", "zzzz"} {
			v.Lookup(name)
			rec.Lookup(name)
		}
		if propsErr != nil {
			_, selErr := rec.Select([]string{"A"})
			if selErr == nil {
				t.Fatalf("Select accepts what Properties rejects: %v", propsErr)
			}
			return
		}
		// A record that decodes: every property is found by Lookup with the
		// same value, Select agrees, and re-encoding gives the same bytes.
		names := make([]string, len(props))
		for i, p := range props {
			names[i] = p.Name
			got, ok := rec.Lookup(p.Name)
			if !ok {
				t.Fatalf("Lookup(%q) misses a decoded property", p.Name)
			}
			if !sameValue(got, p.Value) {
				t.Fatalf("Lookup(%q) = %+v, Properties gave %+v", p.Name, got, p.Value)
			}
		}
		sel, err := rec.Select(names)
		if err != nil || len(sel) != len(props) {
			t.Fatalf("Select(all) = %d properties, %v; want %d", len(sel), err, len(props))
		}
		ts, _ := rec.Timestamp()
		if again := Encode(nil, ts, props); !bytes.Equal(again, data) && canonicalVarints(data) {
			t.Fatalf("re-encoding differs:\n%x\n%x", data, again)
		}
	})
}

func sameValue(a, b filter.Value) bool {
	return a.Type == b.Type && a.Int == b.Int && math.Float64bits(a.Float) == math.Float64bits(b.Float) &&
		bytes.Equal(a.Bytes, b.Bytes)
}

// canonicalVarints reports whether data has no over-long uvarint (such as
// 0x80 0x00 for 0); only then must re-encoding reproduce it exactly.
func canonicalVarints(data []byte) bool {
	it := Record(data).Iter()
	off := headerLen
	// canonical reads the varint at off, which holds n, and moves past it.
	canonical := func(n uint64) bool {
		_, k := binary.Uvarint(data[off:])
		off += k
		return k == uvarintLen(n)
	}
	for it.Next() {
		n := len(it.Name())
		if !canonical(uint64(n)) {
			return false
		}
		off += n + 1
		v := it.Value()
		if v.Type == filter.TypeString || v.Type == filter.TypeBinary {
			if !canonical(uint64(len(v.Bytes))) {
				return false
			}
		}
		off += len(v.Bytes)
		if v.Type != filter.TypeString && v.Type != filter.TypeBinary && v.Type != filter.TypeGuid {
			off += int(fixedLen[v.Type])
		}
	}
	return true
}
