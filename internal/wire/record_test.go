package wire

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tablestore/tablestore/driver"
	"github.com/tablestore/tablestore/edm"
	"github.com/tablestore/tablestore/internal/entityenc"
)

// viaDecode is DecodeRecord's reference: Decode, then AppendProperties
// after a zero header.
func viaDecode(data []byte) (RecordEntity, []byte, error) {
	e, err := Decode(data)
	if err != nil {
		return RecordEntity{}, nil, err
	}
	rec, count, size, err := entityenc.AppendProperties(driver.AppendHeader(nil, 0), e.Properties, nil)
	if err != nil {
		return RecordEntity{}, nil, err
	}
	return RecordEntity{PartitionKey: e.PartitionKey, RowKey: e.RowKey, Timestamp: e.Timestamp, ETag: e.ETag, Count: count, Size: size}, rec, nil
}

// requireSameAsDecode checks DecodeRecord against viaDecode for data,
// appending to a non-empty dst, with scratch s.
func requireSameAsDecode(t *testing.T, data []byte, s *RecordScratch) {
	t.Helper()
	want, wantRec, wantErr := viaDecode(data)
	prefix := []byte("prefix")
	got, out, err := DecodeRecord(prefix, data, s)
	if wantErr != nil {
		require.Error(t, err, "%q: want %v", data, wantErr)
		require.IsType(t, (*entityenc.Error)(nil), err)
		require.Equal(t, *wantErr.(*entityenc.Error), *err.(*entityenc.Error), "%q", data)
		require.Equal(t, prefix, out, "%q: dst is cut back on error", data)
		return
	}
	require.NoError(t, err, "%q", data)
	require.Equal(t, want, got, "%q", data)
	require.Equal(t, prefix, out[:len(prefix)], "%q", data)
	require.True(t, bytes.Equal(wantRec, out[len(prefix):]), "%q: record\n got %x\nwant %x", data, out[len(prefix):], wantRec)
}

