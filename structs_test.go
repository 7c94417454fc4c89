package tablestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
)

type Address struct {
	City string
	Zip  *string `table:",omitempty"`
}

type hidden struct {
	Promoted int32
}

type Customer struct {
	PartitionKey string
	RowKey       string
	Timestamp    time.Time
	ETag         ETag
	Address
	hidden

	Name      string
	Age       int
	Small     int8
	Medium    int16
	Byte      uint8
	Word      uint16
	Wide      uint32
	I32       int32
	I64       int64
	F32       float32
	F64       float64
	OK        bool
	Born      time.Time
	ID        GUID
	Blob      []byte
	Renamed   string    `table:"Other"`
	Skipped   string    `table:"-"`
	Empty     string    `table:",omitempty"`
	NoTime    time.Time `table:",omitempty"`
	PName     *string
	PAge      *int64
	PTime     *time.Time
	PNil      *float64
	NilBlob   []byte
	unexposed string
}

func sampleCustomer() Customer {
	name := "pointer"
	age := int64(-9)
	when := time.Date(2022, 3, 4, 5, 6, 7, 800, time.UTC)
	return Customer{
		PartitionKey: "p1",
		RowKey:       "r1",
		Address:      Address{City: "Oslo"},
		hidden:       hidden{Promoted: 11},
		Name:         "Ada",
		Age:          math.MaxInt64,
		Small:        -128,
		Medium:       -32768,
		Byte:         255,
		Word:         65535,
		Wide:         math.MaxUint32,
		I32:          math.MinInt32,
		I64:          math.MinInt64,
		F32:          1.5,
		F64:          math.Inf(-1),
		OK:           true,
		Born:         time.Date(1815, 12, 10, 0, 0, 0, 0, time.UTC),
		ID:           GUID{1, 2, 3},
		Blob:         []byte{9, 8},
		Renamed:      "r",
		Skipped:      "never stored",
		PName:        &name,
		PAge:         &age,
		PTime:        &when,
		unexposed:    "ignored",
	}
}

func TestMarshalEntity(t *testing.T) {
	c := sampleCustomer()
	c.Timestamp = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	c.ETag = "W/\"x\""
	e, err := MarshalEntity(&c)
	require.NoError(t, err)
	require.Equal(t, "p1", e.PartitionKey)
	require.Equal(t, "r1", e.RowKey)
	require.Equal(t, c.Timestamp, e.Timestamp)
	require.Equal(t, ETag("W/\"x\""), e.ETag)
	require.Equal(t, map[string]any{
		"City":     "Oslo",
		"Promoted": int32(11),
		"Name":     "Ada",
		"Age":      int64(math.MaxInt64),
		"Small":    int32(-128),
		"Medium":   int32(-32768),
		"Byte":     int32(255),
		"Word":     int32(65535),
		"Wide":     int64(math.MaxUint32),
		"I32":      int32(math.MinInt32),
		"I64":      int64(math.MinInt64),
		"F32":      1.5,
		"F64":      math.Inf(-1),
		"OK":       true,
		"Born":     c.Born,
		"ID":       GUID{1, 2, 3},
		"Blob":     []byte{9, 8},
		"Other":    "r",
		"PName":    "pointer",
		"PAge":     int64(-9),
		"PTime":    *c.PTime,
	}, e.Properties)

	// A value works as well as a pointer, and the entity passes validation.
	e2, err := MarshalEntity(c)
	require.NoError(t, err)
	require.Equal(t, e, e2)
	props, err := encodeProperties(e.Properties)
	require.NoError(t, err)
	require.NoError(t, checkEntityLimits(e.PartitionKey, e.RowKey, props))
}

func TestStructRoundTrip(t *testing.T) {
	in := sampleCustomer()
	e, err := MarshalEntity(&in)
	require.NoError(t, err)

	// Through the stored form, as the engine does it.
	props, err := encodeProperties(e.Properties)
	require.NoError(t, err)
	stored, err := decodeEntity(e.PartitionKey, e.RowKey, encodeRecord(t, props), nil)
	require.NoError(t, err)

	var out Customer
	require.NoError(t, UnmarshalEntity(stored, &out))
	require.Equal(t, stored.Timestamp, out.Timestamp)
	require.Equal(t, stored.ETag, out.ETag)
	// Fields that are not stored keep their zero values; fix them up and
	// compare the rest exactly.
	require.Empty(t, out.Skipped)
	require.Empty(t, out.unexposed)
	require.Nil(t, out.PNil)
	in.Skipped, in.unexposed = "", ""
	in.Timestamp, in.ETag = out.Timestamp, out.ETag
	require.Equal(t, in, out)
}

