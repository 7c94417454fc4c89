package tablestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
	"github.com/tablestore/tablestore/internal/wire"
)

// recordedQueryEntity is one entity of the minimal-metadata query response
// recorded against Azure (protocol digest, section 2).
const recordedQueryEntity = `{"odata.etag":"W/\"datetime'2021-08-31T15%3A41%3A38.3027816Z'\"",
	"PartitionKey":"partition","RowKey":"1","Timestamp":"2021-08-31T15:41:38.3027816Z",
	"Bool":true,"Integer":1,"String":"some string 1"}`

func TestUnmarshalRecordedEntity(t *testing.T) {
	var e Entity
	require.NoError(t, json.Unmarshal([]byte(recordedQueryEntity), &e))
	require.Equal(t, "partition", e.PartitionKey)
	require.Equal(t, "1", e.RowKey)
	require.Equal(t, ETag(`W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'"`), e.ETag)
	require.Equal(t, time.Date(2021, 8, 31, 15, 41, 38, 302781600, time.UTC), e.Timestamp)
	require.Equal(t, map[string]any{"Bool": true, "Integer": int32(1), "String": "some string 1"}, e.Properties)

	// The ETag is the one the engine derives from the Timestamp.
	require.Equal(t, etagFor(e.Timestamp), e.ETag)

	// Marshalling gives Azure's form back, byte for byte once the
	// whitespace of the recording is removed.
	out, err := json.Marshal(&e)
	require.NoError(t, err)
	compact := strings.NewReplacer("\n", "", "\t", "").Replace(recordedQueryEntity)
	require.Equal(t, compact, string(out))
}

func TestUnmarshalAnnotatedEntity(t *testing.T) {
	// Every type, as the SDKs and Azure write them, plus annotated forms
	// Azure accepts on input.
	body := `{
		"odata.metadata":"https://acct.table.core.windows.net/$metadata#mytable/@Element",
		"PartitionKey@odata.type":"Edm.String","PartitionKey":"pk'@*$!%","RowKey":"你好",
		"Timestamp@odata.type":"Edm.DateTime","Timestamp":"0001-01-01T00:00:00Z",
		"Age":23,
		"Big":3000000000,
		"Ratio":3.5,
		"Whole":2.0,
		"Exp":1e3,
		"Long@odata.type":"Edm.Int64","Long":"9223372036854775807",
		"LongNeg@odata.type":"Edm.Int64","LongNeg":"-9223372036854775808",
		"When@odata.type":"Edm.DateTime","When":"2013-08-02T17:37:43.9004348Z",
		"NoZone@odata.type":"Edm.DateTime","NoZone":"2008-07-10T00:00:00",
		"Millis@odata.type":"Edm.DateTime","Millis":"2020-01-04T00:00:00.123Z",
		"Offset@odata.type":"Edm.DateTime","Offset":"2020-01-04T01:30:00+01:30",
		"Id@odata.type":"Edm.Guid","Id":"C9DA6455-213D-42C9-9A79-3E9149A57833",
		"Bin@odata.type":"Edm.Binary","Bin":"AQID/w==",
		"EmptyBin@odata.type":"Edm.Binary","EmptyBin":"",
		"NaN@odata.type":"Edm.Double","NaN":"NaN",
		"Inf@odata.type":"Edm.Double","Inf":"Infinity",
		"NegInf@odata.type":"Edm.Double","NegInf":"-Infinity",
		"DoubleStr@odata.type":"Edm.Double","DoubleStr":"3.14",
		"DoubleInt@odata.type":"Edm.Double","DoubleInt":5,
		"Int32Str@odata.type":"Edm.Int32","Int32Str":"12345",
		"BoolStr@odata.type":"Edm.Boolean","BoolStr":"False",
		"Str@odata.type":"Edm.String","Str":"s",
		"Gone":null,
		"GoneTyped@odata.type":"Edm.Int64","GoneTyped":null,
		"Flag":false
	}`
	var e Entity
	require.NoError(t, e.UnmarshalJSON([]byte(body)))
	require.Equal(t, "pk'@*$!%", e.PartitionKey, "keys are stored exactly as received")
	require.Equal(t, "你好", e.RowKey)
	require.True(t, e.Timestamp.IsZero())
	require.Empty(t, e.ETag)
	g, ok := edm.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	require.True(t, ok)
	requireSameProperties(t, map[string]any{
		"Age":       int32(23),
		"Big":       3000000000.0,
		"Ratio":     3.5,
		"Whole":     2.0,
		"Exp":       1000.0,
		"Long":      int64(math.MaxInt64),
		"LongNeg":   int64(math.MinInt64),
		"When":      time.Date(2013, 8, 2, 17, 37, 43, 900434800, time.UTC),
		"NoZone":    time.Date(2008, 7, 10, 0, 0, 0, 0, time.UTC),
		"Millis":    time.Date(2020, 1, 4, 0, 0, 0, 123000000, time.UTC),
		"Offset":    time.Date(2020, 1, 4, 0, 0, 0, 0, time.UTC),
		"Id":        g,
		"Bin":       []byte{1, 2, 3, 0xff},
		"EmptyBin":  []byte{},
		"NaN":       math.NaN(),
		"Inf":       math.Inf(1),
		"NegInf":    math.Inf(-1),
		"DoubleStr": 3.14,
		"DoubleInt": 5.0,
		"Int32Str":  int32(12345),
		"BoolStr":   false,
		"Str":       "s",
		"Flag":      false,
	}, e.Properties)
}