// recordSeeds are bodies covering DecodeRecord's decisions.
func recordSeeds() []string {
	const keys = `"PartitionKey":"p","RowKey":"r"`
	body := func(members ...string) string {
		return "{" + strings.Join(append([]string{keys}, members...), ",") + "}"
	}
	ann := func(name, typ, val string) string {
		return fmt.Sprintf(`"%s@odata.type":"%s","%s":%s`, name, typ, name, val)
	}
	seeds := []string{
		body(), `{}`, `[]`, `{"PartitionKey":"p"}`, `{"RowKey":"r"}`, `{"PartitionKey":1,"RowKey":"r"}`,
		`{"PartitionKey":null,"RowKey":"r"}`, `{"PartitionKey":"","RowKey":""}`,
		`{"PartitionKey@odata.type":"Edm.Int32","PartitionKey":"p","RowKey":"r"}`,
		`{"PartitionKey@odata.type":"","PartitionKey":"p","RowKey":"r"}`,
		`{"PartitionKey@odata.type":"Edm.String","PartitionKey":"p","RowKey@odata.type":"Edm.String","RowKey":"r"}`,
		`{"RowKey@odata.type":"Edm.Guid","PartitionKey":"p","RowKey":"r"}`,
		// The eight types, bare and annotated.
		body(`"S":"x"`, `"B":true`, `"F":false`, `"I":1`, `"D":1.5`, `"E":1e3`, `"N":-0`, `"M":-1.0E-2`),
		body(ann("S", "Edm.String", `"x"`), ann("I", "Edm.Int32", `"-5"`), ann("J", "Edm.Int32", `7`),
			ann("L", "Edm.Int64", `"9223372036854775807"`), ann("K", "Edm.Int64", `-9223372036854775808`),
			ann("D", "Edm.Double", `"NaN"`), ann("E", "Edm.Double", `"Infinity"`), ann("F", "Edm.Double", `"-Infinity"`),
			ann("G", "Edm.Double", `"1.5e3"`), ann("H", "Edm.Double", `2`), ann("B", "Edm.Boolean", `"TRUE"`),
			ann("C", "Edm.Boolean", `false`), ann("T", "Edm.DateTime", `"2024-02-29T12:34:56.1234567Z"`),
			ann("U", "Edm.Guid", `"0f8fad5b-d9cb-469f-a165-70867728950E"`), ann("V", "Edm.Binary", `"AQID"`),
			ann("W", "Edm.Binary", `""`)),
		body(ann("A", "Edm.Int32", `"2147483648"`)), body(ann("A", "Edm.Int32", `1.0`)), body(ann("A", "Edm.Int32", `true`)),
		body(ann("A", "Edm.Int64", `"9223372036854775808"`)), body(ann("A", "Edm.Int64", `1e3`)),
		body(ann("A", "Edm.Double", `"nan"`)), body(ann("A", "Edm.Double", `"1."`)), body(ann("A", "Edm.Double", `1e400`)),
		body(ann("A", "Edm.Double", `" 1"`)), body(ann("A", "Edm.Double", `true`)),
		body(ann("A", "Edm.Boolean", `"yes"`)), body(ann("A", "Edm.Boolean", `1`)),
		body(ann("A", "Edm.String", `1`)), body(ann("A", "Edm.String", `true`)),
		body(ann("A", "Edm.Guid", `"0f8fad5b-d9cb-469f-a165-70867728950"`)), body(ann("A", "Edm.Guid", `1`)),
		body(ann("A", "Edm.Binary", `"AQI"`)), body(ann("A", "Edm.Binary", `"AQ==\n"`)), body(ann("A", "Edm.Binary", `"A\u0051=="`)),
		body(ann("A", "Edm.Int16", `1`)), body(ann("A", "", `1`)), body(ann("A", "edm.string", `"x"`)),
		body(`"A@odata.type":1,"A":1`), body(`"A@odata.type":null,"A":1`),
		body(`"A@odata.type":"Edm.Int32"`), body(`"Z@odata.type":"Edm.Int32","A@odata.type":"Edm.Int32"`),
		body(`"x@y@odata.type":"Edm.String"`), body(`"@odata.type":"Edm.String"`),
		body(`"A@odata.type":"Edm.Int32","A":null`),
		// DateTime edge years.
		body(ann("A", "Edm.DateTime", `"1601-01-01T00:00:00Z"`)), body(ann("A", "Edm.DateTime", `"1600-12-31T23:59:59.9999999Z"`)),
		body(ann("A", "Edm.DateTime", `"0001-01-01T00:00:00Z"`)), body(ann("A", "Edm.DateTime", `"0001-01-01T00:00:00+01:00"`)),
		body(ann("A", "Edm.DateTime", `"9999-12-31T23:59:59.9999999Z"`)), body(ann("A", "Edm.DateTime", `"9999-12-31T23:59:59-01:00"`)),
		body(ann("A", "Edm.DateTime", `"10000-01-01T00:00:00Z"`)), body(ann("A", "Edm.DateTime", `"2024-13-01T00:00:00Z"`)),
		body(ann("A", "Edm.DateTime", `1`)), body(ann("A", "Edm.DateTime", `"2024-01-01t00:00z"`)),
		// Numbers near the edges of the integer types and of a double's
		// exact integers.
		body(`"A":2147483647`, `"B":2147483648`, `"C":-2147483648`, `"D":-2147483649`),
		body(`"A":9007199254740992`, `"B":9007199254740993`, `"C":-9007199254740993`, `"D":18014398509481983`),
		body(`"A":9223372036854775807`, `"B":9223372036854775808`, `"C":-9223372036854775809`, `"D":1e400`, `"E":1e-400`),
		body(`"A":123456789012345678901234567890`, `"B":0.1`, `"C":-0.0`, `"D":5E+0`),
		// Nulls, dropped before any check.
		body(`"A":null`, `"1bad":null`, `"B":1`), body(`"a-b":null`, `"Timestamp":null`),
		// Duplicates, and their place among other errors.
		body(`"A":1`, `"A":2`), body(`"A":1`, `"\u0041":2`), body(`"A@odata.type":"Edm.Int32"`, `"A@odata.type":"Edm.Int32"`, `"A":1`),
		body(`"odata.id":"1"`, `"odata.id":"2"`), body(`"x@y":1`, `"x@y":2`), `{"PartitionKey":"p","PartitionKey":"q","RowKey":"r"}`,
		`{"A":1,"A":2,"B":tru}`, `{"A":tru,"A":1}`, `{"A":1,"A":2 "B":1}`, `{"B":1,"A":1,"B":2,"A":2}`,
		`{"A":1,"A@odata.type":1,"A":2}`, `{"A@odata.type":1,"A@odata.type":"Edm.String"}`, `{"A@odata.type":"Edm.String","A@odata.type":1}`,
		`{"A":1,"A":[1]}`, `{"A":1,"A":1}x`, `{"A":1,"B":1,"A":1,"B":1`,
		body(`"A":1`, `"A":1`, `"A":1`),
		// Escapes in names and values.
		body(`"\u0041\u00e9":"\ud83d\ude00\n\t\"\\\/"`, `"B":"plain"`, `"C\u0044":"x\u0000y"`),
		`{"Partition\u004bey":"p\u00e9","Row\u004Bey":"\u0072","odata.\u0065tag":"W/\"x\""}`,
		body(`"A":"\ud800"`), body(`"A\udfff":1`), "{\"PartitionKey\":\"p\xff\",\"RowKey\":\"r\"}",
		body("\"A\":\"a\xffb\""), body("\"A\xff\":1"),
		// Bad and system names.
		body(`"1a":1`), body(`"a-b":1`), body(`"":1`), body(`"é":1`), body(`"_x":1`), body(`"a.b":1`),
		body(`"` + strings.Repeat("n", 255) + `":1`), body(`"` + strings.Repeat("n", 256) + `":1`),
		body(`"` + strings.Repeat("é", 256) + `":1`), body(`"1a":1`, `"B":"x"`, ann("C", "Edm.Int32", `"y"`)),
		body(`"B":1`, `"1a":"x"`), body(ann("1a", "Edm.Int32", `"y"`)),
		body(`"Timestamp":"2024-01-02T03:04:05Z"`), body(`"Timestamp":"bad"`), body(`"Timestamp":5`),
		body(`"Timestamp@odata.type":"Edm.DateTime","Timestamp":"2024-01-02T03:04:05.9999999Z"`),
		body(`"Timestamp@odata.type":"Edm.Int32","Timestamp":"x"`), body(`"Timestamp@odata.type":"Edm.Int32"`),
		body(`"odata.etag":"W/\"datetime'2024'\""`, `"ETag":"x"`, `"odata.metadata":"m"`, `"odata.type":"t"`),
		body(`"odata.etag":5`), body(`"odata.etag":null`, `"A":1`), body(`"odata.x@odata.type":"Edm.String","odata.x":1`),
		body(`"A@b":1`, `"A":1`), body(`"A@odata.typ":1`),
		// Structure.
		`{"A":{"B":1}}`, `{"A":[1]}`, `"x"`, `1`, ``, ` `, `{`, `{"A"`, `{"A":`, `{"A":1`, `{"A":1,}`, `{"A" 1}`,
		`{"A":01}`, `{"A":-}`, `{"A":"\x"}`, `{"A":"\u12x"}`, "{\"A\":\"\t\"}", `{"A":nul}`, `{"A":1}{}`, ` {"PartitionKey":"p","RowKey":"r"} `,
	}
	// Oversize values, alone and against a later Decode error.
	big := strings.Repeat("x", 32769)
	seeds = append(seeds,
		body(`"A":"`+big[1:]+`"`), body(`"A":"`+big+`"`), body(`"A":"`+strings.Repeat("é", 32769)+`"`),
		body(`"A":"`+big+`"`, ann("B", "Edm.Int32", `"x"`)), body(`"B":"`+big+`"`, `"A":"`+big+`"`),
		body(ann("A", "Edm.DateTime", `"1000-01-01T00:00:00Z"`), ann("B", "Edm.Int32", `"x"`)),
		body(ann("A", "Edm.Binary", `"`+base64.StdEncoding.EncodeToString(make([]byte, 65536))+`"`)),
		body(ann("A", "Edm.Binary", `"`+base64.StdEncoding.EncodeToString(make([]byte, 65537))+`"`)),
		body(`"A":"`+strings.Repeat(`\u00e9`, 600)+`"`, `"B":"`+strings.Repeat(`\"`, 600)+`"`),
	)
	// Many properties: over the stack sizes, and over Azure's limit.
	for _, n := range []int{31, 33, 252, 253, 300} {
		var members []string
		for i := range n {
			members = append(members, fmt.Sprintf(`"P%03d":%d`, (i*37)%n, i))
		}
		seeds = append(seeds, body(members...))
	}
	return seeds
}