func TestStructErrors(t *testing.T) {
	type badUint struct{ N uint }
	type badUint64 struct{ N uint64 }
	type badMap struct{ M map[string]string }
	type badNested struct{ A Address }
	type badPK struct{ PartitionKey int }
	type badTS struct{ Timestamp string }
	type twoETags struct {
		V ETag
		W ETag
	}
	type badTag struct {
		N int `table:"1abc"`
	}
	type dup struct {
		A string
		B string `table:"A"`
	}
	type embeddedPtr struct{ *Address }

	tests := []struct {
		name string
		v    any
		code Code
		msg  string
	}{
		{"uint", badUint{}, edm.CodeInvalidValueType, "field N has type uint"},
		{"uint64", &badUint64{}, edm.CodeInvalidValueType, "field N has type uint64"},
		{"map", badMap{}, edm.CodeInvalidValueType, "field M"},
		{"nested struct", badNested{}, edm.CodeInvalidValueType, "field A has type tablestore.Address"},
		{"int partition key", badPK{}, edm.CodeInvalidValueType, "field PartitionKey maps to PartitionKey and must be a string"},
		{"string timestamp", badTS{}, edm.CodeInvalidValueType, "must be a time.Time"},
		{"two etag fields", twoETags{}, edm.CodeDuplicatePropertiesSpecified, "fields V and W of tablestore.twoETags are both of type ETag"},
		{"bad tag", badTag{}, edm.CodePropertyNameInvalid, "field N: the property name \"1abc\" is invalid"},
		{"duplicate", dup{}, edm.CodeDuplicatePropertiesSpecified, "fields A and B"},
		{"embedded pointer", embeddedPtr{}, edm.CodeInvalidValueType, "field Address has type *tablestore.Address"},
		{"not a struct", 5, edm.CodeInvalidValueType, "cannot marshal int into an entity: it is not a struct"},
		{"nil pointer", (*Customer)(nil), edm.CodeInvalidInput, "nil *tablestore.Customer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := MarshalEntity(tc.v)
			require.Equal(t, tc.code, ErrorCode(err), "%v", err)
			require.ErrorContains(t, err, tc.msg)
			// Cached plans give the same error the second time.
			_, err2 := MarshalEntity(tc.v)
			require.Equal(t, err.Error(), err2.Error())
		})
	}

	var c Customer
	for _, target := range []any{c, nil, new(int), (*Customer)(nil)} {
		err := UnmarshalEntity(&Entity{}, target)
		require.ErrorIs(t, err, ErrInvalidInput, "%T", target)
	}
	require.ErrorIs(t, UnmarshalEntity(nil, &c), ErrInvalidInput)
	var bad badUint
	require.ErrorIs(t, UnmarshalEntity(&Entity{}, &bad), ErrInvalidValueType)
}