func TestUnmarshalJSONErrors(t *testing.T) {
	const keys = `"PartitionKey":"p","RowKey":"r"`
	tests := []struct {
		name string
		body string
		code Code
	}{
		{"not json", `{`, edm.CodeInvalidInput},
		{"garbage", `nope`, edm.CodeInvalidInput},
		{"array", `[]`, edm.CodeInvalidInput},
		{"string", `"x"`, edm.CodeInvalidInput},
		{"trailing data", `{` + keys + `}{}`, edm.CodeInvalidInput},
		{"trailing comma", `{` + keys + `,}`, edm.CodeInvalidInput},
		{"missing pk", `{"RowKey":"r"}`, edm.CodePropertiesNeedValue},
		{"missing rk", `{"PartitionKey":"p"}`, edm.CodePropertiesNeedValue},
		{"numeric pk", `{"PartitionKey":1,"RowKey":"r"}`, edm.CodeInvalidInput},
		{"bool rk", `{"PartitionKey":"p","RowKey":true}`, edm.CodeInvalidInput},
		{"null pk", `{"PartitionKey":null,"RowKey":"r"}`, edm.CodePropertiesNeedValue},
		{"null rk", `{"PartitionKey":"","RowKey":null}`, edm.CodePropertiesNeedValue},
		{"typed pk", `{"PartitionKey@odata.type":"Edm.Int32","PartitionKey":"1","RowKey":"r"}`, edm.CodeInvalidInput},
		{"duplicate property", `{` + keys + `,"A":1,"A":2}`, edm.CodeDuplicatePropertiesSpecified},
		{"duplicate escaped", `{` + keys + `,"A":1,"\u0041":2}`, edm.CodeDuplicatePropertiesSpecified},
		{"duplicate key", `{` + keys + `,"PartitionKey":"q"}`, edm.CodeDuplicatePropertiesSpecified},
		{"duplicate null", `{` + keys + `,"A":null,"A":null}`, edm.CodeDuplicatePropertiesSpecified},
		{"duplicate annotation", `{` + keys + `,"A@odata.type":"Edm.Int64","A@odata.type":"Edm.Int64","A":"1"}`, edm.CodeDuplicatePropertiesSpecified},
		{"nested object", `{` + keys + `,"A":{"b":1}}`, edm.CodeInvalidInput},
		{"nested array", `{` + keys + `,"A":[1]}`, edm.CodeInvalidInput},
		{"annotation without property", `{` + keys + `,"A@odata.type":"Edm.Int64"}`, edm.CodeInvalidInput},
		{"annotation not a string", `{` + keys + `,"A@odata.type":5,"A":1}`, edm.CodeInvalidInput},
		{"unknown edm type", `{` + keys + `,"A@odata.type":"Edm.Decimal","A":"1"}`, edm.CodeInvalidInput},
		{"int64 overflow", `{` + keys + `,"A@odata.type":"Edm.Int64","A":"9223372036854775808"}`, edm.CodeInvalidInput},
		{"int64 fraction", `{` + keys + `,"A@odata.type":"Edm.Int64","A":"1.5"}`, edm.CodeInvalidInput},
		{"int64 bool", `{` + keys + `,"A@odata.type":"Edm.Int64","A":true}`, edm.CodeInvalidInput},
		{"int32 overflow", `{` + keys + `,"A@odata.type":"Edm.Int32","A":2147483648}`, edm.CodeInvalidInput},
		{"int32 fraction", `{` + keys + `,"A@odata.type":"Edm.Int32","A":1.5}`, edm.CodeInvalidInput},
		{"double word", `{` + keys + `,"A@odata.type":"Edm.Double","A":"nan"}`, edm.CodeInvalidInput},
		{"double hex", `{` + keys + `,"A@odata.type":"Edm.Double","A":"0x10"}`, edm.CodeInvalidInput},
		{"double overflow", `{` + keys + `,"A":1e400}`, edm.CodeInvalidInput},
		{"double overflow typed", `{` + keys + `,"A@odata.type":"Edm.Double","A":"1e400"}`, edm.CodeInvalidInput},
		{"bool word", `{` + keys + `,"A@odata.type":"Edm.Boolean","A":"yes"}`, edm.CodeInvalidInput},
		{"bool number", `{` + keys + `,"A@odata.type":"Edm.Boolean","A":1}`, edm.CodeInvalidInput},
		{"string number", `{` + keys + `,"A@odata.type":"Edm.String","A":1}`, edm.CodeInvalidInput},
		{"guid short", `{` + keys + `,"A@odata.type":"Edm.Guid","A":"c9da6455"}`, edm.CodeInvalidInput},
		{"guid number", `{` + keys + `,"A@odata.type":"Edm.Guid","A":1}`, edm.CodeInvalidInput},
		{"binary bad", `{` + keys + `,"A@odata.type":"Edm.Binary","A":"!!"}`, edm.CodeInvalidInput},
		{"datetime bad", `{` + keys + `,"A@odata.type":"Edm.DateTime","A":"yesterday"}`, edm.CodeInvalidInput},
		{"datetime month 13", `{` + keys + `,"A@odata.type":"Edm.DateTime","A":"2020-13-01T00:00:00Z"}`, edm.CodeInvalidInput},
		{"datetime feb 30", `{` + keys + `,"A@odata.type":"Edm.DateTime","A":"2020-02-30T00:00:00Z"}`, edm.CodeInvalidInput},
		{"datetime no time", `{` + keys + `,"A@odata.type":"Edm.DateTime","A":"2020-02-03"}`, edm.CodeInvalidInput},
		{"datetime year 0", `{` + keys + `,"A@odata.type":"Edm.DateTime","A":"0000-12-31T00:00:00Z"}`, edm.CodeOutOfRangeInput},
		{"datetime past 9999", `{` + keys + `,"A@odata.type":"Edm.DateTime","A":"9999-12-31T23:00:00-01:00"}`, edm.CodeOutOfRangeInput},
		{"bad name", `{` + keys + `,"1A":1}`, edm.CodePropertyNameInvalid},
		{"dash name", `{` + keys + `,"a-b":1}`, edm.CodePropertyNameInvalid},
		{"long name", `{` + keys + `,"` + strings.Repeat("a", 256) + `":1}`, edm.CodePropertyNameTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := Entity{PartitionKey: "untouched"}
			err := e.UnmarshalJSON([]byte(tc.body))
			require.Error(t, err)
			require.Equal(t, tc.code, ErrorCode(err), err.Error())
			require.Equal(t, "untouched", e.PartitionKey, "e is unchanged on error")
		})
	}
}