// FuzzDecodeRecordMatchesDecode: DecodeRecord's outcome equals Decode's
// followed by AppendProperties', for every input, with fresh scratch
// memory and with memory another body used, and for the input behind
// both keys.
func FuzzDecodeRecordMatchesDecode(f *testing.F) {
	for _, s := range recordSeeds() {
		f.Add([]byte(s))
	}
	var used RecordScratch
	f.Fuzz(func(t *testing.T, data []byte) {
		requireSameAsDecode(t, data, nil)
		requireSameAsDecode(t, data, &used)
		// Mutations rarely keep both keys: give the body keys in front,
		// so that its properties are reached.
		if len(data) > 0 && data[0] == '{' {
			keyed := append([]byte(`{"PartitionKey":"pk","RowKey":"rk",`), data[1:]...)
			requireSameAsDecode(t, keyed, &used)
		}
	})
}

// TestDecodeRecordDecisions pins a few of DecodeRecord's decisions, each
// Decode's.
func TestDecodeRecordDecisions(t *testing.T) {
	const keys = `"PartitionKey":"p","RowKey":"r"`
	for _, tc := range []struct {
		name, body string
		code       edm.Code // "" for success
		message    string   // a part of the message
		count      int
	}{
		{"a duplicate before a syntax error", `{"A":1,"A":2,"B":tru}`, edm.CodeDuplicatePropertiesSpecified, `property "A" appears twice`, 0},
		{"a syntax error before a duplicate", `{"A":tru,"A":2}`, edm.CodeInvalidInput, "in literal true", 0},
		{"a duplicate by escape", `{"A":1,"\u0041":2}`, edm.CodeDuplicatePropertiesSpecified, `property "A"`, 0},
		{"a duplicate annotation before its bad value", `{"A@odata.type":"Edm.Int32","A@odata.type":1}`, edm.CodeDuplicatePropertiesSpecified, `annotation "A@odata.type"`, 0},
		{"a missing key before a duplicate ignored key", `{"odata.id":1,"RowKey":"r"}`, edm.CodePropertiesNeedValue, "no PartitionKey", 0},
		{"a null key", `{"PartitionKey":"","RowKey":null}`, edm.CodePropertiesNeedValue, "RowKey is null", 0},
		{"empty keys", `{"PartitionKey":"","RowKey":"","A":1}`, "", "", 1},
		{"a bad value before an oversize one earlier by name", `{` + keys + `,"A":"` + strings.Repeat("x", 40000) + `","B@odata.type":"Edm.Int32","B":"x"}`, edm.CodeInvalidInput, `property "B"`, 0},
		{"an oversize value", `{` + keys + `,"A":"` + strings.Repeat("x", 40000) + `"}`, edm.CodePropertyValueTooLarge, `property "A"`, 0},
		{"a DateTime before 1601", `{` + keys + `,"A@odata.type":"Edm.DateTime","A":"1600-01-01T00:00:00Z"}`, edm.CodeOutOfRangeInput, `property "A"`, 0},
		{"a null under a bad name", `{` + keys + `,"1a":null,"B":1}`, "", "", 1},
		{"an annotation without its property", `{` + keys + `,"A@odata.type":"Edm.Int32","1a":1}`, edm.CodeInvalidInput, "has no property", 0},
		{"2^53+1 bare", `{` + keys + `,"A":9007199254740993,"B":9007199254740992}`, "", "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireSameAsDecode(t, []byte(tc.body), nil)
			e, _, err := DecodeRecord(nil, []byte(tc.body), nil)
			if tc.code == "" {
				require.NoError(t, err)
				require.Equal(t, tc.count, e.Count)
				return
			}
			require.Error(t, err)
			require.Equal(t, tc.code, err.(*entityenc.Error).Code)
			require.Contains(t, err.(*entityenc.Error).Message, tc.message)
		})
	}
	// The integer a double cannot hold stays an Int64; the one it can
	// is a Double.
	e, rec, err := DecodeRecord(nil, []byte(`{`+keys+`,"A":9007199254740993,"B":9007199254740992}`), nil)
	require.NoError(t, err)
	require.Equal(t, 2, e.Count)
	props, err := driver.Record(rec).Properties()
	require.NoError(t, err)
	require.Equal(t, edm.Value{Type: edm.TypeInt64, Int: 1<<53 + 1}, props[0].Value)
	require.Equal(t, edm.Value{Type: edm.TypeDouble, Float: 1 << 53}, props[1].Value)
}

