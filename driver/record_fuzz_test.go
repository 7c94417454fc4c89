package driver

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/tablestore/tablestore/edm"
)

// FuzzRecord feeds arbitrary bytes to every reader: none may panic, and
// the readers must agree with each other on what they find.
func FuzzRecord(f *testing.F) {
	f.Add([]byte(mustEncode(f, nil, 1, sampleProps())))
	f.Add([]byte(mustEncode(f, nil, -1, nil)))
	f.Add([]byte(mustEncode(f, nil, 0, benchProps())))
	f.Add([]byte{RecordVersion, 0, 0, 0, 0, 0, 0, 0, 0, 0x80})
	f.Add([]byte{RecordVersion, 0, 0, 0, 0, 0, 0, 0, 0, 1, 'A', byte(edm.TypeBoolean), 2})
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
		v := RowView{PartitionKey: []byte("pk"), RowKey: []byte("rk"), Record: rec}
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
		// same value, Select agrees, and Encode takes the properties back
		// exactly when Check accepts the record (Properties does not check
		// UTF-8), giving the same bytes.
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
		again, err := Encode(nil, ts, props)
		if (err == nil) != (checkErr == nil) {
			t.Fatalf("Encode of the decoded properties: %v; Check: %v", err, checkErr)
		}
		if err == nil && !bytes.Equal(again, data) && canonicalVarints(data) {
			t.Fatalf("re-encoding differs:\n%x\n%x", data, again)
		}
	})
}

func sameValue(a, b edm.Value) bool {
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
		if v.Type == edm.TypeString || v.Type == edm.TypeBinary {
			if !canonical(uint64(len(v.Bytes))) {
				return false
			}
		}
		off += len(v.Bytes)
		if v.Type != edm.TypeString && v.Type != edm.TypeBinary && v.Type != edm.TypeGuid {
			off += int(fixedLen[v.Type])
		}
	}
	return true
}