func TestUnmarshalJSONIgnores(t *testing.T) {
	// odata keys, other annotations, unparseable Timestamps and nulls.
	body := `{"odata.type":"acct.tbl","odata.id":"https://x/tbl(PartitionKey='p',RowKey='r')",
		"odata.editLink":"tbl(PartitionKey='p',RowKey='r')","odata.etag":5,
		"A@odata.mediaType":"x","PartitionKey":"p","RowKey":"r","Timestamp":"soon","N":null}`
	var e Entity
	require.NoError(t, e.UnmarshalJSON([]byte(body)))
	require.Equal(t, Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{}}, e)
}

func TestMarshalJSON(t *testing.T) {
	g, ok := edm.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	require.True(t, ok)
	e := &Entity{
		PartitionKey: "p\"\\\n\x01<&>",
		RowKey:       "r",
		Timestamp:    time.Date(2021, 8, 31, 17, 41, 38, 302781600, time.FixedZone("cest", 2*3600)),
		ETag:         `W/"datetime'2021-08-31T15%3A41%3A38.3027816Z'"`,
		Properties: map[string]any{
			"S": "x", "I": int32(-1), "L": int64(-2), "D": 2.0, "F": 0.5, "Z": math.Copysign(0, -1),
			"E": 1e21, "Tiny": 1e-7, "Nan": math.NaN(), "Inf": math.Inf(1), "NInf": math.Inf(-1),
			"B": true, "T": time.Date(2020, 1, 4, 0, 0, 0, 0, time.UTC), "G": g, "Bin": []byte{1, 2, 3, 0xff},
			"Nil": nil,
		},
	}
	out, err := e.MarshalJSON()
	require.NoError(t, err)
	want := `{"odata.etag":"W/\"datetime'2021-08-31T15%3A41%3A38.3027816Z'\"",` +
		`"PartitionKey":"p\"\\\n\u0001<&>","RowKey":"r","Timestamp":"2021-08-31T15:41:38.3027816Z",` +
		`"B":true,` +
		`"Bin@odata.type":"Edm.Binary","Bin":"AQID/w==",` +
		`"D":2.0,` +
		`"E":1e+21,` +
		`"F":0.5,` +
		`"G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
		`"I":-1,` +
		`"Inf@odata.type":"Edm.Double","Inf":"Infinity",` +
		`"L@odata.type":"Edm.Int64","L":"-2",` +
		`"NInf@odata.type":"Edm.Double","NInf":"-Infinity",` +
		`"Nan@odata.type":"Edm.Double","Nan":"NaN",` +
		`"S":"x",` +
		`"T@odata.type":"Edm.DateTime","T":"2020-01-04T00:00:00.0000000Z",` +
		`"Tiny":1e-07,` +
		`"Z":-0.0}`
	require.Equal(t, want, string(out))
	require.True(t, json.Valid(out))

	// nil and null, as encoding/json expects.
	out, err = json.Marshal((*Entity)(nil))
	require.NoError(t, err)
	require.Equal(t, "null", string(out))
	keep := Entity{PartitionKey: "keep"}
	require.NoError(t, keep.UnmarshalJSON([]byte(" null ")))
	require.Equal(t, "keep", keep.PartitionKey)

	// No ETag or Timestamp: neither is written.
	out, err = (&Entity{PartitionKey: "p", RowKey: "r"}).MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"PartitionKey":"p","RowKey":"r"}`, string(out))
}

