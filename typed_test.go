package tablestore

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/internal/codec"
)

// encodedAction is an action's properties as stored bytes.
func encodedAction(a driver.Action) []byte {
	if a.Record == nil {
		return codec.Encode(nil, 42, a.Properties)
	}
	rec := append([]byte(nil), a.Record...)
	codec.SetTimestamp(rec, 42)
	return rec
}

// withRecord sets a's Record to buf unless a is a delete.
func withRecord(a driver.Action, buf []byte) driver.Action {
	if a.Type != driver.ActionDelete {
		a.Record = buf
	}
	return a
}

// errText renders an error for comparison; nil is "".
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// structWriteCases are structs over every EDM type and field kind, at and
// past each limit, valid and not.
func structWriteCases() map[string]any {
	s := func(c Customer) *Customer { return &c }
	base := sampleCustomer()
	cases := map[string]any{
		"sample":           s(base),
		"sample by value":  base,
		"zero values":      &Customer{PartitionKey: "p", RowKey: "r", Born: time.Unix(0, 0)},
		"nil pointer":      (*Customer)(nil),
		"not a struct":     42,
		"map":              map[string]any{"A": 1},
		"empty pk":         s(func() Customer { c := base; c.PartitionKey = ""; return c }()),
		"bad rk":           s(func() Customer { c := base; c.RowKey = "a/b"; return c }()),
		"zero time":        s(func() Customer { c := base; c.Born = time.Time{}; return c }()),
		"zero time and pk": s(func() Customer { c := base; c.Born = time.Time{}; c.PartitionKey = ""; return c }()),
	}
	for name, str := range map[string]string{
		"string at limit":    strings.Repeat("x", 32768),
		"string over limit":  strings.Repeat("x", 32769),
		"utf16 at limit":     strings.Repeat("😀", 16384),
		"utf16 over limit":   strings.Repeat("😀", 16384) + "x",
		"invalid utf8":       "a\xffb",
		"empty string":       "",
		"nul and unicode":    "a\x00é日本",
		"two invalid values": "\xff",
	} {
		c := base
		c.Name = str
		if name == "two invalid values" {
			c.Renamed = "\xfe" // property Other: both Name and Other are invalid
		}
		cases[name] = &c
	}
	for name, b := range map[string][]byte{
		"binary at limit":   make([]byte, 65536),
		"binary over limit": make([]byte, 65537),
		"empty binary":      {},
		"nil binary":        nil,
	} {
		c := base
		c.Blob = b
		cases[name] = &c
	}
	for name, tm := range map[string]time.Time{
		"earliest time":    time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
		"before earliest":  time.Date(1600, 12, 31, 23, 59, 59, 999999999, time.UTC),
		"latest time":      time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		"after latest":     time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		"time in a zone":   time.Date(2001, 2, 3, 4, 5, 6, 789, time.FixedZone("x", 3600)),
		"sub-tick time":    time.Date(2001, 2, 3, 4, 5, 6, 123456789, time.UTC),
		"before earliest2": time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		c := base
		c.Born = tm
		cases[name] = &c
	}
	for name, f := range map[string]float64{"nan": math.NaN(), "-0": math.Copysign(0, -1), "+inf": math.Inf(1), "max": math.MaxFloat64} {
		c := base
		c.F64 = f
		c.F32 = float32(f)
		cases["double "+name] = &c
	}
	// Too large an entity: many big strings through a struct of byte slices.
	type big struct {
		PartitionKey, RowKey string
		A, B, C, D, E, F     []byte
		G, H, I, J, K, L     []byte
		M, N, O, P, Q        []byte
	}
	b := make([]byte, 65536)
	cases["entity too large"] = &big{PartitionKey: "p", RowKey: "r", A: b, B: b, C: b, D: b, E: b, F: b, G: b, H: b, I: b, J: b, K: b, L: b, M: b, N: b, O: b, P: b, Q: b}
	cases["entity at limit"] = &big{PartitionKey: "p", RowKey: "r", A: b, B: b, C: b, D: b, E: b, F: b, G: b, H: b, I: b, J: b, K: b, L: b, M: b, N: b[:65536-1000]}
	type badTag struct {
		PartitionKey, RowKey string
		X                    string `table:"1bad"`
	}
	cases["bad tag"] = &badTag{PartitionKey: "p", RowKey: "r"}
	type wrongType struct {
		PartitionKey, RowKey string
		X                    uint64
	}
	cases["field without EDM type"] = &wrongType{PartitionKey: "p", RowKey: "r"}
	return cases
}