// typicalBody is a 10-property entity as a client writes it.
const typicalBody = `{"PartitionKey":"customers-eu","RowKey":"c-000123456","Name":"Jane Doe","Email":"jane.doe@example.com",` +
	`"Age":42,"Score":97.5,"Active":true,"Balance@odata.type":"Edm.Int64","Balance":"123456789012",` +
	`"Created@odata.type":"Edm.DateTime","Created":"2024-05-06T07:08:09.1234567Z",` +
	`"Id@odata.type":"Edm.Guid","Id":"0f8fad5b-d9cb-469f-a165-70867728950e","Notes":"line one\nline two",` +
	`"Avatar@odata.type":"Edm.Binary","Avatar":"AAECAwQFBgcICQ=="}`

// TestDecodeRecordAllocs pins DecodeRecord's allocations: one string
// holding both keys (and the ETag when present), with scratch memory and
// room in dst reused, whatever the values.
func TestDecodeRecordAllocs(t *testing.T) {
	for _, tc := range []struct {
		body   string
		count  int
		allocs float64
	}{
		{typicalBody, 10, 1},
		{`{"PartitionKey":"p\u00e9","RowKey":"rk","A":9007199254740993,"B":2147483648,"C":1e300,"D":-5,` +
			`"E@odata.type":"Edm.Double","E":"NaN","F":"\ud83d\ude00\n","Timestamp":"2024-01-01T00:00:00Z",` +
			`"G@odata.type":"Edm.Boolean","G":"True","H@odata.type":"Edm.Int32","H":7,"odata.metadata":"x"}`, 8, 1},
		{`{"odata.etag":"W/\"x\"","PartitionKey":"pk","RowKey":"rk","A":null}`, 0, 2},
	} {
		data := []byte(tc.body)
		var s RecordScratch
		buf := make([]byte, 0, 1024)
		e, _, err := DecodeRecord(buf, data, &s)
		require.NoError(t, err)
		require.Equal(t, tc.count, e.Count)
		allocs := testing.AllocsPerRun(100, func() {
			if _, _, err := DecodeRecord(buf, data, &s); err != nil {
				t.Fatal(err)
			}
		})
		require.Equal(t, tc.allocs, allocs, tc.body)
	}
}