func TestMarshalJSONErrors(t *testing.T) {
	tests := []struct {
		name string
		e    Entity
		code Code
	}{
		{"float32 value", Entity{Properties: map[string]any{"A": float32(1)}}, edm.CodeInvalidValueType},
		{"uint64 over int64", Entity{Properties: map[string]any{"A": uint64(1 << 63)}}, edm.CodeOutOfRangeInput},
		{"reserved name", Entity{Properties: map[string]any{"RowKey": "x"}}, edm.CodeInvalidInput},
		{"bad name", Entity{Properties: map[string]any{"a b": "x"}}, edm.CodePropertyNameInvalid},
		{"bad utf8 value", Entity{Properties: map[string]any{"A": "\xff"}}, edm.CodeInvalidInput},
		{"bad utf8 key", Entity{PartitionKey: "\xff"}, edm.CodeInvalidInput},
		{"year 10000", Entity{Properties: map[string]any{"A": time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}}, edm.CodeOutOfRangeInput},
		{"timestamp year 0", Entity{Timestamp: time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)}, edm.CodeOutOfRangeInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.e.MarshalJSON()
			require.Equal(t, tc.code, ErrorCode(err), "%v", err)
		})
	}
}

func TestJSONRoundTrip(t *testing.T) {
	in := &Entity{PartitionKey: "p", RowKey: "r", Properties: edgeProperties()}
	out, err := json.Marshal(in)
	require.NoError(t, err)
	var back Entity
	require.NoError(t, json.Unmarshal(out, &back))
	requireSameProperties(t, in.Properties, back.Properties)

	// Doubles that look like integers stay doubles; Int32 and Int64 stay
	// apart.
	for _, v := range []any{0.0, 1.0, -3.0, 1e20, 1e21, 123456789012.0, int32(0), int64(0), int64(5)} {
		b, err := json.Marshal(&Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"V": v}})
		require.NoError(t, err)
		var e Entity
		require.NoError(t, json.Unmarshal(b, &e), string(b))
		require.Equal(t, v, e.Properties["V"], string(b))
	}
}