func BenchmarkMarshalEntity(b *testing.B) {
	c := sampleCustomer()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := MarshalEntity(&c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalEntity(b *testing.B) {
	c := sampleCustomer()
	e, err := MarshalEntity(&c)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var out Customer
		if err := UnmarshalEntity(e, &out); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUnmarshalEntityStrings checks that Azure's no-metadata JSON, where
// Int64, DateTime, Guid, Binary and special Doubles are strings, fills
// fields whose types say what the strings are, strictly.
func TestUnmarshalEntityStrings(t *testing.T) {
	type row struct {
		PartitionKey, RowKey string
		Big                  int64
		Int                  int
		U32                  uint32
		When                 time.Time
		WhenPtr              *time.Time
		ID                   GUID
		Data                 []byte
		F                    float64
		S                    string
	}
	const noMetadata = `{"PartitionKey":"p","RowKey":"r","Big":"9007199254740993","Int":"-5","U32":"4000000000",` +
		`"When":"2021-08-31T15:41:38.3027816Z","WhenPtr":"2020-01-04T00:00:00Z",` +
		`"ID":"c9da6455-213d-42c9-9a79-3e9149a57833","Data":"AQL/","F":"-Infinity","S":"12"}`
	var e Entity
	require.NoError(t, json.Unmarshal([]byte(noMetadata), &e))
	var r row
	require.NoError(t, UnmarshalEntity(&e, &r))
	g, _ := edm.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	require.Equal(t, int64(9007199254740993), r.Big)
	require.Equal(t, -5, r.Int)
	require.Equal(t, uint32(4000000000), r.U32)
	require.Equal(t, time.Date(2021, 8, 31, 15, 41, 38, 302781600, time.UTC), r.When)
	require.Equal(t, time.Date(2020, 1, 4, 0, 0, 0, 0, time.UTC), *r.WhenPtr)
	require.Equal(t, g, r.ID)
	require.Equal(t, []byte{1, 2, 0xff}, r.Data)
	require.True(t, math.IsInf(r.F, -1))
	require.Equal(t, "12", r.S)

	for name, tc := range map[string]struct {
		prop any
		code Code
	}{
		"Big":     {"12.5", edm.CodeInvalidInput},
		"Int":     {"1e3", edm.CodeInvalidInput},
		"U32":     {"-1", edm.CodeInvalidValueType}, // a valid Int64 that does not fit
		"When":    {"yesterday", edm.CodeInvalidInput},
		"WhenPtr": {"2021-02-30T00:00:00Z", edm.CodeInvalidInput},
		"ID":      {"c9da6455213d42c99a793e9149a57833", edm.CodeInvalidInput},
		"Data":    {"not base64!", edm.CodeInvalidInput},
		"F":       {"inf", edm.CodeInvalidInput},
	} {
		var r row
		err := UnmarshalEntity(&Entity{Properties: map[string]any{name: tc.prop}}, &r)
		requireCode(t, err, tc.code)
		require.ErrorContains(t, err, "field "+name, name)
	}
	// Kinds whose JSON form is never a string still refuse strings.
	var small struct{ N int32 }
	requireCode(t, UnmarshalEntity(&Entity{Properties: map[string]any{"N": "5"}}, &small), edm.CodeInvalidValueType)
}

// encodedAction is an action's properties as stored bytes.
func encodedAction(a driver.Action) []byte {
	if a.Record == nil {
		return mustEncode(nil, 42, a.Properties)
	}
	rec := append([]byte(nil), a.Record...)
	if err := driver.Record(rec).SetTimestamp(42); err != nil {
		panic(err)
	}
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
		got, gotErr := GetStruct[T](ctx, tbl, e.PartitionKey, e.RowKey, &GetOptions{Select: sel})
		require.Equal(t, errText(wantErr), errText(gotErr), "GetStruct %s/%s", e.PartitionKey, e.RowKey)
		if wantErr == nil {
			requireSame(t, want, got, "GetStruct ", e.PartitionKey, "/", e.RowKey)
		}
	}
	// Pages of one entity, so each entity's error shows.
	n := 0
	q := Query{Select: sel, Top: 1}
	for i := 0; ; i++ {
		mp, err := tbl.QueryPage(ctx, q)
		require.NoError(t, err)
		tp, terr := QueryStructPage[T](ctx, tbl, q)
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
	for v, err := range QueryStructs[T](ctx, tbl, Query{Select: sel, Top: 3}) {
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
	require.Equal(t, edm.CodeEntityAlreadyExists, errorCode(unwrapErr(tbl.InsertStruct(ctx, &c))))
	require.NoError(t, tbl.UpdateStruct(ctx, &c, Merge, c.ETag))
	require.NoError(t, tbl.UpsertStruct(ctx, c, Replace))
	got, err := GetStruct[Customer](ctx, tbl, c.PartitionKey, c.RowKey, nil)
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

// TestDeleteStruct: DeleteStruct deletes the entity named by the struct's
// key fields under If-Match, as Delete does, whether v is a pointer or a
// value, and leaves v as it was; a v that is not a struct fails as
// MarshalEntity does (InvalidValueType).
func TestDeleteStruct(t *testing.T) {
	db, err := OpenInMemory(&Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "TypedDelete")
	require.NoError(t, err)
	c := sampleCustomer()
	require.NoError(t, tbl.InsertStruct(ctx, &c))
	stale := c.ETag
	require.NoError(t, tbl.UpdateStruct(ctx, &c, Merge, c.ETag))

	err = tbl.DeleteStruct(ctx, &c, stale)
	requireCode(t, err, edm.CodeUpdateConditionNotSatisfied)
	mustGet(t, tbl, c.PartitionKey, c.RowKey)

	before := c
	require.NoError(t, tbl.DeleteStruct(ctx, &c, c.ETag))
	requireSame(t, before, c)
	_, err = tbl.Get(ctx, c.PartitionKey, c.RowKey, nil)
	requireCode(t, err, edm.CodeResourceNotFound)
	requireCode(t, tbl.DeleteStruct(ctx, &c, ETagAny), edm.CodeResourceNotFound)

	byValue := sampleCustomer()
	byValue.RowKey = "by-value"
	require.NoError(t, tbl.InsertStruct(ctx, byValue))
	require.NoError(t, tbl.DeleteStruct(ctx, byValue, ETagAny))
	_, err = tbl.Get(ctx, byValue.PartitionKey, byValue.RowKey, nil)
	requireCode(t, err, edm.CodeResourceNotFound)

	requireCode(t, tbl.DeleteStruct(ctx, 7, ETagAny), edm.CodeInvalidValueType)
}

// TestStructSystemFieldsPromoted writes structs whose keys, Timestamp and
// ETag are promoted from an embedded struct placed after other fields,
// so they lie at offsets other than the start: the keys are written and
// the version is set on each struct, as for a flat one.
func TestStructSystemFieldsPromoted(t *testing.T) {
	type system struct {
		Timestamp            time.Time
		PartitionKey, RowKey string
		Version              ETag
	}
	type row struct {
		N     int32
		Label string
		system
	}
	db, err := OpenInMemory(&Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "Promoted")
	require.NoError(t, err)
	rows := []*row{{N: 1, Label: "a"}, {N: 2, Label: "b"}}
	rows[0].PartitionKey, rows[0].RowKey = "p", "r1"
	rows[1].PartitionKey, rows[1].RowKey = "p", "r2"
	require.NoError(t, tbl.SubmitTransaction(ctx, []TransactionAction{
		{Type: ActionInsert, Entity: StructEntity(rows[0])},
		{Type: ActionUpsertReplace, Entity: StructEntity(rows[1])},
	}))
	for _, r := range rows {
		got, err := tbl.Get(ctx, r.PartitionKey, r.RowKey, nil)
		require.NoError(t, err)
		require.Equal(t, map[string]any{"N": r.N, "Label": r.Label}, got.Properties)
		require.Equal(t, got.ETag, r.Version)
		require.True(t, got.Timestamp.Equal(r.Timestamp), "%v, want %v", r.Timestamp, got.Timestamp)
	}
}

// TestQueryStructsETag checks that a struct query fills an ETag field as
// the map query does, and that for a struct without one the engine is
// asked for no ETags and formats none.
func TestQueryStructsETag(t *testing.T) {
	tbl := allocTable(t, 10)
	type withETag struct {
		PartitionKey, RowKey string
		Tag                  ETag
		Name                 string
	}
	var want []ETag
	for e, err := range tbl.Query(ctx, Query{Limit: 5}) {
		require.NoError(t, err)
		want = append(want, e.ETag)
	}
	var got []ETag
	for v, err := range QueryStructs[withETag](ctx, tbl, Query{Limit: 5}) {
		require.NoError(t, err)
		got = append(got, v.Tag)
	}
	require.Equal(t, want, got)
	page, err := QueryStructPage[withETag](ctx, tbl, Query{Top: 5})
	require.NoError(t, err)
	for i, v := range page.Entities {
		require.Equal(t, want[i], v.Tag)
	}

	type noETag struct {
		PartitionKey, RowKey string
		Name                 string
	}
	p, err := planOf[noETag]()
	require.NoError(t, err)
	pq, err := tbl.prepareStructs(ctx, Query{Top: 5}, p)
	require.NoError(t, err)
	require.True(t, pq.req.NoETag)
	rows := 0
	_, _, err = tbl.readRows(ctx, pq, func(r driver.Row) error {
		rows++
		require.Empty(t, r.ETag)
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 5, rows)
}

// TestQueryStructsKeptAcrossPages: values QueryStructs yields stay whole
// while later pages are read into the same slabs and text chunks.
func TestQueryStructsKeptAcrossPages(t *testing.T) {
	db, err := OpenInMemory(&Options{NoSync: true})
	require.NoError(t, err)
	defer db.Close()
	tbl, err := db.CreateTable(ctx, "KeptPages")
	require.NoError(t, err)
	type row struct {
		PartitionKey, RowKey string
		Text                 string
		N                    int32
	}
	const n = 300
	for i := range n {
		text := strings.Repeat(string(rune('a'+i%26)), 1+i%50)
		require.NoError(t, tbl.InsertStruct(ctx, row{PartitionKey: "p", RowKey: fmt.Sprintf("%04d", i), Text: text, N: int32(i)}))
	}
	for _, q := range []Query{{Top: 7}, {Top: 1}, {Top: 100, Limit: 250}, {Filter: "N ge 5", Top: 3}} {
		var kept []*row
		for v, err := range QueryStructs[row](ctx, tbl, q) {
			require.NoError(t, err)
			kept = append(kept, v)
		}
		i0 := 0
		if q.Filter != "" {
			i0 = 5
		}
		want := n - i0
		if q.Limit > 0 {
			want = q.Limit
		}
		require.Len(t, kept, want)
		for k, v := range kept {
			i := i0 + k
			require.Equal(t, row{PartitionKey: "p", RowKey: fmt.Sprintf("%04d", i),
				Text: strings.Repeat(string(rune('a'+i%26)), 1+i%50), N: int32(i)}, *v, "query %+v, entity %d", q, i)
		}
	}
}