// TestStructEncodingMatchesMap checks that encoding a struct directly gives
// the actions, stored bytes and errors of MarshalEntity and prepareAction.
func TestStructEncodingMatchesMap(t *testing.T) {
	for name, v := range structWriteCases() {
		for _, typ := range []ActionType{ActionInsert, ActionUpsertMerge, ActionUpdateReplace} {
			ifMatch := ETag("")
			if typ == ActionUpdateReplace {
				ifMatch = ETagAny
			}
			t.Run(fmt.Sprintf("%s/%s", name, typ), func(t *testing.T) {
				want, wantBuf, _, wantErr := prepareStructSlow(nil, typ, v, ifMatch)
				want = withRecord(want, wantBuf)
				got, gotBuf, _, _, gotErr := prepareStruct(nil, typ, v, ifMatch)
				got = withRecord(got, gotBuf)
				require.Equal(t, errText(wantErr), errText(gotErr))
				if wantErr != nil {
					require.Equal(t, fmt.Sprint(errorCode(wantErr)), fmt.Sprint(errorCode(gotErr)))
					return
				}
				require.Equal(t, want.PartitionKey, got.PartitionKey)
				require.Equal(t, want.RowKey, got.RowKey)
				require.Equal(t, want.Type, got.Type)
				require.Equal(t, want.IfMatch, got.IfMatch)
				require.True(t, bytes.Equal(encodedAction(want), encodedAction(got)),
					"stored bytes differ:\nmap:    %x\nstruct: %x", encodedAction(want), encodedAction(got))
			})
		}
	}
}

func errorCode(err error) Code {
	if e, ok := err.(*Error); ok {
		return e.Code
	}
	return ""
}

// typedMismatch has fields some stored properties do not fit.
type typedMismatch struct {
	PartitionKey, RowKey string
	Count                int8   // fails for values outside int8
	Name                 int64  // fails unless the string holds an integer
	Active               string // fails: a Boolean is no string
}

// TestTypedReadMatchesMap writes entities through the map path and reads
// them back typed and as maps followed by UnmarshalEntity: values and
// errors must agree, for Get, QueryPage and Query, with and without a
// projection.
func TestTypedReadMatchesMap(t *testing.T) {
	db, err := OpenInMemory(&Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "Typed")
	require.NoError(t, err)
	for _, v := range structWriteCases() {
		c, ok := v.(*Customer)
		if !ok || c == nil {
			continue
		}
		e, err := MarshalEntity(c)
		if err != nil || prepareErr(e) != nil {
			continue
		}
		e.RowKey = fmt.Sprintf("r%03d", len(e.RowKey)+int(e.Properties["Small"].(int32))+len(fmt.Sprint(e.Properties)))
		require.NoError(t, tbl.Upsert(ctx, e, Replace))
	}
	for i, props := range []map[string]any{
		{"Count": int32(5), "Name": "12", "Active": "yes"},
		{"Count": int32(500)},
		{"Name": "twelve"},
		{"Active": true},
		{"Age": "123", "F64": "NaN", "Born": "2020-01-02T03:04:05Z", "ID": "01020304-0506-0708-090a-0b0c0d0e0f10", "Blob": "AQI="},
		{"Age": 1.5},
		{"Small": int64(127), "Word": 2.0, "F32": int64(3)},
	} {
		require.NoError(t, tbl.Insert(ctx, &Entity{PartitionKey: "q", RowKey: fmt.Sprintf("m%02d", i), Properties: props}))
	}
	for _, sel := range [][]string{nil, {"Name", "Born", "Missing"}} {
		checkTypedRead[Customer](t, tbl, sel)
		checkTypedRead[typedMismatch](t, tbl, sel)
	}
}

func prepareErr(e *Entity) error {
	_, _, _, err := prepareAction(nil, ActionInsert, e, "", nil)
	return err
}