// errString prints an error as "Code: message", or "ok".
func errString(err error) string {
	if err == nil {
		return "ok"
	}
	var e *Error
	if errors.As(err, &e) {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return "untyped: " + err.Error()
}

// requireSameEntity compares two entities as the JSON round trip must
// preserve them.
func requireSameEntity(t *testing.T, want, got *Entity) {
	t.Helper()
	require.Equal(t, want.PartitionKey, got.PartitionKey)
	require.Equal(t, want.RowKey, got.RowKey)
	require.Equal(t, want.ETag, got.ETag)
	require.True(t, want.Timestamp.Equal(got.Timestamp), "%v != %v", want.Timestamp, got.Timestamp)
	requireSameProperties(t, want.Properties, got.Properties)
}

func FuzzEntityJSON(f *testing.F) {
	f.Add([]byte(recordedQueryEntity))
	f.Add([]byte(`{"PartitionKey":"p","RowKey":"r","L@odata.type":"Edm.Int64","L":"5","D":2.0,"I":3000000000}`))
	f.Add([]byte(`{"PartitionKey":"p","RowKey":"r","T@odata.type":"Edm.DateTime","T":"2008-07-10T00:00:00+05:00"}`))
	f.Add([]byte(`{"PartitionKey":"p","RowKey":"r","G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833"}`))
	f.Add([]byte(`{"PartitionKey":"p","RowKey":"r","B@odata.type":"Edm.Binary","B":"AQID","N@odata.type":"Edm.Double","N":"-Infinity"}`))
	f.Add([]byte(`{"PartitionKey":"p","RowKey":"r","A@odata.type":"Edm.Boolean","A":"False","X":-0.0,"Y":1e-7}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e Entity
		if err := e.UnmarshalJSON(data); err != nil {
			if ErrorCode(err) == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		out, err := e.MarshalJSON()
		if err != nil {
			t.Fatalf("unmarshalled entity does not marshal: %v\ninput: %q", err, data)
		}
		var back Entity
		if err := back.UnmarshalJSON(out); err != nil {
			t.Fatalf("marshalled entity does not unmarshal: %v\njson: %s", err, out)
		}
		requireSameEntity(t, &e, &back)
	})
}

// TestJSONDecisions runs testdata/json_entity: how JSON bodies are typed
// (Azure's inference rules and annotations) and written back.
//
//	unmarshal   input: a JSON entity; output: the entity, property by
//	            property with its EDM type, then MarshalJSON's output
func TestJSONDecisions(t *testing.T) {
	datadriven.RunTest(t, "testdata/json_entity", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "unmarshal" {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		var e Entity
		if err := e.UnmarshalJSON([]byte(d.Input)); err != nil {
			return "error: " + errString(err) + "\n"
		}
		var out strings.Builder
		fmt.Fprintf(&out, "PartitionKey: %q\nRowKey: %q\n", e.PartitionKey, e.RowKey)
		if !e.Timestamp.IsZero() {
			fmt.Fprintf(&out, "Timestamp: %s\n", e.Timestamp.Format(time.RFC3339Nano))
		}
		if e.ETag != "" {
			fmt.Fprintf(&out, "ETag: %s\n", e.ETag)
		}
		names := make([]string, 0, len(e.Properties))
		for name := range e.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			v := e.Properties[name]
			switch x := v.(type) {
			case time.Time:
				v = x.Format(time.RFC3339Nano)
			case []byte:
				v = fmt.Sprintf("%x", x)
			case float64:
				v = strconv.FormatFloat(x, 'g', -1, 64)
			}
			fmt.Fprintf(&out, "%s: %s %v\n", name, entityenc.TypeName(e.Properties[name]), v)
		}
		b, err := e.MarshalJSON()
		if err != nil {
			return out.String() + "marshal error: " + errString(err) + "\n"
		}
		return out.String() + "json: " + string(b) + "\n"
	})
}

func BenchmarkMarshalJSON(b *testing.B) {
	e := &Entity{PartitionKey: "partition", RowKey: "row", Timestamp: time.Now(), ETag: etagFor(time.Now()),
		Properties: map[string]any{"S": "some string", "I": int32(5), "L": int64(1 << 40), "D": 2.5,
			"B": true, "T": time.Now(), "G": GUID{1}, "Bin": []byte("bytes")}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.MarshalJSON(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalJSON(b *testing.B) {
	data := []byte(recordedQueryEntity)
	b.ReportAllocs()
	for b.Loop() {
		var e Entity
		if err := e.UnmarshalJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUnmarshalJSONRefusesInvalidUTF8 checks that invalid UTF-8 anywhere
// in a body, raw or as a lone surrogate escape, is InvalidInput and
// leaves the entity unchanged: two keys a client sent never become one
// stored key.
func TestUnmarshalJSONRefusesInvalidUTF8(t *testing.T) {
	const keys = `"PartitionKey":"p","RowKey":"r"`
	for _, body := range []string{
		"{\"PartitionKey\":\"a\xffb\",\"RowKey\":\"r\"}",
		"{\"PartitionKey\":\"p\",\"RowKey\":\"\xc3\"}",
		`{"PartitionKey":"a\udcffb","RowKey":"r"}`,
		`{` + keys + ",\"S\":\"\xed\xa0\x80\"}",
		`{` + keys + `,"S":"\ud800"}`,
		`{` + keys + ",\"N\xff\":1}",
		`{` + keys + `,"N\udbff":1}`,
		`{` + keys + ",\"S@odata.type\":\"Edm.String\xff\",\"S\":\"x\"}",
		"{\"odata.etag\":\"\xff\"," + keys + "}",
	} {
		e := Entity{PartitionKey: "untouched"}
		err := e.UnmarshalJSON([]byte(body))
		requireCode(t, err, edm.CodeInvalidInput)
		require.Equal(t, "untouched", e.PartitionKey, "%q", body)
	}
	// Before, both bodies decoded to the key "a\uFFFDb"; now neither does,
	// and the key written as a valid surrogate pair is its character.
	var e Entity
	require.NoError(t, e.UnmarshalJSON([]byte(`{"PartitionKey":"a\ud83d\ude00b","RowKey":"r"}`)))
	require.Equal(t, "a😀b", e.PartitionKey)
}

// oldServerJSON is how the REST server wrote an entity before
// AppendEntityJSON: MarshalJSON's minimal form, re-encoded through
// encoding/json without the annotations for no metadata, with nulls for
// selected properties the entity lacks, and full metadata's members put
// in front. AppendEntityJSON must write the same bytes.
func oldServerJSON(t *testing.T, e *Entity, o JSONOptions) []byte {
	t.Helper()
	c := *e
	if o.Metadata == NoMetadata {
		c.ETag = ""
	}
	raw, err := c.MarshalJSON()
	require.NoError(t, err)
	str := func(b []byte, s string) []byte {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(s))
		return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
	}
	if o.Metadata == NoMetadata {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		_, err := dec.Token()
		require.NoError(t, err)
		out := []byte{'{'}
		for dec.More() {
			key, err := dec.Token()
			require.NoError(t, err)
			val, err := dec.Token()
			require.NoError(t, err)
			if strings.HasSuffix(key.(string), "@odata.type") {
				continue
			}
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(str(out, key.(string)), ':')
			switch v := val.(type) {
			case string:
				out = str(out, v)
			case json.Number:
				out = append(out, v...)
			case bool:
				out = strconv.AppendBool(out, v)
			}
		}
		raw = append(out, '}')
	}
	if len(o.Select) > 0 {
		raw = raw[:len(raw)-1]
		for _, name := range o.Select {
			if _, ok := e.Properties[name]; ok || name == "PartitionKey" || name == "RowKey" || name == "Timestamp" {
				continue
			}
			raw = append(str(append(raw, ','), name), ":null"...)
		}
		raw = append(raw, '}')
	}
	if o.Metadata == FullMetadata {
		b := str(append([]byte(nil), `{"odata.type":`...), o.Type)
		b = str(append(b, `,"odata.id":`...), o.ID)
		b = str(append(b, `,"odata.editLink":`...), o.EditLink)
		if !e.Timestamp.IsZero() {
			b = append(b, `,"Timestamp@odata.type":"Edm.DateTime"`...)
		}
		raw = append(append(b, ','), raw[1:]...)
	}
	return raw
}

// TestAppendEntityJSONLevels checks the three metadata levels, with and
// without a projection, against the server's former writer, byte for
// byte, over every type's edge values and keys that need escaping.
func TestAppendEntityJSONLevels(t *testing.T) {
	ts := time.Date(2021, 8, 31, 15, 41, 38, 302781600, time.UTC)
	entities := []*Entity{
		{PartitionKey: "p\"\\\n\t\x01<&>é", RowKey: "O'Neil", Timestamp: ts, ETag: etagFor(ts), Properties: edgeProperties()},
		{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"A": int32(1), "Nil": nil}},
		{PartitionKey: "p", RowKey: "r", Timestamp: ts, ETag: etagFor(ts), Properties: map[string]any{}},
	}
	full := JSONOptions{Type: "acct.People", ID: "http://h/acct/People(PartitionKey='p',RowKey='r')", EditLink: "People(PartitionKey='p',RowKey='r')"}
	for i, e := range entities {
		for _, level := range []JSONMetadata{MinimalMetadata, NoMetadata, FullMetadata} {
			for _, sel := range [][]string{nil, {"Str", "Missing", "PartitionKey", "Nil", "Timestamp", "Gone"}} {
				o := full
				o.Metadata, o.Select = level, sel
				pe := e
				if sel != nil { // the server's entities come projected
					pe = &Entity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Timestamp: e.Timestamp, ETag: e.ETag, Properties: map[string]any{}}
					for _, name := range sel {
						if v, ok := e.Properties[name]; ok {
							pe.Properties[name] = v
						}
					}
				}
				want := oldServerJSON(t, pe, o)
				got, err := AppendEntityJSON([]byte("prefix"), e, &o)
				require.NoError(t, err)
				require.Equal(t, string(want), string(got[len("prefix"):]), "entity %d, level %d, select %v", i, level, sel)
				require.True(t, json.Valid(got[len("prefix"):]))
			}
		}
	}
	out, err := AppendEntityJSON(nil, entities[0], nil)
	require.NoError(t, err)
	m, err := entities[0].MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, m, out, "nil options are MarshalJSON's minimal metadata")

	_, err = AppendEntityJSON(nil, entities[0], &JSONOptions{Select: []string{"a-b"}})
	requireCode(t, err, edm.CodeInvalidInput)
	_, err = AppendEntityJSON(nil, entities[0], &JSONOptions{Metadata: FullMetadata + 1})
	requireCode(t, err, edm.CodeInvalidInput)

	// The one difference from the former writer: no metadata writes
	// strings as every level does, so \b, \f, U+2028 and U+2029 are no
	// longer written as encoding/json writes them.
	odd := &Entity{PartitionKey: "p", RowKey: "r", Properties: map[string]any{"S": "\b\f\u2028\u2029"}}
	got, err := AppendEntityJSON(nil, odd, &JSONOptions{Metadata: NoMetadata})
	require.NoError(t, err)
	require.Equal(t, `{"PartitionKey":"p","RowKey":"r","S":"\u0008\u000c`+"\u2028\u2029"+`"}`, string(got))
	var back Entity
	require.NoError(t, back.UnmarshalJSON(got))
	require.Equal(t, odd.Properties, back.Properties)
}

// TestAppendJSONString checks the one string writer: escapes, and
// invalid UTF-8 kept for a strict decoder to refuse.
func TestAppendJSONString(t *testing.T) {
	require.Equal(t, `x"a\"b\\c\n\r\t\u0001\u001f é/<>&"`, string(wire.AppendString([]byte("x"), "a\"b\\c\n\r\t\x01\x1f é/<>&")))
	bad := wire.AppendString(nil, "a\xffb")
	require.Equal(t, "\"a\xffb\"", string(bad))
	var e Entity
	requireCode(t, e.UnmarshalJSON([]byte(`{"PartitionKey":`+string(bad)+`,"RowKey":"r"}`)), edm.CodeInvalidInput)
}

// TestMarshalJSONValue checks that an Entity value, a pointer, and
// structs and slices holding either all encode in Azure's wire form.
func TestMarshalJSONValue(t *testing.T) {
	g, ok := edm.ParseGUID("c9da6455-213d-42c9-9a79-3e9149a57833")
	require.True(t, ok)
	e := Entity{PartitionKey: "p", RowKey: "r",
		Properties: map[string]any{"G": g, "L": int64(7)}}
	const want = `{"PartitionKey":"p","RowKey":"r","G@odata.type":"Edm.Guid","G":"c9da6455-213d-42c9-9a79-3e9149a57833",` +
		`"L@odata.type":"Edm.Int64","L":"7"}`

	for name, v := range map[string]any{"value": e, "pointer": &e} {
		out, err := json.Marshal(v)
		require.NoError(t, err, name)
		require.Equal(t, want, string(out), name)
	}

	type wrapper struct {
		Item  Entity
		Ptr   *Entity
		Nil   *Entity
		Items []Entity
	}
	out, err := json.Marshal(wrapper{Item: e, Ptr: &e, Items: []Entity{e}})
	require.NoError(t, err)
	require.Equal(t, `{"Item":`+want+`,"Ptr":`+want+`,"Nil":null,"Items":[`+want+`]}`, string(out))

	// And back: a struct field of type Entity decodes Azure's form.
	var back wrapper
	require.NoError(t, json.Unmarshal(out, &back))
	require.Equal(t, e.Properties, back.Item.Properties)
	require.Equal(t, e.Properties, back.Items[0].Properties)
	require.Nil(t, back.Nil)
}

// TestUnmarshalJSONBigIntegers checks that a bare integer beyond Int32 is a
// Double when a double holds it exactly (Azure's inference) and an Int64
// when a double would round it.
func TestUnmarshalJSONBigIntegers(t *testing.T) {
	for raw, want := range map[string]any{
		"2147483647":           int32(2147483647),
		"2147483648":           float64(2147483648),
		"9007199254740992":     float64(1 << 53),
		"9007199254740993":     int64(1<<53 + 1),
		"-9007199254740993":    int64(-(1<<53 + 1)),
		"9223372036854775807":  int64(9223372036854775807),
		"9223372036854775808":  float64(9223372036854775808),
		"-9223372036854775808": float64(-9223372036854775808),
	} {
		var e Entity
		require.NoError(t, json.Unmarshal([]byte(`{"PartitionKey":"p","RowKey":"r","N":`+raw+`}`), &e), raw)
		require.Equal(t, want, e.Properties["N"], raw)
	}
}
