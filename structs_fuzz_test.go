package tablestore

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/structmap"
)

// FuzzTypedDecode decodes arbitrary bytes as a stored record straight
// into structs and compares with decoding into an Entity followed by
// UnmarshalEntity: the direct decoding (before any fallback) succeeds
// exactly when the reference does, with the same struct.
func FuzzTypedDecode(f *testing.F) {
	for _, props := range []map[string]any{
		{"Name": "x", "Count": int32(-1), "Age": int64(2), "F64": 0.5, "OK": true,
			"Born": time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC), "ID": GUID{1}, "Blob": []byte{1}},
		{"Name": int32(3), "Count": int64(1 << 40), "Active": "x", "Small": 2.0, "F32": int64(5)},
		{"Age": "17", "PName": "p", "PAge": int32(4), "Wide": int64(-1)},
	} {
		p, err := encodeProperties(props)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(mustEncode(nil, 5, p), false)
		f.Add(mustEncode(nil, 5, p), true)
	}
	f.Add(mustEncode(nil, -5, nil), false)
	f.Fuzz(func(t *testing.T, data []byte, project bool) {
		var sel []string
		if project {
			sel = []string{"Name", "Count", "Born", "Blob"}
		}
		checkFuzzDecode[Customer](t, data, sel)
		checkFuzzDecode[typedMismatch](t, data, sel)
	})
}

func checkFuzzDecode[T any](t *testing.T, data []byte, sel []string) {
	p, err := planOf[T]()
	if err != nil {
		t.Fatal(err)
	}
	row := driver.Row{PartitionKey: "pk", RowKey: "rk", Record: data}
	var want T
	e, wantErr := decodeRow(row, sel, false)
	if wantErr == nil {
		wantErr = UnmarshalEntity(e, &want)
	}
	var got T
	d := &structmap.Decoder{Select: sel}
	srow := structRow(row)
	gotOK := d.Into(structmap.Ref{Plan: p, Base: unsafe.Pointer(&got)}, &srow)
	if (wantErr == nil) != gotOK {
		t.Fatalf("reference error %v, direct decoding ok=%v", wantErr, gotOK)
	}
	if wantErr == nil {
		requireSame(t, want, got)
	}
	var viaAPI T
	if err := decodeInto(d, p, &viaAPI, row); errText(err) != errText(wantErr) {
		t.Fatalf("decodeInto: error %v, want %v", err, wantErr)
	}
	one, err := decodeOne[T](d, p, row)
	if errText(err) != errText(wantErr) {
		t.Fatalf("decodeOne: error %v, want %v", err, wantErr)
	}
	if wantErr == nil {
		requireSame(t, want, one)
	}
}

// FuzzStructEncoding encodes structs with arbitrary values directly and
// through MarshalEntity and prepareAction: the direct encoding succeeds
// exactly when the reference does, with the same stored bytes.
func FuzzStructEncoding(f *testing.F) {
	f.Add("p", "r", "name", []byte{1}, int64(5), 1.5, int64(0), false)
	f.Add("", "r", "\xff", []byte(nil), int64(-1), math.Copysign(0, -1), int64(-1e18), true)
	f.Add("p/", "r", "", make([]byte, 70000), int64(1<<40), 2.5, int64(4e18), true)
	f.Fuzz(func(t *testing.T, pk, rk, name string, blob []byte, n int64, x float64, nanos int64, omit bool) {
		c := sampleCustomer()
		c.PartitionKey, c.RowKey, c.Name, c.Blob = pk, rk, name, blob
		c.Age, c.I64, c.Small, c.Word = int(n), n, int8(n), uint16(n)
		c.F64, c.F32 = x, float32(x)
		c.Born = time.Unix(0, nanos)
		if omit {
			c.PName, c.Empty, c.Renamed = nil, name, name
		}
		for _, typ := range []ActionType{ActionInsert, ActionUpdateMerge, ActionDelete} {
			ifMatch := ETag("")
			if typ != ActionInsert {
				ifMatch = ETagAny
			}
			want, wantBuf, _, wantErr := prepareStructSlow(nil, typ, &c, ifMatch)
			want = withRecord(want, wantBuf)
			p, err := structmap.PlanFor(reflectTypeOf(c))
			if err != nil {
				t.Fatal(err)
			}
			ref := structmap.Ref{Plan: p, Base: unsafe.Pointer(&c)}
			pk, rk := ref.Keys()
			got, gotBuf, _, ok := encodeStruct(nil, typ, ref, pk, rk, ifMatch)
			got = withRecord(got, gotBuf)
			if ok != (wantErr == nil) {
				t.Fatalf("%s: reference error %v, direct encoding ok=%v", typ, wantErr, ok)
			}
			if ok && !bytes.Equal(encodedAction(want), encodedAction(got)) {
				t.Fatalf("%s: stored bytes differ:\nmap:    %x\nstruct: %x", typ, encodedAction(want), encodedAction(got))
			}
		}
	})
}

func reflectTypeOf[T any](T) reflect.Type { return reflect.TypeFor[T]() }