func BenchmarkDecodeRecord(b *testing.B) {
	data := []byte(typicalBody)
	b.Run("Decode+AppendProperties", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			e, err := Decode(data)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, _, err := entityenc.AppendProperties(driver.AppendHeader(buf, 0), e.Properties, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("DecodeRecord", func(b *testing.B) {
		buf := make([]byte, 0, 1024)
		var s RecordScratch
		b.ReportAllocs()
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, _, err := DecodeRecord(buf, data, &s); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestSortMembers checks sortMembers against a plain sort by
// compareMembers (name by bytes.Compare, class, document order), on
// names that share prefixes, hold zero bytes and run past the 8 bytes of
// the prefix, for counts sorted by insertion and beyond.
func TestSortMembers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte{0, 'a', 'b', 0xff}
	for _, n := range []int{0, 1, 2, 5, 17, 32, 33, 100} {
		for range 50 {
			ms := make([]member, n)
			keys := make([]entityenc.NameKey, n)
			for k := range ms {
				name := make([]byte, rng.IntN(11))
				for i := range name {
					name[i] = alphabet[rng.IntN(len(alphabet))]
				}
				ms[k] = member{name: name, doc: int32(k), class: uint8(rng.IntN(3))}
				keys[k] = entityenc.NameKey{Prefix: entityenc.NamePrefix(name), Index: int32(k)}
			}
			want := make([]int32, n)
			for k := range want {
				want[k] = int32(k)
			}
			slices.SortFunc(want, func(a, b int32) int { return compareMembers(&ms[a], &ms[b]) })
			got := sortMembers(nil, keys, ms)
			require.Equal(t, want, append(make([]int32, 0, n), got...), "n=%d", n)
		}
	}
}