func checkTypedRead[T any](t *testing.T, tbl *Table, sel []string) {
	t.Helper()
	page, err := tbl.QueryPage(ctx, Query{Select: sel})
	require.NoError(t, err)
	require.NotEmpty(t, page.Entities)
	for _, e := range page.Entities {
		var want T
		wantErr := UnmarshalEntity(e, &want)
		got, gotErr := GetAs[T](ctx, tbl, e.PartitionKey, e.RowKey, &GetOptions{Select: sel})
		require.Equal(t, errText(wantErr), errText(gotErr), "GetAs %s/%s", e.PartitionKey, e.RowKey)
		if wantErr == nil {
			requireSame(t, want, got, "GetAs ", e.PartitionKey, "/", e.RowKey)
		}
	}
	// Pages of one entity, so each entity's error shows.
	n := 0
	q := Query{Select: sel, Top: 1}
	for i := 0; ; i++ {
		mp, err := tbl.QueryPage(ctx, q)
		require.NoError(t, err)
		tp, terr := QueryPageAs[T](ctx, tbl, q)
		var want T
		var wantErr error
		if len(mp.Entities) == 1 {
			wantErr = UnmarshalEntity(mp.Entities[0], &want)
		}
		require.Equal(t, errText(wantErr), errText(terr))
		if wantErr == nil {
			require.Len(t, tp.Entities, len(mp.Entities))
			if len(mp.Entities) == 1 {
				requireSame(t, want, tp.Entities[0])
			}
			require.Equal(t, mp.Continuation, tp.Continuation)
		}
		n += len(mp.Entities)
		if mp.Continuation == "" {
			break
		}
		q.Continuation = mp.Continuation
	}
	require.Equal(t, len(page.Entities), n)
	// The iterator stops at the first failing entity, as UnmarshalEntity
	// over Query's entities would.
	var wantVals []T
	var wantErr error
	for e, err := range tbl.Query(ctx, Query{Select: sel, Top: 3}) {
		require.NoError(t, err)
		var v T
		if wantErr = UnmarshalEntity(e, &v); wantErr != nil {
			break
		}
		wantVals = append(wantVals, v)
	}
	var gotVals []T
	var gotErr error
	for v, err := range QueryAs[T](ctx, tbl, Query{Select: sel, Top: 3}) {
		if err != nil {
			gotErr = err
			break
		}
		gotVals = append(gotVals, *v)
	}
	require.Equal(t, errText(wantErr), errText(gotErr))
	if wantErr == nil {
		requireSame(t, wantVals, gotVals)
	}
}

// TestTypedWriteSetsTimestampAndETag checks InsertStruct end to end.
func TestTypedWriteSetsTimestampAndETag(t *testing.T) {
	db, err := OpenInMemory(&Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "TypedWrite")
	require.NoError(t, err)
	c := sampleCustomer()
	require.NoError(t, tbl.InsertStruct(ctx, &c))
	e, err := tbl.Get(ctx, c.PartitionKey, c.RowKey, nil)
	require.NoError(t, err)
	require.Equal(t, e.ETag, c.ETag)
	require.Equal(t, e.Timestamp, c.Timestamp)
	require.Equal(t, CodeEntityAlreadyExists, errorCode(unwrapErr(tbl.InsertStruct(ctx, &c))))
	require.NoError(t, tbl.UpdateStruct(ctx, &c, Merge, c.ETag))
	require.NoError(t, tbl.UpsertStruct(ctx, c, Replace))
	got, err := GetAs[Customer](ctx, tbl, c.PartitionKey, c.RowKey, nil)
	require.NoError(t, err)
	var want Customer
	require.NoError(t, UnmarshalEntity(mustGet(t, tbl, c.PartitionKey, c.RowKey), &want))
	requireSame(t, want, got)
}

func unwrapErr(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return err
}

func mustGet(t *testing.T, tbl *Table, pk, rk string) *Entity {
	e, err := tbl.Get(ctx, pk, rk, nil)
	require.NoError(t, err)
	return e
}

// requireSame is require.Equal treating NaN as equal to NaN and pointers
// as equal when what they point to is.
func requireSame(t *testing.T, want, got any, msg ...any) {
	t.Helper()
	if !sameFields(reflect.ValueOf(want), reflect.ValueOf(got)) {
		require.Equal(t, want, got, msg...) // fails, showing the difference
		t.Fatalf("values differ: %v", fmt.Sprint(msg...))
	}
}

func sameFields(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() || a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y && math.Signbit(x) == math.Signbit(y) || math.IsNaN(x) && math.IsNaN(y)
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return a.Pointer() == b.Pointer() || sameFields(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameFields(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := range a.Len() {
			if !sameFields(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	}
	return false
}
